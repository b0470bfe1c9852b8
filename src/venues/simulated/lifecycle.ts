import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { ONE } from "../../domain/money.ts";
import type { Clock, Outcome } from "../../domain/types.ts";
import type { CatalogEvent, MarketCatalog } from "../../markets/catalog.ts";
import type { SimExchange, SimLifecycle } from "./exchange.ts";
import { Rng, seedFor } from "./prng.ts";

export interface SimMarketLifecycleOptions {
  exchange: SimExchange;
  /**
   * The catalog the simulators run: the schedule resolves its open events one after another, in the same
   * order and to the same outcome on every venue that lists them, so that the venues agree.
   */
  catalog: MarketCatalog;
  seed: number;
  clock: Clock;
  /** The k-th open event of the catalog (soonest close first) resolves at `from + k · everyMs` (ms since the epoch); absent: markets resolve only when told. */
  schedule?: ResolutionSchedule;
  /** A file that keeps the markets that closed or resolved across restarts of the simulator, as the venue would; undefined: kept in memory. */
  stateFile?: string;
}

/** When scheduled resolutions happen: one every `everyMs`, counted from `from` (ms since the epoch), the same for every simulator of a process. */
export interface ResolutionSchedule {
  everyMs: number;
  from: number;
}

/** What a resolve or close asked of a market came to. */
export type ConcludeResult =
  | { kind: "done"; lifecycle: SimLifecycle }
  | { kind: "unknown_market" }
  /** The market had resolved before, to `lifecycle.outcome`: a resolution is final. */
  | { kind: "conflict"; lifecycle: SimLifecycle };

/**
 * The markets' lifecycle on one simulated venue: closed or resolved on command (the simulator's control
 * routes, `crossfill events resolve`) or on a schedule, remembered across restarts when given a file.
 * Each simulator renders what this decides in its venue's own fields.
 */
export class SimMarketLifecycle {
  private timer: NodeJS.Timeout | undefined;
  private readonly exchange: SimExchange;

  constructor(private readonly opts: SimMarketLifecycleOptions) {
    this.exchange = opts.exchange;
    for (const [id, l] of Object.entries(this.load())) this.exchange.conclude(id, l.state === "resolved" ? { state: "resolved", outcome: l.outcome } : { state: "closed" }, l.at);
  }

  /** Starts the schedule, if there is one: each open event of the catalog resolves in its turn, those whose turn has passed at once. */
  start(): void {
    const schedule = this.opts.schedule;
    if (!schedule || schedule.everyMs <= 0 || this.timer) return;
    const queue = scheduleOrder(this.opts.catalog.events());
    const arm = (k: number) => {
      const event = queue[k];
      if (!event) return;
      this.timer = setTimeout(() => {
        const outcome = drawnOutcome(event, this.opts.seed);
        for (const l of event.listings) if (l.venue === this.exchange.venue && this.exchange.lifecycle(l.venueMarketId)?.state === "open") this.resolve(l.venueMarketId, outcome);
        arm(k + 1);
      }, Math.max(0, schedule.from + (k + 1) * schedule.everyMs - this.opts.clock.now()));
      // a simulator alone must not keep a finished test or CLI process alive
      this.timer.unref();
    };
    arm(0);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  state(venueMarketId: string): SimLifecycle | undefined {
    return this.exchange.lifecycle(venueMarketId);
  }

  /** Stops trading on a market without resolving it (past its close, awaiting its outcome). */
  close(venueMarketId: string): ConcludeResult {
    return this.conclude(venueMarketId, { state: "closed" });
  }

  resolve(venueMarketId: string, outcome: Outcome): ConcludeResult {
    return this.conclude(venueMarketId, { state: "resolved", outcome });
  }

  private conclude(venueMarketId: string, to: { state: "closed" } | { state: "resolved"; outcome: Outcome }): ConcludeResult {
    const before = this.exchange.lifecycle(venueMarketId);
    if (!before) return { kind: "unknown_market" };
    const after = this.exchange.conclude(venueMarketId, to, this.opts.clock.now())!;
    if (after.state === "resolved" && (to.state === "closed" || to.outcome !== after.outcome)) return { kind: "conflict", lifecycle: after };
    if (after.state !== before.state) this.save(venueMarketId, after);
    return { kind: "done", lifecycle: after };
  }

  private load(): Record<string, Exclude<SimLifecycle, { state: "open" }>> {
    if (!this.opts.stateFile) return {};
    try {
      return JSON.parse(readFileSync(this.opts.stateFile, "utf8"));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
      throw new Error(`${this.opts.stateFile}: cannot read the simulated markets' state (${(err as Error).message})`);
    }
  }

  /** Written whole to a new file, then renamed over the old one, so a crash never leaves half a file. */
  private save(venueMarketId: string, lifecycle: SimLifecycle): void {
    const file = this.opts.stateFile;
    if (!file) return;
    const all = { ...this.load(), [venueMarketId]: lifecycle };
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(`${file}.tmp`, JSON.stringify(all, null, 2));
    renameSync(`${file}.tmp`, file);
  }
}

/** The open events in the order the schedule resolves them: soonest close first, then by id. */
export function scheduleOrder(events: readonly CatalogEvent[]): CatalogEvent[] {
  return events
    .filter((e) => e.status === "open")
    .sort((a, b) => Date.parse(a.closeTime) - Date.parse(b.closeTime) || (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0));
}

/** The outcome the schedule resolves an event to: YES with the probability of its base price, drawn from the seed and the event alone, so every venue draws the same. */
export function drawnOutcome(event: CatalogEvent, seed: number): Outcome {
  return new Rng(seedFor(seed, "resolution", event.eventId)).chance(Number(event.basePrice) / Number(ONE)) ? "YES" : "NO";
}
