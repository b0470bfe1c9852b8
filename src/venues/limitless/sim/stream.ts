import { randomBytes } from "node:crypto";
import type { WebSocket } from "ws";
import { SimSockets } from "../../net/sim-sockets.ts";
import type { SimExchange } from "../../simulated/exchange.ts";
import { MARKETS_NAMESPACE } from "../book-stream.ts";
import { decode, encodeConnect, encodeConnectError, encodeDisconnect, encodeEvent, encodeOpen, PING } from "../socketio.ts";
import type { LimitlessOrderbook } from "../wire.ts";

/** Socket.IO's default heartbeat: a ping every 25 s, 20 s to answer it. */
const PING_INTERVAL_MS = 25_000;
const PING_TIMEOUT_MS = 20_000;

interface Client {
  ws: WebSocket;
  /** Joined the /markets namespace. */
  joined: boolean;
  slugs: Set<string>;
  pinger: NodeJS.Timeout;
}

/**
 * The `/markets` namespace of Limitless's Socket.IO server over Engine.IO 4 websockets: the
 * handshake, server pings, namespace join, `subscribe_market_prices` (which replaces the previous
 * subscription, as documented) and one `orderbookUpdate` with the whole book per change. A new
 * subscription gets each market's current book at once (assumed). While the silent fault is on,
 * nothing is sent, not even pings.
 */
export class LimitlessStream {
  /** Its connections: the simulator's server hands them the upgrades to the Engine.IO path. */
  readonly sockets = new SimSockets<Client>({
    client: (ws) => {
      const client: Client = { ws, joined: false, slugs: new Set(), pinger: setInterval(() => this.send(client, PING), PING_INTERVAL_MS) };
      client.pinger.unref();
      this.send(client, encodeOpen({ sid: randomBytes(10).toString("base64url"), upgrades: [], pingInterval: PING_INTERVAL_MS, pingTimeout: PING_TIMEOUT_MS, maxPayload: 1_000_000 }));
      return client;
    },
    onMessage: (c, text) => this.command(c, text),
    onClose: (c) => clearInterval(c.pinger),
  });

  constructor(
    exchange: SimExchange,
    private readonly orderbook: (slug: string) => LimitlessOrderbook | undefined,
    private readonly silent: () => boolean,
    private readonly now: () => number,
  ) {
    exchange.onBook((u) => this.publish(u.venueMarketId));
  }

  private command(client: Client, text: string): void {
    const packet = decode(text);
    if (!packet) return;
    if (packet.kind === "connect") {
      if (packet.nsp !== MARKETS_NAMESPACE) return this.send(client, encodeConnectError(packet.nsp, "Invalid namespace"));
      client.joined = true;
      return this.send(client, encodeConnect(MARKETS_NAMESPACE, { sid: randomBytes(10).toString("base64url") }));
    }
    if (packet.kind === "disconnect" && packet.nsp === MARKETS_NAMESPACE) {
      client.joined = false;
      client.slugs.clear();
      return;
    }
    if (packet.kind !== "event" || packet.nsp !== MARKETS_NAMESPACE || !client.joined || packet.name !== "subscribe_market_prices") return;
    const slugs = (packet.args[0] as { marketSlugs?: unknown } | undefined)?.marketSlugs;
    client.slugs = new Set(Array.isArray(slugs) ? slugs.filter((s): s is string => typeof s === "string") : []);
    for (const slug of client.slugs) this.update(client, slug);
  }

  /**
   * The server leaves `/markets` on every connection that joined it (Socket.IO's "io server disconnect", `41/markets,`):
   * the connections stay open and pinged, and send no book until a client joins and subscribes again.
   */
  leaveNamespace(): void {
    for (const client of this.sockets.clients) {
      if (!client.joined) continue;
      client.joined = false;
      client.slugs.clear();
      this.send(client, encodeDisconnect(MARKETS_NAMESPACE));
    }
  }

  private publish(slug: string): void {
    for (const client of this.sockets.clients) if (client.slugs.has(slug)) this.update(client, slug);
  }

  private update(client: Client, slug: string): void {
    const orderbook = this.orderbook(slug);
    if (orderbook) this.send(client, encodeEvent(MARKETS_NAMESPACE, "orderbookUpdate", { marketSlug: slug, orderbook, timestamp: new Date(this.now()).toISOString() }));
  }

  private send(client: Client, text: string): void {
    if (!this.silent()) client.ws.send(text);
  }
}
