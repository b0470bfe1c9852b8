import type { Clock } from "../../domain/types.ts";
import type { MarketCatalog } from "../../markets/catalog.ts";
import type { PolymarketCredentials } from "./auth.ts";
import { PolymarketVenue, type PolymarketVenueOptions } from "./polymarket-venue.ts";

/** The Polymarket adapter for main.ts: point it at the simulator's url/wsUrl or at clob.polymarket.com. */
export function createPolymarketVenue(
  opts: { baseUrl: string; wsUrl: string; credentials: PolymarketCredentials; catalog: MarketCatalog; clock?: Clock } & Partial<PolymarketVenueOptions>,
): PolymarketVenue {
  return new PolymarketVenue(opts);
}

export { PolymarketVenue, type PolymarketVenueOptions } from "./polymarket-venue.ts";
export type { PolymarketCredentials } from "./auth.ts";
export { startPolymarketSim, type PolymarketSim, type PolymarketSimOptions } from "./sim/index.ts";
