import type { WebSocket } from "ws";
import { formatMicro, type PriceMicro, type ShareMicro } from "../../../domain/money.ts";
import { SimSockets } from "../../net/sim-sockets.ts";
import type { SimExchange } from "../../simulated/exchange.ts";
import { DEPTH_CHANNEL } from "../book-stream.ts";

type Levels = Map<PriceMicro, ShareMicro>;

interface View {
  bids: Levels;
  asks: Levels;
}

interface Client {
  ws: WebSocket;
  /** Subscribed markets, each with the YES book as this client last heard of it. */
  views: Map<string, View>;
}

/**
 * Opinion's market websocket (`wss://ws.opinion.trade?apikey=`): `{ action: "SUBSCRIBE", channel:
 * "market.depth.diff", marketId }` subscribes, `UNSUBSCRIBE` undoes it, `HEARTBEAT` is taken without
 * an answer (assumed). Each change of a subscribed market's YES book goes out as one message per
 * changed level, with the level's new size (0: gone), computed against what that client was last
 * sent, so a client silenced by the fault hears every change once it speaks again. No snapshot is
 * sent: clients read one over REST.
 */
export class OpinionStream {
  /** Its connections: the simulator's server hands them the upgrades it has authenticated. */
  readonly sockets = new SimSockets<Client>({ client: (ws) => ({ ws, views: new Map() }), onMessage: (c, text) => this.command(c, text) });

  constructor(
    private readonly exchange: SimExchange,
    private readonly market: (marketId: number) => { slug: string; yesToken: string } | undefined,
    private readonly silent: () => boolean,
  ) {
    exchange.onBook((u) => {
      for (const c of this.sockets.clients) if (c.views.has(u.venueMarketId)) this.publish(c, u.venueMarketId);
    });
  }

  private command(client: Client, text: string): void {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    if (msg.channel !== DEPTH_CHANNEL || typeof msg.marketId !== "number") return;
    const m = this.market(msg.marketId);
    if (!m) return;
    if (msg.action === "SUBSCRIBE") client.views.set(m.slug, this.current(m.slug));
    if (msg.action === "UNSUBSCRIBE") client.views.delete(m.slug);
  }

  private publish(client: Client, slug: string): void {
    if (this.silent()) return;
    const before = client.views.get(slug)!;
    const after = this.current(slug);
    const marketId = Number(slug);
    const yesToken = this.market(marketId)?.yesToken ?? "";
    for (const side of ["bids", "asks"] as const) {
      for (const price of new Set([...before[side].keys(), ...after[side].keys()])) {
        const size = after[side].get(price) ?? 0n;
        if (size === (before[side].get(price) ?? 0n)) continue;
        client.ws.send(JSON.stringify({ msgType: DEPTH_CHANNEL, marketId, tokenId: yesToken, outcomeSide: 1, side, price: formatMicro(price), size: formatMicro(size) }));
      }
    }
    client.views.set(slug, after);
  }

  private current(slug: string): View {
    const book = this.exchange.book(slug, "YES");
    return { bids: new Map((book?.bids ?? []).map((l) => [l.price, l.shares])), asks: new Map((book?.asks ?? []).map((l) => [l.price, l.shares])) };
  }
}
