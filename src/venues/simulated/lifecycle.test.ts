import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ONE } from "../../domain/money.ts";
import type { Clock } from "../../domain/types.ts";
import { MarketCatalog } from "../../markets/catalog.ts";
import { SimExchange } from "./exchange.ts";
import { drawnOutcome, scheduleOrder, SimMarketLifecycle } from "./lifecycle.ts";
import { KALSHI_SIM, POLYMARKET_SIM } from "./profiles.ts";

const catalog = MarketCatalog.load();
const NOW = 1_800_000_000_000;
/** The fake time of each test, which its timers run on too: it starts at NOW. */
const clock: Clock = { now: () => Date.now() };
const FED = "fed-cut-2026-12";
const marketOf = (eventId: string, venue: string) => catalog.get(eventId)!.listings.find((l) => l.venue === venue)!.venueMarketId;

function lifecycle(profile = KALSHI_SIM, extra: { schedule?: { everyMs: number; from: number }; stateFile?: string } = {}) {
  const exchange = new SimExchange({ profile, events: catalog.events(), seed: 5, clock });
  return { exchange, markets: new SimMarketLifecycle({ exchange, catalog, seed: 5, clock, ...extra }) };
}

beforeEach(() => {
  vi.useFakeTimers({ now: NOW });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("a simulated venue's market lifecycle", () => {
  it("starts each market as the catalog has it, and ends an open one on command: its book gone, orders refused", () => {
    const { exchange, markets } = lifecycle();
    expect(markets.state(marketOf("fed-cut-2026-09", KALSHI_SIM.id))).toEqual({ state: "resolved", outcome: "NO", at: Date.parse(catalog.get("fed-cut-2026-09")!.closeTime) });
    expect(markets.state(marketOf("us-house-dem-2026", KALSHI_SIM.id))!.state).toBe("closed");
    const id = marketOf(FED, KALSHI_SIM.id);
    const ask = exchange.book(id, "YES")!.asks[0]!;
    expect(markets.resolve(id, "YES")).toEqual({ kind: "done", lifecycle: { state: "resolved", outcome: "YES", at: NOW } });
    expect(exchange.market(id)!.status).toBe("resolved");
    expect(exchange.book(id, "YES")).toBeUndefined();
    const r = exchange.place({ clientOrderId: "late", venueMarketId: id, outcome: "YES", side: "buy", limitPrice: ask.price, shares: ONE, expiresAt: NOW + 60_000 });
    expect(r).toMatchObject({ kind: "rejected", reason: expect.stringMatching(/^market_closed/) });
    expect(markets.resolve("NO-SUCH-TICKER", "YES")).toEqual({ kind: "unknown_market" });
  });

  it("keeps a resolution final: the same outcome again changes nothing, another outcome or a close is refused", () => {
    const { markets } = lifecycle();
    const id = marketOf(FED, KALSHI_SIM.id);
    expect(markets.close(id)).toMatchObject({ kind: "done", lifecycle: { state: "closed" } });
    expect(markets.close(id)).toMatchObject({ kind: "done", lifecycle: { state: "closed" } });
    expect(markets.resolve(id, "NO")).toMatchObject({ kind: "done", lifecycle: { state: "resolved", outcome: "NO" } });
    expect(markets.resolve(id, "NO")).toMatchObject({ kind: "done", lifecycle: { state: "resolved", outcome: "NO" } });
    expect(markets.resolve(id, "YES")).toMatchObject({ kind: "conflict", lifecycle: { state: "resolved", outcome: "NO" } });
    expect(markets.close(id)).toMatchObject({ kind: "conflict", lifecycle: { state: "resolved", outcome: "NO" } });
  });

  it("resolves one venue's market to another outcome than another venue's, as a disputed event needs", () => {
    const kalshi = lifecycle(KALSHI_SIM);
    const poly = lifecycle(POLYMARKET_SIM);
    kalshi.markets.resolve(marketOf(FED, KALSHI_SIM.id), "YES");
    poly.markets.resolve(marketOf(FED, POLYMARKET_SIM.id), "NO");
    expect(kalshi.markets.state(marketOf(FED, KALSHI_SIM.id))).toMatchObject({ state: "resolved", outcome: "YES" });
    expect(poly.markets.state(marketOf(FED, POLYMARKET_SIM.id))).toMatchObject({ state: "resolved", outcome: "NO" });
  });

  it("on its schedule, resolves the catalog's open events one a period, soonest close first, each to the same outcome on every venue", () => {
    const order = scheduleOrder(catalog.events());
    expect(order.every((e) => e.status === "open")).toBe(true);
    expect(order.map((e) => Date.parse(e.closeTime))).toEqual(order.map((e) => Date.parse(e.closeTime)).sort((a, b) => a - b));
    const schedule = { everyMs: 1_000, from: NOW };
    const venues = [lifecycle(KALSHI_SIM, { schedule }), lifecycle(POLYMARKET_SIM, { schedule })];
    for (const v of venues) v.markets.start();
    /** The k-th scheduled event on each venue that lists it. */
    const states = (k: number) =>
      venues.flatMap(({ exchange, markets }) => order[k]!.listings.filter((l) => l.venue === exchange.venue).map((l) => markets.state(l.venueMarketId)));
    vi.advanceTimersByTime(999);
    expect(states(0)).toEqual(states(0).map(() => ({ state: "open" })));
    for (let k = 0; k < 3; k++) {
      vi.advanceTimersByTime(1_000);
      expect(states(k).length).toBeGreaterThan(0);
      expect(states(k)).toEqual(states(k).map(() => ({ state: "resolved", outcome: drawnOutcome(order[k]!, 5), at: NOW + (k + 1) * 1_000 })));
      expect(states(k + 1)).toEqual(states(k + 1).map(() => ({ state: "open" })));
    }
    for (const v of venues) v.markets.stop();
  });

  it("draws YES about as often as the base price says, the same draw for the same seed and event", () => {
    const event = catalog.get(FED)!;
    expect(drawnOutcome(event, 7)).toBe(drawnOutcome(event, 7));
    const yes = Array.from({ length: 2_000 }, (_, seed) => drawnOutcome(event, seed)).filter((o) => o === "YES").length / 2_000;
    expect(Math.abs(yes - Number(event.basePrice) / Number(ONE))).toBeLessThan(0.05);
  });

  it("remembers what closed and resolved across a restart, when given a file", () => {
    const dir = mkdtempSync(join(tmpdir(), "crossfill-lifecycle-"));
    try {
      const stateFile = join(dir, "kalshi-sim-markets.json");
      const first = lifecycle(KALSHI_SIM, { stateFile });
      first.markets.resolve(marketOf(FED, KALSHI_SIM.id), "YES");
      first.markets.close(marketOf("us-recession-2026", KALSHI_SIM.id));
      const again = lifecycle(KALSHI_SIM, { stateFile });
      expect(again.markets.state(marketOf(FED, KALSHI_SIM.id))).toEqual({ state: "resolved", outcome: "YES", at: NOW });
      expect(again.exchange.market(marketOf(FED, KALSHI_SIM.id))!.status).toBe("resolved");
      expect(again.markets.state(marketOf("us-recession-2026", KALSHI_SIM.id))).toEqual({ state: "closed", at: NOW });
      expect(again.markets.state(marketOf("fed-cut-2027-01", KALSHI_SIM.id))).toEqual({ state: "open" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
