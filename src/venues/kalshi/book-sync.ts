import type { Outcome } from "../../domain/types.ts";
import type { BookStreamHooks } from "../net/wire-venue.ts";
import type { BookSides, BookSnapshot } from "../venue.ts";
import { kalshiSides, levelMap, parseDollars, parseSignedCount, type LevelMap } from "./wire.ts";

interface MarketBook {
  yes: LevelMap;
  no: LevelMap;
  /** Both outcomes' sides, built on the first read since the last delta. */
  sides?: Record<Outcome, BookSides>;
  /** The subscription whose snapshot this book came from; undefined for a book read over REST. */
  sid: number | undefined;
  /** When the book was last known current, for a book no longer kept current by a live subscription. */
  asOf: number;
}

export interface BookSyncOptions extends BookStreamHooks {
  tickers: readonly string[];
}

/**
 * Kalshi's orderbook_delta channel applied to local books. Sequence numbers run per subscription,
 * so an unbroken run up to the latest message proves every subscribed book current as of that
 * message: a book's age is the age of the stream, not of its last change (a quiet market is not a
 * stale one). A gap or an impossible delta unsubscribes and subscribes again for fresh snapshots;
 * meanwhile the books keep their last state and age.
 */
export class KalshiBookSync {
  private readonly books = new Map<string, MarketBook>();
  private sid: number | undefined;
  private lastSeq = 0;
  private nextId = 1;
  /** When the last in-sequence message arrived. */
  private syncedAt = 0;
  /** Resubscriptions after a gap, for health and tests. */
  resyncs = 0;
  lastError: string | undefined;

  constructor(private readonly opts: BookSyncOptions) {}

  /** A connection opened: subscribe every market at once. */
  subscribe(): void {
    this.sid = undefined;
    this.lastSeq = 0;
    if (this.opts.tickers.length === 0) return;
    this.opts.send(JSON.stringify({ id: this.nextId++, cmd: "subscribe", params: { channels: ["orderbook_delta"], market_tickers: this.opts.tickers } }));
  }

  /** The connection is gone: books keep their state and start to age. */
  disconnected(): void {
    this.freeze();
    this.sid = undefined;
  }

  /** A book read over REST, used until the stream's snapshot arrives. */
  seed(ticker: string, yes: LevelMap, no: LevelMap, at: number): void {
    const known = this.books.get(ticker);
    if (known?.sid !== undefined && known.sid === this.sid) return;
    this.books.set(ticker, { yes, no, sid: undefined, asOf: at });
    this.opts.onBook(ticker);
  }

  book(ticker: string, outcome: Outcome): BookSnapshot | undefined {
    const b = this.books.get(ticker);
    if (!b) return undefined;
    const live = b.sid !== undefined && b.sid === this.sid;
    b.sides ??= kalshiSides(b.yes, b.no);
    return { venue: this.opts.venue, venueMarketId: ticker, outcome, ...b.sides[outcome], updatedAt: live ? this.syncedAt : b.asOf };
  }

  /** When the least recently current book was current, or undefined with no books. */
  oldestAt(): number | undefined {
    let oldest: number | undefined;
    for (const b of this.books.values()) {
      const at = b.sid !== undefined && b.sid === this.sid ? this.syncedAt : b.asOf;
      if (oldest === undefined || at < oldest) oldest = at;
    }
    return oldest;
  }

  get live(): boolean {
    return this.sid !== undefined;
  }

  onMessage(text: string): void {
    let m: { type?: unknown; sid?: unknown; seq?: unknown; msg?: Record<string, unknown> };
    try {
      m = JSON.parse(text);
    } catch {
      this.lastError = "unparseable stream message";
      this.opts.onDrop?.(this.lastError, text);
      return;
    }
    const msg = m.msg ?? {};
    switch (m.type) {
      case "subscribed":
        if (msg.channel === "orderbook_delta" && typeof msg.sid === "number") {
          this.sid = msg.sid;
          this.lastSeq = 0;
        }
        return;
      case "error":
        this.lastError = `stream error ${String(msg.code)}: ${String(msg.msg)}`;
        return;
      case "orderbook_snapshot":
      case "orderbook_delta":
        break;
      default:
        return;
    }
    if (m.sid !== this.sid || this.sid === undefined) return;
    if (m.seq !== this.lastSeq + 1) return this.resync(text, `sequence gap: expected ${this.lastSeq + 1}, got ${String(m.seq)}`);
    this.lastSeq = m.seq as number;
    const ticker = msg.market_ticker;
    if (typeof ticker !== "string") return this.resync(text, "message without market_ticker");
    try {
      if (m.type === "orderbook_snapshot") {
        const yes = levelMap((msg.yes_dollars_fp as [string, string][] | undefined) ?? [], "yes_dollars_fp");
        const no = levelMap((msg.no_dollars_fp as [string, string][] | undefined) ?? [], "no_dollars_fp");
        this.books.set(ticker, { yes, no, sid: this.sid, asOf: this.opts.now() });
      } else if (!this.applyDelta(text, ticker, msg)) {
        return;
      }
    } catch (err) {
      return this.resync(text, `malformed ${String(m.type)}: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.syncedAt = this.opts.now();
    this.opts.onBook(ticker);
  }

  private applyDelta(text: string, ticker: string, msg: Record<string, unknown>): boolean {
    const book = this.books.get(ticker);
    if (!book || book.sid !== this.sid) {
      this.resync(text, `delta for ${ticker} before its snapshot`);
      return false;
    }
    const side = msg.side === "yes" ? book.yes : msg.side === "no" ? book.no : undefined;
    if (!side) {
      this.resync(text, `delta with side ${String(msg.side)}`);
      return false;
    }
    const price = parseDollars(msg.price_dollars, "price_dollars");
    const after = (side.get(price) ?? 0n) + parseSignedCount(msg.delta_fp, "delta_fp");
    if (after < 0n) {
      this.resync(text, `delta leaves ${ticker} ${String(msg.side)} ${String(msg.price_dollars)} negative`);
      return false;
    }
    if (after === 0n) side.delete(price);
    else side.set(price, after);
    book.sides = undefined;
    return true;
  }

  private resync(frame: string, why: string): void {
    this.lastError = why;
    this.opts.onDrop?.(`${why}; resubscribing for fresh snapshots`, frame);
    this.resyncs++;
    const old = this.sid;
    this.freeze();
    this.sid = undefined;
    if (old !== undefined) this.opts.send(JSON.stringify({ id: this.nextId++, cmd: "unsubscribe", params: { sids: [old] } }));
    this.subscribe();
  }

  private freeze(): void {
    for (const b of this.books.values()) {
      if (b.sid !== undefined && b.sid === this.sid) b.asOf = this.syncedAt;
    }
  }
}
