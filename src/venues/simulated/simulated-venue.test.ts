import { describe, expect, it } from "vitest";
import { AppError } from "../../domain/errors.ts";
import { deliveredShares, grossForDelivered, orderFee, withheldShares } from "../../domain/fees.ts";
import { notional, ONE } from "../../domain/money.ts";
import type { Clock, Outcome } from "../../domain/types.ts";
import { MarketCatalog } from "../../markets/catalog.ts";
import type { ChildOrder } from "../venue.ts";
import { createSimulatedVenues, SimulatedVenue } from "./index.ts";

const catalog = MarketCatalog.load();

function setup(opts: { seed?: number; latencyScale?: number } = {}) {
  let t = 1_800_000_000_000;
  const clock: Clock = { now: () => t };
  const venues = createSimulatedVenues(catalog, { seed: opts.seed ?? 1, latencyScale: opts.latencyScale ?? 0, clock });
  const byId = (id: string) => venues.find((v) => v.id === id)!;
  return { venues, byId, clock, advance: (ms: number) => (t += ms) };
}

/** The venue's market id of a catalog event. */
function marketOf(eventId: string, venue: string): string {
  return catalog.get(eventId)!.listings.find((l) => l.venue === venue)!.venueMarketId;
}

let seq = 0;
function order(venue: SimulatedVenue, eventId: string, o: Partial<ChildOrder> & { outcome?: Outcome } = {}): ChildOrder {
  const venueMarketId = marketOf(eventId, venue.id);
  const outcome = o.outcome ?? "YES";
  const best = venue.book(venueMarketId, outcome)!.asks[0]!.price;
  return {
    clientOrderId: `test-${++seq}`,
    venueMarketId,
    outcome,
    side: "buy",
    limitPrice: best + 30_000n,
    shares: 50n * ONE,
    expiresAt: Number.MAX_SAFE_INTEGER,
    ...o,
  };
}

const FED = "fed-cut-2026-12";

describe("simulated venues", () => {
  it("are the three venues, each listing only its markets of the catalog with its own rules", async () => {
    const { byId } = setup();
    const poly = byId("polymarket-sim");
    const kalshi = byId("kalshi-sim");
    const limitless = byId("limitless-sim");
    for (const v of [poly, kalshi, limitless]) {
      const ids = (await v.markets()).map((m) => m.venueMarketId).sort();
      const expected = catalog.events().flatMap((e) => e.listings.filter((l) => l.venue === v.id).map((l) => l.venueMarketId));
      expect(ids).toEqual(expected.sort());
    }
    const k = kalshi.market("KXFEDCUT-26DEC-T25")!;
    expect(k).toMatchObject({ tickSize: 10_000n, lotShares: ONE, minOrderShares: ONE, feeModel: { kind: "kalshi", ratePpm: 70_000n } });
    expect(k.outcomeIds).toEqual({ YES: "yes", NO: "no" });
    expect(kalshi.market("KXINXY-26DEC31-T7500")!.feeModel).toEqual({ kind: "kalshi", ratePpm: 35_000n });
    expect(poly.market(marketOf("time-poy-2026-ai", poly.id))!.tickSize).toBe(1_000n);
    expect(poly.market(marketOf(FED, poly.id))).toMatchObject({ tickSize: 10_000n, minOrderShares: 5n * ONE, lotShares: 10_000n });
    expect(poly.market(marketOf("btc-above-150k-2026-12-31", poly.id))!.feeModel).toEqual({ kind: "polymarket", ratePpm: 30_000n, exponent: 1 });
    expect(limitless.market(marketOf(FED, limitless.id))).toMatchObject({ tickSize: 1_000n, lotShares: 10_000n, feeModel: { kind: "limitless" } });
  });

  it("quote the same event close together but not identically", () => {
    const { venues } = setup({ seed: 9 });
    for (let i = 0; i < 50; i++) venues.forEach((v) => v.tick());
    const mids = venues.map((v) => {
      const b = v.book(marketOf(FED, v.id), "YES")!;
      return Number(b.bids[0]!.price + b.asks[0]!.price) / 2 / 1e6;
    });
    for (const m of mids) expect(Math.abs(m - 0.62)).toBeLessThan(0.04);
    expect(new Set(mids).size).toBeGreaterThan(1);
  });

  it("replay the same books from the same seed", () => {
    const a = setup({ seed: 5 });
    const b = setup({ seed: 5 });
    for (let i = 0; i < 30; i++) [...a.venues, ...b.venues].forEach((v) => v.tick());
    for (const v of a.venues) {
      for (const m of catalog.events()) {
        const l = m.listings.find((x) => x.venue === v.id);
        if (l) expect(v.book(l.venueMarketId, "YES")).toEqual(b.byId(v.id).book(l.venueMarketId, "YES"));
      }
    }
  });

  it("fill an IOC buy against the asks in price order, consume them and charge the venue's fee", async () => {
    const { byId } = setup();
    const kalshi = byId("kalshi-sim");
    const id = marketOf(FED, kalshi.id);
    const before = kalshi.book(id, "YES")!.asks;
    const want = before[0]!.shares + 1n * ONE;
    const o = order(kalshi, FED, { limitPrice: before[1]!.price, shares: want });
    const r = await kalshi.place(o);
    expect(r.kind).toBe("filled");
    if (r.kind !== "filled") return;
    expect(r.fills.map((f) => [f.price, f.shares])).toEqual([
      [before[0]!.price, before[0]!.shares],
      [before[1]!.price, ONE],
    ]);
    expect(new Set(r.fills.map((f) => f.tradeId)).size).toBe(2);
    expect(r.fills.every((f) => f.venueOrderId === r.venueOrderId && f.clientOrderId === o.clientOrderId)).toBe(true);
    const fee = r.fills.reduce((s, f) => s + f.fee, 0n);
    expect(fee).toBe(orderFee(kalshi.market(id)!.feeModel, r.fills));
    expect(fee % 10_000n).toBe(0n);
    const after = kalshi.book(id, "YES")!.asks;
    expect(after[0]).toEqual({ price: before[1]!.price, shares: before[1]!.shares - ONE });
  });

  it("answer a repeated client order id with the first result and fill nothing more", async () => {
    const { byId } = setup();
    const poly = byId("polymarket-sim");
    const o = order(poly, FED);
    const first = await poly.place(o);
    const book = poly.book(o.venueMarketId, "YES");
    const again = await poly.place(o);
    expect(again).toEqual(first);
    expect(poly.book(o.venueMarketId, "YES")).toEqual(book);
    expect(await poly.status(o.clientOrderId)).toEqual({
      kind: "done",
      venueOrderId: first.kind === "filled" ? first.venueOrderId : "",
      fills: first.kind === "filled" ? first.fills : [],
    });
    expect(first.kind === "filled" && /^0x[0-9a-f]{64}$/.test(first.venueOrderId)).toBe(true);
    expect(await poly.status("never-sent")).toEqual({ kind: "not_found" });
  });

  it("buy NO by consuming YES bids", async () => {
    const { byId } = setup();
    const limitless = byId("limitless-sim");
    const id = marketOf(FED, limitless.id);
    const yesBids = limitless.book(id, "YES")!.bids;
    // the buy asks for what the whole level delivers once its fee is withheld in contracts
    const shares = deliveredShares(limitless.market(id)!.feeModel, yesBids[0]!.shares);
    const r = await limitless.place(order(limitless, FED, { outcome: "NO", limitPrice: ONE - yesBids[0]!.price, shares }));
    expect(r.kind === "filled" && r.fills).toEqual([expect.objectContaining({ price: ONE - yesBids[0]!.price, shares })]);
    expect(limitless.book(id, "YES")!.bids[0]).toEqual(yesBids[1]);
  });

  it("sell only what the account bought, into the bids at or above the limit, and keep the rest of a resting sell from being sold twice", async () => {
    const { byId } = setup();
    const poly = byId("polymarket-sim");
    const id = marketOf(FED, poly.id);
    const sell = (shares: bigint, o: Partial<ChildOrder> = {}) => order(poly, FED, { side: "sell", limitPrice: poly.book(id, "YES")!.bids[0]!.price - 30_000n, shares, ...o });
    expect(await poly.place(sell(10n * ONE))).toMatchObject({ kind: "rejected", reason: expect.stringMatching(/^insufficient_position/) });
    const bought = await poly.place(order(poly, FED, { shares: 20n * ONE }));
    expect(bought.kind).toBe("filled");
    expect(await poly.place(sell(21n * ONE))).toMatchObject({ kind: "rejected", reason: expect.stringMatching(/^insufficient_position/) });
    const bids = poly.book(id, "YES")!.bids;
    poly.setFaults({ resting: true });
    const resting = sell(12n * ONE);
    const r = await poly.place(resting);
    poly.setFaults({ resting: false });
    expect(r.kind).toBe("partial");
    expect((await poly.status(resting.clientOrderId)).kind).toBe("open");
    if (r.kind !== "partial") return;
    expect(r.fills.every((f) => f.side === "sell" && f.price >= resting.limitPrice && f.price <= bids[0]!.price)).toBe(true);
    // 6 sold, 6 offered by the resting rest: 8 of the 20 are left to sell until it is cancelled
    expect((await poly.place(sell(9n * ONE))).kind).toBe("rejected");
    await poly.cancel(resting.clientOrderId);
    expect((await poly.place(sell(14n * ONE))).kind).toBe("filled");
    expect((await poly.place(sell(5n * ONE))).kind).toBe("rejected");
  });

  it("charge Polymarket's fee exactly as orderFee computes it", async () => {
    const { byId } = setup();
    const v = byId("polymarket-sim");
    const event = "btc-above-150k-2026-12-31";
    const r = await v.place(order(v, event, { shares: 2_000n * ONE }));
    expect(r.kind === "filled" || r.kind === "partial").toBe(true);
    if (r.kind !== "filled" && r.kind !== "partial") return;
    const fee = r.fills.reduce((s, f) => s + f.fee, 0n);
    expect(fee).toBeGreaterThan(0n);
    expect(fee).toBe(orderFee(v.market(marketOf(event, v.id))!.feeModel, r.fills));
  });

  it("withhold a Limitless buy's fee in contracts: the account holds what was delivered, charged exactly what the venue took", async () => {
    const { byId } = setup();
    const v = byId("limitless-sim");
    const event = "btc-above-150k-2026-12-31";
    const id = marketOf(event, v.id);
    const model = v.market(id)!.feeModel;
    const gross = 2_000n * ONE;
    const shares = deliveredShares(model, gross);
    const placed = order(v, event, { shares });
    const r = await v.place(placed);
    expect(r.kind).toBe("filled");
    if (r.kind !== "filled") return;
    // 0.5 % of the 2 000 contracts bought withheld: 1 990 delivered, the fee the value of the other 10
    expect(shares).toBe(gross - withheldShares(model, gross));
    expect(r.fills.reduce((s, f) => s + f.shares, 0n)).toBe(shares);
    const cost = r.fills.reduce((s, f) => s + notional(f.price, f.shares) + f.fee, 0n);
    const fee = r.fills.reduce((s, f) => s + f.fee, 0n);
    expect(fee).toBeGreaterThanOrEqual(notional(r.fills[0]!.price, gross - shares) - BigInt(r.fills.length));
    expect(cost).toBeLessThanOrEqual(notional(placed.limitPrice, gross));
    expect(await v.trades()).toEqual(r.fills);
    // the account holds what was delivered, not the contracts withheld
    const sell = (n: bigint) => v.place(order(v, event, { side: "sell", limitPrice: 1_000n, shares: n }));
    expect(await sell(shares + 10_000n)).toMatchObject({ kind: "rejected", reason: expect.stringMatching(/^insufficient_position/) });
    expect((await sell(shares)).kind).not.toBe("rejected");
    // a size no whole number of lots delivers is refused
    expect(grossForDelivered(model, v.market(id)!.lotShares, 2n * ONE)).toBeUndefined();
    expect(await v.place(order(v, event, { shares: 2n * ONE }))).toMatchObject({ kind: "rejected", reason: expect.stringMatching(/^invalid_lot/) });
  });

  it("refuse orders off the tick grid, off the lot, below the minimum, or on markets that do not trade", async () => {
    const { byId } = setup();
    const poly = byId("polymarket-sim");
    const kalshi = byId("kalshi-sim");
    const reason = async (v: SimulatedVenue, o: ChildOrder) => {
      const r = await v.place(o);
      return r.kind === "rejected" ? r.reason.split(":")[0] : r.kind;
    };
    expect(await reason(poly, order(poly, FED, { limitPrice: 615_000n }))).toBe("invalid_tick");
    expect(await reason(poly, order(poly, FED, { limitPrice: ONE }))).toBe("invalid_tick");
    expect(await reason(poly, order(poly, FED, { shares: 10_005_000n }))).toBe("invalid_lot");
    expect(await reason(poly, order(poly, FED, { shares: 4_990_000n }))).toBe("below_min_size");
    expect(await reason(kalshi, order(kalshi, FED, { shares: 1_500_000n }))).toBe("invalid_lot");
    expect(await reason(kalshi, order(kalshi, FED, { limitPrice: 10_000n }))).toBe("no_match");
    const closed = { ...order(kalshi, FED), venueMarketId: marketOf("us-house-dem-2026", kalshi.id) };
    expect(await reason(kalshi, closed)).toBe("market_closed");
    expect(await reason(kalshi, { ...closed, venueMarketId: "KXNOPE" })).toBe("unknown_market");
    expect(kalshi.book(closed.venueMarketId, "YES")).toBeUndefined();
  });

  it("read each market's resolution as the catalog starts it, and throw while down or for a market they do not list", async () => {
    const { byId } = setup();
    const kalshi = byId("kalshi-sim");
    expect(await kalshi.resolution(marketOf(FED, kalshi.id))).toEqual({ state: "open" });
    expect(await kalshi.resolution(marketOf("us-house-dem-2026", kalshi.id))).toEqual({ state: "closed" });
    expect(await kalshi.resolution(marketOf("fed-cut-2026-09", kalshi.id))).toEqual({ state: "resolved", outcome: "NO" });
    await expect(kalshi.resolution("KXNOPE")).rejects.toBeInstanceOf(AppError);
    kalshi.setFaults({ down: true });
    await expect(kalshi.resolution(marketOf(FED, kalshi.id))).rejects.toMatchObject({ code: "venue_unavailable" });
  });

  it("fault reject: every new order is refused definitely and nothing fills", async () => {
    const { byId } = setup();
    const kalshi = byId("kalshi-sim");
    kalshi.setFaults({ reject: true });
    const o = order(kalshi, FED);
    const book = kalshi.book(o.venueMarketId, "YES");
    expect((await kalshi.place(o)).kind).toBe("rejected");
    expect(kalshi.book(o.venueMarketId, "YES")).toEqual(book);
    expect(kalshi.health().state).toBe("degraded");
    kalshi.setFaults({ reject: false });
    expect((await kalshi.place(o)).kind).toBe("filled");
  });

  it("fault partial: fills only half of the order", async () => {
    const { byId } = setup();
    const poly = byId("polymarket-sim");
    poly.setFaults({ partial: true });
    const r = await poly.place(order(poly, FED, { shares: 101n * ONE, limitPrice: 990_000n }));
    expect(r.kind).toBe("partial");
    if (r.kind === "partial") expect(r.fills.reduce((s, f) => s + f.shares, 0n)).toBe(50_500_000n);
  });

  it("fault timeout ack_lost: the order executes but the caller hears unknown; status and a retry find it", async () => {
    const { byId } = setup();
    const kalshi = byId("kalshi-sim");
    kalshi.setFaults({ timeout: "ack_lost" });
    const o = order(kalshi, FED);
    const r = await kalshi.place(o);
    expect(r.kind).toBe("unknown");
    const status = await kalshi.status(o.clientOrderId);
    expect(status.kind).toBe("done");
    kalshi.setFaults({ timeout: false });
    const retry = await kalshi.place(o);
    expect(retry.kind === "filled" && status.kind === "done" && retry.fills).toEqual(status.kind === "done" && status.fills);
  });

  it("fault timeout request_lost: unknown, and the venue never saw the order", async () => {
    const { byId } = setup();
    const kalshi = byId("kalshi-sim");
    kalshi.setFaults({ timeout: "request_lost" });
    const o = order(kalshi, FED);
    const book = kalshi.book(o.venueMarketId, "YES");
    expect((await kalshi.place(o)).kind).toBe("unknown");
    expect(await kalshi.status(o.clientOrderId)).toEqual({ kind: "not_found" });
    expect(kalshi.book(o.venueMarketId, "YES")).toEqual(book);
  });

  it("fault down: health down, books stop moving and age, orders refused, status unavailable", async () => {
    const { byId, advance } = setup();
    const lim = byId("limitless-sim");
    const o = order(lim, FED);
    lim.setFaults({ down: true });
    const book = lim.book(o.venueMarketId, "YES")!;
    advance(6_000);
    lim.tick();
    expect(lim.book(o.venueMarketId, "YES")).toEqual(book);
    const h = lim.health();
    expect(h.state).toBe("down");
    expect(h.bookAgeMs).toBe(6_000);
    expect(await lim.place(o)).toMatchObject({ kind: "rejected" });
    await expect(lim.status(o.clientOrderId)).rejects.toSatisfy((e) => e instanceof AppError && e.code === "venue_unavailable");
    lim.setFaults({ down: false });
    lim.tick();
    expect(lim.health()).toMatchObject({ state: "up", bookAgeMs: 0 });
  });

  it("measure each place() round trip and report p50 and p99", async () => {
    const { byId } = setup({ latencyScale: 0.05 });
    const kalshi = byId("kalshi-sim");
    expect(kalshi.latency()).toEqual({ p50Ms: undefined, p99Ms: undefined, samples: 0 });
    for (let i = 0; i < 5; i++) await kalshi.place(order(kalshi, FED, { shares: ONE }));
    const l = kalshi.latency();
    expect(l.samples).toBe(5);
    expect(l.p50Ms).toBeGreaterThan(0);
    expect(l.p99Ms!).toBeGreaterThanOrEqual(l.p50Ms!);
    expect(kalshi.health().latency).toEqual(l);
  });

  it("move the books on a timer between start() and stop(), and tell listeners", async () => {
    const venues = createSimulatedVenues(catalog, { seed: 2, latencyScale: 0, tickMs: 5 });
    const poly = venues[0]!;
    const id = marketOf(FED, poly.id);
    const updates: string[] = [];
    const off = poly.onBook((u) => updates.push(u.venueMarketId));
    const first = poly.book(id, "YES")!.updatedAt;
    await poly.start();
    await new Promise((r) => setTimeout(r, 60));
    await poly.stop();
    off();
    expect(updates).toContain(id);
    const stopped = poly.book(id, "YES");
    expect(stopped!.updatedAt).toBeGreaterThan(first);
    const seen = updates.length;
    await new Promise((r) => setTimeout(r, 30));
    expect(poly.book(id, "YES")).toEqual(stopped);
    expect(updates.length).toBe(seen);
  });
});
