import type { Clock } from "../../domain/types.ts";
import type { MarketCatalog } from "../../markets/catalog.ts";
import type { Venue } from "../venue.ts";
import { LimitlessVenue, type LimitlessVenueOptions } from "./limitless-venue.ts";
import type { LimitlessCredentials } from "./signing.ts";

/** The Limitless adapter, pointed at the real venue or at the simulator by its URLs and credentials. */
export function createLimitlessVenue(
  opts: { baseUrl: string; wsUrl: string; credentials: LimitlessCredentials; catalog: MarketCatalog; clock?: Clock; venueId?: string } & Partial<LimitlessVenueOptions>,
): Venue {
  return new LimitlessVenue(opts);
}

export { LimitlessVenue, type LimitlessVenueOptions } from "./limitless-venue.ts";
export { type LimitlessCredentials } from "./signing.ts";
export { startLimitlessSim, LIMITLESS_CLOB_EXCHANGE, type LimitlessSim, type LimitlessSimOptions } from "./sim/limitless-sim.ts";
