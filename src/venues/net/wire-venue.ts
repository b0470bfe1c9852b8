import { AppError } from "../../domain/errors.ts";
import { systemClock, type Clock, type Outcome } from "../../domain/types.ts";
import { streamedHealth } from "../health.ts";
import { LatencyRecorder } from "../latency.ts";
import type { BookSnapshot, BookUpdate, LatencyStats, Unsubscribe, VenueHealth } from "../venue.ts";
import { FEE_READ_INTERVAL_MS, type AdapterOptions } from "./adapter-options.ts";
import { sendWithRetry, type HttpResult } from "./http.ts";
import { RateLimiter, type Throttle } from "./rate-limiter.ts";
import { ReconnectingSocket, type StreamLog } from "./reconnecting-socket.ts";
import { WriteTurns } from "./write-turns.ts";

export const READ_RETRY = { attempts: 4, baseDelayMs: 100, budgetMs: 5_000 };
export const WRITE_RETRY = { attempts: 3, baseDelayMs: 100, budgetMs: 3_000 };

/** The books an adapter keeps from its venue's stream. */
export interface StreamedBooks {
  /** Subscribed and in step with the venue. */
  readonly live: boolean;
  book(venueMarketId: string, outcome: Outcome): BookSnapshot | undefined;
  /** When the least recently heard of book was last heard of. */
  oldestAt(): number | undefined;
  onMessage(text: string): void;
  disconnected(): void;
}

/** What an adapter gives its book stream. */
export interface BookStreamHooks {
  venue: string;
  /** Sends a frame on the stream's connection; false when it is not open. */
  send: (text: string) => boolean;
  now: () => number;
  /** A market's book changed. */
  onBook: (venueMarketId: string) => void;
  /** A frame could not be used (unreadable, out of sequence, impossible): what the stream tells the logs. */
  onDrop?: (why: string, frame: string) => void;
}

/**
 * The markets of `raws` that an adapter can model, each made by `convert`, in order. `convert` reads
 * nothing from the venue (what it needs has been read before), so whatever it throws is about the
 * market's content: a fee schedule, a trade type, a field the adapter cannot model. Such a market is left
 * out, with one warning naming the venue, the market and why, and the others load; a failure to reach
 * the venue comes from the reads before, and propagates.
 */
export function modelledMarkets<R, T>(raws: readonly R[], how: { venue: string; log: StreamLog | undefined; idOf: (raw: R) => string; convert: (raw: R) => T }): T[] {
  const out: T[] = [];
  for (const raw of raws) {
    try {
      out.push(how.convert(raw));
    } catch (err) {
      how.log?.warn({ venue_id: how.venue, venue_market_id: how.idOf(raw), reason: err instanceof Error ? err.message : String(err) }, "venue market left out: the adapter cannot model it");
    }
  }
  return out;
}

/**
 * Runs `read` every `ms` until the returned timer is cleared, one at a time: a read slower than the interval
 * (the venue's bucket is busy) is not queued behind by another. `read` handles its own failures.
 */
export function repeatRead(ms: number, read: () => Promise<void>): NodeJS.Timeout {
  let reading = false;
  const timer = setInterval(() => {
    if (reading) return;
    reading = true;
    void read().finally(() => (reading = false));
  }, ms);
  timer.unref();
  return timer;
}

/** What a venue's adapter assumes where its options say nothing. */
export interface WireVenueDefaults {
  /** The adapter's name in describe(). */
  adapter: string;
  venueId: string;
  /** A read and a write bucket, or one bucket that reads and writes share. */
  rateLimits: { readsPerSecond: number; writesPerSecond: number } | { sharedPerSecond: number };
  /** The reads a child order's placement makes after its write to learn what it took (readRest's `readBack`). */
  placementReads: number;
}

/**
 * What the Kalshi, Limitless and Opinion adapters do alike: their set-up from AdapterOptions (venue
 * id, freshness, clock, request timeout, read and write buckets), book listeners, the latency of their
 * orders, and health judged from the book stream and the last REST read.
 */
export abstract class WireVenue<Credentials> {
  readonly id: string;
  readonly freshnessMs: number;
  protected readonly clock: Clock;
  protected readonly timeoutMs: number;
  private readonly reads: RateLimiter;
  /** The read bucket with every request let ahead of the line (RateLimiter.first): for readRest's `readBack`. */
  private readonly readBacks: Throttle;
  protected readonly writes: RateLimiter;
  /** The write bucket with every request let ahead of the line: for a cancel, which finishes a child order already sent. */
  protected readonly cancels: Throttle;
  /** The requests a child order's placement spends from the write bucket: its write, and its read-backs where reads share the bucket. */
  private readonly placementRequests: number;
  /** Turns in the write queue taken for child orders before they are placed (Venue.writeTurn). */
  protected readonly turns: WriteTurns;
  /** Round-trip times of the orders the venue answered. */
  protected readonly recorder = new LatencyRecorder();
  protected abstract readonly socket: ReconnectingSocket;
  protected abstract readonly stream: StreamedBooks;
  private readonly adapter: string;
  private readonly listeners = new Set<(u: BookUpdate) => void>();
  /** Why the last read went unanswered; cleared by the next answered one. */
  private lastRestFailure: string | undefined;

  constructor(
    protected readonly opts: AdapterOptions<Credentials>,
    defaults: WireVenueDefaults,
  ) {
    this.adapter = defaults.adapter;
    this.id = opts.venueId ?? defaults.venueId;
    this.freshnessMs = opts.freshnessMs ?? 5_000;
    this.clock = opts.clock ?? systemClock;
    this.timeoutMs = opts.requestTimeoutMs ?? 10_000;
    const limits = opts.rateLimits ?? defaults.rateLimits;
    if ("sharedPerSecond" in limits) {
      this.reads = this.writes = new RateLimiter(limits.sharedPerSecond);
    } else {
      this.reads = new RateLimiter(limits.readsPerSecond);
      this.writes = new RateLimiter(limits.writesPerSecond);
    }
    this.readBacks = this.reads.first();
    this.cancels = this.writes.first();
    this.placementRequests = 1 + (this.reads === this.writes ? defaults.placementReads : 0);
    this.turns = new WriteTurns(this.writes);
  }

  book(venueMarketId: string, outcome: Outcome): BookSnapshot | undefined {
    return this.stream.book(venueMarketId, outcome);
  }

  onBook(listener: (u: BookUpdate) => void): Unsubscribe {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Each child order ahead (queued for its turn or planned) counts every request its placement will make from the write bucket. */
  queueDelayMs(ahead = 0): number {
    const extra = this.placementRequests - 1;
    return this.writes.delayMs(ahead + (ahead + this.turns.waiting) * extra);
  }

  writeTurn(clientOrderId: string): Promise<void> {
    return this.turns.take(clientOrderId);
  }

  returnTurn(clientOrderId: string): void {
    this.turns.giveBack(clientOrderId);
  }

  latency(): LatencyStats {
    return this.recorder.stats();
  }

  describe(): { adapter: string; baseUrl: string; wsUrl: string; stream: { state: string } } {
    return { adapter: this.adapter, baseUrl: this.opts.baseUrl, wsUrl: this.opts.wsUrl, stream: { state: this.socket.state } };
  }

  health(): VenueHealth {
    const streamUp = this.socket.state === "open" && this.stream.live;
    const unreachable = !streamUp && this.lastRestFailure !== undefined;
    return streamedHealth({ now: this.clock.now(), oldestBookAt: this.stream.oldestAt(), streamUp, unreachable, freshnessMs: this.freshnessMs, latency: this.latency() });
  }

  /** What the book stream is given: this venue, the socket to send on, the clock, and where changed books and unusable frames go. */
  protected streamHooks(): Required<BookStreamHooks> {
    return {
      venue: this.id,
      send: (text) => this.socket.send(text),
      now: () => this.clock.now(),
      onBook: (venueMarketId) => this.emit(venueMarketId),
      onDrop: (why, frame) => this.socket.dropped(why, frame),
    };
  }

  /** The book stream's connection to `url`, opened with `headers`: `onOpen` on each (re)connection, every message to the stream. */
  protected connect(url: string, headers: () => Record<string, string>, onOpen: () => void): ReconnectingSocket {
    return new ReconnectingSocket({
      url,
      headers,
      onOpen,
      onMessage: (text) => this.stream.onMessage(text),
      onClose: () => this.stream.disconnected(),
      ...(this.opts.log ? { log: this.opts.log } : {}),
    });
  }

  /** Waits until `synced`, for the options' startTimeoutMs (2 s by default) at the most. */
  protected async streamSynced(synced: () => boolean): Promise<void> {
    const deadline = performance.now() + (this.opts.startTimeoutMs ?? 2_000);
    while (!synced() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  }

  /**
   * Runs `read` (the adapter's markets()) every feeReadIntervalMs until the returned timer is cleared: the venue
   * sets its fee at match time and can change it, and what quotes, plans and locks price must follow. A read
   * that fails is logged; what was read before stays.
   */
  protected readAgain(read: () => Promise<unknown>): NodeJS.Timeout {
    return repeatRead(this.opts.feeReadIntervalMs ?? FEE_READ_INTERVAL_MS, () =>
      read().then(
        () => undefined,
        (err: unknown) => this.opts.log?.warn({ venue_id: this.id, reason: err instanceof Error ? err.message : String(err) }, "reading the venue's markets and fees again failed; those read before stay"),
      ),
    );
  }

  /** The catalog's markets on this venue: every listing, or with `openOnly` those of open events. */
  protected listedMarkets(openOnly = false): string[] {
    return this.opts.catalog.events().flatMap((e) => (openOnly && e.status !== "open" ? [] : e.listings.filter((l) => l.venue === this.id).map((l) => l.venueMarketId)));
  }

  /** modelledMarkets for this venue, warning on its log. */
  protected modelled<R, T>(raws: readonly R[], idOf: (raw: R) => string, convert: (raw: R) => T): T[] {
    return modelledMarkets(raws, { venue: this.id, log: this.opts.log, idOf, convert });
  }

  /**
   * A read (`send` sends it once): reads are safe to repeat, so even an unknown outcome is retried. A
   * `readBack` (what a child order just sent or cancelled took) goes ahead of the reads and child orders
   * queued in its bucket: it finishes an order already on its way, which would otherwise wait behind
   * every child order queued since.
   */
  protected async readRest(path: string, send: () => Promise<HttpResult>, readBack = false): Promise<unknown> {
    const res = await sendWithRetry(send, readBack ? this.readBacks : this.reads, READ_RETRY, () => true);
    if (res.ok) {
      this.lastRestFailure = undefined;
      return res.body;
    }
    if (res.kind !== "rejected") this.lastRestFailure = res.reason;
    throw new AppError("venue_unavailable", `${this.id}: GET ${path} failed: ${res.reason}`, { venue: this.id });
  }

  protected emit(venueMarketId: string): void {
    const update: BookUpdate = { venue: this.id, venueMarketId };
    for (const l of this.listeners) l(update);
  }
}
