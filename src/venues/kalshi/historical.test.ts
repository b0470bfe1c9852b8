import { describe, expect, it } from "vitest";
import { MarketCatalog } from "../../markets/catalog.ts";
import { createKalshiVenue, startKalshiSim } from "./index.ts";

const catalog = MarketCatalog.load();
const DAY_MS = 24 * 3600 * 1000;

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
