import type { Venue } from "../venue.ts";
import { OpinionVenue, type OpinionVenueOptions } from "./opinion-venue.ts";

/** The Opinion adapter, pointed at the real venue or at the simulator by its URLs and credentials. */
export function createOpinionVenue(opts: OpinionVenueOptions): Venue {
  return new OpinionVenue(opts);
}

export { OpinionVenue, OPINION_REQUESTS_PER_SECOND, type OpinionVenueOptions } from "./opinion-venue.ts";
export { type OpinionCredentials } from "./signing.ts";
export { startOpinionSim, OPINION_QUOTE_TOKEN, OPINION_SIM_EXCHANGE, type OpinionSim, type OpinionSimOptions } from "./sim/opinion-sim.ts";
