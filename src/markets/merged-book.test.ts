import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { feeAdjustedPrice, sellFeeAdjustedPrice, type FeeModel } from "../domain/fees.ts";
import { ONE } from "../domain/money.ts";
import type { Level, Outcome } from "../domain/types.ts";
import { plan } from "../router/index.ts";
import { parseMarket } from "../venues/polymarket/wire.ts";
import { createSimulatedVenues } from "../venues/simulated/index.ts";
import type { BookSnapshot, LatencyStats, PlaceResult, Venue, VenueDescription, VenueHealth, VenueMarket, VenueResolution } from "../venues/venue.ts";
import { MarketCatalog, type UnifiedEvent } from "./catalog.ts";
import { markPrice, mergeBooks, sellQuotes, venueQuotes } from "./merged-book.ts";
import { presentMarket } from "./present.ts";

const NOW = 1_800_000_000_000;
const lv = (price: number, shares: number): Level => ({ price: BigInt(Math.round(price * 1e6)), shares: BigInt(Math.round(shares * 1e6)) });

/** A venue holding a fixed YES book, to test merging without any simulation. */
class FixedVenue implements Venue {
  readonly freshnessMs = 5_000;
  state: VenueHealth["state"] = "up";
  p50: number | undefined;
  minOrderAmount: VenueMarket["minOrderAmount"];
  constructor(
    readonly id: string,
    private readonly feeModel: FeeModel,
    private readonly yes: { bids: Level[]; asks: Level[] },
    private readonly updatedAt = NOW - 100,
  ) {}
  async start() {}
  async stop() {}
  async markets() {
    return [this.market("m")];
  }
  market(venueMarketId: string): VenueMarket {
    return {
      venueMarketId,
      title: "t",
      outcomeIds: { YES: "y", NO: "n" },
      status: "open",
      closeTime: "2027-01-01T00:00:00.000Z",
      tickSize: 10_000n,
      minOrderShares: ONE,
      lotShares: 10_000n,
      feeModel: this.feeModel,
      volume: 1_000n * ONE,
      minOrderAmount: this.minOrderAmount,
    };
  }
  book(venueMarketId: string, outcome: Outcome): BookSnapshot {
    const flip = (l: Level) => ({ price: ONE - l.price, shares: l.shares });
    const side = outcome === "YES" ? this.yes : { bids: this.yes.asks.map(flip), asks: this.yes.bids.map(flip) };
    return { venue: this.id, venueMarketId, outcome, ...side, updatedAt: this.updatedAt };
  }
  onBook() {
    return () => {};
  }
  async place(): Promise<PlaceResult> {
    return { kind: "rejected", reason: "fixed" };
  }
  async resolution(): Promise<VenueResolution> {
    return { state: "open" };
  }
  async status() {
    return { kind: "not_found" as const };
  }
  async cancel() {
    return { kind: "not_found" as const };
  }
  async trades() {
    return [];
  }
  latency(): LatencyStats {
    return { p50Ms: this.p50, p99Ms: this.p50, samples: this.p50 === undefined ? 0 : 1 };
  }
  health(): VenueHealth {
    return { state: this.state, latency: this.latency(), bookAgeMs: NOW - this.updatedAt };
  }
  describe(): VenueDescription {
    return { adapter: "fixed", baseUrl: null, stream: null };
  }
}

const FREE: FeeModel = { kind: "polymarket", ratePpm: 0n, exponent: 1 };
const KALSHI: FeeModel = { kind: "kalshi", ratePpm: 70_000n };

function eventOn(...venues: string[]): UnifiedEvent {
  return {
    eventId: "e-1",
    title: "T",
    description: "D",
    outcomes: ["YES", "NO"],
    status: "open",
    closeTime: "2027-01-01T00:00:00.000Z",
    resolution: null,
    listings: venues.map((venue) => ({ venue, venueMarketId: "m" })),
  };
}

function trio() {
  const a = new FixedVenue("a-venue", FREE, { bids: [lv(0.5, 10), lv(0.48, 30)], asks: [lv(0.53, 100), lv(0.55, 5)] });
  const b = new FixedVenue("b-venue", KALSHI, { bids: [lv(0.51, 20), lv(0.48, 40)], asks: [lv(0.52, 100), lv(0.53, 7)] }, NOW - 50);
  const c = new FixedVenue("c-venue", FREE, { bids: [lv(0.49, 1.5)], asks: [lv(0.54, 120.5)] });
  return [a, b, c];
}

describe("mergeBooks", () => {
  it("interleaves every venue's levels best first, ties by venue name, cut to depth after merging", () => {
    const r = mergeBooks(eventOn("a-venue", "b-venue", "c-venue"), "YES", trio(), { depth: 4, now: NOW });
    expect(r.orderbook.bids).toEqual([
      [0.51, 20, "b-venue"],
      [0.5, 10, "a-venue"],
      [0.49, 1.5, "c-venue"],
      [0.48, 30, "a-venue"],
    ]);
    expect(r.orderbook.asks).toEqual([
      [0.52, 100, "b-venue"],
      [0.53, 100, "a-venue"],
      [0.53, 7, "b-venue"],
      [0.54, 120.5, "c-venue"],
    ]);
    expect(r.spread).toEqual({ best_bid: 0.51, best_ask: 0.52, spread: 0.01 });
    expect(r.updated_at).toBe(new Date(NOW - 50).toISOString());
    expect(r.stale_venues).toEqual([]);
    expect(mergeBooks(eventOn("a-venue", "b-venue", "c-venue"), "YES", trio(), { depth: 20, now: NOW }).orderbook.asks).toHaveLength(5);
  });

  it("names the best fee-adjusted ask, which is not the lowest raw ask when fees differ", () => {
    const venues = trio();
    const r = mergeBooks(eventOn("a-venue", "b-venue", "c-venue"), "YES", venues, { depth: 5, now: NOW });
    // b's 0.52 pays Kalshi's ceil_to_cent(0.07 · 100 · 0.52 · 0.48) = 1.75 USDC, 0.0175 a share: 0.5375 > a's fee-free 0.53
    expect(feeAdjustedPrice(KALSHI, lv(0.52, 100))).toBe(537_500n);
    expect(r.orderbook.asks[0]![2]).toBe("b-venue");
    expect(r.best_execution).toEqual({ venue: "a-venue", price: 0.53, fee_adjusted_price: 0.53 });
  });

  it("merges NO books derived from YES", () => {
    const r = mergeBooks(eventOn("a-venue", "b-venue"), "NO", trio(), { depth: 2, now: NOW });
    expect(r.outcome).toBe("NO");
    expect(r.orderbook.asks).toEqual([
      [0.49, 20, "b-venue"],
      [0.5, 10, "a-venue"],
    ]);
    expect(r.orderbook.bids[0]).toEqual([0.48, 100, "b-venue"]);
  });

  it("leaves out and names venues whose book is stale, that are down, or that are not connected", () => {
    const [a, b, c] = trio();
    const old = new FixedVenue("old-venue", FREE, { bids: [lv(0.6, 1)], asks: [lv(0.4, 1)] }, NOW - 5_001);
    c!.state = "down";
    const r = mergeBooks(eventOn("a-venue", "b-venue", "c-venue", "old-venue", "gone-venue"), "YES", [a!, b!, c!, old], { depth: 10, now: NOW });
    expect(r.stale_venues).toEqual(["c-venue", "gone-venue", "old-venue"]);
    expect(new Set([...r.orderbook.bids, ...r.orderbook.asks].map((e) => e[2]))).toEqual(new Set(["a-venue", "b-venue"]));
  });

  it("shows no book of an event that no longer trades, though its venues' markets still do", () => {
    // An operator's decision (`crossfill events resolve`) ends an event before its venues do: no order is taken on it.
    for (const status of ["closed", "resolved", "disputed"] as const) {
      const event = { ...eventOn("a-venue", "b-venue"), status, resolution: status === "resolved" ? ("YES" as const) : null };
      const r = mergeBooks(event, "YES", trio(), { depth: 10, now: NOW });
      expect(r).toMatchObject({ best_execution: null, orderbook: { bids: [], asks: [] }, spread: { best_bid: null, best_ask: null, spread: null }, updated_at: null, stale_venues: [] });
    }
  });

  it("answers an empty record when no venue has a fresh book", () => {
    const [a] = trio();
    a!.state = "down";
    const r = mergeBooks(eventOn("a-venue"), "YES", [a!], { depth: 10, now: NOW });
    expect(r).toMatchObject({
      best_execution: null,
      orderbook: { bids: [], asks: [] },
      spread: { best_bid: null, best_ask: null, spread: null },
      updated_at: null,
      stale_venues: ["a-venue"],
    });
  });
});

describe("venueQuotes", () => {
  it("gives the router every fresh venue's asks in exact units with its rules, fees and measured latency", () => {
    const [a, b, c] = trio();
    c!.state = "down";
    b!.p50 = 31.5;
    const quotes = venueQuotes(eventOn("a-venue", "b-venue", "c-venue"), "YES", [a!, b!, c!], NOW, () => 0);
    expect(quotes).toEqual([
      { venue: "a-venue", venueMarketId: "m", asks: [lv(0.53, 100), lv(0.55, 5)], feeModel: FREE, tickSize: 10_000n, minOrderShares: ONE, lotShares: 10_000n, latencyMs: undefined },
      { venue: "b-venue", venueMarketId: "m", asks: [lv(0.52, 100), lv(0.53, 7)], feeModel: KALSHI, tickSize: 10_000n, minOrderShares: ONE, lotShares: 10_000n, latencyMs: 31.5 },
    ]);
  });

  it("reads a venue's queue with the child orders planned onto it and not yet placed ahead of the next one", () => {
    const [a, b] = trio();
    // 10 writes a second, none waiting: the next order is sent at once, each one planned before it adds 100 ms.
    const queued = Object.assign(b!, { queueDelayMs: (ahead = 0) => 100 * ahead });
    const quotes = venueQuotes(eventOn("a-venue", "b-venue"), "YES", [a!, queued], NOW, (id) => (id === "b-venue" ? 4 : 7));
    expect(quotes.map((q) => [q.venue, q.queueDelayMs])).toEqual([
      ["a-venue", undefined],
      ["b-venue", 400],
    ]);
  });
});

describe("venueQuotes and sellQuotes", () => {
  it("give the router the minimum amount of the side it routes: a venue may have one for buys only", () => {
    const [a] = trio();
    a!.minOrderAmount = { buy: ONE, sell: 0n };
    const event = eventOn("a-venue");
    expect(venueQuotes(event, "YES", [a!], NOW, () => 0)[0]!.minOrderAmount).toBe(ONE);
    expect(sellQuotes(event, "YES", [a!], NOW, new Map(), () => 0)[0]!.minOrderAmount).toBe(0n);
  });
});

describe("mergeBooks for a sell", () => {
  it("orders the bids by what a seller nets per share after each venue's fee and names the venue whose best bid nets most", () => {
    const event = eventOn("a-venue", "b-venue", "c-venue");
    const r = mergeBooks(event, "YES", trio(), { depth: 10, now: NOW, side: "sell" });
    // b-venue's 0.51 is the highest bid, but Kalshi's fee (0.35 on 20 contracts) leaves 0.4925 a share: less than a-venue's fee-free 0.50.
    expect(r.orderbook.bids).toEqual([
      [0.5, 10, "a-venue"],
      [0.51, 20, "b-venue"],
      [0.49, 1.5, "c-venue"],
      [0.48, 30, "a-venue"],
      [0.48, 40, "b-venue"],
    ]);
    expect(r.best_execution).toEqual({ venue: "a-venue", price: 0.5, fee_adjusted_price: 0.5 });
    const buy = mergeBooks(event, "YES", trio(), { depth: 10, now: NOW });
    expect(buy.orderbook.bids[0]).toEqual([0.51, 20, "b-venue"]);
    // The rest of the record is the market's, whichever side it ranks for.
    expect({ ...r, orderbook: { ...r.orderbook, bids: [] }, best_execution: null }).toEqual({ ...buy, orderbook: { ...buy.orderbook, bids: [] }, best_execution: null });
    expect(mergeBooks(event, "YES", trio(), { depth: 10, now: NOW, side: "buy" })).toEqual(buy);
  });

  it("ranks every level by what it nets, so a deeper bid can come before a shallower one, and cuts to depth after ranking", () => {
    // One contract at 0.51 pays a whole 0.02 of Kalshi fee (0.49 net); 100 at 0.509 pay 1.75 (0.4915 net).
    const k = new FixedVenue("k-venue", KALSHI, { bids: [lv(0.51, 1), lv(0.509, 100)], asks: [] });
    const f = new FixedVenue("f-venue", FREE, { bids: [lv(0.4, 10)], asks: [] });
    const r = mergeBooks(eventOn("k-venue", "f-venue"), "YES", [k, f], { depth: 2, now: NOW, side: "sell" });
    expect(r.orderbook.bids).toEqual([
      [0.509, 100, "k-venue"],
      [0.51, 1, "k-venue"],
    ]);
    expect(r.best_execution).toEqual({ venue: "k-venue", price: 0.51, fee_adjusted_price: 0.49 });
    expect(r.spread.best_bid).toBe(0.51);
    expect(mergeBooks(eventOn("f-venue"), "YES", [k, f], { depth: 2, now: NOW, side: "sell" }).best_execution).toEqual({ venue: "f-venue", price: 0.4, fee_adjusted_price: 0.4 });
  });

  it("names no best execution where no venue's best bid nets anything after its fee: no seller takes it, and no negative price is shown", () => {
    // One contract bid at 0.005 (a deci-cent Kalshi market) pays a fee rounded up to the cent: 0.005 − 0.01 a share.
    expect(sellFeeAdjustedPrice(KALSHI, lv(0.005, 1))).toBe(-5_000n);
    const tail = new FixedVenue("k-venue", KALSHI, { bids: [lv(0.005, 1)], asks: [lv(0.02, 5)] });
    const r = mergeBooks(eventOn("k-venue"), "YES", [tail], { depth: 5, now: NOW, side: "sell" });
    expect(r.best_execution).toBeNull();
    expect(r.orderbook.bids).toEqual([[0.005, 1, "k-venue"]]);
    expect(r.spread.best_bid).toBe(0.005);
  });
});

describe("the best execution of a buy", () => {
  it("names the ask a venue's least order reaches, not a top ask smaller than the venue's minimum order: no buy pays that one", () => {
    // Half a share rests at 0.40 where an order buys 1 share at least: the least buy there reaches 0.45.
    const thin = new FixedVenue("t-venue", FREE, { bids: [], asks: [lv(0.4, 0.5), lv(0.45, 100)] });
    const f = new FixedVenue("f-venue", FREE, { bids: [], asks: [lv(0.5, 10)] });
    const r = mergeBooks(eventOn("t-venue", "f-venue"), "YES", [thin, f], { depth: 5, now: NOW });
    expect(r.best_execution).toEqual({ venue: "t-venue", price: 0.45, fee_adjusted_price: 0.45 });
    expect(r.orderbook.asks[0]).toEqual([0.4, 0.5, "t-venue"]);
  });
});

describe("the best execution of a sell", () => {
  it("names the bid a venue's least order reaches, not a top bid smaller than the venue's minimum order: no sale nets that one", () => {
    // Half a share rests at 0.60 where an order sells 1 share at least: the least sale there reaches 0.55.
    const thin = new FixedVenue("t-venue", FREE, { bids: [lv(0.6, 0.5), lv(0.55, 100)], asks: [] });
    const f = new FixedVenue("f-venue", FREE, { bids: [lv(0.5, 10)], asks: [] });
    const event = eventOn("t-venue", "f-venue");
    const r = mergeBooks(event, "YES", [thin, f], { depth: 5, now: NOW, side: "sell" });
    expect(r.best_execution).toEqual({ venue: "t-venue", price: 0.55, fee_adjusted_price: 0.55 });
    expect(r.orderbook.bids[0]).toEqual([0.6, 0.5, "t-venue"]);
    expect(markPrice(event, "YES", [thin, f], NOW)).toBe(550_000n);
  });
});

describe("markPrice", () => {
  it("is what selling a share nets at the best bid after its venue's fee, leaving out stale venues, and null without a bid", () => {
    const [a, b, c] = trio();
    const event = eventOn("a-venue", "b-venue", "c-venue");
    expect(markPrice(event, "YES", [a!, b!, c!], NOW)).toBe(500_000n);
    a!.state = "down";
    // b-venue's 0.51 nets 0.4925 after Kalshi's fee.
    expect(markPrice(event, "YES", [a!, b!, c!], NOW)).toBe(492_500n);
    const empty = new FixedVenue("e-venue", FREE, { bids: [], asks: [lv(0.6, 5)] });
    expect(markPrice(eventOn("e-venue"), "YES", [empty], NOW)).toBeNull();
  });

  it("is null, as without a bid, where every best bid's fee takes all it pays: no sale can be made there, and no price below 0 is shown", () => {
    const tail = new FixedVenue("k-venue", KALSHI, { bids: [lv(0.005, 1)], asks: [lv(0.02, 5)] });
    expect(markPrice(eventOn("k-venue"), "YES", [tail], NOW)).toBeNull();
  });
});

describe("sellQuotes", () => {
  it("gives the router every fresh venue's bids in exact units with its rules, fees, latency and the shares held there", () => {
    const [a, b, c] = trio();
    c!.state = "down";
    b!.p50 = 31.5;
    const quotes = sellQuotes(eventOn("a-venue", "b-venue", "c-venue"), "YES", [a!, b!, c!], NOW, new Map([["b-venue", 7n * ONE]]), () => 0);
    expect(quotes).toEqual([
      { venue: "a-venue", venueMarketId: "m", bids: [lv(0.5, 10), lv(0.48, 30)], feeModel: FREE, tickSize: 10_000n, minOrderShares: ONE, lotShares: 10_000n, latencyMs: undefined, inventory: 0n },
      { venue: "b-venue", venueMarketId: "m", bids: [lv(0.51, 20), lv(0.48, 40)], feeModel: KALSHI, tickSize: 10_000n, minOrderShares: ONE, lotShares: 10_000n, latencyMs: 31.5, inventory: 7n * ONE },
    ]);
    expect(sellFeeAdjustedPrice(KALSHI, quotes[1]!.bids[0]!)).toBe(492_500n);
  });
});

describe("sellQuotes on Polymarket", () => {
  it("sell a whole position in the venue's 0.01-share steps, not the buy's lot: all but under 0.01 share is sold", () => {
    const [a] = trio();
    const page = JSON.parse(readFileSync(new URL("../../test/fixtures/polymarket/markets-page.json", import.meta.url), "utf8")) as { body: { data: unknown[] } };
    // tick 0.001: a buy's lot is 10 shares, so that it costs whole cents
    const { market } = parseMarket({ ...(page.body.data[0] as object), minimum_tick_size: "0.001", minimum_order_size: 5 });
    expect(market.lotShares).toBe(10n * ONE);
    a!.market = (venueMarketId) => ({ ...market, venueMarketId });
    const held = 25_678_901n;
    const quotes = sellQuotes(eventOn("a-venue"), "YES", [a!], NOW, new Map([["a-venue", held]]), () => 0);
    const p = plan({ side: "sell", shares: held, maxSlippage: 100_000n, strategy: "optimize_price", timeInForce: "IOC" }, quotes);
    expect(p.kind).toBe("plan");
    if (p.kind !== "plan") return;
    expect(p.shares).toBe(25_670_000n);
    expect(p.legs.map((l) => l.shares)).toEqual([25_670_000n]);
  });

  it("sell a position under the buy's lot but at the venue's minimum of 5 shares, not refuse it for the buy's minimum of 10 or 100", () => {
    const [a] = trio();
    const page = JSON.parse(readFileSync(new URL("../../test/fixtures/polymarket/markets-page.json", import.meta.url), "utf8")) as { body: { data: unknown[] } };
    for (const [tick, held] of [["0.001", 7_500_000n], ["0.0001", 35_000_000n]] as const) {
      // a buy's lot, and so its least size, is 10 shares at tick 0.001 and 100 at 0.0001
      const { market } = parseMarket({ ...(page.body.data[0] as object), minimum_tick_size: tick, minimum_order_size: 5 });
      a!.market = (venueMarketId) => ({ ...market, venueMarketId });
      const quotes = sellQuotes(eventOn("a-venue"), "YES", [a!], NOW, new Map([["a-venue", held]]), () => 0);
      const p = plan({ side: "sell", shares: held, maxSlippage: 100_000n, strategy: "optimize_price", timeInForce: "IOC" }, quotes);
      expect(p).toMatchObject({ kind: "plan", shares: held });
      const under = sellQuotes(eventOn("a-venue"), "YES", [a!], NOW, new Map([["a-venue", 4_990_000n]]), () => 0);
      expect(plan({ side: "sell", shares: 4_990_000n, maxSlippage: 100_000n, strategy: "optimize_price", timeInForce: "IOC" }, under)).toMatchObject({ kind: "refusal" });
    }
  });
});

describe("with the simulated venues", () => {
  const catalog = MarketCatalog.load();

  it("merges three venues' moving books of one event, interleaved, on each venue's grid", () => {
    const venues = createSimulatedVenues(catalog, { seed: 3, latencyScale: 0, clock: { now: () => NOW } });
    for (let i = 0; i < 20; i++) venues.forEach((v) => v.tick());
    const event = catalog.get("fed-cut-2026-12")!;
    for (const outcome of ["YES", "NO"] as const) {
      const r = mergeBooks(event, outcome, venues, { depth: 40, now: NOW });
      expect(r.orderbook.asks).toHaveLength(40);
      expect(new Set(r.orderbook.asks.map((e) => e[2])).size).toBe(3);
      const prices = r.orderbook.asks.map((e) => e[0]);
      expect(prices).toEqual([...prices].sort((x, y) => x - y));
      for (const [price] of [...r.orderbook.bids, ...r.orderbook.asks]) expect(price > 0 && price < 1).toBe(true);
      expect(r.best_execution).not.toBeNull();
    }
    expect(mergeBooks(event, "YES", venues, { depth: 5, now: NOW + 6_000 }).stale_venues).toEqual(event.listings.map((l) => l.venue).sort());
  });

  it("presents a market with each venue's rules, the best YES bid and ask, and the volume", () => {
    const venues = createSimulatedVenues(catalog, { seed: 3, latencyScale: 0, clock: { now: () => NOW } });
    const [spx, house] = [catalog.get("spx-above-7500-2026-12-31")!, catalog.get("us-house-dem-2026")!];
    const m = presentMarket(spx, venues, mergeBooks(spx, "YES", venues, { depth: 1, now: NOW }));
    expect(m.venues.map((v) => v.venue).sort()).toEqual(["kalshi-sim", "limitless-sim", "polymarket-sim"]);
    expect(m.venues.find((v) => v.venue === "kalshi-sim")).toEqual({
      venue: "kalshi-sim",
      venue_market_id: "KXINXY-26DEC31-T7500",
      outcome_ids: { YES: "yes", NO: "no" },
      fee_model: { type: "kalshi", formula: "ceil_to_cent(rate * C * P * (1 - P))", rate: 0.035 },
      tick_size: 0.01,
      min_order_size: 1,
    });
    // venues quote around their own mids, so the merged top may cross by a little but stays near the base price
    for (const p of [m.best_bid!, m.best_ask!]) expect(Math.abs(p - 0.47)).toBeLessThan(0.05);
    expect(m.volume_usdc).toBeGreaterThan(0);
    const closed = presentMarket(house, venues, mergeBooks(house, "YES", venues, { depth: 1, now: NOW }));
    expect(closed).toMatchObject({ status: "closed", best_bid: null, best_ask: null });
  });
});
