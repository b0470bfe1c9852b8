import type { Clock } from "../domain/types.ts";
import type { MarketCatalog } from "../markets/catalog.ts";
import type { Venue } from "./venue.ts";
import { createKalshiVenue, startKalshiSim, type KalshiCredentials } from "./kalshi/index.ts";
import { createPolymarketVenue, startPolymarketSim, type PolymarketCredentials } from "./polymarket/index.ts";
import { createLimitlessVenue, startLimitlessSim, type LimitlessCredentials } from "./limitless/index.ts";

export const VENUE_NAMES = ["polymarket", "kalshi", "limitless"] as const;
export type VenueName = (typeof VENUE_NAMES)[number];

/** Where a venue adapter points: the real venue's endpoints and credentials, or (unset) its local simulator. */
export interface VenueEndpoints {
  polymarket?: { baseUrl: string; wsUrl: string; credentials: PolymarketCredentials };
  kalshi?: { baseUrl: string; wsUrl: string; credentials: KalshiCredentials };
  limitless?: { baseUrl: string; wsUrl: string; credentials: LimitlessCredentials };
}

export interface VenueSetup {
  venues: Venue[];
  stop(): Promise<void>;
}

/**
 * Starts the configured venues. Each real adapter talks to the venue at its configured endpoint or, by
 * default, to a simulator started here that speaks the venue's own wire protocol on loopback: the code a
 * user runs against the real venue is the code the embedded default and the tests run.
 * Venue ids are the names the event catalog lists markets under.
 */
export async function startVenues(opts: {
  names: readonly VenueName[];
  endpoints: VenueEndpoints;
  catalog: MarketCatalog;
  seed: number;
  latencyScale: number;
  clock: Clock;
}): Promise<VenueSetup> {
  const { catalog, seed, latencyScale, clock } = opts;
  const venues: Venue[] = [];
  const stops: (() => Promise<void>)[] = [];
  try {
    for (const name of opts.names) {
      if (name === "polymarket") {
        let at = opts.endpoints.polymarket;
        if (!at) {
          const sim = await startPolymarketSim({ catalog, seed, latencyScale, clock });
          stops.push(() => sim.stop());
          at = { baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials };
        }
        venues.push(createPolymarketVenue({ ...at, catalog, clock }));
      } else if (name === "kalshi") {
        let at = opts.endpoints.kalshi;
        if (!at) {
          const sim = await startKalshiSim({ catalog, seed, latencyScale, clock });
          stops.push(() => sim.stop());
          at = { baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials };
        }
        venues.push(createKalshiVenue({ ...at, catalog, clock }));
      } else {
        let at = opts.endpoints.limitless;
        if (!at) {
          const sim = await startLimitlessSim({ catalog, seed, latencyScale, clock });
          stops.push(() => sim.stop());
          at = { baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials };
        }
        venues.push(createLimitlessVenue({ ...at, catalog, clock }));
      }
    }
    for (const v of venues) {
      await v.start();
      stops.unshift(() => v.stop());
    }
  } catch (e) {
    for (const stop of stops) await stop().catch(() => undefined);
    throw e;
  }
  return {
    venues,
    stop: async () => {
      for (const stop of stops) await stop();
    },
  };
}
