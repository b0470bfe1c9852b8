import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { MarketCatalog } from "../../markets/catalog.ts";
import { KalshiVenue } from "./kalshi-venue.ts";
import { startKalshiSim } from "./sim/kalshi-sim.ts";

const catalog = MarketCatalog.load();
/** A combo (multivariate event) market: a parlay of two of the catalog's questions, which Kalshi mints on demand and lists among its open markets. */
const COMBO = "KXMVECROSSCATEGORY-S2026PARLAY-1";
const base = JSON.parse(readFileSync(new URL("../../markets/events.json", import.meta.url), "utf8"));
const withCombo = MarketCatalog.fromJson({
  events: [
    ...base.events,
    {
      event_id: "kxmve-parlay",
      title: "Fed rate cut in December 2026? and Bitcoin above $150,000 on December 31, 2026?",
      description: "Resolves YES if both legs resolve YES.",
      outcomes: ["YES", "NO"],
      status: "open",
      close_time: "2026-12-31T21:00:00Z",
      resolution: null,
      base_price: "0.2",
      listings: [{ venue: "kalshi-sim", venue_market_id: COMBO, outcome_ids: { YES: "yes", NO: "no" } }],
    },
  ],
});

describe("Kalshi discover(): combos (multivariate events)", () => {
  it("finds the open binary markets the catalog does not list and leaves combos out, reading none of their events", async () => {
    const sim = await startKalshiSim({ catalog: withCombo, seed: 17, latencyScale: 0, tickMs: 40 });
    const venue = new KalshiVenue({ baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 2_000 });
    try {
      const send = vi.spyOn(venue as unknown as { send: (method: string, path: string) => Promise<unknown> }, "send");
      const found = (await venue.discover()).map((m) => m.venueMarketId);
      // a parlay is no question of its own: offered to `crossfill events match`, it would be proposed as one, or as a listing of one of its legs
      expect(found).not.toContain(COMBO);
      expect(found).toContain("KXFEDCUT-27MAR-T25");
      expect(send.mock.calls.map(([, path]) => path).filter((p) => p.includes("KXMVE"))).toEqual([]);
    } finally {
      await venue.stop();
      await sim.stop();
    }
  });
});
