import { readFileSync } from "node:fs";
import { MarketCatalog } from "../../src/markets/catalog.ts";

/** A combo (multivariate event) market: a parlay of two of the catalog's questions, which Kalshi mints on demand and lists among its open markets. */
export const COMBO = "KXMVECROSSCATEGORY-S2026PARLAY-1";

/** The shipped catalog with COMBO listed on the Kalshi simulator as one more event, as an operator may list it by hand. */
export function catalogWithCombo(): MarketCatalog {
  const base = JSON.parse(readFileSync(new URL("../../src/markets/events.json", import.meta.url), "utf8"));
  return MarketCatalog.fromJson({
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
}
