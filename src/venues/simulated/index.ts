import type { Clock } from "../../domain/types.ts";
import type { MarketCatalog } from "../../markets/catalog.ts";
import { SIM_PROFILES } from "./profiles.ts";
import { SimulatedVenue } from "./simulated-venue.ts";

export interface SimulatedVenuesOptions {
  seed: number;
  /** 1 for realistic latency; tests use a small factor or 0. */
  latencyScale?: number;
  tickMs?: number;
  clock?: Clock;
  freshnessMs?: number;
}

/** The three simulated venues (polymarket-sim, kalshi-sim, limitless-sim), each listing its markets of the catalog. */
export function createSimulatedVenues(catalog: MarketCatalog, opts: SimulatedVenuesOptions): SimulatedVenue[] {
  return SIM_PROFILES.map((profile) => new SimulatedVenue({ ...opts, profile, events: catalog.events() }));
}

export { SimulatedVenue, type SimulatedVenueOptions } from "./simulated-venue.ts";
export { SimExchange, type SimFaults } from "./exchange.ts";
export { KALSHI_SIM, LIMITLESS_SIM, POLYMARKET_SIM, SIM_PROFILES, type VenueProfile } from "./profiles.ts";
