import type { WebSocket } from "ws";
import { formatMicro } from "../../../domain/money.ts";
import type { Clock, Level } from "../../../domain/types.ts";
import { SimSockets } from "../../net/sim-sockets.ts";
import { bookEvent, type renderBook } from "./render.ts";

type Summary = ReturnType<typeof renderBook>;

interface Subscriber {
  ws: WebSocket;
  assets: Set<string>;
  /** What this connection was last sent of each book, so deltas are computed against what it holds. */
  sent: Map<string, { bids: Map<bigint, bigint>; asks: Map<bigint, bigint> }>;
}

export interface MarketChannelOptions {
  clock: Clock;
  /** The silent fault of the simulator's switches. */
  silent: () => boolean;
  /** The current book of a token, with its levels (best first) and its summary. */
  book(assetId: string): { summary: Summary; bids: readonly Level[]; asks: readonly Level[] } | undefined;
}

/** Polymarket's market channel (`/ws/market`): subscribe with `assets_ids`, get `book` snapshots, then `price_change` deltas. */
export class MarketChannel {
  /** Its connections: the simulator's server hands them the upgrades to the channel's path. */
  readonly sockets = new SimSockets<Subscriber>({ client: (ws) => ({ ws, assets: new Set(), sent: new Map() }), onMessage: (sub, text) => this.command(sub, text) });

  constructor(private readonly opts: MarketChannelOptions) {}

  /** Sends every subscriber what changed in these tokens' books since it was last told: snapshots after a trade, deltas otherwise. */
  publish(assetIds: string[], snapshot: boolean): void {
    if (this.opts.silent()) return;
    for (const sub of this.sockets.clients) {
      const mine = assetIds.filter((a) => sub.assets.has(a));
      if (mine.length === 0) continue;
      if (snapshot) {
        this.sendBooks(sub, mine);
        continue;
      }
      const changes = mine.flatMap((a) => this.delta(sub, a));
      if (changes.length === 0) continue;
      const market = this.opts.book(mine[0]!)?.summary.market ?? "";
      sub.ws.send(JSON.stringify({ market, price_changes: changes, timestamp: String(this.opts.clock.now()), event_type: "price_change" }));
    }
  }

  /** Tells the subscribers of each token that its market's tick changed (`tick_size_change`). */
  tickChanged(assetIds: string[], market: string, oldTick: bigint, newTick: bigint): void {
    if (this.opts.silent()) return;
    for (const sub of this.sockets.clients) {
      for (const a of assetIds.filter((x) => sub.assets.has(x))) {
        const event = { event_type: "tick_size_change", asset_id: a, market, old_tick_size: formatMicro(oldTick), new_tick_size: formatMicro(newTick), timestamp: String(this.opts.clock.now()) };
        sub.ws.send(JSON.stringify(event));
      }
    }
  }

  /** A subscriber's message: PING, or a subscription to (or `operation: "unsubscribe"` from) `assets_ids`. */
  private command(sub: Subscriber, text: string): void {
    if (this.opts.silent()) return;
    if (text === "PING") {
      sub.ws.send("PONG");
      return;
    }
    let msg: { assets_ids?: unknown; type?: unknown; operation?: unknown };
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    if (!Array.isArray(msg.assets_ids)) return;
    const ids = msg.assets_ids.filter((a): a is string => typeof a === "string");
    if (msg.operation === "unsubscribe") {
      for (const a of ids) sub.assets.delete(a);
      return;
    }
    for (const a of ids) sub.assets.add(a);
    this.sendBooks(sub, ids);
  }

  private sendBooks(sub: Subscriber, assetIds: string[]): void {
    const events = [];
    for (const a of assetIds) {
      const b = this.opts.book(a);
      if (!b) continue;
      sub.sent.set(a, { bids: toMap(b.bids), asks: toMap(b.asks) });
      events.push(bookEvent(b.summary));
    }
    if (events.length > 0) sub.ws.send(JSON.stringify(events));
  }

  private delta(sub: Subscriber, assetId: string) {
    const b = this.opts.book(assetId);
    const before = sub.sent.get(assetId);
    if (!b || !before) return [];
    const now = { bids: toMap(b.bids), asks: toMap(b.asks) };
    sub.sent.set(assetId, now);
    const bestBid = b.bids[0] ? formatMicro(b.bids[0].price) : "0";
    const bestAsk = b.asks[0] ? formatMicro(b.asks[0].price) : "1";
    const out = [];
    for (const side of ["bids", "asks"] as const) {
      for (const price of new Set([...before[side].keys(), ...now[side].keys()])) {
        const size = now[side].get(price) ?? 0n;
        if (size === (before[side].get(price) ?? 0n)) continue;
        out.push({
          asset_id: assetId,
          price: formatMicro(price),
          size: formatMicro(size),
          side: side === "bids" ? "BUY" : "SELL",
          hash: b.summary.hash,
          best_bid: bestBid,
          best_ask: bestAsk,
        });
      }
    }
    return out;
  }
}

function toMap(levels: readonly Level[]): Map<bigint, bigint> {
  return new Map(levels.map((l) => [l.price, l.shares]));
}
