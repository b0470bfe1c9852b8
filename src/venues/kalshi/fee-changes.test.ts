import axios from "axios";
import { Configuration, EventsApi, ExchangeApi, MarketApi } from "kalshi-typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { orderFee, worstFee } from "../../domain/fees.ts";
import { MarketCatalog } from "../../markets/catalog.ts";
import type { VenueFill } from "../venue.ts";
import { KalshiVenue } from "./kalshi-venue.ts";
import { startKalshiSim, type KalshiSim } from "./sim/kalshi-sim.ts";

const catalog = MarketCatalog.load();
const BTC = "KXBTCD-26DEC31-T150000";
const INX = "KXINXY-26DEC31-T7500";
const MINUTE = 60_000;
/** A market's fee as the adapter states it: the simulator's markets are priced in whole cents, whole contracts. */
const rate = (ratePpm: bigint) => ({ kind: "kalshi" as const, ratePpm, wholeCents: true as const });

describe("Kalshi fee changes scheduled on a series or an event", () => {
  const clock = { t: Date.now(), now: () => clock.t };
  const T0 = clock.t;
  const iso = (t: number) => new Date(t).toISOString();
  let sim: KalshiSim;
  let venue: KalshiVenue;
  const api = <T>(Api: new (...args: any[]) => T) => new Api(new Configuration({ basePath: sim.url }), undefined, axios.create());

  /** Buys 10 contracts of a market up to its deepest ask: what the venue charged, and what the lock covered for it. */
  const buy = async (ticker: string) => {
    const asks = sim.exchange.book(ticker, "YES")!.asks;
    const limitPrice = asks[asks.length - 1]!.price;
    const shares = 10_000_000n;
    const locked = worstFee(venue.market(ticker)!.feeModel, limitPrice, shares);
    const placed = await venue.place({ clientOrderId: `fee-change-${ticker}-${clock.t}`, venueMarketId: ticker, outcome: "YES", side: "buy", limitPrice, shares, expiresAt: clock.t + MINUTE });
    expect(placed.kind).toBe("filled");
    const fills: VenueFill[] = placed.kind === "filled" ? placed.fills : [];
    return { fills, charged: fills.reduce((sum, f) => sum + f.fee, 0n), locked };
  };

  beforeAll(async () => {
    sim = await startKalshiSim({
      catalog,
      seed: 12,
      latencyScale: 0,
      tickMs: 40,
      clock,
      // KXINXY's series multiplier is 0.5: the event pays the general rate until its override is cleared
      eventFees: { "KXINXY-26DEC31": { fee_multiplier_override: 1 } },
      feeChanges: {
        series: [{ id: "raise", series_ticker: "KXBTCD", fee_type: "quadratic", fee_multiplier: 1.5, scheduled_ts: iso(T0 + 10 * MINUTE) }],
        events: [{ id: "clear", event_ticker: "KXINXY-26DEC31", series_ticker: "KXINXY", fee_type_override: null, fee_multiplier_override: null, scheduled_ts: iso(T0 + 20 * MINUTE) }],
      },
    });
    venue = new KalshiVenue({ baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, clock, requestTimeoutMs: 2_000 });
    await venue.markets();
  });
  afterAll(async () => {
    await venue.stop();
    await sim.stop();
  });

  it("are listed by the simulator as kalshi-typescript reads them", async () => {
    const series = (await api(ExchangeApi).getSeriesFeeChanges("KXBTCD")).data.series_fee_change_arr;
    expect(series).toEqual([{ id: "raise", series_ticker: "KXBTCD", fee_type: "quadratic", fee_multiplier: 1.5, scheduled_ts: iso(T0 + 10 * MINUTE) }]);
    const events = (await api(EventsApi).getEventFeeChanges("KXINXY-26DEC31")).data;
    expect(events.event_fee_changes.map((c) => [c.id, c.fee_multiplier_override])).toEqual([["clear", null]]);
    expect(events.cursor).toBe("");
  });

  it("leave the fee as read while they are more than a minute away", () => {
    expect(venue.market(BTC)!.feeModel).toEqual(rate(70_000n));
    expect(venue.market(INX)!.feeModel).toEqual(rate(70_000n));
  });

  it("are priced and locked for in the minute before a raise, while the venue still charges the old fee", async () => {
    clock.t = T0 + 10 * MINUTE - 20_000;
    expect(venue.market(BTC)!.feeModel).toEqual(rate(105_000n));
    const { fills, charged, locked } = await buy(BTC);
    expect(charged).toBe(orderFee(rate(70_000n), fills));
    expect(charged).toBeLessThanOrEqual(locked);
  });

  it("charge the raised fee once it applies, which the quote and the lock priced", async () => {
    clock.t = T0 + 10 * MINUTE + 1_000;
    expect((await api(MarketApi).getSeries("KXBTCD")).data.series).toMatchObject({ fee_multiplier: 1.5 });
    const { fills, charged, locked } = await buy(BTC);
    expect(charged).toBe(orderFee(venue.market(BTC)!.feeModel, fills));
    expect(charged).toBe(orderFee(rate(105_000n), fills));
    expect(charged).toBeLessThanOrEqual(locked);
  });

  it("keep the higher fee until a cut applies, then the lower one: a cleared override falls back to the series'", async () => {
    clock.t = T0 + 20 * MINUTE - 20_000;
    expect(venue.market(INX)!.feeModel).toEqual(rate(70_000n));
    clock.t = T0 + 20 * MINUTE + 1_000;
    expect(venue.market(INX)!.feeModel).toEqual(rate(35_000n));
    const { fills, charged } = await buy(INX);
    expect(charged).toBe(orderFee(rate(35_000n), fills));
  });

  it("read again, show the fees in effect and no change still to come", async () => {
    await venue.markets();
    expect(venue.market(BTC)!.feeModel).toEqual(rate(105_000n));
    expect(venue.market(INX)!.feeModel).toEqual(rate(35_000n));
    expect((await api(ExchangeApi).getSeriesFeeChanges()).data.series_fee_change_arr).toEqual([]);
  });
});

describe("A Kalshi fee change whose time cannot be read", () => {
  let sim: KalshiSim;
  let venue: KalshiVenue;
  afterAll(async () => {
    await venue.stop();
    await sim.stop();
  });

  it("leaves out only its series' markets: the others keep trading at the fee read", async () => {
    sim = await startKalshiSim({
      catalog,
      seed: 12,
      latencyScale: 0,
      tickMs: 40,
      feeChanges: { series: [{ id: "garbled", series_ticker: "KXBTCD", fee_type: "quadratic", fee_multiplier: 1.5, scheduled_ts: "next week" }] },
    });
    venue = new KalshiVenue({ baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 2_000 });
    await venue.start();
    expect(venue.market(BTC)).toBeUndefined();
    expect(venue.market(INX)!.feeModel).toEqual(rate(35_000n));
  });
});
