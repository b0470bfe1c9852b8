import type { Venue } from "../venue.ts";
import { LimitlessVenue, type LimitlessVenueOptions } from "./limitless-venue.ts";

/** The Limitless adapter, pointed at the real venue or at the simulator by its URLs and credentials. */
export function createLimitlessVenue(opts: LimitlessVenueOptions): Venue {
  return new LimitlessVenue(opts);
}

export { LimitlessVenue, type LimitlessVenueOptions } from "./limitless-venue.ts";
export { type LimitlessCredentials } from "./signing.ts";
export { startLimitlessSim, LIMITLESS_CLOB_EXCHANGE, type LimitlessSim, type LimitlessSimOptions } from "./sim/limitless-sim.ts";
