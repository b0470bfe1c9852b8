import type { Hex } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { evmAccount } from "../../evm/account.ts";
import { AppError } from "../../domain/errors.ts";
import { feeInShares, grossForDelivered, type FeeModel } from "../../domain/fees.ts";
import { formatMicro, ONE } from "../../domain/money.ts";
import { sendRequest, sendWithRetry, type HttpResult } from "../net/http.ts";
import type { AdapterOptions } from "../net/adapter-options.ts";
import type { ReconnectingSocket } from "../net/reconnecting-socket.ts";
import { WireVenue, WRITE_RETRY } from "../net/wire-venue.ts";
import { failedResult, repeatResult, takenResult } from "../placement.ts";
import { CHILD_ORDERS_KEPT, resolutionStatus, type ChildOrder, type ChildStatus, type PlaceResult, type Venue, type VenueFill, type VenueMarket, type VenueResolution } from "../venue.ts";
import { LimitlessBookStream } from "./book-stream.ts";
import { buyOrder, limitlessAuthHeaders, orderExpiration, saltFor, sellOrder, signOrder, wireOrder, type LimitlessCredentials } from "./signing.ts";
import { engineIoUrl } from "./socketio.ts";
import { historySide, limitlessResolution, orderFills, orderSide, parseOrderbook, rankFeeBps, SETTLEMENT_FAILED, takerDelayUntil, toVenueMarket, tradesFromHistory, type LimitlessHistoryEntry, type LimitlessHistoryPage, type LimitlessMarket, type LimitlessOrderAnswer, type LimitlessOrderbook, type LimitlessTotals } from "./wire.ts";
import { BoundedMap } from "../../domain/bounded-map.ts";

/**
 * wsUrl is the Socket.IO server (wss://ws.limitless.exchange); the Engine.IO path is added to it.
 * Limitless publishes no rate limits: the defaults (20 reads, 10 writes a second) are assumed.
 */
export type LimitlessVenueOptions = AdapterOptions<LimitlessCredentials>;

/** Every status `GET /markets/{slug}/user-orders` can filter on: a lookup by salt must see finished orders too. */
const USER_ORDER_STATUSES = ["LIVE", "MATCHED", "CANCELED", "UNMATCHED"];
/** Markets per `/markets/active` page (the simulator's and, assumed, the venue's largest). */
const ACTIVE_PAGE = 25;
/** Trades per `/portfolio/history` page (assumed to be within the venue's limit; the SDK asks for 20 by default). */
const HISTORY_PAGE = 100;
/** How far before the last trades() call began the next one reads the history from: a trade listed late, or while that call read its pages, and the clocks' skew. */
const HISTORY_MARGIN_MS = 3_600_000;

/** An order as Limitless echoes it (`POST /orders`, `GET /orders/{id}`, `/markets/{slug}/user-orders`). */
interface LimitlessOrder {
  id: string;
  salt: number | string;
  /** 0 BUY, 1 SELL. */
  side: number;
  /** LIVE while part of it rests on the book; MATCHED, CANCELED or UNMATCHED otherwise. */
  status?: string;
  marketSlug?: string;
}

interface OrderAnswer extends LimitlessOrderAnswer {
  order: LimitlessOrder;
}

/**
 * Limitless's CLOB behind the Venue port: public REST for markets and books, the `/markets`
 * Socket.IO namespace for live books, and EIP-712 signed FAK buys and sells posted with lmts-* HMAC headers.
 * Orders are found by their salt, derived from the child's client order id: a retry is the same
 * signed order (the venue refuses it as a duplicate) and a restart can find the order again among the
 * market's orders. The child's expiry is signed into the order, so the venue refuses it once passed.
 */
export class LimitlessVenue extends WireVenue<LimitlessCredentials> implements Venue {
  private readonly pathPrefix: string;
  /** The wallet that makes and signs the orders. */
  private readonly wallet: PrivateKeyAccount;
  private readonly slugs: string[];
  protected readonly stream: LimitlessBookStream;
  protected readonly socket: ReconnectingSocket;
  private readonly cache = new Map<string, { market: VenueMarket; exchange: Hex }>();
  private readonly orderIds = new BoundedMap<string, string>(CHILD_ORDERS_KEPT);
  private watchdog: NodeJS.Timeout | undefined;
  private feeTimer: NodeJS.Timeout | undefined;
  /** What trades() has read: each trade's history entry once (by `matchId`), oldest first, the totals of each order and the fee model of each market of them, and the time its next read starts from. */
  private traded: { entries: Map<string, LimitlessHistoryEntry>; totals: Map<string, LimitlessTotals | undefined>; models: Map<string, FeeModel>; since: number | undefined } = { entries: new Map(), totals: new Map(), models: new Map(), since: undefined };

  constructor(opts: LimitlessVenueOptions) {
    super(opts, { adapter: "limitless-api", venueId: "limitless-sim", rateLimits: { readsPerSecond: 20, writesPerSecond: 10 }, placementReads: 0 });
    this.pathPrefix = new URL(opts.baseUrl).pathname.replace(/\/$/, "");
    this.wallet = evmAccount(opts.credentials.privateKey);
    this.slugs = this.listedMarkets(true);
    this.stream = new LimitlessBookStream({ ...this.streamHooks(), slugs: this.slugs });
    // the market stream is public
    this.socket = this.connect(engineIoUrl(opts.wsUrl), () => ({}), () => this.stream.opened());
  }

  async start(): Promise<void> {
    await this.markets();
    this.socket.start();
    this.watchdog = setInterval(() => {
      if (this.stream.overdue()) this.socket.restart();
    }, 1_000);
    this.watchdog.unref();
    this.feeTimer = this.readAgain(() => this.markets());
    await this.streamSynced(() => this.slugs.every((s) => this.stream.book(s, "YES") !== undefined));
    // whatever the stream has not delivered yet is read over REST, so no market starts without a book
    await Promise.all(this.slugs.filter((s) => !this.stream.book(s, "YES")).map((s) => this.seedBook(s)));
  }

  async stop(): Promise<void> {
    clearInterval(this.watchdog);
    this.watchdog = undefined;
    clearInterval(this.feeTimer);
    this.feeTimer = undefined;
    this.socket.stop();
    this.stream.disconnected();
  }

  /**
   * The catalog's markets as Limitless states them now, one `GET /markets/{slug}` each (closed and resolved
   * ones are not in /markets/active); a market the adapter cannot model (toVenueMarket) is left out. Run at
   * start and every feeReadIntervalMs.
   */
  async markets(): Promise<VenueMarket[]> {
    const wanted = this.listedMarkets();
    const listed = await Promise.all(wanted.map((slug) => this.read(`/markets/${encodeURIComponent(slug)}`) as Promise<LimitlessMarket>));
    const rank = await this.rankFor(listed);
    const out = this.modelled(listed, (m) => m.slug, (m) => ({ market: toVenueMarket(m, rank), exchange: m.venue.exchange as Hex }));
    // a market left out now is no longer traded at what was read of it before
    this.cache.clear();
    for (const c of out) this.cache.set(c.market.venueMarketId, c);
    return out.map(({ market: m }) => ({ ...m, outcomeIds: { ...m.outcomeIds } }));
  }

  /**
   * Every active market (`GET /markets/active`, page by page, 25 a page), each once: what is new on the venue, for proposing
   * catalog matches. By slug: a market listed between two page reads shifts the list, showing one market on both pages.
   */
  async activeMarkets(): Promise<LimitlessMarket[]> {
    const out = new Map<string, LimitlessMarket>();
    for (let page = 1; ; page++) {
      const body = (await this.read(`/markets/active?${new URLSearchParams({ page: String(page), limit: String(ACTIVE_PAGE) })}`)) as { data: LimitlessMarket[]; totalMarketsCount: number };
      for (const m of body.data) out.set(m.slug, m);
      if (body.data.length === 0 || page * ACTIVE_PAGE >= body.totalMarketsCount) return [...out.values()];
    }
  }

  /** The active markets the catalog does not list, less those the adapter cannot model (an AMM market, a fee rate it cannot read). */
  async discover(): Promise<VenueMarket[]> {
    const listed = new Set(this.listedMarkets());
    const found = (await this.activeMarkets()).filter((m) => !listed.has(m.slug));
    const rank = await this.rankFor(found);
    return this.modelled(found, (m) => m.slug, (m) => toVenueMarket(m, rank));
  }

  /**
   * The account's fee rate (`GET /profiles/{address}`, rankFeeBps) where a market states no `feeRateBps` of its
   * own: the rate the official SDK signs into every order. Not read while every market states one.
   */
  private async rankFor(markets: readonly LimitlessMarket[]): Promise<number | undefined> {
    if (markets.every((m) => m.feeRateBps !== undefined)) return undefined;
    return rankFeeBps(await this.read(`/profiles/${this.wallet.address}`));
  }

  market(venueMarketId: string): VenueMarket | undefined {
    const m = this.cache.get(venueMarketId)?.market;
    return m && { ...m, outcomeIds: { ...m.outcomeIds } };
  }

  /** `GET /markets/{slug}`: its `status`, `expired` and `winningOutcomeIndex` (docs/venues/limitless.md, Resolution). */
  async resolution(venueMarketId: string): Promise<VenueResolution> {
    const m = (await this.read(`/markets/${encodeURIComponent(venueMarketId)}`)) as LimitlessMarket;
    const resolution = limitlessResolution(m);
    const cached = this.cache.get(venueMarketId);
    if (cached) cached.market.status = resolutionStatus(resolution);
    return resolution;
  }

  /** `GET /markets/{slug}/orderbook`: the YES token's book now. */
  async fetchOrderbook(slug: string): Promise<LimitlessOrderbook> {
    return (await this.read(`/markets/${encodeURIComponent(slug)}/orderbook`)) as LimitlessOrderbook;
  }

  async place(order: ChildOrder): Promise<PlaceResult> {
    const cached = this.cache.get(order.venueMarketId);
    if (!cached) return { kind: "rejected", reason: `unknown_market: ${this.id} lists no market ${order.venueMarketId}` };
    const { market, exchange } = cached;
    // a buy pays its fee in contracts: it asks for the shares it is to deliver, and is signed for the whole lots that deliver them
    const gross = feeInShares(market.feeModel, order.side) ? grossForDelivered(market.feeModel, market.lotShares, order.shares) : order.shares;
    if (gross === undefined || gross <= 0n || gross % market.lotShares !== 0n || order.limitPrice % market.tickSize !== 0n || order.limitPrice <= 0n || order.limitPrice >= ONE) {
      return { kind: "rejected", reason: `invalid_order: price or size off ${order.venueMarketId}'s grid` };
    }
    let body: unknown;
    try {
      body = await this.orderBody(order, gross, market, exchange);
    } catch (err) {
      return { kind: "rejected", reason: `invalid_order: ${err instanceof Error ? err.message : String(err)}` };
    }
    const started = performance.now();
    // an answered 5xx is retried: the same salt makes it the same signed order, which the venue refuses
    // to take twice; a timeout is not retried, the caller reconciles it with status()
    const res = await sendWithRetry(() => this.send("POST", "/orders", body), this.turns.throttleFor(order.clientOrderId), WRITE_RETRY, (f) => f.status !== undefined);
    if (res.ok) {
      this.recorder.record(performance.now() - started);
      const answer = res.body as OrderAnswer;
      this.orderIds.set(order.clientOrderId, answer.order.id);
      const held = takerDelayUntil(answer.execution);
      // a held order may still match when released: what it took is not known yet, and never "nothing"
      if (held !== undefined) return { kind: "unknown", reason: `order ${answer.order.id} is held by ${order.venueMarketId}'s taker delay until ${held || "an unnamed time"}` };
      let fills: VenueFill[];
      try {
        fills = orderFills(answer, answer.order.id, order.clientOrderId, order.side, market.feeModel);
      } catch (err) {
        return { kind: "unknown", reason: `order ${answer.order.id} was taken but its matches or totals are unreadable: ${String(err)}` };
      }
      const rests = orderRests(answer.order, this.id);
      if (fills.length === 0 && !rests) {
        if (answer.execution?.settlementStatus === SETTLEMENT_FAILED) return { kind: "rejected", reason: `venue_rejected: order ${answer.order.id} matched, but its settlement failed: nothing was traded` };
        return { kind: "rejected", reason: `no_match: nothing to take at or ${order.side === "buy" ? "below" : "above"} ${formatMicro(order.limitPrice)}` };
      }
      return takenResult(order, answer.order.id, fills, rests);
    }
    if (res.kind === "rejected" && res.status === 409) return repeatResult(order, `duplicate order (salt of ${order.clientOrderId})`, () => this.status(order.clientOrderId, order));
    return failedResult(res);
  }

  /**
   * Finds a child order by the id the venue gave it or, after a restart, by its salt among the
   * market's orders: that needs the child order itself. A FAK order that took nothing is, as far as
   * the port is concerned, never placed.
   */
  async status(clientOrderId: string, order?: ChildOrder): Promise<ChildStatus> {
    const orderId = await this.orderId(clientOrderId, order);
    return orderId === undefined ? { kind: "not_found" } : this.orderState(orderId, clientOrderId, order);
  }

  /**
   * `DELETE /orders/{orderId}` cancels what rests of the order; the venue answers 404 for an order
   * with nothing open (matched, killed or already cancelled), which leaves nothing to cancel. Either
   * way the order's final state is then read back with its matches.
   */
  async cancel(clientOrderId: string, order?: ChildOrder): Promise<ChildStatus> {
    const orderId = await this.orderId(clientOrderId, order);
    if (orderId === undefined) return { kind: "not_found" };
    const path = `/orders/${encodeURIComponent(orderId)}`;
    // cancelling twice is harmless, so even an unknown outcome is retried
    const res = await sendWithRetry(() => this.send("DELETE", path), this.cancels, WRITE_RETRY, () => true);
    if (!res.ok && res.status !== 404) throw new AppError("venue_unavailable", `${this.id}: DELETE ${path} failed: ${res.reason}`, { venue: this.id });
    const st = await this.orderState(orderId, clientOrderId, order);
    if (st.kind === "open") throw new AppError("venue_unavailable", `${this.id}: order ${orderId} still rests after its cancel`, { venue: this.id });
    return st;
  }

  /**
   * Every trade of the account from `GET /portfolio/history`, page by page behind its cursor, each
   * once. The history lists newest first (assumed), so the whole of it, reversed, is oldest first. The
   * history names no fee: the contracts withheld from each buy and the USDC fee of each sell are read from its
   * order (`GET /orders/{id}`), as its fills are. The first call reads the whole history; each call after reads
   * only what was made from an hour (HISTORY_MARGIN_MS) before the last one began (`from`), and the orders and
   * markets of what it had not read, adding it to what was read before, so the reads do not grow with the
   * account's history.
   */
  async trades(): Promise<VenueFill[]> {
    const begun = this.clock.now();
    const window: Record<string, string> = this.traded.since === undefined ? {} : { from: new Date(this.traded.since).toISOString() };
    const read: LimitlessHistoryEntry[] = [];
    for (let cursor = ""; ; ) {
      const page = (await this.read(`/portfolio/history?${new URLSearchParams({ cursor, limit: String(HISTORY_PAGE), ...window })}`, true)) as LimitlessHistoryPage;
      read.push(...page.data);
      if (!page.nextCursor || page.data.length === 0) break;
      cursor = page.nextCursor;
    }
    const added = new Map<string, LimitlessHistoryEntry>();
    for (const e of read.reverse()) if (e.matchId !== undefined && !this.traded.entries.has(e.matchId)) added.set(e.matchId, e);
    const slugs = new Set([...added.values()].flatMap((e) => (e.market !== undefined ? [e.market.slug] : [])));
    const models = new Map([...this.traded.models, ...(await Promise.all([...slugs].map(async (slug) => [slug, await this.feeModel(slug, "a trade")] as const)))]);
    // a buy's fee in contracts and a sell's in USDC are what its order's totals say the venue applied; an order's
    // totals change only with a match of it, which is an entry not read before
    const totalled = new Set([...added.values()].flatMap((e) => (e.orderId !== undefined && e.market !== undefined && (historySide(e) === "sell" || feeInShares(models.get(e.market.slug)!, "buy")) ? [e.orderId] : [])));
    const totals = new Map([...this.traded.totals, ...(await Promise.all([...totalled].map(async (id) => [id, ((await this.read(`/orders/${encodeURIComponent(id)}`, true)) as OrderAnswer).execution?.totalsRaw] as const)))]);
    const entries = new Map([...this.traded.entries, ...added]);
    const trades = tradesFromHistory([...entries.values()], (slug) => models.get(slug)!, (id) => totals.get(id));
    this.traded = { entries, totals, models, since: begun - HISTORY_MARGIN_MS };
    return trades;
  }

  /** Stream state for health pages and tests. */
  streamInfo(): { state: string; live: boolean; connections: number; lastError: string | undefined } {
    return { state: this.socket.state, live: this.stream.live, connections: this.socket.connections, lastError: this.stream.lastError };
  }

  /** The signed order for `shares` contracts (a buy's gross size, before the fee withheld in contracts). */
  private async orderBody(order: ChildOrder, shares: bigint, market: VenueMarket, exchange: Hex): Promise<unknown> {
    const args = {
      maker: this.wallet.address,
      tokenId: market.outcomeIds[order.outcome],
      limitPrice: order.limitPrice,
      shares,
      feeRateBps: market.feeModel.ratePpm / 100n,
      salt: saltFor(order.clientOrderId),
      expiration: orderExpiration(order.expiresAt),
    };
    const struct = order.side === "buy" ? buyOrder(args) : sellOrder(args);
    const signature = await signOrder(this.wallet, struct, exchange);
    // clientOrderId: the venue's idempotency key (409 on a repeat), besides the salt, which already makes a retry the same order
    return {
      order: { ...wireOrder(struct), signature, price: Number(formatMicro(order.limitPrice)) },
      orderType: "FAK",
      marketSlug: order.venueMarketId,
      ownerId: this.opts.credentials.ownerId,
      clientOrderId: order.clientOrderId,
    };
  }

  /** The venue's id of a child order: known since it was placed, or found by its salt among the market's orders. */
  private async orderId(clientOrderId: string, order: ChildOrder | undefined): Promise<string | undefined> {
    const known = this.orderIds.get(clientOrderId);
    if (known !== undefined) return known;
    if (!order) throw new AppError("venue_unavailable", `${this.id} finds orders by their salt: pass the child order after a restart.`, { venue: this.id });
    const salt = saltFor(clientOrderId);
    // without `statuses` the venue lists LIVE orders only, and a FAK order has matched or been killed by now
    const q = new URLSearchParams(USER_ORDER_STATUSES.map((st): [string, string] => ["statuses", st]));
    const body = (await this.read(`/markets/${encodeURIComponent(order.venueMarketId)}/user-orders?${q}`, true)) as { orders: LimitlessOrder[] };
    const found = body.orders.find((o) => BigInt(o.salt) === salt)?.id;
    if (found !== undefined) this.orderIds.set(clientOrderId, found);
    return found;
  }

  /** `GET /orders/{id}`: open while part of it rests, done with its matches, or never placed if it took nothing. */
  private async orderState(orderId: string, clientOrderId: string, order: ChildOrder | undefined): Promise<ChildStatus> {
    const answer = (await this.read(`/orders/${encodeURIComponent(orderId)}`, true)) as OrderAnswer;
    const held = takerDelayUntil(answer.execution);
    if (held !== undefined) throw new AppError("venue_unavailable", `${this.id}: order ${orderId} is held by a taker delay until ${held || "an unnamed time"}`, { venue: this.id });
    const slug = order?.venueMarketId ?? answer.order.marketSlug;
    if (slug === undefined) throw new AppError("venue_unavailable", `${this.id}: order ${orderId} names no market`, { venue: this.id });
    const feeModel = await this.feeModel(slug, `order ${orderId}`);
    let fills: VenueFill[];
    try {
      fills = orderFills(answer, orderId, clientOrderId, orderSide(answer.order.side), feeModel);
    } catch (err) {
      throw new AppError("venue_unavailable", `${this.id}: order ${orderId}'s matches or totals are unreadable: ${String(err)}`, { venue: this.id });
    }
    if (orderRests(answer.order, this.id)) return { kind: "open", venueOrderId: orderId, fills };
    return fills.length === 0 ? { kind: "not_found" } : { kind: "done", venueOrderId: orderId, fills };
  }

  /**
   * The fee model of a market, which the order views and the history do not carry: the catalogue's, or, for a
   * market the adapter does not load (a child order placed on it before a restart, and the catalog or the venue
   * dropped it since), as the venue states it now (`GET /markets/{slug}`).
   */
  private async feeModel(slug: string, what: string): Promise<FeeModel> {
    const cached = this.cache.get(slug)?.market.feeModel;
    if (cached) return cached;
    try {
      const m = (await this.read(`/markets/${encodeURIComponent(slug)}`)) as LimitlessMarket;
      return toVenueMarket(m, await this.rankFor([m])).feeModel;
    } catch (err) {
      throw new AppError("venue_unavailable", `${this.id}: ${what} is in market ${slug}, which this adapter does not load and could not read: ${err instanceof Error ? err.message : String(err)}`, { venue: this.id });
    }
  }

  private async seedBook(slug: string): Promise<void> {
    try {
      const { bids, asks } = parseOrderbook(await this.fetchOrderbook(slug));
      this.stream.seed(slug, bids, asks, this.clock.now());
    } catch {
      // the stream will bring the book; a market without one is left out of merged books meanwhile
    }
  }

  /** A GET, signed for the account's own data. */
  private read(path: string, signed = false): Promise<unknown> {
    return this.readRest(path, () => this.send("GET", path, undefined, signed));
  }

  /** Market data is public and sent unsigned, so a bad token shows on trading, not on start-up. */
  private send(method: "GET" | "POST" | "DELETE", path: string, body?: unknown, signed = method !== "GET"): Promise<HttpResult> {
    // the HMAC covers the exact body text: JSON.stringify of the same object is the text sendRequest sends
    const text = body === undefined ? "" : JSON.stringify(body);
    const { apiKey, secret } = this.opts.credentials;
    const headers = signed ? limitlessAuthHeaders(apiKey, secret, this.clock.now(), method, this.pathPrefix + path, text) : {};
    return sendRequest(this.opts.baseUrl.replace(/\/$/, ""), { method, path, body, headers, timeoutMs: this.timeoutMs });
  }
}

/**
 * Whether part of an order rests (LIVE) or it ended (MATCHED, CANCELED, UNMATCHED, or no status stated). A status the
 * adapter does not know is refused, never taken for ended: the order may still fill, after it was settled as done.
 */
function orderRests(order: LimitlessOrder, venue: string): boolean {
  if (order.status === "LIVE") return true;
  if (order.status === undefined || USER_ORDER_STATUSES.includes(order.status)) return false;
  throw new AppError("venue_unavailable", `${venue}: order ${order.id} has status ${JSON.stringify(order.status)}, which the adapter does not know`, { venue });
}
