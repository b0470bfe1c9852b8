import type { Clock } from "../domain/types.ts";
import type { MarketCatalog } from "../markets/catalog.ts";
import type { StreamLog } from "./net/reconnecting-socket.ts";
import type { VenueSim, VenueSimOptions } from "./net/sim-server.ts";
import type { Venue } from "./venue.ts";
import { createKalshiVenue, startKalshiSim, type KalshiCredentials } from "./kalshi/index.ts";
import { createPolymarketVenue, startPolymarketSim, type PolymarketCredentials } from "./polymarket/index.ts";
import { createLimitlessVenue, startLimitlessSim, type LimitlessCredentials } from "./limitless/index.ts";
import { createOpinionVenue, startOpinionSim, type OpinionCredentials } from "./opinion/index.ts";

export const VENUE_NAMES = ["polymarket", "kalshi", "limitless", "opinion"] as const;
export type VenueName = (typeof VENUE_NAMES)[number];

interface CredentialsOf {
  polymarket: PolymarketCredentials;
  kalshi: KalshiCredentials;
  limitless: LimitlessCredentials;
  opinion: OpinionCredentials;
}

/** Where one venue's adapter points: the real venue, or a simulator of it, with the account to sign as. */
export interface VenueEndpoint<N extends VenueName = VenueName> {
  baseUrl: string;
  wsUrl: string;
  credentials: CredentialsOf[N];
}

/** Where each venue adapter points: the real venue's endpoints and credentials, or (unset) its local simulator. */
export type VenueEndpoints = { [N in VenueName]?: VenueEndpoint<N> };

// Tables keyed by venue name (mapped types), so one generic function serves every venue with its own credential type.
const SIMULATORS: { [N in VenueName]: (opts: VenueSimOptions) => Promise<VenueSim<CredentialsOf[N]>> } = {
  polymarket: startPolymarketSim,
  kalshi: startKalshiSim,
  limitless: startLimitlessSim,
  opinion: startOpinionSim,
};

type AdapterContext = { catalog: MarketCatalog; clock: Clock; log?: StreamLog };

const ADAPTERS: { [N in VenueName]: (at: VenueEndpoint<N>, ctx: AdapterContext) => Venue } = {
  polymarket: (at, ctx) => createPolymarketVenue({ ...at, ...ctx }),
  kalshi: (at, ctx) => createKalshiVenue({ ...at, ...ctx }),
  limitless: (at, ctx) => createLimitlessVenue({ ...at, ...ctx }),
  opinion: (at, ctx) => createOpinionVenue({ ...at, ...ctx }),
};

function adapter<N extends VenueName>(name: N, at: VenueEndpoint<N>, ctx: AdapterContext): Venue {
  return ADAPTERS[name](at, ctx);
}

async function startSim<N extends VenueName>(name: N, opts: VenueSimOptions): Promise<{ endpoint: VenueEndpoint<N>; stop(): Promise<void> }> {
  const sim = await SIMULATORS[name](opts);
  return { endpoint: { baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials }, stop: () => sim.stop() };
}

export interface VenueSims {
  /** Each started simulator's endpoint, as an adapter (or `crossfill sim`'s printed settings) takes it. */
  endpoints: VenueEndpoints;
  stop(): Promise<void>;
}

/**
 * Starts the named venues' wire-protocol simulators on loopback: the one way to run them, `crossfill sim`,
 * a process of its own (the server's child by default). With portBase, venue i of
 * VENUE_NAMES listens on portBase + i, so a venue keeps its port whichever others run; otherwise on free ports.
 */
export async function startVenueSims(opts: {
  names: readonly VenueName[];
  catalog: MarketCatalog;
  seed: number;
  latencyScale: number;
  clock: Clock;
  portBase?: number;
  /** The catalog's open events resolve one every this many ms, on every venue at once; absent: only when told. */
  resolveEveryMs?: number;
  /** Where the simulators keep what closed and resolved across restarts; absent: in memory. */
  stateDir?: string;
}): Promise<VenueSims> {
  const { names, portBase, resolveEveryMs, ...rest } = opts;
  // one schedule for every simulator, counted from now, so that an event resolves on every venue at the same moment
  const simOpts = { ...rest, resolveSchedule: resolveEveryMs === undefined ? undefined : { everyMs: resolveEveryMs, from: opts.clock.now() } };
  const endpoints: VenueEndpoints = {};
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops) await s();
  };
  try {
    for (const name of names) {
      const port = portBase === undefined ? undefined : portBase + VENUE_NAMES.indexOf(name);
      const sim = await startSim(name, { ...simOpts, port });
      stops.push(sim.stop);
      // assigned whole: `endpoints[name] =` cannot tie a name of the union to its own credential type
      Object.assign(endpoints, { [name]: sim.endpoint });
    }
  } catch (e) {
    await stop().catch(() => undefined);
    throw e;
  }
  return { endpoints, stop };
}

export interface VenueSetup {
  venues: Venue[];
  stop(): Promise<void>;
}

/**
 * Starts the configured venues' adapters, each at its endpoint: the real venue's, or a simulator's that
 * speaks the venue's own wire protocol on loopback (`crossfill sim`, which the server runs as a child
 * process by default: src/venues/sim-process.ts). The code a user runs against the real venue is the code
 * the embedded default and the tests run. Venue ids are the names the event catalog lists markets under.
 */
export async function startVenues(opts: {
  names: readonly VenueName[];
  endpoints: VenueEndpoints;
  catalog: MarketCatalog;
  clock: Clock;
  /** Where the adapters tell of their streams' reconnections and dropped frames, each bound to its venue. */
  log?: { child(bindings: Record<string, unknown>): StreamLog };
}): Promise<VenueSetup> {
  const { names, endpoints, catalog, clock, log } = opts;
  const stops: (() => Promise<void>)[] = [];
  const venues: Venue[] = [];
  try {
    for (const name of names) {
      const at = endpoints[name];
      if (!at) throw new Error(`No endpoint for the venue ${name}: set its *_BASE_URL, or run its simulator.`);
      venues.push(adapter(name, at, { catalog, clock, ...(log ? { log: log.child({ venue: name }) } : {}) }));
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
