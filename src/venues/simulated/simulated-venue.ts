import { performance } from "node:perf_hooks";
import { AppError } from "../../domain/errors.ts";
import { systemClock, type Clock, type Outcome } from "../../domain/types.ts";
import type { CatalogEvent } from "../../markets/catalog.ts";
import { LatencyRecorder } from "../latency.ts";
import type {
  BookSnapshot,
  BookUpdate,
  ChildOrder,
  ChildStatus,
  LatencyStats,
  PlaceResult,
  Unsubscribe,
  Venue,
  VenueDescription,
  VenueFill,
  VenueHealth,
  VenueMarket,
  VenueResolution,
} from "../venue.ts";
import { SimExchange, type SimFaults } from "./exchange.ts";
import { Rng, seedFor } from "./prng.ts";
import type { VenueProfile } from "./profiles.ts";

export interface SimulatedVenueOptions {
  profile: VenueProfile;
  events: readonly CatalogEvent[];
  seed: number;
  /** Multiplies the profile's latency and the timeout wait: 1 is realistic, 0 answers at once. */
  latencyScale?: number;
  /** Books move every this many ms once started. */
  tickMs?: number;
  clock?: Clock;
  freshnessMs?: number;
  /** How long a caller waits for an answer that never comes when the timeout fault is on, before scaling. */
  timeoutMs?: number;
}

export const DEFAULT_TICK_MS = 150;
export const DEFAULT_FRESHNESS_MS = 5_000;
const DEFAULT_TIMEOUT_MS = 2_000;

/** A simulated venue behind the Venue port, in process: the exchange plus network latency, timeouts and outages. */
export class SimulatedVenue implements Venue {
  readonly id: string;
  readonly freshnessMs: number;
  private readonly exchange: SimExchange;
  private readonly profile: VenueProfile;
  private readonly clock: Clock;
  private readonly latencyScale: number;
  private readonly tickMs: number;
  private readonly timeoutMs: number;
  /** Separate from the books' streams, so how long orders take never changes how the books move. */
  private readonly latencyRng: Rng;
  private readonly recorder = new LatencyRecorder();
  private timer: NodeJS.Timeout | undefined;

  constructor(opts: SimulatedVenueOptions) {
    this.profile = opts.profile;
    this.id = opts.profile.id;
    this.clock = opts.clock ?? systemClock;
    this.latencyScale = opts.latencyScale ?? 1;
    this.tickMs = opts.tickMs ?? DEFAULT_TICK_MS;
    this.freshnessMs = opts.freshnessMs ?? DEFAULT_FRESHNESS_MS;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(this.latencyScale >= 0) || !(this.tickMs > 0)) throw new RangeError("latencyScale must be >= 0 and tickMs > 0");
    this.latencyRng = new Rng(seedFor(opts.seed, this.id, "latency"));
    this.exchange = new SimExchange({ profile: opts.profile, events: opts.events, seed: opts.seed, clock: this.clock });
  }

  get faults(): Readonly<SimFaults> {
    return { ...this.exchange.faults };
  }

  setFaults(change: Partial<SimFaults>): void {
    Object.assign(this.exchange.faults, change);
  }

  async start(): Promise<void> {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.tickMs);
    // a simulator alone must not keep a finished test or CLI process alive
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Moves every book one step now; what the timer does, callable by tests for determinism. */
  tick(): void {
    this.exchange.step();
  }

  async markets(): Promise<VenueMarket[]> {
    return this.exchange.markets();
  }

  market(venueMarketId: string): VenueMarket | undefined {
    return this.exchange.market(venueMarketId);
  }

  async resolution(venueMarketId: string): Promise<VenueResolution> {
    if (this.exchange.faults.down) throw new AppError("venue_unavailable", `${this.id} is down; ask again later.`, { venue: this.id });
    const l = this.exchange.lifecycle(venueMarketId);
    if (!l) throw new AppError("venue_unavailable", `${this.id} lists no market ${venueMarketId}.`, { venue: this.id });
    return l.state === "resolved" ? { state: "resolved", outcome: l.outcome } : { state: l.state };
  }

  book(venueMarketId: string, outcome: Outcome): BookSnapshot | undefined {
    return this.exchange.book(venueMarketId, outcome);
  }

  onBook(listener: (u: BookUpdate) => void): Unsubscribe {
    return this.exchange.onBook(listener);
  }

  async place(order: ChildOrder): Promise<PlaceResult> {
    const faults = this.exchange.faults;
    // a refused connection is definite: the order never reached the venue
    if (faults.down) return { kind: "rejected", reason: `venue_down: ${this.id} refused the connection` };
    const started = performance.now();
    if (faults.timeout) {
      if (faults.timeout === "ack_lost") this.exchange.place(order);
      await this.sleep(this.timeoutMs * this.latencyScale);
      return { kind: "unknown", reason: `timeout: no answer from ${this.id} within ${this.timeoutMs * this.latencyScale} ms` };
    }
    // the order reaches the venue half-way through the round trip, so the book may have moved since it was read
    const roundTrip = this.drawLatency();
    await this.sleep(roundTrip / 2);
    const result = this.exchange.place(order);
    await this.sleep(roundTrip / 2);
    this.recorder.record(performance.now() - started);
    return result;
  }

  async status(clientOrderId: string): Promise<ChildStatus> {
    if (this.exchange.faults.down) throw new AppError("venue_unavailable", `${this.id} is down; ask again later.`, { venue: this.id });
    return this.exchange.status(clientOrderId);
  }

  async cancel(clientOrderId: string): Promise<ChildStatus> {
    if (this.exchange.faults.down) throw new AppError("venue_unavailable", `${this.id} is down; ask again later.`, { venue: this.id });
    return this.exchange.cancel(clientOrderId);
  }

  async trades(): Promise<VenueFill[]> {
    return this.exchange.trades();
  }

  latency(): LatencyStats {
    return this.recorder.stats();
  }

  describe(): VenueDescription {
    return { adapter: "in-process-simulator", baseUrl: null, stream: null };
  }

  health(): VenueHealth {
    const faults = this.exchange.faults;
    const oldest = this.exchange.oldestBookAt();
    const bookAgeMs = oldest === undefined ? undefined : this.clock.now() - oldest;
    const misbehaving = faults.timeout !== false || faults.reject || (bookAgeMs ?? 0) > this.freshnessMs;
    return { state: faults.down ? "down" : misbehaving ? "degraded" : "up", latency: this.latency(), bookAgeMs };
  }

  private drawLatency(): number {
    const { meanMs, sdMs } = this.profile.latency;
    return Math.max(1, meanMs + sdMs * this.latencyRng.normal()) * this.latencyScale;
  }

  private sleep(ms: number): Promise<void> {
    return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
  }
}
