import { describe, expect, it, vi } from "vitest";
import { MarketCatalog } from "../../markets/catalog.ts";
import { KalshiVenue } from "./kalshi-venue.ts";
import { startKalshiSim } from "./sim/kalshi-sim.ts";
import { catalogWithCombo, COMBO } from "../../../test/helpers/kalshi-combo.ts";

const catalog = MarketCatalog.load();
const withCombo = catalogWithCombo();

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
