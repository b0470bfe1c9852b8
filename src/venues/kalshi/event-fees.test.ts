import axios from "axios";
import { Configuration, EventsApi, MarketApi } from "kalshi-typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { orderFee } from "../../domain/fees.ts";
import { KalshiVenue } from "./kalshi-venue.ts";
import { startKalshiSim, type KalshiSim } from "./sim/kalshi-sim.ts";
import { catalogWithCombo, COMBO } from "../../../test/helpers/kalshi-combo.ts";

const catalog = catalogWithCombo();
const OVERRIDDEN = "KXBTCD-26DEC31-T150000";
/** A market's fee as the adapter states it: the simulator's markets are priced in whole cents, whole contracts. */
const rate = (ratePpm: bigint) => ({ kind: "kalshi" as const, ratePpm, wholeCents: true as const });

/** Each overridden event against its series: KXBTCD's multiplier is 1, KXINXY's 0.5 (the catalog's 0.035 rate). */
const eventFees = {
  "KXBTCD-26DEC31": { fee_type_override: "quadratic", fee_multiplier_override: 1.5 },
  "KXINXY-26DEC31": { fee_multiplier_override: 1 },
  "KXBTCD-27JUN30": { fee_type_override: "quadratic_with_maker_fees", fee_multiplier_override: 0.5 },
  "KXMVECROSSCATEGORY-S2026PARLAY": { fee_type_override: "quadratic", fee_multiplier_override: 0.25 },
};

describe("Kalshi events that override their series' fee", () => {
  let sim: KalshiSim;
  let venue: KalshiVenue;
  const api = <T>(Api: new (...args: any[]) => T) => new Api(new Configuration({ basePath: sim.url }), undefined, axios.create());

  beforeAll(async () => {
    sim = await startKalshiSim({ catalog, seed: 11, latencyScale: 0, tickMs: 40, eventFees });
    venue = new KalshiVenue({ baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 2_000 });
  });
  afterAll(async () => {
    await venue.stop();
    await sim.stop();
  });

  it("are served by the simulator as kalshi-typescript reads them: on the event, the series keeping its own fee", async () => {
    const events = api(EventsApi);
    const { data } = await events.getEvent("KXBTCD-26DEC31");
    expect(data.event).toMatchObject({ event_ticker: "KXBTCD-26DEC31", series_ticker: "KXBTCD", fee_type_override: "quadratic", fee_multiplier_override: 1.5 });
    expect(data.markets.map((m) => m.ticker)).toEqual([OVERRIDDEN]);
    expect((await api(MarketApi).getSeries("KXBTCD")).data.series).toMatchObject({ fee_type: "quadratic", fee_multiplier: 1 });
    const listed = (await events.getEvents(200, undefined, undefined, undefined, undefined, undefined, `KXBTCD-26NOV30,KXBTCD-26DEC31,${COMBO.split("-").slice(0, 2).join("-")}`)).data;
    expect(listed.events.map((e) => [e.event_ticker, e.fee_multiplier_override]).sort()).toEqual([
      ["KXBTCD-26DEC31", 1.5],
      ["KXBTCD-26NOV30", null],
    ]);
    expect((await events.getEvent("KXMVECROSSCATEGORY-S2026PARLAY")).data.event.fee_multiplier_override).toBe(0.25);
  });

  it("load with their event's fee, the other markets with their series'", async () => {
    await venue.markets();
    expect(venue.market(OVERRIDDEN)!.feeModel).toEqual(rate(105_000n));
    expect(venue.market("KXINXY-26DEC31-T7500")!.feeModel).toEqual(rate(70_000n));
    expect(venue.market(COMBO)!.feeModel).toEqual(rate(17_500n));
    expect(venue.market("KXBTCD-26NOV30-T100000")!.feeModel).toEqual(rate(70_000n));
    expect(venue.market("KXFEDCUT-26DEC-T25")!.feeModel).toEqual(rate(70_000n));
  });

  it("are discovered with their event's fee", async () => {
    const found = new Map((await venue.discover()).map((m) => [m.venueMarketId, m.feeModel]));
    expect(found.get("KXBTCD-27JUN30-T200000")).toEqual(rate(35_000n));
    expect(found.get("KXBTCD-27JUN30-T250000")).toEqual(rate(35_000n));
    expect(found.get("KXFEDCUT-27MAR-T25")).toEqual(rate(70_000n));
  });

  it("are charged the override on their fills, which is what the adapter planned with", async () => {
    await venue.markets();
    const asks = sim.exchange.book(OVERRIDDEN, "YES")!.asks;
    const placed = await venue.place({
      clientOrderId: `override-${Date.now()}`,
      venueMarketId: OVERRIDDEN,
      outcome: "YES",
      side: "buy",
      limitPrice: asks[asks.length - 1]!.price,
      shares: 10_000_000n,
      expiresAt: Date.now() + 60_000,
    });
    expect(placed.kind).toBe("filled");
    const fills = placed.kind === "filled" ? placed.fills : [];
    const charged = fills.reduce((sum, f) => sum + f.fee, 0n);
    expect(charged).toBe(orderFee(venue.market(OVERRIDDEN)!.feeModel, fills));
    expect(charged).not.toBe(orderFee(rate(70_000n), fills));
  });
});
