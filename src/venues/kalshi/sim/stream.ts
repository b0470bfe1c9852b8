import type { WebSocket } from "ws";
import { SimSockets } from "../../net/sim-sockets.ts";
import type { SimExchange } from "../../simulated/exchange.ts";
import { formatCount, formatDollars, type LevelMap } from "../wire.ts";

interface Subscription {
  sid: number;
  tickers: Set<string>;
  seq: number;
}

interface Client {
  ws: WebSocket;
  subs: Map<number, Subscription>;
  nextSid: number;
}

/** What the stream last published of one market: YES bids and NO bids, as Kalshi keeps its book. */
interface Published {
  yes: LevelMap;
  no: LevelMap;
}

/**
 * The `orderbook_delta` channel of Kalshi's WebSocket API: a snapshot per market on subscribe, then
 * one delta per changed price level, numbered per subscription (`seq`) so a client can tell a gap.
 * While the silent fault is on, messages are numbered but not sent, as a lagging feed would lose them.
 */
export class KalshiStream {
  /** Its connections: the simulator's server hands them the upgrades it has authenticated. */
  readonly sockets = new SimSockets<Client>({ client: (ws) => ({ ws, subs: new Map(), nextSid: 1 }), onMessage: (c, text) => this.command(c, text) });
  private readonly published = new Map<string, Published>();
  private readonly marketIds = new Map<string, string>();

  constructor(
    private readonly exchange: SimExchange,
    /** The silent fault of the simulator's switches. */
    private readonly silent: () => boolean,
    private readonly now: () => number,
  ) {
    for (const m of exchange.markets()) {
      this.marketIds.set(m.venueMarketId, crypto.randomUUID());
      const current = this.current(m.venueMarketId);
      if (current) this.published.set(m.venueMarketId, current);
    }
    exchange.onBook((u) => this.publish(u.venueMarketId));
  }

  private command(client: Client, text: string): void {
    let cmd: { id?: unknown; cmd?: unknown; params?: Record<string, unknown> };
    try {
      cmd = JSON.parse(text);
    } catch {
      return this.error(client, undefined, 1, "Unable to process message");
    }
    const id = typeof cmd.id === "number" ? cmd.id : undefined;
    if (cmd.cmd === "subscribe") return this.subscribe(client, id, cmd.params);
    if (cmd.cmd === "unsubscribe") {
      const sids = cmd.params?.sids;
      if (!Array.isArray(sids) || sids.length === 0) return this.error(client, id, 4, "Subscription IDs required");
      for (const sid of sids) {
        if (client.subs.delete(Number(sid))) client.ws.send(JSON.stringify({ id, sid, seq: 0, type: "unsubscribed" }));
        else this.error(client, id, 7, "Unknown subscription ID");
      }
      return;
    }
    this.error(client, id, 5, "Unknown command");
  }

  private subscribe(client: Client, id: number | undefined, params: Record<string, unknown> | undefined): void {
    if (!params) return this.error(client, id, 2, "Params required");
    const channels = params.channels;
    if (!Array.isArray(channels) || channels.length === 0) return this.error(client, id, 3, "Channels required");
    if (channels.some((c) => c !== "orderbook_delta")) return this.error(client, id, 8, "Unknown channel name");
    const tickers = [
      ...(typeof params.market_ticker === "string" ? [params.market_ticker] : []),
      ...(Array.isArray(params.market_tickers) ? params.market_tickers.filter((t): t is string => typeof t === "string") : []),
    ];
    if (tickers.length === 0) return this.error(client, id, 11, "market_ticker or market_tickers is required for orderbook_delta");
    const sub: Subscription = { sid: client.nextSid++, tickers: new Set(tickers), seq: 0 };
    client.subs.set(sub.sid, sub);
    client.ws.send(JSON.stringify({ id, type: "subscribed", msg: { channel: "orderbook_delta", sid: sub.sid } }));
    for (const ticker of sub.tickers) {
      const book = this.published.get(ticker);
      if (!book) continue;
      this.send(client, sub, "orderbook_snapshot", {
        market_ticker: ticker,
        market_id: this.marketIds.get(ticker),
        yes_dollars_fp: pairs(book.yes),
        no_dollars_fp: pairs(book.no),
      });
    }
  }

  private publish(ticker: string): void {
    const before = this.published.get(ticker);
    const after = this.current(ticker);
    if (!before || !after) return;
    this.published.set(ticker, after);
    const deltas = [...diff("yes", before.yes, after.yes), ...diff("no", before.no, after.no)];
    if (deltas.length === 0) return;
    const ts = new Date(this.now()).toISOString();
    for (const client of this.sockets.clients) {
      for (const sub of client.subs.values()) {
        if (!sub.tickers.has(ticker)) continue;
        for (const d of deltas) {
          this.send(client, sub, "orderbook_delta", {
            market_ticker: ticker,
            market_id: this.marketIds.get(ticker),
            price_dollars: formatDollars(d.price),
            delta_fp: (d.delta < 0n ? "-" : "") + formatCount(d.delta < 0n ? -d.delta : d.delta),
            side: d.side,
            ts,
          });
        }
      }
    }
  }

  private send(client: Client, sub: Subscription, type: string, msg: Record<string, unknown>): void {
    sub.seq++;
    if (this.silent()) return;
    client.ws.send(JSON.stringify({ type, sid: sub.sid, seq: sub.seq, msg }));
  }

  private error(client: Client, id: number | undefined, code: number, msg: string): void {
    client.ws.send(JSON.stringify({ id, type: "error", msg: { code, msg } }));
  }

  private current(ticker: string): Published | undefined {
    const yes = this.exchange.book(ticker, "YES");
    const no = this.exchange.book(ticker, "NO");
    if (!yes || !no) return undefined;
    return { yes: new Map(yes.bids.map((l) => [l.price, l.shares])), no: new Map(no.bids.map((l) => [l.price, l.shares])) };
  }
}

function pairs(levels: LevelMap): [string, string][] {
  return [...levels]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([price, shares]) => [formatDollars(price), formatCount(shares)]);
}

function diff(side: "yes" | "no", before: LevelMap, after: LevelMap): { side: "yes" | "no"; price: bigint; delta: bigint }[] {
  const out: { side: "yes" | "no"; price: bigint; delta: bigint }[] = [];
  for (const [price, shares] of after) {
    const delta = shares - (before.get(price) ?? 0n);
    if (delta !== 0n) out.push({ side, price, delta });
  }
  for (const [price, shares] of before) if (!after.has(price)) out.push({ side, price, delta: -shares });
  return out;
}
