import type { Venue } from "../venue.ts";
import { KalshiVenue, type KalshiVenueOptions } from "./kalshi-venue.ts";

/** The Kalshi adapter, pointed at the real venue or at the simulator by its URLs and credentials. */
export function createKalshiVenue(opts: KalshiVenueOptions): Venue {
  return new KalshiVenue(opts);
}

export { KalshiVenue, type KalshiVenueOptions } from "./kalshi-venue.ts";
export { type KalshiCredentials } from "./signing.ts";
export { startKalshiSim, type KalshiSim, type KalshiSimOptions } from "./sim/kalshi-sim.ts";
