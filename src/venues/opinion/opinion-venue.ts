import type { Hex } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { evmAccount } from "../../evm/account.ts";
import { AppError } from "../../domain/errors.ts";
import type { FeeModel } from "../../domain/fees.ts";
import { formatMicro, ONE, parseMicro } from "../../domain/money.ts";
import type { Outcome } from "../../domain/types.ts";
import type { LevelMap } from "../mirror-book.ts";
import type { AdapterOptions } from "../net/adapter-options.ts";
import { sendRequest, sendWithRetry, type HttpResult } from "../net/http.ts";
import type { ReconnectingSocket } from "../net/reconnecting-socket.ts";
import { WireVenue, WRITE_RETRY } from "../net/wire-venue.ts";
import { failedResult, repeatResult, takenResult, underMinimumAmount } from "../placement.ts";
import { CHILD_ORDERS_KEPT, resolutionStatus, type ChildOrder, type ChildStatus, type PlaceResult, type Venue, type VenueFill, type VenueMarket, type VenueResolution } from "../venue.ts";
import { OpinionBookStream } from "./book-stream.ts";
import { buyOrder, OPINION_API_KEY_HEADER, OPINION_CHAIN_ID, orderBody, saltFor, sellOrder, signOrder, type OpinionCredentials } from "./signing.ts";
import {
  ERRNO_DUPLICATE_ORDER,
  fillsFromTrades,
  levelMap,
  ORDER_CANCELED,
  ORDER_EXPIRED,
  ORDER_FAILED,
  ORDER_FINISHED,
  ORDER_PENDING,
  opinionResolution,
  outcomeSide,
  tokensFeeModel,
  toVenueMarket,
  tradeSide,
  tradesFromList,
  type OpinionEnvelope,
  type OpinionMarket,
  type OpinionOrder,
  type OpinionOrderbook,
  type OpinionQuoteToken,
  type OpinionTrade,
} from "./wire.ts";
import { BoundedMap } from "../../domain/bounded-map.ts";

/**
 * baseUrl is the OpenAPI root (https://openapi.opinion.trade/openapi), wsUrl the market stream
 * (wss://ws.opinion.trade). Opinion publishes one limit, 15 requests a second per API key: by default
 * reads and writes share one bucket of 15 a second.
 */
export type OpinionVenueOptions = AdapterOptions<OpinionCredentials>;

export const OPINION_REQUESTS_PER_SECOND = 15;
/** The backend's largest page (the SDK: "Backend max page size"). */
const PAGE = 20;
/** The SDK's heartbeat interval. */
const HEARTBEAT_MS = 30_000;
/** How long a SUBSCRIBE is given to take before a market that sent no diff is read over REST (assumed: Opinion acknowledges none). */
const SUBSCRIBE_SETTLE_MS = 1_000;

interface Cached {
  market: VenueMarket;
  exchange: Hex;
  currency: Hex;
  decimals: number;
}

/** A market as `GET /market` states it, with its tokens' taker fee rates as `GET /token/fee-rates` states them. */
interface RatedMarket {
  market: OpinionMarket;
  takerFeeBps: Record<Outcome, unknown>;
}

/**
 * Opinion's CLOB behind the Venue port: its OpenAPI (header `apikey`, `{ errno, errmsg, result }`
 * answers) for markets, books, orders, cancels and trades; EIP-712 limit buys and sells signed by a Safe's
 * owner for the Safe; the `market.depth.diff` websocket channel for live books. Opinion has no
 * immediate-or-cancel order: a child is a limit order whose unmatched rest rests until the child's
 * expiry (orderExpTime) or a cancel, so an order with a rest is answered `open` and cancelled by
 * the caller. Opinion gives an order no client id: a restarted adapter finds a child among the
 * market's orders by its side, price, size and expiry second, which the order service makes unique
 * per content (findsChildrenByContent).
 */
export class OpinionVenue extends WireVenue<OpinionCredentials> implements Venue {
  /** Opinion's order list names no client id and no salt: a child is found by its content, expiry second included. */
  readonly findsChildrenByContent = true;
  private readonly signer: PrivateKeyAccount;
  private readonly marketIds: string[];
  protected readonly stream: OpinionBookStream;
  protected readonly socket: ReconnectingSocket;
  private readonly cache = new Map<string, Cached>();
  private readonly orderIds = new BoundedMap<string, string>(CHILD_ORDERS_KEPT);
  private quoteTokens: Promise<OpinionQuoteToken[]> | undefined;
  private timers: NodeJS.Timeout[] = [];

  constructor(opts: OpinionVenueOptions) {
    super(opts, { adapter: "opinion-openapi", venueId: "opinion-sim", rateLimits: { sharedPerSecond: OPINION_REQUESTS_PER_SECOND }, placementReads: 1 });
    this.signer = evmAccount(opts.credentials.privateKey);
    this.marketIds = this.listedMarkets(true);
    this.stream = new OpinionBookStream({
      ...this.streamHooks(),
      marketIds: this.marketIds,
      snapshot: (id) => this.snapshot(id),
      silentMs: Math.max(this.freshnessMs, 2_000),
      subscribeSettleMs: SUBSCRIBE_SETTLE_MS,
    });
    const url = new URL(opts.wsUrl);
    url.searchParams.set("apikey", opts.credentials.apiKey);
    this.socket = this.connect(url.toString(), () => ({}), () => this.stream.opened());
  }

  async start(): Promise<void> {
    await this.markets();
    this.socket.start();
    this.timers = [
      setInterval(() => {
        if (this.stream.overdue()) this.socket.restart();
      }, 500),
      setInterval(() => this.stream.heartbeat(), HEARTBEAT_MS),
      this.readAgain(() => this.markets()),
    ];
    for (const t of this.timers) t.unref();
    await this.streamSynced(() => this.stream.synced());
    // whatever the stream has not synced yet is read over REST, so no market starts without a book
    await Promise.all(
      this.marketIds.filter((id) => !this.stream.book(id, "YES")).map(async (id) => {
        const book = await this.snapshot(id);
        if (book) this.stream.seed(id, book.bids, book.asks, this.clock.now());
      }),
    );
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.socket.stop();
    this.stream.disconnected();
  }

  /**
   * The catalog's markets as Opinion states them now: `GET /market/{marketId}` and the YES token's
   * `GET /token/fee-rates`; a market the adapter cannot model (its fee rate, its quote token) is left out.
   */
  async markets(): Promise<VenueMarket[]> {
    const wanted = this.listedMarkets();
    const tokens = await this.quoteTokenList();
    const listed = await Promise.all(
      wanted.map(async (id) => this.withFeeRate(((await this.read(`/market/${encodeURIComponent(id)}`)) as { data: OpinionMarket }).data)),
    );
    const out = this.modelled(listed, ({ market }) => String(market.marketId), (read) => this.cached(read, tokens));
    // a market left out now is no longer traded at what was read of it before
    this.cache.clear();
    for (const c of out) this.cache.set(c.market.venueMarketId, c);
    return out.map(({ market: m }) => ({ ...m, outcomeIds: { ...m.outcomeIds } }));
  }

  /**
   * The activated binary markets the catalog does not list (`GET /market`, 20 a page), each once, less those the adapter
   * cannot model. By id: a market listed between two page reads shifts the list, showing one market on both pages.
   */
  async discover(): Promise<VenueMarket[]> {
    const listed = new Set(this.listedMarkets());
    const found = new Map<string, OpinionMarket>();
    for (let page = 1; ; page++) {
      const q = new URLSearchParams({ chainId: String(OPINION_CHAIN_ID), marketType: "0", status: "activated", page: String(page), limit: String(PAGE) });
      const body = (await this.read(`/market?${q}`)) as { list: OpinionMarket[]; total: number };
      for (const m of body.list) found.set(String(m.marketId), m);
      if (body.list.length < PAGE || page * PAGE >= body.total) break;
    }
    const fresh = await Promise.all([...found.values()].filter((m) => !listed.has(String(m.marketId))).map((m) => this.withFeeRate(m)));
    return this.modelled(fresh, ({ market }) => String(market.marketId), ({ market, takerFeeBps }) => toVenueMarket(market, tokensFeeModel(takerFeeBps)));
  }

  market(venueMarketId: string): VenueMarket | undefined {
    const m = this.cache.get(venueMarketId)?.market;
    return m && { ...m, outcomeIds: { ...m.outcomeIds } };
  }

  /** `GET /market/{marketId}`: its `status` and `resultTokenId` (docs/venues/opinion.md, Resolution). */
  async resolution(venueMarketId: string): Promise<VenueResolution> {
    const m = ((await this.read(`/market/${encodeURIComponent(venueMarketId)}`)) as { data: OpinionMarket }).data;
    const resolution = opinionResolution(m);
    const cached = this.cache.get(venueMarketId);
    if (cached) cached.market.status = resolutionStatus(resolution);
    return resolution;
  }

  async place(order: ChildOrder): Promise<PlaceResult> {
    const cached = this.cache.get(order.venueMarketId);
    if (!cached) return { kind: "rejected", reason: `unknown_market: ${this.id} lists no market ${order.venueMarketId}` };
    const { market } = cached;
    if (order.shares < market.minOrderShares || order.shares % market.lotShares !== 0n || order.limitPrice % market.tickSize !== 0n || order.limitPrice <= 0n || order.limitPrice >= ONE) {
      return { kind: "rejected", reason: `invalid_order: price or size off ${order.venueMarketId}'s grid` };
    }
    const under = underMinimumAmount(order, market, "USDT");
    if (under) return under;
    if (this.orderIds.has(order.clientOrderId)) return repeatResult(order, "order already placed", () => this.status(order.clientOrderId, order));
    const body = await this.orderBody(order, cached);
    const started = performance.now();
    // an answered 5xx is retried: the same salt is the same signed order, which the venue refuses to take twice
    const res = await sendWithRetry(() => this.send("POST", "/order", body), this.turns.throttleFor(order.clientOrderId), WRITE_RETRY, (f) => f.status !== undefined);
    if (!res.ok) return failedResult(res);
    this.recorder.record(performance.now() - started);
    const answer = res.body as OpinionEnvelope<{ orderData: OpinionOrder }>;
    if (answer.errno === ERRNO_DUPLICATE_ORDER) return repeatResult(order, `duplicate order (salt of ${order.clientOrderId})`, () => this.status(order.clientOrderId, order));
    if (answer.errno !== 0) return { kind: "rejected", reason: `venue_rejected: ${answer.errno} ${answer.errmsg}` };
    const placed = answer.result.orderData;
    this.orderIds.set(order.clientOrderId, placed.orderId);
    const noMatch = `no_match: nothing to take at or ${order.side === "buy" ? "below" : "above"} ${formatMicro(order.limitPrice)}`;
    if (!rests(placed, this.id) && parseMicro(placed.filledShares, "filledShares") === 0n) return { kind: "rejected", reason: noMatch };
    try {
      const st = await this.orderState(placed.orderId, order.clientOrderId, true);
      if (st.kind === "not_found") return { kind: "rejected", reason: noMatch };
      return takenResult(order, placed.orderId, st.fills, st.kind === "open");
    } catch (err) {
      return { kind: "unknown", reason: `order ${placed.orderId} was placed but its trades could not be read: ${String(err)}` };
    }
  }

  /**
   * Finds a child order by the id the venue gave it or, after a restart, among the market's orders
   * (which needs the child itself). An order that ended without a trade was, for the port, never placed.
   */
  async status(clientOrderId: string, order?: ChildOrder): Promise<ChildStatus> {
    const orderId = await this.orderId(clientOrderId, order);
    return orderId === undefined ? { kind: "not_found" } : this.orderState(orderId, clientOrderId);
  }

  /**
   * `POST /order/cancel { orderId }` cancels what rests of the order; an order with nothing resting
   * is refused with an errno, which leaves nothing to cancel. Either way the order is read back.
   */
  async cancel(clientOrderId: string, order?: ChildOrder): Promise<ChildStatus> {
    const orderId = await this.orderId(clientOrderId, order);
    if (orderId === undefined) return { kind: "not_found" };
    // cancelling twice is harmless, so even an unknown outcome is retried
    const res = await sendWithRetry(() => this.send("POST", "/order/cancel", { orderId }), this.cancels, WRITE_RETRY, () => true);
    if (!res.ok) throw new AppError("venue_unavailable", `${this.id}: POST /order/cancel failed: ${res.reason}`, { venue: this.id });
    const st = await this.orderState(orderId, clientOrderId, true);
    if (st.kind === "open") throw new AppError("venue_unavailable", `${this.id}: order ${orderId} still rests after its cancel`, { venue: this.id });
    return st;
  }

  /** Every trade of the account (`GET /trade`, 20 a page, newest first), oldest first, each once. */
  async trades(): Promise<VenueFill[]> {
    const all: OpinionTrade[] = [];
    for (let page = 1; ; page++) {
      const body = (await this.read(`/trade?${new URLSearchParams({ chainId: String(OPINION_CHAIN_ID), page: String(page), limit: String(PAGE) })}`)) as { list: OpinionTrade[]; total: number };
      all.push(...body.list);
      if (body.list.length < PAGE || all.length >= body.total) break;
    }
    const models = new Map(await Promise.all([...new Set(all.map((t) => String(t.marketId)))].map(async (id) => [id, await this.feeModel(id, "a trade")] as const)));
    return tradesFromList(all.reverse(), (marketId) => models.get(marketId)!);
  }

  /** A market with its YES and NO tokens' taker fee rates (`GET /token/fee-rates`, a rate per token). */
  private async withFeeRate(market: OpinionMarket): Promise<RatedMarket> {
    const rate = async (tokenId: string) => ((await this.read(`/token/fee-rates?${new URLSearchParams({ token_id: tokenId, chain_id: String(OPINION_CHAIN_ID) })}`)) as { takerFeeBps: unknown }).takerFeeBps;
    const [YES, NO] = await Promise.all([rate(market.yesTokenId), rate(market.noTokenId)]);
    return { market, takerFeeBps: { YES, NO } };
  }

  /** A market as the adapter keeps it, with what its orders are signed for: its quote token, which `tokens` (`/quoteToken`) must list. */
  private cached({ market: m, takerFeeBps }: RatedMarket, tokens: OpinionQuoteToken[]): Cached {
    const token = tokens.find((t) => t.quoteTokenAddress.toLowerCase() === m.quoteToken.toLowerCase());
    if (!token) throw new Error(`market ${m.marketId} trades in ${m.quoteToken}, which /quoteToken does not list`);
    return { market: toVenueMarket(m, tokensFeeModel(takerFeeBps)), exchange: token.ctfExchangeAddress as Hex, currency: token.quoteTokenAddress as Hex, decimals: token.decimal };
  }

  private quoteTokenList(): Promise<OpinionQuoteToken[]> {
    this.quoteTokens ??= this.read(`/quoteToken?chainId=${OPINION_CHAIN_ID}`).then((r) => (r as { list: OpinionQuoteToken[] }).list);
    const pending = this.quoteTokens;
    pending.catch(() => {
      if (this.quoteTokens === pending) this.quoteTokens = undefined;
    });
    return pending;
  }

  private async orderBody(order: ChildOrder, c: Cached): Promise<Record<string, unknown>> {
    const args = {
      maker: this.opts.credentials.multiSigAddress,
      signer: this.signer.address,
      tokenId: c.market.outcomeIds[order.outcome],
      limitPrice: order.limitPrice,
      shares: order.shares,
      decimals: c.decimals,
      salt: saltFor(order.clientOrderId),
    };
    const struct = order.side === "buy" ? buyOrder(args) : sellOrder(args);
    const signature = await signOrder(this.signer, struct, c.exchange);
    return orderBody({
      order: struct,
      signature,
      marketId: Number(order.venueMarketId),
      currency: c.currency,
      limitPrice: order.limitPrice,
      // rounded down: the venue drops the order no later than the child's expiry
      expiresAtSeconds: Math.floor(order.expiresAt / 1000),
      nowSeconds: Math.floor(this.clock.now() / 1000),
    });
  }

  /** The venue's id of a child order: known since it was placed, or found among the market's orders by what the child asked. */
  private async orderId(clientOrderId: string, order: ChildOrder | undefined): Promise<string | undefined> {
    const known = this.orderIds.get(clientOrderId);
    if (known !== undefined) return known;
    if (!order) throw new AppError("venue_unavailable", `${this.id} finds orders by their content: pass the child order after a restart.`, { venue: this.id });
    // by id: an order placed between two page reads shifts the list (newest first), showing one order on both pages
    const matches = new Set<string>();
    for (let page = 1; ; page++) {
      const q = new URLSearchParams({ chainId: String(OPINION_CHAIN_ID), marketId: order.venueMarketId, page: String(page), limit: String(PAGE) });
      const body = (await this.read(`/order?${q}`)) as { list: OpinionOrder[]; total: number };
      for (const o of body.list) if (this.isChild(o, order)) matches.add(o.orderId);
      if (body.list.length < PAGE || page * PAGE >= body.total) break;
    }
    if (matches.size > 1) throw new AppError("venue_unavailable", `${this.id}: ${matches.size} orders match child ${clientOrderId}; it cannot be told apart`, { venue: this.id });
    const [found] = matches;
    if (found !== undefined) this.orderIds.set(clientOrderId, found);
    return found;
  }

  private isChild(o: OpinionOrder, order: ChildOrder): boolean {
    return (
      String(o.marketId) === order.venueMarketId &&
      tradeSide(o.sideEnum, "sideEnum") === order.side &&
      o.outcomeSide === outcomeSide(order.outcome) &&
      parseMicro(o.price, "price") === order.limitPrice &&
      parseMicro(o.orderShares, "orderShares") === order.shares &&
      o.expiresAt === Math.floor(order.expiresAt / 1000)
    );
  }

  /** `GET /order/{orderId}`: open while pending, done with its trades, or never placed if it ended without one; `readBack` as readRest's. */
  private async orderState(orderId: string, clientOrderId: string, readBack = false): Promise<ChildStatus> {
    const o = ((await this.read(`/order/${encodeURIComponent(orderId)}`, readBack)) as { orderData: OpinionOrder }).orderData;
    const fills = fillsFromTrades(o.trades ?? [], orderId, clientOrderId, await this.feeModel(String(o.marketId), `order ${orderId}`));
    if (rests(o, this.id)) return { kind: "open", venueOrderId: orderId, fills };
    return fills.length === 0 ? { kind: "not_found" } : { kind: "done", venueOrderId: orderId, fills };
  }

  /**
   * The fee model of a market: the catalogue's, or, for a market the adapter does not load (a child
   * order placed on it before a restart, and the catalog or the venue dropped it since), as the venue states it
   * now (`GET /market/{marketId}` and its tokens' `GET /token/fee-rates`).
   */
  private async feeModel(marketId: string, what: string): Promise<FeeModel> {
    const cached = this.cache.get(marketId)?.market.feeModel;
    if (cached) return cached;
    try {
      const { takerFeeBps } = await this.withFeeRate(((await this.read(`/market/${encodeURIComponent(marketId)}`)) as { data: OpinionMarket }).data);
      return tokensFeeModel(takerFeeBps);
    } catch (err) {
      throw new AppError("venue_unavailable", `${this.id}: ${what} is in market ${marketId}, which this adapter does not load and could not read: ${err instanceof Error ? err.message : String(err)}`, { venue: this.id });
    }
  }

  /** A market's YES book from `GET /token/orderbook`, or undefined when it cannot be read now (the stream asks again). */
  private async snapshot(marketId: string): Promise<{ bids: LevelMap; asks: LevelMap } | undefined> {
    const token = this.cache.get(marketId)?.market.outcomeIds.YES;
    if (token === undefined) return undefined;
    try {
      const book = (await this.read(`/token/orderbook?${new URLSearchParams({ token_id: token })}`)) as OpinionOrderbook;
      return { bids: levelMap(book.bids, "bids"), asks: levelMap(book.asks, "asks") };
    } catch {
      return undefined;
    }
  }

  /** A GET's result: a non-zero errno is the venue's refusal. */
  private async read(path: string, readBack = false): Promise<unknown> {
    const body = (await this.readRest(path, () => this.send("GET", path), readBack)) as OpinionEnvelope<unknown>;
    if (body.errno !== 0) throw new AppError("venue_unavailable", `${this.id}: GET ${path} answered errno ${body.errno}: ${body.errmsg}`, { venue: this.id });
    return body.result;
  }

  private send(method: "GET" | "POST", path: string, body?: unknown): Promise<HttpResult> {
    const base = this.opts.baseUrl.replace(/\/$/, "");
    return sendRequest(base, { method, path, body, headers: { [OPINION_API_KEY_HEADER]: this.opts.credentials.apiKey }, timeoutMs: this.timeoutMs });
  }
}

/**
 * Whether an order is pending (part of it rests) or ended (finished, canceled, expired, failed). A status the adapter does
 * not know is refused, never taken for ended: the order may still fill, after it was settled as done.
 */
function rests(order: OpinionOrder, venue: string): boolean {
  if (order.status === ORDER_PENDING) return true;
  if ([ORDER_FINISHED, ORDER_CANCELED, ORDER_EXPIRED, ORDER_FAILED].includes(order.status)) return false;
  throw new AppError("venue_unavailable", `${venue}: order ${order.orderId} has status ${JSON.stringify(order.status)}, which the adapter does not know`, { venue });
}
