import { describe, expect, it } from "vitest";
import { MarketCatalog } from "../../markets/catalog.ts";
import type { ChildOrder } from "../venue.ts";
import { createKalshiVenue, startKalshiSim } from "./index.ts";

const catalog = MarketCatalog.load();
const DAY_MS = 24 * 3600 * 1000;

describe("Kalshi: a child order this process never learnt the id of", () => {
  it("is found in the child's own window, however long ago it was placed (a start after days down), and not outside it", async () => {
    const clock = { offset: 0, now: () => Date.now() + clock.offset };
    const sim = await startKalshiSim({ catalog, seed: 11, latencyScale: 0, tickMs: 40, clock });
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
        clientOrderId: `find-${process.pid}-${Date.now()}`,
        venueMarketId: m.venueMarketId,
        outcome: "YES",
        side: "buy",
        limitPrice: best.price + 2n * m.tickSize,
        shares: m.minOrderShares,
        expiresAt: clock.now() + 30_000,
      };
      const placed = await placer.place(child);
      expect(placed.kind).toBe("filled");

      // Eight days on, a new process (no ids learnt) asks about it, as recovery does after a long outage.
      clock.offset += 8 * DAY_MS;
      later = createKalshiVenue(options);
      await later.start();
      const status = await later.status(child.clientOrderId, child);
      expect(status).toMatchObject({ kind: "done", venueOrderId: placed.kind === "filled" ? placed.venueOrderId : "" });
      // A child whose window holds no such order: the lookup reads that window only.
      expect(await createKalshiVenue(options).status(child.clientOrderId, { ...child, expiresAt: child.expiresAt + 3 * DAY_MS })).toEqual({ kind: "not_found" });
    } finally {
      await later?.stop();
      await placer.stop();
      await sim.stop();
    }
  });
});
