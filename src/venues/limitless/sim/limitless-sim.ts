import { randomBytes, randomUUID } from "node:crypto";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { limitlessFee } from "../../../domain/fees.ts";
import { formatMicro } from "../../../domain/money.ts";
import type { Clock } from "../../../domain/types.ts";
import { MarketCatalog, type CatalogEvent } from "../../../markets/catalog.ts";
import { serveVenueSim, simExchange, SimFaults, type SimReply, type SimRequest, type VenueSim, type VenueSimOptions } from "../../net/sim-server.ts";
import { LIMITLESS_SIM, LIMITLESS_SIM_FEE_PPM } from "../../simulated/profiles.ts";
import type { VenueMarket } from "../../venue.ts";
import { LIMITLESS_HEADERS, verifyLimitless, type LimitlessCredentials } from "../signing.ts";
import { ENGINE_IO_PATH } from "../socketio.ts";
import type { LimitlessMarket, LimitlessOrderbook } from "../wire.ts";
import { LimitlessOrderDesk, type DeskMarket } from "./orders.ts";
import { LimitlessStream } from "./stream.ts";

/** The CLOB exchange contract on Base that the official SDK signs for by default; every simulated market names it as its venue. */
export const LIMITLESS_CLOB_EXCHANGE: Hex = "0xa4409D988CA2218d956BeEFD3874100F444f0DC3";
/** Markets the simulated Limitless lists beyond the catalog's: new questions for `crossfill events match` to place. */
const OWN_MARKETS = MarketCatalog.load(new URL("./own-markets.json", import.meta.url));
/** How far a request's signed timestamp may be from the simulator's clock (assumed: Limitless documents none). */
const TIMESTAMP_WINDOW_MS = 30_000;
/** `/markets/active` serves at most this many markets a page. */
const MAX_PAGE = 25;
/** `/portfolio/history` pages: 20 unless asked (the SDK's default), at most 100 (assumed: Limitless documents no maximum). */
const DEFAULT_HISTORY_PAGE = 20;
const MAX_HISTORY_PAGE = 100;

export interface LimitlessSimOptions extends VenueSimOptions {
  /** A taker delay on every market, ms: a posted order is answered `DELAYED` and meets the book this much later (default 0: none). */
  takerDelayMs?: number;
  /**
   * Market records without `feeRateBps`, as SDK 1.1.0's Market has none: every market then charges, and
   * takes signed, the account's rank rate (`GET /profiles/{address}`). Default: each market states its own.
   */
  marketsWithoutFeeRate?: boolean;
}

export type LimitlessSim = VenueSim<LimitlessCredentials> & {
  /** The server leaves the `/markets` namespace on every open connection (a Socket.IO server disconnect), which stays open. */
  leaveNamespace(): void;
};

/**
 * Limitless's public API on a loopback port: markets (by slug and the active list), orderbooks,
 * HMAC-authenticated EIP-712 order posting, lookup and cancelling, the account's trade history, and
 * the `/markets` Socket.IO stream, backed by the shared simulated exchange with the limitless-sim
 * profile.
 */
export async function startLimitlessSim(opts: LimitlessSimOptions): Promise<LimitlessSim> {
  const { clock, events, exchange, markets } = simExchange(opts, LIMITLESS_SIM, OWN_MARKETS);
  const privateKey = generatePrivateKey();
  const credentials: LimitlessCredentials = { apiKey: randomUUID(), secret: randomBytes(32).toString("base64"), privateKey, ownerId: 1 + (opts.seed % 100_000) };
  const eventOf = new Map<string, CatalogEvent>();
  const ids = new Map<string, number>();
  for (const e of events) {
    for (const l of e.listings) {
      if (l.venue !== LIMITLESS_SIM.id) continue;
      eventOf.set(l.venueMarketId, e);
      ids.set(l.venueMarketId, 1_000 + ids.size);
    }
  }
  const bps = (ratePpm: bigint, what: string): number => {
    if (ratePpm % 100n !== 0n) throw new Error(`${what}: a fee rate of ${ratePpm} ppm is not a whole number of basis points`);
    return Number(ratePpm / 100n);
  };
  const feeBps = (m: VenueMarket): number => bps(m.feeModel.ratePpm, m.venueMarketId);
  const wallet = privateKeyToAccount(privateKey).address;
  /** The account's rank fee rate, which the official SDK signs into every order: the profile's default rate (markets without a rate of their own charge it). */
  const rankFeeBps = bps(LIMITLESS_SIM_FEE_PPM, "rank");
  if (opts.marketsWithoutFeeRate) for (const m of exchange.markets()) exchange.setFeeModel(m.venueMarketId, limitlessFee(LIMITLESS_SIM_FEE_PPM));
  const deskMarket = (slug: string): DeskMarket | undefined => {
    const m = exchange.market(slug);
    return m && { id: ids.get(slug)!, slug, title: m.title, closed: m.status !== "open", tokens: m.outcomeIds, exchange: LIMITLESS_CLOB_EXCHANGE, feeRateBps: feeBps(m) };
  };
  const stream: LimitlessStream = new LimitlessStream(exchange, (slug) => orderbook(slug, String), () => faults.switches.streamSilent, () => clock.now());
  const faults: SimFaults = new SimFaults(exchange, stream.sockets);
  const desk = new LimitlessOrderDesk(exchange, { address: wallet, ownerId: credentials.ownerId }, deskMarket, () => clock.now(), opts.takerDelayMs);

  const handle = async (req: SimRequest): Promise<SimReply> => {
    const route = req.path;
    const signed = req.headers[LIMITLESS_HEADERS.key] !== undefined;
    const isPrivate = route === "/orders" || route.startsWith("/orders/") || route.endsWith("/user-orders") || route.startsWith("/portfolio/");
    // market data is public, but a request that carries a signature must carry a good one
    if (isPrivate || signed) {
      const refusal = checkAuth(credentials, clock, req);
      if (refusal) return refusal;
    }
    let m: RegExpExecArray | null;
    if (req.method === "GET" && route === "/markets/active") return activeMarkets(req.query);
    if (req.method === "GET" && (m = /^\/markets\/([^/]+)$/.exec(route))) {
      const market = exchange.market(decodeURIComponent(m[1]!));
      return market ? ok(limitlessMarket(market)) : error(404, `Market ${m[1]} not found`);
    }
    if (req.method === "GET" && (m = /^\/markets\/([^/]+)\/orderbook$/.exec(route))) {
      const book = orderbook(decodeURIComponent(m[1]!), Number);
      return book ? ok(book) : error(404, `Market ${m[1]} not found`);
    }
    if (req.method === "GET" && (m = /^\/markets\/([^/]+)\/user-orders$/.exec(route))) {
      const slug = decodeURIComponent(m[1]!);
      // `statuses` (repeated or comma-separated) filters; without it only LIVE orders are listed, as documented
      const statuses = req.query.getAll("statuses").flatMap((v) => v.split(",")).filter(Boolean);
      const wanted = new Set(statuses.length ? statuses : ["LIVE"]);
      return exchange.market(slug) ? ok({ orders: desk.inMarket(slug).filter((o) => wanted.has(o.status)) }) : error(404, `Market ${slug} not found`);
    }
    if (req.method === "GET" && (m = /^\/profiles\/([^/]+)$/.exec(route))) {
      // the official SDK's OrderClient reads ownerId (`id`) and the fee rate (`rank.feeRateBps`) from here before its first order
      const account = decodeURIComponent(m[1]!);
      if (account.toLowerCase() !== wallet.toLowerCase()) return error(404, `Profile ${account} not found`);
      return ok({ id: credentials.ownerId, account: wallet, rank: { feeRateBps: rankFeeBps } });
    }
    if (req.method === "POST" && route === "/orders") {
      const out = await desk.create(req.body);
      if (faults.switches.ackLost) return "cut";
      return out.kind === "created" ? { status: 201, body: out.answer } : error(out.status, out.message);
    }
    if (req.method === "GET" && (m = /^\/orders\/([^/]+)$/.exec(route))) {
      const answer = desk.order(decodeURIComponent(m[1]!));
      return answer ? ok(answer) : error(404, "Order not found");
    }
    if (req.method === "DELETE" && (m = /^\/orders\/([^/]+)$/.exec(route))) {
      // the batch cancel's documented failure: an order that is not open is "not found or already canceled"
      return desk.cancel(decodeURIComponent(m[1]!)) ? ok({ message: "Order canceled successfully" }) : error(404, "Order not found or already canceled");
    }
    if (req.method === "GET" && route === "/portfolio/history") return history(req.query);
    return error(404, `Cannot ${req.method} ${route}`);
  };

  function limitlessMarket(market: VenueMarket): LimitlessMarket & Record<string, unknown> {
    const event = eventOf.get(market.venueMarketId)!;
    const lifecycle = exchange.lifecycle(market.venueMarketId)!;
    return {
      id: ids.get(market.venueMarketId)!,
      slug: market.venueMarketId,
      title: market.title,
      description: event.description,
      // documented statuses: FUNDED trades, LOCKED is paused awaiting the outcome, RESOLVED names it
      status: lifecycle.state === "resolved" ? "RESOLVED" : lifecycle.state === "closed" ? "LOCKED" : "FUNDED",
      expired: lifecycle.state !== "open",
      expirationTimestamp: Date.parse(market.closeTime),
      expirationDate: market.closeTime,
      tradeType: "clob",
      marketType: "single",
      tokens: { yes: market.outcomeIds.YES, no: market.outcomeIds.NO },
      positionIds: [market.outcomeIds.YES, market.outcomeIds.NO],
      venue: { exchange: LIMITLESS_CLOB_EXCHANGE },
      settings: { minSize: market.minOrderShares.toString() },
      volume: market.volume.toString(),
      winningOutcomeIndex: lifecycle.state !== "resolved" ? null : lifecycle.outcome === "YES" ? 0 : 1,
      ...(opts.marketsWithoutFeeRate ? {} : { feeRateBps: feeBps(market) }),
    };
  }

  function activeMarkets(q: URLSearchParams): SimReply {
    const page = Number(q.get("page") ?? "1");
    const limit = Number(q.get("limit") ?? String(MAX_PAGE));
    if (!Number.isInteger(page) || page < 1 || !Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
      return error(400, `page must be ≥ 1 and limit between 1 and ${MAX_PAGE}`);
    }
    const active = exchange.markets().filter((mk) => mk.status === "open");
    return ok({ data: active.slice((page - 1) * limit, page * limit).map(limitlessMarket), totalMarketsCount: active.length });
  }

  /**
   * `GET /portfolio/history?cursor=&limit=&from=&to=`: the account's trades, newest first, a page at a time behind an
   * opaque cursor; `from` and `to` (ISO 8601, each optional) keep those of a block time within them, bounds included.
   */
  function history(q: URLSearchParams): SimReply {
    const cursor = q.get("cursor") ?? "";
    const limit = Number(q.get("limit") ?? String(DEFAULT_HISTORY_PAGE));
    const offset = cursor === "" ? 0 : Number(Buffer.from(cursor, "base64url").toString("utf8"));
    if (!Number.isInteger(offset) || offset < 0) return error(400, "Invalid cursor");
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_HISTORY_PAGE) return error(400, `limit must be between 1 and ${MAX_HISTORY_PAGE}`);
    const [from, to] = [q.get("from"), q.get("to")].map((d) => (d === null ? undefined : Date.parse(d)));
    if (Number.isNaN(from) || Number.isNaN(to)) return error(400, "from and to must be ISO 8601 date-times");
    const entries = desk.history().filter((e) => (from === undefined || e.blockTimestamp * 1000 >= from) && (to === undefined || e.blockTimestamp * 1000 <= to));
    const next = offset + limit;
    return ok({ data: entries.slice(offset, next), nextCursor: next < entries.length ? Buffer.from(String(next)).toString("base64url") : null });
  }

  /** The YES token's book as Limitless serves it; sizes are raw numbers over REST and raw strings on the stream, as each is documented. */
  function orderbook(slug: string, size: (raw: bigint) => number | string): LimitlessOrderbook | undefined {
    const market = exchange.market(slug);
    if (!market) return undefined;
    const yes = exchange.book(slug, "YES");
    const bids = yes?.bids ?? [];
    const asks = yes?.asks ?? [];
    const entry = (side: string) => (l: { price: bigint; shares: bigint }) => ({ price: Number(formatMicro(l.price)), size: size(l.shares), side });
    const mid = bids[0] && asks[0] ? (bids[0].price + asks[0].price) / 2n : undefined;
    return {
      bids: bids.map(entry("BUY")),
      asks: asks.map(entry("SELL")),
      tokenId: market.outcomeIds.YES,
      adjustedMidpoint: mid === undefined ? 0.5 : Number(formatMicro(mid)),
      maxSpread: 0.05,
      minSize: Number(market.minOrderShares),
      lastTradePrice: mid === undefined ? 0 : Number(formatMicro(mid)),
    };
  }

  const sim = await serveVenueSim(opts, {
    profile: LIMITLESS_SIM,
    exchange,
    markets,
    faults,
    streams: stream.sockets,
    credentials,
    restPath: "",
    wsPath: "",
    close: () => desk.close(),
    handle,
    upgrade: (req, socket, head) => {
      const url = new URL(req.url ?? "/", "http://sim");
      if (url.pathname !== ENGINE_IO_PATH || url.searchParams.get("EIO") !== "4" || url.searchParams.get("transport") !== "websocket") {
        socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
        return;
      }
      stream.sockets.accept(req, socket, head);
    },
  });
  return { ...sim, leaveNamespace: () => stream.leaveNamespace() };
}

/** The lmts-* headers of a request, checked against the one API token the simulator issued. */
function checkAuth(credentials: LimitlessCredentials, clock: Clock, req: SimRequest): Exclude<SimReply, "hang" | "cut"> | undefined {
  const key = req.headers[LIMITLESS_HEADERS.key];
  const timestamp = req.headers[LIMITLESS_HEADERS.timestamp];
  const signature = req.headers[LIMITLESS_HEADERS.signature];
  if (typeof key !== "string" || typeof timestamp !== "string" || typeof signature !== "string") return error(401, "Missing lmts-api-key, lmts-timestamp or lmts-signature");
  if (key !== credentials.apiKey) return error(401, "Invalid API key");
  const at = Date.parse(timestamp);
  if (Number.isNaN(at) || Math.abs(clock.now() - at) > TIMESTAMP_WINDOW_MS) return error(401, "Timestamp outside the accepted window");
  if (!verifyLimitless(credentials.secret, timestamp, req.method, req.rawPath, req.rawBody, signature)) return error(401, "Invalid signature");
  return undefined;
}

function ok(body: unknown): SimReply {
  return { status: 200, body };
}

/** Errors in the NestJS shape Limitless answers with. */
function error(status: number, message: string): Exclude<SimReply, "hang" | "cut"> {
  const names: Record<number, string> = { 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 409: "Conflict" };
  return { status, body: { message, error: names[status] ?? "Error", statusCode: status } };
}
