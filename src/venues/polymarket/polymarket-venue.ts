import { performance } from "node:perf_hooks";
import { AppError } from "../../domain/errors.ts";
import { systemClock, type Clock, type Level, type Outcome } from "../../domain/types.ts";
import type { MarketCatalog } from "../../markets/catalog.ts";
import { streamedHealth } from "../health.ts";
import { LatencyRecorder } from "../latency.ts";
import { feesPerFill, takenResult, underMinimumAmount } from "../placement.ts";
import type {
  BookSnapshot,
  BookUpdate,
  ChildOrder,
  ChildStatus,
  LatencyStats,
  PlaceResult,
  Unsubscribe,
  Venue,
  VenueFill,
  VenueHealth,
  VenueMarket,
  VenueResolution,
} from "../venue.ts";
import { CHILD_ORDERS_KEPT, resolutionStatus } from "../venue.ts";
import type { PolymarketCredentials } from "./auth.ts";
import { BookStream } from "./book-stream.ts";
import type { StreamLog } from "../net/reconnecting-socket.ts";
import { formatMicro, type PriceMicro } from "../../domain/money.ts";
import type { HttpResult, RetryPolicy } from "../net/http.ts";
import { WireError } from "./decimal.ts";
import { modelledMarkets, repeatRead } from "../net/wire-venue.ts";
import { FEE_READ_INTERVAL_MS } from "../net/adapter-options.ts";
import { orderBody, orderHash, OrderSigner, type PostedOrder } from "./order-signing.ts";
import { ENGINE_RESTARTING, POLYMARKET_LIMITS, RestClient, type Limit, type RestRequest } from "./rest.ts";
import {
  applyLevel,
  END_CURSOR,
  INITIAL_CURSOR,
  parseBook,
  parseCancelResult,
  parseClobMarketFee,
  parseClobMarketTick,
  conditionIdOf,
  parseMarketsPage,
  parseOpenOrder,
  parseMarket,
  parseOrderAck,
  parseTradedMarket,
  parseTradesPage,
  rejectionReason,
  type BookSummary,
  type ClobMarket,
  type ClobTrade,
  type OrderTrade,
  orderTrades,
  type StreamEvent,
  withTick,
} from "./wire.ts";
import { BoundedMap } from "../../domain/bounded-map.ts";

export interface PolymarketVenueOptions {
  /** The venue id the catalog's listings name (default "polymarket-sim"). */
  id?: string;
  /** REST base, e.g. https://clob.polymarket.com. */
  baseUrl: string;
  /** The market channel, e.g. wss://ws-subscriptions-clob.polymarket.com/ws/market. */
  wsUrl: string;
  credentials: PolymarketCredentials;
  catalog: MarketCatalog;
  clock?: Clock;
  freshnessMs?: number;
  requestTimeoutMs?: number;
  /** Stream reconnection back-off. */
  reconnect?: { initialMs: number; maxMs: number };
  /** First REST retry back-off, doubling. */
  retryBackoffMs?: number;
  maxRetryAfterMs?: number;
  limits?: Record<string, Limit>;
  /** Where the book stream tells of reconnections and dropped frames. */
  log?: StreamLog;
  /** How often each loaded market's fee curve is read again (readFees; FEE_READ_INTERVAL_MS by default). */
  feeReadIntervalMs?: number;
}

/** A book as the stream last left it: each change replaces a side with a new array, so book() hands its sides out as they are. */
interface HeldBook {
  bids: readonly Level[];
  asks: readonly Level[];
  receivedAt: number;
  /** The stream connection that last delivered this book; 0 for a REST snapshot. */
  connection: number;
}

type Failure = HttpResult & { ok: false };

/**
 * Reads change nothing on the venue, and a cancel sent again cancels nothing more: one that went
 * unanswered is asked again, as is one answered 5xx.
 */
const retryIdempotent = (f: Failure) => f.status === undefined || f.status >= 500;
/**
 * Reposting an order answered 5xx is safe: its hash is fixed by its client id, so the venue refuses
 * a second copy as a duplicate. One that went unanswered is not reposted: status() reconciles it.
 */
const retryOrder = (f: Failure) => f.status !== undefined && f.status >= 500;
const BOOKS_PER_REQUEST = 50;
/** The trade status of a match whose settlement failed for good (docs: user channel, trade statuses). */
const FAILED = "FAILED";
/** The limits `POST /order` counts against, besides the general one. */
const ORDER_LIMITS = ["postOrderBurst", "postOrderSustained"];

/** Polymarket's CLOB behind the Venue port: REST for catalogue, orders and fills, the market WebSocket for books. */
export class PolymarketVenue implements Venue {
  readonly id: string;
  readonly freshnessMs: number;
  private readonly clock: Clock;
  private readonly catalog: MarketCatalog;
  private readonly rest: RestClient;
  private readonly retry: RetryPolicy;
  private readonly signer: OrderSigner;
  private readonly apiKey: string;
  private readonly stream: BookStream;
  private readonly recorder = new LatencyRecorder();
  private readonly markets_ = new Map<string, ClobMarket>();
  /** Markets not in the catalogue that a child order was looked for on (marketById). */
  private readonly unloaded = new Map<string, ClobMarket>();
  private readonly tokens = new Map<string, { conditionId: string; outcome: Outcome }>();
  private readonly books = new Map<string, HeldBook>();
  private readonly orders = new BoundedMap<string, string>(CHILD_ORDERS_KEPT);
  private readonly listeners = new Set<(u: BookUpdate) => void>();
  private restFailures = 0;
  private readonly baseUrl: string;
  private readonly wsUrl: string;
  private readonly log: StreamLog | undefined;
  private readonly feeReadIntervalMs: number;
  private feeTimer: NodeJS.Timeout | undefined;

  constructor(opts: PolymarketVenueOptions) {
    this.id = opts.id ?? "polymarket-sim";
    this.clock = opts.clock ?? systemClock;
    this.catalog = opts.catalog;
    this.freshnessMs = opts.freshnessMs ?? 5_000;
    this.signer = new OrderSigner(opts.credentials.privateKey);
    this.apiKey = opts.credentials.apiKey;
    this.baseUrl = opts.baseUrl.replace(/\/$/, "");
    this.wsUrl = opts.wsUrl;
    this.log = opts.log;
    this.feeReadIntervalMs = opts.feeReadIntervalMs ?? FEE_READ_INTERVAL_MS;
    this.rest = new RestClient({
      baseUrl: this.baseUrl,
      credentials: opts.credentials,
      address: this.signer.address,
      clock: this.clock,
      limits: opts.limits ?? POLYMARKET_LIMITS,
      timeoutMs: opts.requestTimeoutMs ?? 3_000,
    });
    // no time budget: the attempts and the longest Retry-After waited for bound a request
    this.retry = { attempts: 4, baseDelayMs: opts.retryBackoffMs ?? 200, budgetMs: Infinity, maxRetryAfterMs: opts.maxRetryAfterMs ?? 5_000 };
    this.stream = new BookStream({
      url: opts.wsUrl,
      clock: this.clock,
      silenceMs: this.freshnessMs,
      pingMs: Math.min(10_000, Math.max(20, Math.floor(this.freshnessMs / 4))),
      backoff: opts.reconnect ?? { initialMs: 250, maxMs: 10_000 },
      onEvents: (events) => this.onStream(events),
      ...(opts.log ? { log: opts.log } : {}),
    });
  }

  /** Loads the catalogue, takes a REST snapshot of every open book, then follows them on the stream. */
  async start(): Promise<void> {
    await this.markets();
    const open = [...this.markets_.values()].filter((m) => m.market.status === "open");
    const tokenIds = open.flatMap((m) => [m.market.outcomeIds.YES, m.market.outcomeIds.NO]);
    for (let i = 0; i < tokenIds.length; i += BOOKS_PER_REQUEST) {
      const chunk = tokenIds.slice(i, i + BOOKS_PER_REQUEST);
      const raw = await this.read({ method: "POST", path: "/books", body: chunk.map((token_id) => ({ token_id })), limits: ["books"] });
      if (!Array.isArray(raw)) throw new WireError("POST /books did not answer an array");
      for (const b of raw) this.hold(parseBook(b), 0);
    }
    this.stream.start(tokenIds);
    this.feeTimer = repeatRead(this.feeReadIntervalMs, () => this.readFees());
  }

  async stop(): Promise<void> {
    clearInterval(this.feeTimer);
    this.stream.stop();
  }

  /**
   * Reads each loaded market's fee curve and tick again (`GET /clob-markets/{condition_id}`): the operator sets
   * the fee at match time, so a change is priced and locked for within feeReadIntervalMs, and a tick change the
   * stream did not bring (announced while it was down) is taken as well. A market whose curve or tick cannot be
   * read now keeps those read before, with a warning; one whose curve or tick the adapter cannot model is left
   * out, as at load.
   */
  private async readFees(): Promise<void> {
    await Promise.all(
      [...this.markets_.keys()].map(async (id) => {
        let info: unknown;
        try {
          info = await this.read({ method: "GET", path: `/clob-markets/${id}`, limits: [] });
        } catch (err) {
          this.log?.warn({ venue_id: this.id, venue_market_id: id, reason: err instanceof Error ? err.message : String(err) }, "reading a market's fee again failed; the fee read before stays");
          return;
        }
        const held = this.markets_.get(id);
        if (!held) return;
        let market: ClobMarket;
        let tickSize: PriceMicro | undefined;
        try {
          market = { ...held, market: { ...held.market, feeModel: parseClobMarketFee(info) } };
          tickSize = parseClobMarketTick(info);
        } catch (err) {
          this.markets_.delete(id);
          this.log?.warn({ venue_id: this.id, venue_market_id: id, reason: err instanceof Error ? err.message : String(err) }, "venue market left out: the adapter cannot model it");
          return;
        }
        if (tickSize === undefined || tickSize === held.market.tickSize) this.markets_.set(id, market);
        else this.retick(market, tickSize);
      }),
    );
  }

  /**
   * Pages through `GET /markets` until every market the catalog lists for this venue is found or the
   * listing ends, then reads each one's fee curve (`GET /clob-markets/{condition_id}`); a market the
   * adapter cannot model (parseTradedMarket) is left out.
   */
  async markets(): Promise<VenueMarket[]> {
    const wanted = new Set(this.catalog.events().flatMap((e) => e.listings.filter((l) => l.venue === this.id).map((l) => l.venueMarketId)));
    const found = new Map<string, unknown>();
    let cursor = INITIAL_CURSOR;
    while (cursor !== END_CURSOR && found.size < wanted.size) {
      const page = parseMarketsPage(await this.read({ method: "GET", path: "/markets", query: { next_cursor: cursor }, limits: [] }));
      for (const raw of page.data) {
        const id = conditionIdOf(raw);
        if (id !== undefined && wanted.has(id)) found.set(id, raw);
      }
      cursor = page.nextCursor;
    }
    // a 404 is a market the CLOB does not know: parseTradedMarket leaves it out
    const listed = await Promise.all([...found].map(async ([id, raw]) => ({ id, raw, info: await this.read({ method: "GET", path: `/clob-markets/${id}`, limits: [] }, true) })));
    const traded = modelledMarkets(listed, { venue: this.id, log: this.log, idOf: (l) => l.id, convert: (l) => parseTradedMarket(l.raw, l.info) });
    // a market left out now is no longer traded at what was read of it before
    const before = new Map(this.markets_);
    this.markets_.clear();
    for (const m of traded) {
      const id = m.market.venueMarketId;
      const held = before.get(id);
      // a tick size change seen on the stream is newer than the listing
      this.markets_.set(id, held ? withTick(m, held.market.tickSize) : m);
      this.tokens.set(m.market.outcomeIds.YES, { conditionId: id, outcome: "YES" });
      this.tokens.set(m.market.outcomeIds.NO, { conditionId: id, outcome: "NO" });
    }
    return [...this.markets_.values()].map((m) => copyMarket(m.market));
  }

  /** Every page of `GET /markets`: the open markets the catalog does not list, with the fee their listing states, less those the adapter cannot read. */
  async discover(): Promise<VenueMarket[]> {
    const listed = new Set(this.catalog.events().flatMap((e) => e.listings.filter((l) => l.venue === this.id).map((l) => l.venueMarketId)));
    const unlisted: unknown[] = [];
    for (let cursor = INITIAL_CURSOR; cursor !== END_CURSOR; ) {
      const page = parseMarketsPage(await this.read({ method: "GET", path: "/markets", query: { next_cursor: cursor }, limits: [] }));
      unlisted.push(...page.data.filter((raw) => !listed.has(conditionIdOf(raw) ?? "")));
      cursor = page.nextCursor;
    }
    const found = modelledMarkets(unlisted, { venue: this.id, log: this.log, idOf: (raw) => conditionIdOf(raw) ?? "(no condition_id)", convert: (raw) => parseMarket(raw) });
    return found.filter((m) => m.market.status === "open").map((m) => copyMarket(m.market));
  }

  market(venueMarketId: string): VenueMarket | undefined {
    const m = this.markets_.get(venueMarketId);
    return m && copyMarket(m.market);
  }

  /** `GET /markets/{condition_id}`: `closed`, `accepting_orders` and each token's `winner` and `price` (docs/venues/polymarket.md, Resolution). */
  async resolution(venueMarketId: string): Promise<VenueResolution> {
    const raw = await this.read({ method: "GET", path: `/markets/${encodeURIComponent(venueMarketId)}`, limits: [] }, true);
    if (raw === undefined) throw new AppError("venue_unavailable", `${this.id} lists no market ${venueMarketId}`, { venue: this.id });
    const { resolution } = parseMarket(raw);
    const held = this.markets_.get(venueMarketId);
    if (held) held.market.status = resolutionStatus(resolution);
    return resolution;
  }

  book(venueMarketId: string, outcome: Outcome): BookSnapshot | undefined {
    const token = this.markets_.get(venueMarketId)?.market.outcomeIds[outcome];
    const held = token === undefined ? undefined : this.books.get(token);
    if (!held) return undefined;
    return { venue: this.id, venueMarketId, outcome, bids: held.bids, asks: held.asks, updatedAt: this.currentAt(held) };
  }

  /** When a held book was last known current: a book on the live connection is, as of the last frame heard, changed or not. */
  private currentAt(held: HeldBook): number {
    const live = this.stream.state === "open" && held.connection === this.stream.connections;
    return live ? Math.max(held.receivedAt, this.stream.lastHeardAt ?? 0) : held.receivedAt;
  }

  onBook(listener: (u: BookUpdate) => void): Unsubscribe {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async place(order: ChildOrder): Promise<PlaceResult> {
    const m = this.markets_.get(order.venueMarketId);
    if (!m) return { kind: "rejected", reason: `unknown_market: ${this.id} lists no market ${order.venueMarketId}` };
    if (m.market.status !== "open") return { kind: "rejected", reason: `market_closed: ${order.venueMarketId} is ${m.market.status}` };
    const under = underMinimumAmount(order, m.market, "pUSD");
    if (under) return under;
    const posted = this.postedOrder(order, m);
    if (!posted) {
      const why = order.side === "buy" ? "does not cost whole cents" : "is off the 0.01-share step or not a whole micro-pUSD";
      return { kind: "rejected", reason: `invalid_lot: ${formatMicro(order.shares)} shares at ${formatMicro(order.limitPrice)} ${why}` };
    }
    const orderId = orderHash(posted.order, m.negRisk);
    this.orders.set(order.clientOrderId, orderId);
    const body = orderBody(posted, await this.signer.sign(orderId), this.apiKey, "FAK");
    const started = performance.now();
    const res = await this.request({ method: "POST", path: "/order", body, auth: true, limits: ORDER_LIMITS }, retryOrder);
    if (!res.ok) return this.placeFailed(res, orderId, order);
    this.recorder.record(performance.now() - started);
    let ack: ReturnType<typeof parseOrderAck>;
    try {
      ack = parseOrderAck(res.body);
    } catch (err) {
      return { kind: "unknown", reason: `unreadable_answer: ${(err as Error).message}` };
    }
    if (!ack.success) return { kind: "rejected", reason: `${rejectionReason(ack.errorMsg, order.side)}: ${ack.errorMsg}` };
    return this.executed(orderId, order, `order ${ack.status}`, ack.tradeIds);
  }

  /**
   * Finds an order by client id. Polymarket keys orders by their hash, which the adapter
   * remembers for the newest orders it placed (CHILD_ORDERS_KEPT); for the others, and after a
   * restart, it rebuilds the hash from `order`.
   */
  async status(clientOrderId: string, order?: ChildOrder): Promise<ChildStatus> {
    const orderId = await this.orderIdOf(clientOrderId, order, "status");
    try {
      return await this.lookup(orderId, clientOrderId);
    } catch (err) {
      throw new AppError("venue_unavailable", `${this.id} could not be asked about order ${orderId}: ${(err as Error).message}`, { venue: this.id });
    }
  }

  /**
   * `DELETE /order` for what rests of the order, then the order as the venue now shows it. The
   * order's own view decides, not the cancel's answer: the docs leave the `not_canceled` reasons
   * unspecified, and an order the venue never received and one already matched are both "not cancelled".
   */
  async cancel(clientOrderId: string, order?: ChildOrder): Promise<ChildStatus> {
    const orderId = await this.orderIdOf(clientOrderId, order, "cancel");
    const res = await this.request(
      { method: "DELETE", path: "/order", body: { orderID: orderId }, auth: true, limits: ["cancelBurst", "cancelSustained"] },
      retryIdempotent,
    );
    if (!res.ok && (res.kind !== "rejected" || res.status === 401 || res.status === 403)) {
      throw new AppError("venue_unavailable", `${this.id} could not cancel order ${orderId}: ${res.reason}`, { venue: this.id });
    }
    let why: string | undefined;
    let after: ChildStatus;
    try {
      why = res.ok ? parseCancelResult(res.body).notCanceled[orderId] : res.reason;
      after = await this.lookup(orderId, clientOrderId);
    } catch (err) {
      throw new AppError("venue_unavailable", `${this.id} could not cancel order ${orderId}: ${(err as Error).message}`, { venue: this.id });
    }
    if (after.kind === "open") {
      throw new AppError("venue_unavailable", `${this.id}: order ${orderId} still rests after the cancel (${why ?? "reported cancelled"})`, { venue: this.id });
    }
    return after;
  }

  /**
   * Every page of `GET /data/trades`, oldest first: the account's part in each trade once, however often it is
   * listed; its taker order in a row where it is the TAKER, and each of its orders among the trade's makers (an
   * order the venue left resting, then taken by another's). A FAILED trade never settled and is no fill. A taker's
   * fee follows its market's curve, read by id for a market the catalogue no longer loads (marketById); a maker
   * pays none. The client order id is known for the newest orders this adapter placed since it started, "" for the others.
   */
  async trades(): Promise<VenueFill[]> {
    const rows: ClobTrade[] = [];
    for (let cursor = INITIAL_CURSOR; cursor !== END_CURSOR; ) {
      const page = parseTradesPage(await this.read({ method: "GET", path: "/data/trades", query: { next_cursor: cursor }, auth: true, limits: ["trades"] }));
      rows.push(...page.data);
      cursor = page.nextCursor;
    }
    // a trade the account is on both sides of may be listed once per side: its taker part is read from its TAKER row, however the rows come
    const me = this.signer.address.toLowerCase();
    const parts = rows
      .filter((t) => t.status !== FAILED)
      .flatMap((t) => orderTrades(t).filter((p) => (p.makerAddress === undefined ? t.traderSide === "TAKER" : p.makerAddress.toLowerCase() === me)));
    const seen = new Set<string>();
    const taken = parts.filter((p) => !seen.has(`${p.tradeId}/${p.orderId}`) && seen.add(`${p.tradeId}/${p.orderId}`) !== undefined).sort((a, b) => a.matchTime - b.matchTime);
    const unloaded = new Set(taken.map((t) => t.market).filter((id) => !this.markets_.has(id)));
    await Promise.all([...unloaded].map((id) => this.marketById(id, "the fees of its trades")));
    const clientIds = new Map([...this.orders].map(([clientOrderId, orderId]) => [orderId, clientOrderId]));
    const byOrder = new Map<string, OrderTrade[]>();
    for (const t of taken) byOrder.set(t.orderId, [...(byOrder.get(t.orderId) ?? []), t]);
    const fills = new Map<OrderTrade, VenueFill>();
    for (const [orderId, trades] of byOrder) {
      const orderFills = this.toFills(trades, clientIds.get(orderId) ?? "");
      trades.forEach((t, i) => fills.set(t, orderFills[i]!));
    }
    return taken.map((t) => fills.get(t)!);
  }

  queueDelayMs(ahead?: number): number {
    return this.rest.delayMs(ORDER_LIMITS, ahead);
  }

  latency(): LatencyStats {
    return this.recorder.stats();
  }

  health(): VenueHealth {
    const now = this.clock.now();
    let oldest: number | undefined;
    for (const m of this.markets_.values()) {
      if (m.market.status !== "open") continue;
      // The held books' times, without building snapshots: freshBooks asks every listing's venue for its health.
      for (const outcome of ["YES", "NO"] as const) {
        const held = this.books.get(m.market.outcomeIds[outcome]);
        const at = held === undefined ? undefined : this.currentAt(held);
        if (at !== undefined && (oldest === undefined || at < oldest)) oldest = at;
      }
    }
    const streamUp = this.stream.state === "open";
    // unreachable over REST and no stream either: nothing this venue shows can be acted on
    const unreachable = this.restFailures >= 3 || (!streamUp && this.restFailures > 0);
    return streamedHealth({ now, oldestBookAt: oldest, streamUp, unreachable, freshnessMs: this.freshnessMs, latency: this.latency() });
  }

  /** What `GET /v1/health` shows of this adapter besides the port's health: where it points and how its stream is. */
  describe(): { adapter: "polymarket-clob"; baseUrl: string; wsUrl: string; stream: { state: string; connections: number; lastHeardAt: number | undefined } } {
    return {
      adapter: "polymarket-clob",
      baseUrl: this.baseUrl,
      wsUrl: this.wsUrl,
      stream: { state: this.stream.state, connections: this.stream.connections, lastHeardAt: this.stream.lastHeardAt },
    };
  }

  /**
   * The fills of an order the venue took. V2 answers with trade ids before their settlement
   * transactions exist; the trades are read by id, each adopted once whatever its settlement stage.
   */
  private async executed(orderId: string, order: ChildOrder, what: string, tradeIds: string[] = []): Promise<PlaceResult> {
    let status: ChildStatus;
    try {
      status = await this.lookup(orderId, order.clientOrderId, tradeIds);
    } catch (err) {
      return { kind: "unknown", reason: `fills_unavailable: ${what}, but its trades could not be read (${(err as Error).message})` };
    }
    if (status.kind === "not_found" || status.fills.length === 0) {
      return { kind: "unknown", reason: `unconfirmed: ${what}, but the venue shows no trade of it yet` };
    }
    return takenResult(order, orderId, status.fills, status.kind === "open");
  }

  /**
   * Unanswered: refused before sending is a definite no, a timeout or a cut connection may have
   * placed it. Answered: by status, a 5xx (503 included) leaving the order possibly placed, but for
   * the exchange's own 503 while trading is disabled or cancel-only, which takes no order
   * (docs.polymarket.com/resources/error-codes), and a 425 that outlasted the retries: the matching
   * engine restarting, which takes no order either (docs.polymarket.com/trading/matching-engine).
   */
  private async placeFailed(f: Failure, orderId: string, order: ChildOrder): Promise<PlaceResult> {
    if (f.status === undefined) {
      return f.kind === "retryable" ? { kind: "rejected", reason: `venue_unreachable: ${f.reason}` } : { kind: "unknown", reason: f.reason };
    }
    const error = typeof (f.body as { error?: unknown } | undefined)?.error === "string" ? (f.body as { error: string }).error : f.reason;
    if (f.status < 400) return { kind: "unknown", reason: `unreadable_answer: ${f.reason}` };
    if (f.status === 400 && /duplicat/i.test(error)) return this.executed(orderId, order, "duplicate of an order already placed");
    if (f.status === 503 && /^trading is currently (disabled|cancel-only)/i.test(error)) return { kind: "rejected", reason: `trading_paused: ${error}` };
    if (f.status === ENGINE_RESTARTING) return { kind: "rejected", reason: `venue_unavailable: matching engine restarting (HTTP ${f.status} ${error})` };
    if (f.status >= 500) return { kind: "unknown", reason: `venue_error: HTTP ${f.status} ${error}` };
    if (f.status === 429) return { kind: "rejected", reason: `rate_limited: ${error}` };
    if (f.status === 401 || f.status === 403) return { kind: "rejected", reason: `unauthorized: ${error}` };
    return { kind: "rejected", reason: `${rejectionReason(error, order.side)}: ${error}` };
  }

  /**
   * The order id (hash) of a child order: remembered if this adapter placed it, else rebuilt from the child
   * order, on its market as loaded or, for one the adapter no longer loads (delisted from the catalogue, left
   * out), as the venue answers it by id (`GET /markets/{condition_id}`: its token ids and `neg_risk`).
   */
  private async orderIdOf(clientOrderId: string, order: ChildOrder | undefined, what: string): Promise<string> {
    const known = this.orders.get(clientOrderId);
    if (known !== undefined) return known;
    if (!order) throw new AppError("venue_unavailable", `${this.id} finds orders by their hash: pass the child order to ${what}() after a restart.`, { venue: this.id });
    const m = this.markets_.get(order.venueMarketId) ?? (await this.marketById(order.venueMarketId, `the hash of child order ${clientOrderId}`));
    const posted = this.postedOrder(order, m);
    if (!posted) throw new AppError("venue_unavailable", `${this.id}: child order ${clientOrderId} is not an order the adapter signs, so it has no hash to find it by`, { venue: this.id });
    return orderHash(posted.order, m.negRisk);
  }

  /**
   * A market the adapter does not hold, read by id once (`GET /markets/{condition_id}` and its fee curve,
   * `GET /clob-markets/{condition_id}`): what rebuilding the hash of a child order on it, and the fees of its fills, need.
   */
  private async marketById(venueMarketId: string, what: string): Promise<ClobMarket> {
    const known = this.unloaded.get(venueMarketId);
    if (known) return known;
    try {
      const path = encodeURIComponent(venueMarketId);
      const raw = await this.read({ method: "GET", path: `/markets/${path}`, limits: [] }, true);
      if (raw !== undefined) {
        const m = parseTradedMarket(raw, await this.read({ method: "GET", path: `/clob-markets/${path}`, limits: [] }, true));
        this.unloaded.set(venueMarketId, m);
        return m;
      }
    } catch (err) {
      throw new AppError("venue_unavailable", `${this.id} could not read market ${venueMarketId} for ${what}: ${(err as Error).message}`, { venue: this.id });
    }
    throw new AppError("venue_unavailable", `${this.id} lists no market ${venueMarketId}: ${what} cannot be known`, { venue: this.id });
  }

  /** The order of a child order, BUY or SELL: the same child always makes the same signed fields, hence the same order id. */
  private postedOrder(order: ChildOrder, m: ClobMarket): PostedOrder | undefined {
    const params = {
      clientOrderId: order.clientOrderId,
      tokenId: m.market.outcomeIds[order.outcome],
      limitPrice: order.limitPrice,
      shares: order.shares,
      expiresAt: order.expiresAt,
    };
    return order.side === "buy" ? this.signer.buyOrder(params) : this.signer.sellOrder(params);
  }

  /**
   * The order and its trades (those it lists and `tradeIds`, the placement's answer), each once
   * however often the venue lists it; a FAILED trade never settled and is no fill. Throws while a trade
   * named is not listed yet, or while an order that matched shares names no trade: the order would read
   * as filled by the others only, or as taking nothing. A named trade that is never listed ends there:
   * once the order is done and the trades listed (settled, settling or FAILED, whose shares `size_matched`
   * keeps) take every share it matched, the one missing holds none of them.
   */
  private async lookup(orderId: string, clientOrderId: string, tradeIds: string[] = []): Promise<ChildStatus> {
    const raw = await this.read({ method: "GET", path: `/data/order/${orderId}`, auth: true, limits: ["order"] }, true);
    if (raw == null || (typeof raw === "object" && Object.keys(raw).length === 0)) return { kind: "not_found" };
    const open = parseOpenOrder(raw);
    const named = [...new Set([...open.associateTrades, ...tradeIds])];
    if (named.length === 0 && open.sizeMatched > 0n) throw new WireError(`order ${orderId} matched ${formatMicro(open.sizeMatched)} shares but names no trade yet`);
    const trades = await Promise.all(named.map((id) => this.trade(id)));
    // the order's part in each trade, as its taker or as one of its makers (an order left resting)
    const listed = trades.flatMap((t) => (t === undefined ? [] : orderTrades(t).filter((p) => p.orderId === orderId)));
    const mine = listed.filter((t) => t.status !== FAILED);
    const missing = named.filter((_, i) => trades[i] === undefined);
    // size_matched keeps a FAILED trade's shares (github.com/Polymarket/py-clob-client-v2/issues/34): listed, they are accounted for
    const accounted = open.status === "done" && listed.reduce((s, t) => s + t.size, 0n) >= open.sizeMatched;
    if (missing.length > 0 && !accounted) throw new WireError(`order ${orderId}'s trade ${missing.join(", ")} is not listed yet`);
    return { kind: open.status, venueOrderId: orderId, fills: this.toFills(mine, clientOrderId) };
  }

  /**
   * One order's parts in trades as fills: the order's fee split over its taker parts, so that they add up to the
   * fee of all it took; a maker part pays none (V2 charges takers only).
   */
  private toFills(parts: OrderTrade[], clientOrderId: string): VenueFill[] {
    const market = parts[0] && (this.markets_.get(parts[0].market) ?? this.unloaded.get(parts[0].market));
    const model = market?.market.feeModel ?? { kind: "polymarket", ratePpm: 0n, exponent: 1 };
    const taken = parts.filter((p) => p.makerAddress === undefined);
    const fees = feesPerFill(model, taken.map((p) => ({ price: p.price, shares: p.size })));
    return parts.map((p) => ({
      tradeId: p.tradeId,
      venueOrderId: p.orderId,
      clientOrderId,
      side: p.side,
      price: p.price,
      shares: p.size,
      fee: p.makerAddress === undefined ? fees[taken.indexOf(p)]! : 0n,
    }));
  }

  private async trade(id: string): Promise<ClobTrade | undefined> {
    const page = parseTradesPage(await this.read({ method: "GET", path: "/data/trades", query: { id }, auth: true, limits: ["trades"] }));
    return page.data.find((t) => t.tradeId === id);
  }

  /** A read; with `missingOk`, a 404 answers undefined instead of failing. */
  private async read(req: RestRequest, missingOk = false): Promise<unknown> {
    const res = await this.request(req, retryIdempotent);
    if (res.ok) return res.body;
    if (missingOk && res.status === 404) return undefined;
    throw new AppError("venue_unavailable", `${this.id}: ${req.method} ${req.path} failed: ${res.reason}`, { venue: this.id });
  }

  /** Counts, for health, the requests in a row that the venue did not answer at all. */
  private async request(req: RestRequest, retryUnknown: (f: Failure) => boolean): Promise<HttpResult> {
    const res = await this.rest.send(req, this.retry, retryUnknown);
    this.restFailures = res.ok || res.status !== undefined ? 0 : this.restFailures + 1;
    return res;
  }

  private onStream(events: StreamEvent[]): void {
    const changed = new Set<string>();
    for (const e of events) {
      if (e.type === "book") {
        if (this.hold(e.book, this.stream.connections)) changed.add(this.tokens.get(e.book.assetId)!.conditionId);
      } else if (e.type === "price_change") {
        for (const c of e.changes) {
          const held = this.books.get(c.assetId);
          const token = this.tokens.get(c.assetId);
          if (!held || !token) continue;
          held[c.side] = applyLevel(held[c.side], c.side === "bids" ? "desc" : "asc", c.price, c.size);
          held.receivedAt = this.clock.now();
          held.connection = this.stream.connections;
          changed.add(token.conditionId);
        }
      } else if (e.type === "tick_size_change") {
        const token = this.tokens.get(e.assetId);
        const m = token && this.markets_.get(token.conditionId);
        if (token && m) this.retick(m, e.tickSize);
      }
    }
    for (const venueMarketId of changed) for (const l of this.listeners) l({ venue: this.id, venueMarketId });
  }

  /** A market on the tick the stream announced; one whose new tick the adapter cannot model is left out (no market(), nothing routed to it). */
  private retick(m: ClobMarket, tickSize: PriceMicro): void {
    const id = m.market.venueMarketId;
    try {
      this.markets_.set(id, withTick(m, tickSize));
    } catch (err) {
      this.markets_.delete(id);
      this.log?.warn({ venue_id: this.id, venue_market_id: id, reason: err instanceof Error ? err.message : String(err) }, "market left out: the adapter cannot model its new tick");
    }
  }

  private hold(b: BookSummary, connection: number): boolean {
    if (!this.tokens.has(b.assetId)) return false;
    this.books.set(b.assetId, { bids: b.bids, asks: b.asks, receivedAt: this.clock.now(), connection });
    return true;
  }
}

function copyMarket(m: VenueMarket): VenueMarket {
  return { ...m, outcomeIds: { ...m.outcomeIds }, feeModel: { ...m.feeModel } };
}
