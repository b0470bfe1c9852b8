import type { Outcome } from "../../domain/types.ts";
import type { BookStreamHooks } from "../net/wire-venue.ts";
import type { BookSides, BookSnapshot } from "../venue.ts";
import { decode, encodeConnect, encodeEvent, PONG } from "./socketio.ts";
import { mirroredSides, parseOrderbook, type LevelMap, type LimitlessOrderbook } from "./wire.ts";

export const MARKETS_NAMESPACE = "/markets";

interface MarketBook {
  bids: LevelMap;
  asks: LevelMap;
  /** Both outcomes' sides, sorted on the first read of this book (each update is a new book). */
  sides?: Record<Outcome, BookSides>;
  /** The connection whose stream delivered this book; undefined for a book read over REST. */
  connection: number | undefined;
  /** When the book was last known current, once no live connection keeps it so. */
  asOf: number;
}

export interface BookStreamOptions extends BookStreamHooks {
  slugs: readonly string[];
}

/**
 * Limitless's `/markets` Socket.IO namespace applied to local books. Each `orderbookUpdate` carries
 * a market's whole book, so there are no deltas to lose; and one websocket delivers its frames in
 * order, so any frame (an update of another market, a ping) proves every book this connection has
 * delivered current as of that frame: a quiet market is not a stale one, a silent connection is.
 */
export class LimitlessBookStream {
  private readonly books = new Map<string, MarketBook>();
  private connection = 0;
  private joined = false;
  private lastFrameAt = 0;
  /** The server's ping period plus its grace: a connection silent for longer is dead. */
  private silenceLimitMs: number | undefined;
  /** The server left the namespace on the open connection (Socket.IO's "io server disconnect"): it sends no book on it again. */
  private left = false;
  lastError: string | undefined;

  constructor(private readonly opts: BookStreamOptions) {}

  /** A websocket opened: the server speaks first (Engine.IO handshake). */
  opened(): void {
    this.connection++;
    this.joined = false;
    this.lastFrameAt = this.opts.now();
  }

  /** The connection is gone: its books keep their state and start to age. */
  disconnected(): void {
    this.freeze();
    this.joined = false;
    this.silenceLimitMs = undefined;
    this.left = false;
  }

  /** Subscribed to the namespace on the current connection. */
  get live(): boolean {
    return this.joined;
  }

  /** True once the open connection has been silent for longer than the server promised to ping, or the server left the namespace on it. */
  overdue(): boolean {
    return this.left || (this.silenceLimitMs !== undefined && this.opts.now() - this.lastFrameAt > this.silenceLimitMs);
  }

  /** A book read over REST, used until the stream delivers one. */
  seed(slug: string, bids: LevelMap, asks: LevelMap, at: number): void {
    const live = this.current();
    if (live !== undefined && this.books.get(slug)?.connection === live) return;
    this.books.set(slug, { bids, asks, connection: undefined, asOf: at });
    this.opts.onBook(slug);
  }

  book(slug: string, outcome: Outcome): BookSnapshot | undefined {
    const b = this.books.get(slug);
    if (!b) return undefined;
    b.sides ??= mirroredSides(b.bids, b.asks);
    return { venue: this.opts.venue, venueMarketId: slug, outcome, ...b.sides[outcome], updatedAt: this.currentAt(b) };
  }

  /** When the least recently current book was current, or undefined with no books. */
  oldestAt(): number | undefined {
    let oldest: number | undefined;
    for (const b of this.books.values()) {
      const at = this.currentAt(b);
      if (oldest === undefined || at < oldest) oldest = at;
    }
    return oldest;
  }

  onMessage(text: string): void {
    this.lastFrameAt = this.opts.now();
    const packet = decode(text);
    if (!packet) return;
    switch (packet.kind) {
      case "open":
        this.silenceLimitMs = packet.handshake.pingInterval + packet.handshake.pingTimeout;
        this.opts.send(encodeConnect(MARKETS_NAMESPACE));
        return;
      case "ping":
        this.opts.send(PONG);
        return;
      case "connect":
        if (packet.nsp !== MARKETS_NAMESPACE) return;
        this.joined = true;
        // the documented subscription replaces the previous one, so one emit covers every market
        if (this.opts.slugs.length > 0) this.opts.send(encodeEvent(MARKETS_NAMESPACE, "subscribe_market_prices", { marketSlugs: this.opts.slugs }));
        return;
      case "connect_error":
        this.lastError = `namespace refused: ${JSON.stringify(packet.data)}`;
        return;
      case "disconnect":
        // the connection still answers pings but carries no book: its books age, and the adapter's watchdog opens another
        if (packet.nsp !== MARKETS_NAMESPACE) return;
        this.disconnected();
        this.left = true;
        return;
      case "event":
        if (packet.nsp === MARKETS_NAMESPACE && packet.name === "orderbookUpdate") this.update(packet.args[0], text);
        return;
      default:
        return;
    }
  }

  private update(payload: unknown, frame: string): void {
    const p = payload as { marketSlug?: unknown; orderbook?: LimitlessOrderbook } | undefined;
    if (typeof p?.marketSlug !== "string" || !this.opts.slugs.includes(p.marketSlug)) return;
    try {
      const { bids, asks } = parseOrderbook(p.orderbook!);
      this.books.set(p.marketSlug, { bids, asks, connection: this.connection, asOf: this.lastFrameAt });
    } catch (err) {
      // the book changed in a way not known: the last good book stays, current only until this frame, and ages until a readable update comes
      const b = this.books.get(p.marketSlug);
      if (b) this.books.set(p.marketSlug, { ...b, connection: undefined, asOf: this.currentAt(b) });
      this.lastError = `unreadable orderbookUpdate for ${p.marketSlug}: ${err instanceof Error ? err.message : String(err)}`;
      this.opts.onDrop?.(this.lastError, frame);
      return;
    }
    this.opts.onBook(p.marketSlug);
  }

  private current(): number | undefined {
    return this.joined ? this.connection : undefined;
  }

  private currentAt(b: MarketBook): number {
    return b.connection !== undefined && b.connection === this.current() ? this.lastFrameAt : b.asOf;
  }

  private freeze(): void {
    for (const b of this.books.values()) {
      if (b.connection !== undefined && b.connection === this.current()) {
        b.asOf = this.lastFrameAt;
        b.connection = undefined;
      }
    }
  }
}
