import { createPrivateKey, type KeyObject } from "node:crypto";
import { AppError } from "../../domain/errors.ts";
import { ONE, type ShareMicro } from "../../domain/money.ts";
import { CHILD_ORDERS_KEPT, MAX_CHILD_ORDER_TTL_MS, resolutionStatus, type ChildOrder, type ChildStatus, type PlaceResult, type TradeSide, type Venue, type VenueFill, type VenueMarket, type VenueResolution } from "../venue.ts";
import { KalshiBookSync } from "./book-sync.ts";
import { sendRequest, sendWithRetry, type HttpResult } from "../net/http.ts";
import type { AdapterOptions } from "../net/adapter-options.ts";
import type { ReconnectingSocket } from "../net/reconnecting-socket.ts";
import { WireVenue, WRITE_RETRY } from "../net/wire-venue.ts";
import { failedResult, repeatResult, takenResult, uniqueTrades } from "../placement.ts";
import { kalshiAuthHeaders, type KalshiCredentials } from "./signing.ts";
import { eventFee, formatCount, formatDollars, kalshiResolution, levelMap, onPriceGrid, parseCount, parseDollars, priceRanges, scheduledAt, seriesFee, seriesOf, toVenueMarket, wholeCentsOf, type PriceRange, type KalshiEventFee, type KalshiEventFeeChange, type KalshiMarket, type KalshiOrderbookFp, type KalshiSeriesFee, type KalshiSeriesFeeChange } from "./wire.ts";
import { KalshiFeeSchedule, type Scheduled } from "./fee-schedule.ts";
import { BoundedMap } from "../../domain/bounded-map.ts";

/** Kalshi's Basic tier by default: 20 reads and 10 writes a second. */
export type KalshiVenueOptions = AdapterOptions<KalshiCredentials>;

/** How far back status() looks for an order whose id it never learnt, when it is not given the child order. */
const STATUS_LOOKBACK_S = 7 * 24 * 3600;
/** Kalshi's clock against this server's, at most, in the window of a child's order (findOrder). */
const CLOCK_MARGIN_S = 3600;
/**
 * What a sell's `client_order_id` starts with. Kalshi's V2 book has one direction bit (`bid`/`ask`
 * on the YES leg): selling YES at p is the very order that buys NO at 1 − p, and neither the order
 * nor its fills say which was meant. The id the child is sent under is the only place left to say it.
 */
const SELL_MARK = "sell:";
/** Event tickers one `GET /events?tickers=…` names (as markets() names 100 market tickers a read); one page of its answer (limit 200) holds them all. */
const EVENTS_PER_READ = 100;
/**
 * How far ahead of now a market's fee looks (market()): a child order is an immediate-or-cancel order, matched
 * within its write's retries (WRITE_RETRY, 3 s) of its plan and lock, so a change that applies within this
 * window is priced and locked for before the venue can charge it.
 */
const FEE_LOOKAHEAD_MS = 60_000;

interface KalshiOrder {
  order_id: string;
  client_order_id: string;
  ticker: string;
  status: string;
  fill_count_fp: string;
  created_time?: string | null;
  /** Its last modification, cancel or fill. */
  last_update_time?: string | null;
}

/**
 * Where Kalshi lists an account's orders and fills: the live tier, and past its historical cutoff (`GET /historical/cutoff`:
 * orders that ended and fills made before it, about three months back) the historical one.
 */
const ORDER_LISTS = ["/portfolio/orders", "/historical/orders"] as const;
/**
 * A page of the account's orders or fills: the most each list gives at once, 200 live (`GET /portfolio/orders`,
 * `/portfolio/fills`: `limit` 1 to 200) and 1,000 historical (`GET /historical/orders`, `/historical/fills`); a larger
 * `limit` is refused 400.
 */
const pageLimit = (list: string): string => (list.startsWith("/historical/") ? "1000" : "200");

interface KalshiFill {
  trade_id: string;
  order_id: string;
  outcome_side: string;
  count_fp: string;
  yes_price_dollars: string;
  no_price_dollars: string;
  fee_cost: string;
}

/**
 * Kalshi's trade API v2 behind the Venue port: RSA-PSS signed REST for markets, series and event fees, books,
 * orders, cancels and fills, and the orderbook_delta WebSocket channel for live books. Only the
 * catalog's markets are loaded and streamed. Orders are immediate-or-cancel V2 orders keyed by the
 * child's client order id, so a retried placement can never fill twice.
 */
export class KalshiVenue extends WireVenue<KalshiCredentials> implements Venue {
  private readonly pathPrefix: string;
  private readonly keyId: string;
  private readonly privateKey: KeyObject;
  private readonly tickers: string[];
  protected readonly stream: KalshiBookSync;
  protected readonly socket: ReconnectingSocket;
  private readonly cache = new Map<string, VenueMarket>();
  /** The event of each market in the cache: its fee may be its event's. */
  private readonly eventOf = new Map<string, string>();
  /** The price grid of each market in the cache (priceRanges): a tapered market takes finer prices near 0 and 1 than its tick. */
  private readonly grids = new Map<string, PriceRange[]>();
  private readonly fees = new KalshiFeeSchedule();
  private feeTimer: NodeJS.Timeout | undefined;
  private readonly orderIds = new BoundedMap<string, string>(CHILD_ORDERS_KEPT);
  /** What trades() has read: every fill, oldest first, each order's sent id, and the time (Unix seconds) its next read starts from. */
  private readonly traded: { fills: VenueFill[]; sentIds: Map<string, string>; since: number | undefined } = { fills: [], sentIds: new Map(), since: undefined };

  constructor(opts: KalshiVenueOptions) {
    super(opts, { adapter: "kalshi-trade-api-v2", venueId: "kalshi-sim", rateLimits: { readsPerSecond: 20, writesPerSecond: 10 }, placementReads: 1 });
    this.pathPrefix = new URL(opts.baseUrl).pathname.replace(/\/$/, "");
    this.keyId = opts.credentials.keyId;
    // parsed once: signing every request from the PEM text would parse the key each time
    this.privateKey = createPrivateKey(opts.credentials.privateKeyPem);
    this.tickers = this.listedMarkets(true);
    this.stream = new KalshiBookSync({ ...this.streamHooks(), tickers: this.tickers });
    const wsPath = new URL(opts.wsUrl).pathname;
    this.socket = this.connect(
      opts.wsUrl,
      () => kalshiAuthHeaders(this.keyId, this.privateKey, this.clock.now(), "GET", wsPath),
      () => this.stream.subscribe(),
    );
  }

  async start(): Promise<void> {
    await this.markets();
    this.feeTimer = this.readAgain(() => this.markets());
    this.socket.start();
    await this.streamSynced(() => this.tickers.every((t) => this.stream.book(t, "YES") !== undefined));
    // whatever the stream has not delivered yet is read over REST, so no market starts without a book
    await Promise.all(this.tickers.filter((t) => !this.stream.book(t, "YES")).map((t) => this.seedBook(t)));
  }

  async stop(): Promise<void> {
    clearInterval(this.feeTimer);
    this.socket.stop();
    this.stream.disconnected();
  }

  /**
   * The catalog's markets as Kalshi lists them now (`GET /markets?tickers=…`, every cursor page), each with its
   * fee read again with the changes scheduled for it (readFees, readFeeChanges); a market the adapter cannot
   * model is left out, and no longer traded if it was. Run at start and every feeReadIntervalMs.
   */
  async markets(): Promise<VenueMarket[]> {
    const wanted = this.listedMarkets();
    const listed: KalshiMarket[] = [];
    for (let i = 0; i < wanted.length; i += 100) {
      const tickers = wanted.slice(i, i + 100).join(",");
      let cursor = "";
      do {
        const q = new URLSearchParams({ tickers, limit: "100", ...(cursor ? { cursor } : {}) });
        const body = (await this.read(`/markets?${q}`)) as { markets: KalshiMarket[]; cursor: string };
        listed.push(...body.markets);
        cursor = body.cursor ?? "";
      } while (cursor);
    }
    // fees before changes: a change that applied meanwhile leaves the listing of upcoming ones when the fee read shows it
    await this.readFees(listed, true);
    await this.readFeeChanges();
    const out = this.toVenueMarkets(listed);
    const kept = new Set(out.map((m) => m.venueMarketId));
    for (const m of listed) {
      if (kept.has(m.ticker)) {
        this.eventOf.set(m.ticker, m.event_ticker);
        this.grids.set(m.ticker, priceRanges(m));
      } else this.cache.delete(m.ticker);
    }
    for (const m of out) this.cache.set(m.venueMarketId, m);
    return out.map((m) => ({ ...m, outcomeIds: { ...m.outcomeIds } }));
  }

  /**
   * Every open market (`GET /markets?status=open`, every cursor page) the catalog does not list, each with its fee (readFees:
   * those not read yet); as in markets(), less those the adapter cannot model. Combos (markets of multivariate events, parlays
   * of other markets Kalshi mints on demand) are left out by the venue (`mve_filter=exclude`): each is no question of its own.
   */
  async discover(): Promise<VenueMarket[]> {
    const listed = new Set(this.listedMarkets());
    const found: KalshiMarket[] = [];
    let cursor = "";
    do {
      const q = new URLSearchParams({ status: "open", mve_filter: "exclude", limit: "1000", ...(cursor ? { cursor } : {}) });
      const body = (await this.read(`/markets?${q}`)) as { markets: KalshiMarket[]; cursor: string };
      found.push(...body.markets.filter((m) => !listed.has(m.ticker)));
      cursor = body.cursor ?? "";
    } while (cursor);
    await this.readFees(found);
    return this.toVenueMarkets(found);
  }

  /**
   * A loaded market, its fee the highest Kalshi charges from now to FEE_LOOKAHEAD_MS ahead: where a change is
   * scheduled in that window, quotes and plans price it, and a lock covers it. Undefined while a fee the
   * adapter cannot model applies in the window.
   */
  market(venueMarketId: string): VenueMarket | undefined {
    const m = this.cache.get(venueMarketId);
    if (!m) return undefined;
    const fees = { ticker: venueMarketId, event_ticker: this.eventOf.get(venueMarketId)! };
    if (!this.fees.changes(fees)) return { ...m, outcomeIds: { ...m.outcomeIds } };
    const now = this.clock.now();
    try {
      // the fee is the schedule's; whether fills are whole cents is the market's grid (wire.ts, toVenueMarket)
      return { ...m, outcomeIds: { ...m.outcomeIds }, feeModel: { ...this.fees.highest(fees, now, now + FEE_LOOKAHEAD_MS), ...wholeCentsOf(m.feeModel) } };
    } catch {
      return undefined;
    }
  }

  /**
   * `GET /markets/{ticker}`: its `status` and `result` (docs/venues/kalshi.md, Resolution); a market settled before Kalshi's
   * historical cutoff, which that answers 404 for, from `GET /historical/markets/{ticker}`.
   */
  async resolution(venueMarketId: string): Promise<VenueResolution> {
    const path = `/markets/${encodeURIComponent(venueMarketId)}`;
    const live = (await this.readUnlessGone(path)) as { market: KalshiMarket } | undefined;
    const { market } = live ?? ((await this.read(`/historical${path}`)) as { market: KalshiMarket });
    const resolution = kalshiResolution(market);
    const cached = this.cache.get(venueMarketId);
    if (cached) cached.status = resolutionStatus(resolution);
    return resolution;
  }

  /** `GET /markets/{ticker}/orderbook`: the venue's book now, both outcomes derived from its bids. */
  async fetchOrderbook(ticker: string): Promise<KalshiOrderbookFp> {
    const body = (await this.read(`/markets/${encodeURIComponent(ticker)}/orderbook`)) as { orderbook_fp: KalshiOrderbookFp };
    return body.orderbook_fp;
  }

  async place(order: ChildOrder): Promise<PlaceResult> {
    const market = this.cache.get(order.venueMarketId);
    if (!market) return { kind: "rejected", reason: `unknown_market: ${this.id} lists no market ${order.venueMarketId}` };
    const yesPrice = order.outcome === "YES" ? order.limitPrice : ONE - order.limitPrice;
    if (order.shares % market.lotShares !== 0n || !onPriceGrid(yesPrice, this.grids.get(order.venueMarketId) ?? [])) {
      return { kind: "rejected", reason: `invalid_order: price or size off ${order.venueMarketId}'s grid` };
    }
    const body = {
      ticker: order.venueMarketId,
      client_order_id: sentId(order),
      ...bookOrder(order),
      count: formatCount(order.shares),
      // Kalshi refuses expiration_time on an IOC order, so the child's expiry is kept by sending, below
      time_in_force: "immediate_or_cancel",
      self_trade_prevention_type: "taker_at_cross",
    };
    const started = performance.now();
    const attempts = { sent: 0 };
    // a 5xx is retried: the client_order_id makes a repeat harmless (409 if the first one executed);
    // a timeout is not, the caller reconciles it with status()
    const res = await sendWithRetry(() => this.sendBefore(order.expiresAt, attempts, body), this.turns.throttleFor(order.clientOrderId), WRITE_RETRY, (f) => f.status !== undefined);
    if (!res.ok && res.kind === "rejected" && res.status === undefined) return { kind: "rejected", reason: res.reason };
    if (res.ok) {
      this.recorder.record(performance.now() - started);
      const created = res.body as { order_id: string; fill_count: string; remaining_count: string };
      this.orderIds.set(order.clientOrderId, created.order_id);
      const rests = parseCount(created.remaining_count, "remaining_count") > 0n;
      if (!rests && parseCount(created.fill_count, "fill_count") === 0n) {
        return { kind: "rejected", reason: `no_match: nothing to take at or ${order.side === "buy" ? "below" : "above"} ${formatDollars(order.limitPrice)}` };
      }
      try {
        const fills = await this.fills({ order_id: created.order_id, ticker: order.venueMarketId }, sentId(order), parseCount(created.fill_count, "fill_count"), { readBack: true, justMade: true });
        return takenResult(order, created.order_id, fills, rests);
      } catch (err) {
        return { kind: "unknown", reason: `order ${created.order_id} executed but its fills could not be read: ${String(err)}` };
      }
    }
    if (res.kind === "rejected" && res.status === 409) return repeatResult(order, `duplicate client_order_id ${order.clientOrderId}`, () => this.status(order.clientOrderId, order));
    return failedResult(res);
  }

  /**
   * An IOC order that took nothing left no trace but a cancelled record: as far as the port is concerned it was never placed
   * (and an order that ended filling nothing has no fills to read).
   */
  async status(clientOrderId: string, child?: ChildOrder): Promise<ChildStatus> {
    const order = await this.findOrder(clientOrderId, child);
    if (!order || endedEmpty(order, this.id)) return { kind: "not_found" };
    const fills = await this.fills(order, order.client_order_id, parseCount(order.fill_count_fp, "fill_count_fp"));
    if (rests(order, this.id)) return { kind: "open", venueOrderId: order.order_id, fills };
    return fills.length === 0 ? { kind: "not_found" } : { kind: "done", venueOrderId: order.order_id, fills };
  }

  /**
   * Cancel Order (V2), `DELETE /portfolio/events/orders/{order_id}`, when the order still rests, then
   * the order and its fills: read after the cancel, so a fill that raced it is counted, and waited for
   * while the fill listing does not show it yet. As in status(), an order that ends without a fill was
   * never placed as far as the port is concerned.
   */
  async cancel(clientOrderId: string, child?: ChildOrder): Promise<ChildStatus> {
    let order = await this.findOrder(clientOrderId, child);
    if (!order || endedEmpty(order, this.id)) return { kind: "not_found" };
    if (rests(order, this.id)) {
      await this.cancelResting(order);
      order = ((await this.read(`/portfolio/orders/${encodeURIComponent(order.order_id)}`, true)) as { order: KalshiOrder }).order;
    }
    const fills = await this.fills(order, order.client_order_id, parseCount(order.fill_count_fp, "fill_count_fp"), { readBack: true });
    return fills.length === 0 ? { kind: "not_found" } : { kind: "done", venueOrderId: order.order_id, fills };
  }

  /**
   * Every fill of the account (`GET /portfolio/fills` and `GET /historical/fills`, every cursor page), oldest first.
   * Kalshi's fills carry no client order id, and a sell's fill reads as the opposite buy: each fill's order, from the
   * account's orders (`GET /portfolio/orders` and `GET /historical/orders`, every cursor page), names the child and its side.
   * Fills are read before orders, so every fill's order, made before it, is listed by the reads after; and each tier live
   * before historical, so a fill or order the cutoff moves past between the two reads is in the one or the other.
   * The first call reads the whole history; each call after reads only what was made from an hour (CLOCK_MARGIN_S) before
   * the last one began (`min_ts`), adding it to what was read before, so the reads do not grow with the account's history;
   * the orders read by every call are kept, so a fill of an order made before the window (one that rested) still names it.
   */
  async trades(): Promise<VenueFill[]> {
    const begun = this.clock.now();
    const since = new URLSearchParams(this.traded.since === undefined ? {} : { min_ts: String(this.traded.since) });
    const live = await this.readFills("/portfolio/fills", since);
    const old = await this.readFills("/historical/fills", since);
    const made = [...old, ...live];
    for (const list of ORDER_LISTS) {
      let cursor = "";
      do {
        const page = (await this.read(`${list}?${new URLSearchParams({ ...Object.fromEntries(since), limit: pageLimit(list), ...(cursor ? { cursor } : {}) })}`)) as { orders: KalshiOrder[]; cursor: string };
        for (const o of page.orders) this.traded.sentIds.set(o.order_id, o.client_order_id);
        cursor = page.cursor ?? "";
      } while (cursor);
    }
    const fresh = made.map((f) => {
      const sent = this.traded.sentIds.get(f.order_id);
      if (sent === undefined) throw new AppError("venue_unavailable", `${this.id}: a fill of order ${f.order_id}, which the account's orders do not list`, { venue: this.id });
      return toVenueFill(f, sent);
    });
    this.traded.fills = uniqueTrades([...this.traded.fills, ...fresh]);
    this.traded.since = Math.floor(begun / 1000) - CLOCK_MARGIN_S;
    return [...this.traded.fills];
  }

  override describe(): { adapter: string; baseUrl: string; wsUrl: string; stream: ReturnType<KalshiVenue["streamInfo"]> } {
    return { ...super.describe(), stream: this.streamInfo() };
  }

  /** Stream state for health pages and tests: connection, subscription, connections opened, resyncs after gaps. */
  streamInfo(): { state: string; live: boolean; connections: number; resyncs: number; lastError: string | undefined } {
    return { state: this.socket.state, live: this.stream.live, connections: this.socket.connections, resyncs: this.stream.resyncs, lastError: this.stream.lastError };
  }

  /**
   * The order by its child's client id (sent as is for a buy, marked for a sell): by its order id when this
   * process learnt it and the order is live, else found among the orders of the child's window (childWindow), or without the
   * child among the last STATUS_LOOKBACK_S of orders, live ones first, then those past the historical cutoff (which
   * `GET /portfolio/orders/{order_id}` answers 404 for; Kalshi has no historical read by order id). An order whose id
   * this process learnt is never reported missing: the venue took it.
   */
  private async findOrder(clientOrderId: string, child: ChildOrder | undefined): Promise<KalshiOrder | undefined> {
    const known = this.orderIds.get(clientOrderId);
    if (known) {
      const live = (await this.readUnlessGone(`/portfolio/orders/${encodeURIComponent(known)}`)) as { order: KalshiOrder } | undefined;
      if (live) return live.order;
    }
    // Kalshi cannot look an order up by client id: scan the orders of its window for it
    const window: Record<string, string> =
      child === undefined
        ? { min_ts: String(Math.floor(this.clock.now() / 1000) - STATUS_LOOKBACK_S) }
        : childWindow(child);
    for (const list of ORDER_LISTS) {
      let cursor = "";
      do {
        const q = new URLSearchParams({ ...window, limit: pageLimit(list), ...(cursor ? { cursor } : {}) });
        const page = (await this.read(`${list}?${q}`)) as { orders: KalshiOrder[]; cursor: string };
        const hit = page.orders.find((o) => o.client_order_id === clientOrderId || o.client_order_id === SELL_MARK + clientOrderId);
        if (hit) {
          this.orderIds.set(clientOrderId, hit.order_id);
          return hit;
        }
        cursor = page.cursor ?? "";
      } while (cursor);
    }
    if (known) throw new AppError("venue_unavailable", `${this.id}: order ${known} of ${clientOrderId} is listed neither live nor historical`, { venue: this.id });
    return undefined;
  }

  /**
   * Zeroes what rests of an order. A 404 means nothing rests any more (it filled or was cancelled meanwhile): the fills read next tell which.
   * `market_ticker` routes the cancel to the order's exchange shard (without it Kalshi looks on shard 0).
   */
  private async cancelResting(order: KalshiOrder): Promise<void> {
    const path = `/portfolio/events/orders/${encodeURIComponent(order.order_id)}?${new URLSearchParams({ market_ticker: order.ticker })}`;
    // a cancel is safe to repeat, so even an unknown outcome is retried
    const res = await sendWithRetry(() => this.send("DELETE", path), this.cancels, WRITE_RETRY, () => true);
    if (!res.ok && res.status !== 404) throw new AppError("venue_unavailable", `${this.id}: DELETE ${path} failed: ${res.reason}`, { venue: this.id });
  }

  /**
   * Every fill of one order (`GET /portfolio/fills?order_id=…`), sent under `sentId`, in the prices of the outcome its child traded; `readBack` as readRest's.
   * Where those add up to fewer than the `filled` contracts the order counts, the rest may be past the historical cutoff:
   * its market's fills from when the order was made to its last update are read from `GET /historical/fills` (which filters
   * by market and time, not order), unless the order was `justMade` (its create answer, which says not when): the cutoff is
   * months back, so its fills are all live.
   * Throws while they still add up to fewer: fills the listing does not show yet would be reported as never made (and an
   * order that took something as never placed).
   */
  private async fills(order: Pick<KalshiOrder, "order_id" | "ticker" | "created_time" | "last_update_time">, sentId: string, filled: ShareMicro, { readBack = false, justMade = false } = {}): Promise<VenueFill[]> {
    const total = (fills: readonly VenueFill[]) => fills.reduce((s, f) => s + f.shares, 0n);
    const live = await this.readFills("/portfolio/fills", new URLSearchParams({ order_id: order.order_id }), readBack);
    let fills = uniqueTrades(live.map((f) => toVenueFill(f, sentId)));
    if (total(fills) < filled && !justMade) {
      // each bound widened as a child's window is (childWindow), where the order states it
      const bound = (param: string, time: string | null | undefined, margin: number): [string, string][] => (time ? [[param, String(Math.floor(Date.parse(time) / 1000) + margin)]] : []);
      const window = [...bound("min_ts", order.created_time, -CLOCK_MARGIN_S), ...bound("max_ts", order.last_update_time, CLOCK_MARGIN_S)];
      const old = await this.readFills("/historical/fills", new URLSearchParams([["ticker", order.ticker], ...window]), readBack);
      fills = uniqueTrades([...old.filter((f) => f.order_id === order.order_id), ...live].map((f) => toVenueFill(f, sentId)));
    }
    const listed = total(fills);
    if (listed < filled) throw new AppError("venue_unavailable", `${this.id}: order ${order.order_id} filled ${formatCount(filled)} contracts, but its fills list ${formatCount(listed)} yet`, { venue: this.id });
    return fills;
  }

  /** The fills `list` holds under `filter`, every cursor page, oldest first (a trade the venue repeats is in it as often). */
  private async readFills(list: string, filter: URLSearchParams, readBack = false): Promise<KalshiFill[]> {
    const newestFirst: KalshiFill[] = [];
    let cursor = "";
    do {
      const q = new URLSearchParams({ ...Object.fromEntries(filter), limit: pageLimit(list), ...(cursor ? { cursor } : {}) });
      const page = (await this.read(`${list}?${q}`, readBack)) as { fills: KalshiFill[]; cursor: string };
      newestFirst.push(...page.fills);
      cursor = page.cursor ?? "";
    } while (cursor);
    return newestFirst.reverse();
  }

  /**
   * The markets the adapter can model, each with its fee now (readFees has read it): its event's override where
   * there is one, else its series' fee (docs/venues/kalshi.md, Fees). The others are left out.
   */
  private toVenueMarkets(markets: readonly KalshiMarket[]): VenueMarket[] {
    const now = this.clock.now();
    return this.modelled(markets, (m) => m.ticker, (m) => toVenueMarket(m, this.fees.at(m, now)));
  }

  /** The fees of the markets' series and events, all at once (the read bucket paces them): those not read yet, or with `again` all. */
  private async readFees(markets: readonly KalshiMarket[], again = false): Promise<void> {
    const at = this.clock.now();
    const series = [...new Set(markets.map((m) => seriesOf(m.ticker)))].filter((s) => again || !this.fees.hasSeries(s));
    const events = [...new Set(markets.map((m) => m.event_ticker))].filter((e) => again || !this.fees.hasEvent(e));
    await Promise.all([...series.map((s) => this.readSeriesFee(s, at)), this.readEventFees(events, at)]);
  }

  /** `GET /series/{series_ticker}`: the series' fee schedule, as of `at`. */
  private async readSeriesFee(series: string, at: number): Promise<void> {
    const body = (await this.read(`/series/${encodeURIComponent(series)}`)) as { series: KalshiSeriesFee };
    this.fees.readSeries(series, { at, fee: seriesFee(body.series) });
  }

  /**
   * The events' fee overrides as of `at`: `GET /events?tickers=…`, EVENTS_PER_READ events a read (every cursor
   * page), then `GET /events/{event_ticker}` for each event that listing leaves out (it excludes multivariate events).
   */
  private async readEventFees(events: readonly string[], at: number): Promise<void> {
    const keep = (ticker: string, e: KalshiEventFee) => this.fees.readEvent(ticker, { at, fee: eventFee(e) });
    const listed = new Set<string>();
    const batches: string[][] = [];
    for (let i = 0; i < events.length; i += EVENTS_PER_READ) batches.push(events.slice(i, i + EVENTS_PER_READ));
    await Promise.all(
      batches.map(async (batch) => {
        let cursor = "";
        do {
          const q = new URLSearchParams({ tickers: batch.join(","), limit: "200", ...(cursor ? { cursor } : {}) });
          const body = (await this.read(`/events?${q}`)) as { events: (KalshiEventFee & { event_ticker: string })[]; cursor: string };
          for (const e of body.events) {
            keep(e.event_ticker, e);
            listed.add(e.event_ticker);
          }
          cursor = body.cursor ?? "";
        } while (cursor);
      }),
    );
    const unlisted = events.filter((e) => !listed.has(e));
    await Promise.all(unlisted.map(async (e) => keep(e, ((await this.read(`/events/${encodeURIComponent(e)}`)) as { event: KalshiEventFee }).event)));
  }

  /**
   * Every fee change Kalshi has scheduled: `GET /series/fee_changes` (upcoming ones) and `GET /events/fee_changes`
   * (every cursor page), in place of those read before; each applies from its `scheduled_ts` (KalshiFeeSchedule).
   * A change whose `scheduled_ts` is not a time leaves only its own series' or event's markets out.
   */
  private async readFeeChanges(): Promise<void> {
    const byKey = <F>(list: { key: string; change: Scheduled<F> }[]) => {
      const out = new Map<string, Scheduled<F>[]>();
      for (const { key, change } of list) out.set(key, [...(out.get(key) ?? []), change]);
      return out;
    };
    const series = ((await this.read("/series/fee_changes")) as { series_fee_change_arr: KalshiSeriesFeeChange[] }).series_fee_change_arr ?? [];
    const events: KalshiEventFeeChange[] = [];
    let cursor = "";
    do {
      const q = new URLSearchParams({ limit: "200", ...(cursor ? { cursor } : {}) });
      const page = (await this.read(`/events/fee_changes?${q}`)) as { event_fee_changes: KalshiEventFeeChange[]; cursor: string };
      events.push(...(page.event_fee_changes ?? []));
      cursor = page.cursor ?? "";
    } while (cursor);
    this.fees.schedule(
      byKey(series.map((c) => ({ key: c.series_ticker, change: { at: scheduledAt(c), fee: seriesFee(c) } }))),
      byKey(events.map((c) => ({ key: c.event_ticker, change: { at: scheduledAt(c), fee: eventFee(c) } }))),
    );
  }

  private async seedBook(ticker: string): Promise<void> {
    try {
      const book = await this.fetchOrderbook(ticker);
      this.stream.seed(ticker, levelMap(book.yes_dollars, "yes_dollars"), levelMap(book.no_dollars, "no_dollars"), this.clock.now());
    } catch {
      // the stream's snapshot will bring the book; a market without one is left out of merged books meanwhile
    }
  }

  private read(path: string, readBack = false): Promise<unknown> {
    return this.readRest(path, () => this.send("GET", path), readBack);
  }

  /** A read of a record Kalshi may have moved past its historical cutoff: undefined where the live endpoint answers 404. */
  private readUnlessGone(path: string): Promise<unknown> {
    return this.readRest(path, async () => {
      const res = await this.send("GET", path);
      return !res.ok && res.status === 404 ? { ok: true, status: 404, body: undefined } : res;
    });
  }

  /**
   * One attempt at creating a child order, keeping its expiry on our side since Kalshi takes none for an
   * IOC order: sent only before `expiresAt`, and given up (its connection closed) by then at the latest,
   * so that no request of the order is outstanding after its expiry. Too late for a first attempt is a
   * definite no, as nothing was sent; too late for a retry leaves the earlier attempts' outcome unknown.
   */
  private sendBefore(expiresAt: number, attempts: { sent: number }, body: unknown): Promise<HttpResult> {
    const left = expiresAt - this.clock.now();
    if (left <= 0) {
      const why = `order_expired: its expiry passed before it could be sent to ${this.id}`;
      return Promise.resolve(attempts.sent === 0 ? { ok: false, kind: "rejected", reason: why } : { ok: false, kind: "unknown", reason: `${why} again` });
    }
    attempts.sent++;
    return this.send("POST", "/portfolio/events/orders", body, Math.min(this.timeoutMs, left));
  }

  /** Market data is public on Kalshi and sent unsigned, so a bad key shows on trading, not on start-up; the account's orders and fills, live or historical, are signed. */
  private send(method: "GET" | "POST" | "DELETE", path: string, body?: unknown, timeoutMs = this.timeoutMs): Promise<HttpResult> {
    const headers = /^\/(portfolio|historical\/(orders|fills))[/?]/.test(path) ? kalshiAuthHeaders(this.keyId, this.privateKey, this.clock.now(), method, this.pathPrefix + path) : {};
    return sendRequest(this.opts.baseUrl.replace(/\/$/, ""), { method, path, body, headers, timeoutMs });
  }
}

/** The orders a child can be among: of its market, created no earlier than its expiry less the longest a child lives, no later than its expiry, each widened by CLOCK_MARGIN_S. */
function childWindow(child: ChildOrder): Record<string, string> {
  const expiry = Math.floor(child.expiresAt / 1000);
  return { ticker: child.venueMarketId, min_ts: String(expiry - MAX_CHILD_ORDER_TTL_MS / 1000 - CLOCK_MARGIN_S), max_ts: String(expiry + CLOCK_MARGIN_S) };
}

/** Whether an order ended (nothing rests) having filled nothing: it has no fills, live or historical. */
function endedEmpty(order: KalshiOrder, venue: string): boolean {
  return !rests(order, venue) && parseCount(order.fill_count_fp, "fill_count_fp") === 0n;
}

/**
 * Whether part of an order still rests (`resting`) or it ended (`canceled`, `executed`). A status the adapter does not know
 * is refused, never taken for ended: the order may still fill, after it was settled as done.
 */
function rests(order: KalshiOrder, venue: string): boolean {
  if (order.status === "canceled" || order.status === "executed") return false;
  if (order.status === "resting") return true;
  throw new AppError("venue_unavailable", `${venue}: order ${order.order_id} has status ${JSON.stringify(order.status)}, which the adapter does not know`, { venue });
}

/** The `client_order_id` a child is sent under: its own, marked when it sells (see SELL_MARK). */
function sentId(order: ChildOrder): string {
  return order.side === "sell" ? SELL_MARK + order.clientOrderId : order.clientOrderId;
}

/** The child's client id and side from the id its order was sent under. */
function childOf(sent: string): { clientOrderId: string; side: TradeSide } {
  return sent.startsWith(SELL_MARK) ? { clientOrderId: sent.slice(SELL_MARK.length), side: "sell" } : { clientOrderId: sent, side: "buy" };
}

/**
 * A child order on Kalshi's one YES book: buying YES or selling NO bids for YES, buying NO or selling
 * YES asks, always at the YES leg's price (1 − q for an order priced q in NO).
 */
function bookOrder(order: ChildOrder): { side: "bid" | "ask"; price: string } {
  const towardYes = (order.outcome === "YES") === (order.side === "buy");
  return { side: towardYes ? "bid" : "ask", price: formatDollars(order.outcome === "YES" ? order.limitPrice : ONE - order.limitPrice) };
}

/**
 * A Kalshi fill in the Venue port's terms, for the child its order was sent for: the price is the
 * outcome the child traded. `outcome_side` is the exposure the fill gave (a sell of YES gives NO), so
 * the child's outcome is `outcome_side` for a buy and the other one for a sell.
 */
function toVenueFill(f: KalshiFill, sent: string): VenueFill {
  const { clientOrderId, side } = childOf(sent);
  const yes = (f.outcome_side === "yes") === (side === "buy");
  return {
    tradeId: f.trade_id,
    venueOrderId: f.order_id,
    clientOrderId,
    side,
    price: parseDollars(yes ? f.yes_price_dollars : f.no_price_dollars, "fill price"),
    shares: parseCount(f.count_fp, "count_fp"),
    fee: parseDollars(f.fee_cost, "fee_cost"),
  };
}
