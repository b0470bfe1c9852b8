import { describe, expect, it } from "vitest";
import { MarketCatalog } from "../../markets/catalog.ts";
import type { ChildOrder } from "../venue.ts";
import { createKalshiVenue, startKalshiSim } from "./index.ts";

const catalog = MarketCatalog.load();
const DAY_MS = 24 * 3600 * 1000;

describe("Kalshi: an order past the historical cutoff", () => {
  it("is found with its fills by status and trades, from GET /historical/orders and /historical/fills", async () => {
    const clock = { offset: 0, now: () => Date.now() + clock.offset };
    // Kalshi keeps about three months live; the rest only under /historical
    const sim = await startKalshiSim({ catalog, seed: 12, latencyScale: 0, tickMs: 40, clock, historicalAfterMs: 90 * DAY_MS });
    const options = { baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, clock, requestTimeoutMs: 2_000 };
    const placer = createKalshiVenue(options);
    await placer.start();
    let later: ReturnType<typeof createKalshiVenue> | undefined;
    try {
      const listing = catalog
        .events()
        .flatMap((e) => e.listings)
        .find((l) => l.venue === placer.id && placer.market(l.venueMarketId)?.status === "open")!;
      const m = placer.market(listing.venueMarketId)!;
      const best = placer.book(m.venueMarketId, "YES")!.asks[0]!;
      const child: ChildOrder = {
        clientOrderId: `old-${process.pid}-${Date.now()}`,
        venueMarketId: m.venueMarketId,
        outcome: "YES",
        side: "buy",
        limitPrice: best.price + 2n * m.tickSize,
        shares: m.minOrderShares,
        expiresAt: clock.now() + 30_000,
      };
      const placed = await placer.place(child);
      expect(placed.kind).toBe("filled");
      if (placed.kind !== "filled") return;

      // A hundred days on, a new process (no ids learnt) recovers it, as after a long outage.
      clock.offset += 100 * DAY_MS;
      later = createKalshiVenue(options);
      await later.start();
      expect(await later.status(child.clientOrderId, child)).toEqual({ kind: "done", venueOrderId: placed.venueOrderId, fills: placed.fills });
      expect(await later.trades()).toEqual(placed.fills);
    } finally {
      await later?.stop();
      await placer.stop();
      await sim.stop();
    }
  });
});

describe("Kalshi: a market settled before the historical cutoff", () => {
  it("reads resolved from GET /historical/markets/{ticker}, as the live GET /markets/{ticker} no longer serves it", async () => {
    const clock = { offset: 0, now: () => Date.now() + clock.offset };
    const sim = await startKalshiSim({ catalog, seed: 13, latencyScale: 0, tickMs: 40, clock, historicalAfterMs: 90 * DAY_MS });
    const venue = createKalshiVenue({ baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, clock, requestTimeoutMs: 2_000 });
    await venue.start();
    try {
      const ticker = "KXRECSSNBER-26";
      sim.markets.resolve(ticker, "NO");
      expect(await venue.resolution(ticker)).toEqual({ state: "resolved", outcome: "NO" });
      // the event waits for another venue's listing; a hundred days on, Kalshi's market is historical
      clock.offset += 100 * DAY_MS;
      expect(await venue.resolution(ticker)).toEqual({ state: "resolved", outcome: "NO" });
    } finally {
      await venue.stop();
      await sim.stop();
    }
  });
});
