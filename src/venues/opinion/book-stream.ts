import { parseMicro, type PriceMicro } from "../../domain/money.ts";
import type { Outcome } from "../../domain/types.ts";
import { mirroredSides, type LevelMap } from "../mirror-book.ts";
import type { BookStreamHooks } from "../net/wire-venue.ts";
import type { BookSides, BookSnapshot } from "../venue.ts";
import { parsePrice } from "./wire.ts";

export const DEPTH_CHANNEL = "market.depth.diff";

interface MarketBook {
  bids: LevelMap;
  asks: LevelMap;
  /** Both outcomes' sides, sorted on the first read since the last diff. */
  sides?: Record<Outcome, BookSides>;
  /** When the REST snapshot the diffs apply to was taken. */
  seededAt: number;
}

/**
 * Where a market's book stands with the current connection: subscribed, waiting for its first diff
 * (which proves the subscription live); being re-read over REST, the diffs since the first one held;
 * or synced, every diff since the subscription applied.
 */
type Phase = { kind: "awaiting" } | { kind: "seeding"; held: Diff[] } | { kind: "synced" };

interface Diff {
  side: "bids" | "asks";
  price: PriceMicro;
  size: bigint;
}

export interface OpinionBookStreamOptions extends BookStreamHooks {
  marketIds: readonly string[];
  onDrop: (why: string, frame: string) => void;
  /** Reads a market's YES book over REST; undefined when that failed. */
  snapshot: (marketId: string) => Promise<{ bids: LevelMap; asks: LevelMap } | undefined>;
  /** A connection that carries no frame for this long is taken for dead. */
  silentMs: number;
  /** How long after its SUBSCRIBE a market's subscription is taken to be live without a diff to show it (assumed). */
  subscribeSettleMs: number;
}

/**
 * Opinion's `market.depth.diff` channel: one message per changed price level of a market's token
 * (`{ msgType, marketId, tokenId, outcomeSide, side, price, size }`, size the level's new total, 0
 * to remove it). The channel sends no snapshot and numbers no message, so after subscribing each
 * market is re-read from `GET /token/orderbook` once its first diff shows the subscription live, and
 * every diff from that first one on is applied to the snapshot, in order: a diff older than the
 * snapshot sets a level to a value the later diffs then correct, since each change is sent once, in
 * order. A market that sends no diff within subscribeSettleMs of its SUBSCRIBE (a quiet one) is read then,
 * its subscription taken to be live by that time, and again each subscribeSettleMs while that read fails. The same after every reconnection (diffs missed meanwhile
 * are unknowable), and after a diff that cannot be read. The YES token's diffs (outcomeSide 1) are applied; NO is its mirror.
 */
export class OpinionBookStream {
  private readonly books = new Map<string, MarketBook>();
  private readonly phases = new Map<string, Phase>();
  private lastFrameAt = 0;
  private connected = false;
  private settle: NodeJS.Timeout | undefined;
  lastError: string | undefined;

  constructor(private readonly opts: OpinionBookStreamOptions) {}

  /** A live connection that has spoken within silentMs. */
  get live(): boolean {
    return this.connected && this.opts.now() - this.lastFrameAt <= this.opts.silentMs;
  }

  opened(): void {
    this.connected = true;
    this.lastFrameAt = this.opts.now();
    for (const marketId of this.opts.marketIds) this.phases.set(marketId, { kind: "awaiting" });
    for (const marketId of this.opts.marketIds) this.opts.send(JSON.stringify({ action: "SUBSCRIBE", channel: DEPTH_CHANNEL, marketId: Number(marketId) }));
    // a quiet market sends no diff to show its subscription live: once it has had time to take, the market is read as
    // after a first diff, and read again each period while that read fails
    clearInterval(this.settle);
    this.settle = setInterval(() => {
      for (const [marketId, phase] of this.phases) if (phase.kind === "awaiting") this.resync(marketId, []);
    }, this.opts.subscribeSettleMs);
    this.settle.unref();
  }

  disconnected(): void {
    this.connected = false;
    clearInterval(this.settle);
    this.settle = undefined;
    this.phases.clear();
  }

  /** Every market synced with the current connection. */
  synced(): boolean {
    return this.opts.marketIds.every((id) => this.phases.get(id)?.kind === "synced");
  }

  /** The application heartbeat the SDK sends every 30 s. */
  heartbeat(): void {
    if (this.connected) this.opts.send(JSON.stringify({ action: "HEARTBEAT" }));
  }

  overdue(): boolean {
    return this.connected && this.opts.now() - this.lastFrameAt > this.opts.silentMs;
  }

  /** A snapshot read without the stream (at start, for a market whose diffs have not begun): a book to show meanwhile. */
  seed(marketId: string, bids: LevelMap, asks: LevelMap, at: number): void {
    this.books.set(marketId, { bids, asks, seededAt: at });
    this.opts.onBook(marketId);
  }

  book(marketId: string, outcome: Outcome): BookSnapshot | undefined {
    const b = this.books.get(marketId);
    if (!b) return undefined;
    b.sides ??= mirroredSides(b.bids, b.asks);
    return { venue: this.opts.venue, venueMarketId: marketId, outcome, ...b.sides[outcome], updatedAt: this.updatedAt(b, marketId) };
  }

  oldestAt(): number | undefined {
    let oldest: number | undefined;
    for (const [marketId, b] of this.books) {
      const at = this.updatedAt(b, marketId);
      if (oldest === undefined || at < oldest) oldest = at;
    }
    return oldest;
  }

  onMessage(text: string): void {
    this.lastFrameAt = this.opts.now();
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return this.opts.onDrop("not JSON", text);
    }
    if (msg.msgType !== DEPTH_CHANNEL) return;
    const marketId = String(msg.marketId);
    const phase = this.phases.get(marketId);
    if (msg.outcomeSide !== 1 || !phase) return;
    let price: PriceMicro;
    let size: bigint;
    try {
      price = parsePrice(msg.price, "price");
      size = parseMicro(msg.size, "size");
    } catch (err) {
      this.lastError = String(err);
      return this.lost(marketId, this.lastError, text);
    }
    if (msg.side !== "bids" && msg.side !== "asks") return this.lost(marketId, `unknown side ${JSON.stringify(msg.side)}`, text);
    const diff: Diff = { side: msg.side, price, size };
    if (phase.kind === "awaiting") return this.resync(marketId, [diff]);
    if (phase.kind === "seeding") return void phase.held.push(diff);
    const b = this.books.get(marketId);
    if (!b) return;
    apply(b, diff);
    this.opts.onBook(marketId);
  }

  /** A change of the market's book that could not be read: the book is not current, and is read again; the diffs from here on apply to that read. */
  private lost(marketId: string, why: string, frame: string): void {
    this.opts.onDrop(why, frame);
    this.resync(marketId, []);
  }

  private resync(marketId: string, held: Diff[]): void {
    const phase: Phase = { kind: "seeding", held };
    this.phases.set(marketId, phase);
    const at = this.opts.now();
    void this.opts.snapshot(marketId).then((book) => {
      if (this.phases.get(marketId) !== phase) return;
      if (!book) return void this.phases.set(marketId, { kind: "awaiting" });
      const b: MarketBook = { ...book, seededAt: at };
      for (const d of phase.held) apply(b, d);
      this.books.set(marketId, b);
      this.phases.set(marketId, { kind: "synced" });
      this.opts.onBook(marketId);
    });
  }

  /** A synced book is as current as the connection's last frame; one that is not, as its snapshot. */
  private updatedAt(b: MarketBook, marketId: string): number {
    return this.phases.get(marketId)?.kind === "synced" && this.connected ? Math.max(b.seededAt, this.lastFrameAt) : b.seededAt;
  }
}

function apply(b: MarketBook, d: Diff): void {
  if (d.size === 0n) b[d.side].delete(d.price);
  else b[d.side].set(d.price, d.size);
  b.sides = undefined;
}
