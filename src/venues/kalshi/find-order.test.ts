import { describe, expect, it } from "vitest";
import { MarketCatalog } from "../../markets/catalog.ts";
import { readsOf, takingChild, tradeOn } from "../../../test/helpers/kalshi-child.ts";
import { createKalshiVenue, startKalshiSim } from "./index.ts";

const catalog = MarketCatalog.load();
const DAY_MS = 24 * 3600 * 1000;

/** A child order filled on a fresh simulator whose clock the case moves on; `later` makes a new process (no ids learnt), as recovery after a long outage is. */
async function filledChild(sim: { seed: number; historicalAfterMs?: number }) {
  const clock = { offset: 0, now: () => Date.now() + clock.offset };
  const venueSim = await startKalshiSim({ catalog, latencyScale: 0, tickMs: 40, clock, ...sim });
  const options = { baseUrl: venueSim.url, wsUrl: venueSim.wsUrl, credentials: venueSim.credentials, catalog, clock, requestTimeoutMs: 2_000 };
  const venues = [createKalshiVenue(options)];
  const stop = async () => {
    for (const venue of venues) await venue.stop();
    await venueSim.stop();
  };
  try {
    const placer = venues[0]!;
    await placer.start();
    const child = takingChild(placer, catalog, { name: `child-${sim.seed}`, now: clock.now() });
    const placed = await placer.place(child);
    if (placed.kind !== "filled") throw new Error(`the child order was not filled: ${placed.kind}`);
    const later = async (afterMs: number) => {
      clock.offset += afterMs;
      const venue = createKalshiVenue(options);
      venues.push(venue);
      await venue.start();
      return venue;
    };
    return { child, placed, placer, clock, later, unstarted: () => createKalshiVenue(options), stop, venueSim };
  } catch (e) {
    await stop();
    throw e;
  }
}

describe("Kalshi: a child order this process never learnt the id of", () => {
  it("is found in the child's own window, however long ago it was placed (a start after days down), and not outside it", async () => {
    const { child, placed, later, unstarted, stop } = await filledChild({ seed: 11 });
    try {
      const status = await (await later(8 * DAY_MS)).status(child.clientOrderId, child);
      expect(status).toMatchObject({ kind: "done", venueOrderId: placed.venueOrderId });
      // A child whose window holds no such order: the lookup reads that window only.
      expect(await unstarted().status(child.clientOrderId, { ...child, expiresAt: child.expiresAt + 3 * DAY_MS })).toEqual({ kind: "not_found" });
    } finally {
      await stop();
    }
  });

  it("is found with its fills by status and trades past the historical cutoff, from GET /historical/orders and /historical/fills", async () => {
    // Kalshi keeps about three months live; the rest only under /historical
    const { child, placed, later, stop } = await filledChild({ seed: 12, historicalAfterMs: 90 * DAY_MS });
    try {
      const venue = await later(100 * DAY_MS);
      expect(await venue.status(child.clientOrderId, child)).toEqual({ kind: "done", venueOrderId: placed.venueOrderId, fills: placed.fills });
      expect(await venue.trades()).toEqual(placed.fills);
    } finally {
      await stop();
    }
  });
});

describe("Kalshi: reads past the historical cutoff", () => {
  it("reads an old child's fills, and the account's history, a page of 1,000 at a time from the historical lists, the child's from its own time only", async () => {
    const { child, placed, clock, later, stop, venueSim } = await filledChild({ seed: 15, historicalAfterMs: 90 * DAY_MS });
    try {
      // two hours on, the account trades 250 more contracts on the child's market
      clock.offset += 2 * 3600 * 1000;
      await tradeOn(venueSim, child.venueMarketId, 250, clock.now());
      const venue = await later(100 * DAY_MS);
      const reads = readsOf(venue);
      expect(await venue.status(child.clientOrderId, child)).toEqual({ kind: "done", venueOrderId: placed.venueOrderId, fills: placed.fills });
      // the child's fills are read from its own time: its one fill, not the 250 made since
      expect((await reads()).filter((r) => r.path === "/historical/fills")).toEqual([{ path: "/historical/fills", listed: 1 }]);
      expect(await venue.trades()).toHaveLength(251);
      expect((await reads()).filter((r) => r.path.startsWith("/historical/")).map((r) => r.path)).toEqual(["/historical/orders", "/historical/fills", "/historical/fills", "/historical/orders"]);
    } finally {
      await stop();
    }
  });
});

describe("Kalshi: a child order this process learnt the id of", () => {
  it("is found by the process that placed it once it is past the historical cutoff, which GET /portfolio/orders/{order_id} answers 404 for", async () => {
    // a server up for a hundred days recovering, or cancelling, a child it placed: it holds the order id, which the live endpoint no longer serves
    const { child, placed, placer, clock, stop } = await filledChild({ seed: 14, historicalAfterMs: 90 * DAY_MS });
    try {
      clock.offset += 100 * DAY_MS;
      expect(await placer.status(child.clientOrderId, child)).toEqual({ kind: "done", venueOrderId: placed.venueOrderId, fills: placed.fills });
      expect(await placer.cancel(child.clientOrderId, child)).toEqual({ kind: "done", venueOrderId: placed.venueOrderId, fills: placed.fills });
    } finally {
      await stop();
    }
  });
});
