/**
 * The conformance harness: what a venue's test file hands to `runConformance` (./suite.ts).
 *
 * Every real venue adapter is tested the same way: a simulator of the venue's wire protocol is
 * started on loopback, the production adapter is pointed at it, and one suite of cases runs
 * against the adapter through the `Venue` port only. A venue joins by writing, e.g.
 * `test/conformance/kalshi.test.ts`:
 *
 *   import { runConformance } from "./suite.ts";
 *   runConformance("kalshi", async () => {
 *     const sim = await startKalshiSim({ catalog, seed: 7, latencyScale: 0, tickMs: 40 });
 *     return simHarness(sim, catalog, (options) => createKalshiVenue(options),
 *                       (credentials) => <credentials the sim refuses>, { fees: [...], signing: [...] });
 *   });
 *
 * `makeHarness` is called once per case (a fresh simulator and adapter each time, so a fault
 * left on by one case never leaks into the next); keep start-up under ~200 ms.
 *
 * What the suite assumes of the simulator:
 * - it lists exactly the catalog's listings for `venue.id` (open, closed and resolved ones), and
 *   moves the books of open markets by itself every few tens of ms (the harness picks the pace);
 * - it starts every account with nothing held, and keeps what each holds from its fills, so the
 *   adapter sells only what it bought (on a venue that nets outcomes, see `netting`);
 * - it closes and resolves a market when told, on its control routes (`/_sim/markets/…`), and states
 *   it in the venue's own fields from then on;
 * - the fault switches below act on the wire, not inside the adapter: the adapter under test
 *   must cope with them the way it would cope with the real venue.
 *
 * What the suite checks of the adapter: see the case names in ./suite.ts.
 */
import type { FeeModel } from "../../src/domain/fees.ts";
import type { Micro } from "../../src/domain/money.ts";
import type { Level, Outcome } from "../../src/domain/types.ts";
import type { MarketCatalog } from "../../src/markets/catalog.ts";
import { concludeSimMarket } from "../../src/venues/net/sim-markets.ts";
import type { Venue } from "../../src/venues/venue.ts";

/** Faults a simulator injects on the wire, in venue-neutral terms. */
export interface FaultSwitches {
  /** Extra delay, in ms, before every REST answer. */
  latencyMs: number;
  /** REST requests are held and never answered, so the adapter's own timeout fires. An order sent under this switch never reaches the matching engine. */
  timeout: boolean;
  /** The next n REST requests answer with a 5xx status and do nothing else. */
  serverErrors: number;
  /** The next `count` REST requests answer 429 with `Retry-After: retryAfterSeconds` and do nothing else. */
  rateLimit: { count: number; retryAfterSeconds: number } | null;
  /** Orders execute, then the connection is cut before the answer is sent. */
  ackLost: boolean;
  /** Orders fill only half of what they ask (rounded down to the venue's lot). */
  partialFills: boolean;
  /** Stream connections stay open but carry nothing (not even heartbeats), so books go stale. */
  streamSilent: boolean;
  /** Orders take half of what they ask and the rest stays open on the book until cancelled. */
  resting: boolean;
  /** Every trade the venue reports is reported twice, with the same trade id. */
  duplicateTrades: boolean;
}

export interface FaultControl {
  set(change: Partial<FaultSwitches>): void;
  /** Every switch back off. */
  reset(): void;
  /** Cuts every open stream connection now; the adapter must reconnect by itself. */
  dropStreams(): void;
  /** Stream connections the simulator has accepted since it started: a reconnection shows as an increase. */
  streamConnections(): number;
}

/** A fee from the venue's published fee documentation: `fee` is what the venue charges for one taker order taking `levels`. */
export interface FeeExample {
  what: string;
  /** Where the example is published (URL of the fee page or table). */
  source: string;
  model: FeeModel;
  levels: Level[];
  fee: Micro;
}

/** A signature the adapter computes, checked against a vector published by the venue or produced by its official client. */
export interface SigningExample {
  what: string;
  source: string;
  actual: () => string | Promise<string>;
  expected: string;
}

export interface ConformanceHarness {
  /** The adapter under test, started and pointed at the simulator. */
  venue: Venue;
  catalog: MarketCatalog;
  faults: FaultControl;
  timing: {
    /** How long the adapter waits for one REST answer before it gives up on it. */
    requestTimeoutMs: number;
    /** The adapter's `freshnessMs`: the suite waits multiples of it for stale marking and recovery. */
    freshnessMs: number;
  };
  /** Another adapter on the same simulator whose request signing the simulator must refuse (not started). */
  withWrongCredentials(): Venue;
  /** Another adapter on the same simulator and account reading `catalog`, as the adapter after a restart (not started). */
  restarted(catalog: MarketCatalog): Venue;
  /** Ends a market on the venue, as its operator (or `crossfill events resolve`) would: through the simulator's control routes. */
  markets: {
    close(venueMarketId: string): Promise<void>;
    resolve(venueMarketId: string, outcome: Outcome): Promise<void>;
  };
  examples: { fees: FeeExample[]; signing: SigningExample[] };
  /**
   * The venue keeps one net position per market (Kalshi: YES held less NO held), so selling an
   * outcome the account does not hold is the other outcome's buy, which the venue takes, rather than
   * a refusal.
   */
  netting: boolean;
  /**
   * A buy spends what its shares cost at its limit, as a market order (Polymarket): at better asks it
   * fills more shares than it asks for, never more pUSD.
   */
  buysSpend: boolean;
  stop(): Promise<void>;
}

export type MakeHarness = () => Promise<ConformanceHarness>;

/** What the harness needs of a venue simulator: where it listens, the credentials it accepts, its fault switches. */
export interface SimUnderTest<C> {
  url: string;
  wsUrl: string;
  credentials: C;
  faults: FaultControl;
  stop(): Promise<void>;
}

/** The options every adapter is created with, pointed at the simulator with the suite's timing. */
export interface AdapterOptions<C> {
  baseUrl: string;
  wsUrl: string;
  credentials: C;
  catalog: MarketCatalog;
  requestTimeoutMs: number;
  freshnessMs: number;
}

/**
 * The harness of an adapter started against `sim`: `create` makes the adapter from the common
 * options (adding its own), `spoil` turns the simulator's credentials into ones it must refuse.
 */
export async function simHarness<C>(
  sim: SimUnderTest<C>,
  catalog: MarketCatalog,
  create: (options: AdapterOptions<C>) => Venue,
  spoil: (credentials: C) => C,
  examples: ConformanceHarness["examples"],
  netting = false,
  buysSpend = false,
): Promise<ConformanceHarness> {
  const timing = { requestTimeoutMs: 400, freshnessMs: 600 };
  const options = { baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, ...timing };
  const venue = create(options);
  await venue.start();
  return {
    venue,
    catalog,
    faults: sim.faults,
    timing,
    withWrongCredentials: () => create({ ...options, credentials: spoil(sim.credentials) }),
    restarted: (other) => create({ ...options, catalog: other }),
    markets: {
      close: async (id) => void (await concludeSimMarket(sim.url, id, { state: "closed" })),
      resolve: async (id, outcome) => void (await concludeSimMarket(sim.url, id, { state: "resolved", outcome })),
    },
    examples,
    netting,
    buysSpend,
    stop: async () => {
      await venue.stop();
      await sim.stop();
    },
  };
}
