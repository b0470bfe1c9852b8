import { randomUUID } from "node:crypto";
import { ONE, type PriceMicro, type ShareMicro } from "../../../domain/money.ts";
import type { Outcome } from "../../../domain/types.ts";
import type { SimExchange } from "../../simulated/exchange.ts";
import { OWN_ACCOUNT } from "../../simulated/positions.ts";
import type { ChildOrder, VenueFill } from "../../venue.ts";
import { formatCount, formatDollars, parseCount, parseDollars } from "../wire.ts";

/** Kalshi's Order object, as GET /portfolio/orders returns it (fixed-point fields). */
export interface KalshiOrderRecord {
  order_id: string;
  user_id: string;
  client_order_id: string;
  ticker: string;
  side: "yes" | "no";
  action: "buy";
  outcome_side: "yes" | "no";
  book_side: "bid" | "ask";
  type: "limit";
  status: "resting" | "canceled" | "executed";
  yes_price_dollars: string;
  no_price_dollars: string;
  fill_count_fp: string;
  remaining_count_fp: string;
  initial_count_fp: string;
  taker_fill_cost_dollars: string;
  maker_fill_cost_dollars: string;
  taker_fees_dollars: string;
  maker_fees_dollars: string;
  expiration_time: string | null;
  created_time: string;
  last_update_time: string;
}

/** Kalshi's Fill object, as GET /portfolio/fills returns it. */
export interface KalshiFillRecord {
  fill_id: string;
  exchange_index: number;
  /** Kalshi's legacy name of `fill_id`, the same value. */
  trade_id: string;
  order_id: string;
  ticker: string;
  market_ticker: string;
  side: "yes" | "no";
  action: "buy";
  outcome_side: "yes" | "no";
  book_side: "bid" | "ask";
  count_fp: string;
  yes_price_dollars: string;
  no_price_dollars: string;
  is_taker: boolean;
  fee_cost: string;
  created_time: string;
  ts: number;
}

/** A refusal in Kalshi's error shape: `{ error: { code, message, details? } }` with this HTTP status. */
export interface KalshiRefusal {
  kind: "refused";
  status: number;
  code: string;
  message: string;
  details?: string;
}

export type CreateOutcome = { kind: "created"; status: 201; body: Record<string, unknown> } | KalshiRefusal;

export type CancelOutcome = { kind: "cancelled"; body: Record<string, unknown> } | KalshiRefusal;

interface StoredOrder {
  /** As created, but for its status and remaining count: those are read from the exchange on every view, as a resting order may have been cancelled since. */
  record: Omit<KalshiOrderRecord, "status" | "remaining_count_fp">;
  filled: ShareMicro;
  count: ShareMicro;
}

/**
 * The portfolio side of the Kalshi simulator: turns V2 create-order requests (one YES book, `bid` /
 * `ask`) into IOC buys on the shared exchange, cancels what rests of them, and keeps Kalshi's order
 * and fill records for the order and fills endpoints. Kalshi nets an account's YES against its NO in
 * one signed position per market (`position_fp`: YES held less NO held): a `bid` adds to it, an `ask`
 * takes from it, so selling YES is buying NO, and `reduce_only` caps an order at what it can reduce.
 */
export class KalshiOrderBook {
  private readonly orders: StoredOrder[] = [];
  private readonly byClientId = new Map<string, StoredOrder>();
  private readonly fills: KalshiFillRecord[] = [];

  constructor(
    private readonly exchange: SimExchange,
    private readonly userId: string,
    private readonly now: () => number,
    /** Whether the market takes an order at this YES price (its `price_ranges`). */
    private readonly onGrid: (ticker: string, yesPrice: bigint) => boolean,
    /**
     * Kalshi's historical cutoff now, in ms (`GET /historical/cutoff`): an order that ended before it and a fill
     * made before it are listed by `GET /historical/orders` and `/historical/fills` only.
     */
    private readonly cutoff: () => number,
  ) {}

  create(body: unknown): CreateOutcome {
    const req = parseCreate(body);
    if ("message" in req) return refused(400, "invalid_parameters", req.message);
    if (!this.onGrid(req.ticker, req.price)) return refused(400, "invalid_order", `price ${formatDollars(req.price)} is not on ${req.ticker}'s price grid`);
    if (this.byClientId.has(req.clientOrderId)) {
      return refused(409, "order_already_exists", `client_order_id ${req.clientOrderId} was already used`);
    }
    // selling YES at p or better is buying NO at 1 − p or better: one $1 contract between the two sides
    const outcome: Outcome = req.side === "bid" ? "YES" : "NO";
    const limitPrice = req.side === "bid" ? req.price : ONE - req.price;
    const count = req.reduceOnly ? this.reducible(req.ticker, req.side, req.count) : req.count;
    if (count === 0n) return refused(400, "invalid_order", "reduce_only order has no position to reduce");
    // an IOC order carries no expiry (Kalshi refuses one with expiration_time): it executes whenever it reaches the engine
    const child: ChildOrder = {
      clientOrderId: req.clientOrderId,
      venueMarketId: req.ticker,
      outcome,
      side: "buy",
      limitPrice,
      shares: count,
      expiresAt: Number.POSITIVE_INFINITY,
    };
    const result = this.exchange.place(child);
    if (result.kind === "rejected" && !result.reason.startsWith("no_match")) {
      const code = result.reason.split(":")[0]!;
      return refused(code === "unknown_market" ? 404 : 400, code, result.reason);
    }
    const took = result.kind === "rejected" || result.kind === "unknown" ? undefined : result;
    const at = this.now();
    const orderId = took?.venueOrderId ?? randomUUID();
    const side = outcome === "YES" ? "yes" : "no";
    let filled = 0n;
    let cost = 0n;
    let fees = 0n;
    for (const f of took?.fills ?? []) {
      filled += f.shares;
      cost += (f.price * f.shares) / ONE;
      fees += f.fee;
      this.recordFill(f, orderId, req.ticker, req.side, true, at);
    }
    const stored: StoredOrder = {
      filled,
      count,
      record: {
        order_id: orderId,
        user_id: this.userId,
        client_order_id: req.clientOrderId,
        ticker: req.ticker,
        side,
        action: "buy",
        outcome_side: side,
        book_side: req.side,
        type: "limit",
        yes_price_dollars: formatDollars(req.price),
        no_price_dollars: formatDollars(ONE - req.price),
        fill_count_fp: formatCount(filled),
        initial_count_fp: formatCount(count),
        taker_fill_cost_dollars: formatMicroDollars(cost),
        maker_fill_cost_dollars: "0.0000",
        taker_fees_dollars: formatDollars(fees),
        maker_fees_dollars: "0.0000",
        expiration_time: null,
        created_time: new Date(at).toISOString(),
        last_update_time: new Date(at).toISOString(),
      },
    };
    this.orders.push(stored);
    this.byClientId.set(req.clientOrderId, stored);
    const avgYes = filled === 0n ? undefined : req.side === "bid" ? (cost * ONE) / filled : ONE - (cost * ONE) / filled;
    return {
      kind: "created",
      status: 201,
      body: {
        order_id: orderId,
        client_order_id: req.clientOrderId,
        fill_count: formatCount(filled),
        remaining_count: this.view(stored).remaining_count_fp,
        ...(avgYes === undefined ? {} : { average_fill_price: formatMicroDollars(avgYes), average_fee_paid: formatMicroDollars((fees * ONE) / filled) }),
        ts_ms: at,
      },
    };
  }

  /**
   * Cancel Order (V2): zeroes what rests of the order and answers `{order_id, client_order_id, reduced_by, ts_ms}`.
   * The simulator is one shard, so a cancel without `market_ticker` (Kalshi: shard 0) finds any order.
   * An order with nothing resting (executed, cancelled, or an IOC remainder already killed) cannot be cancelled: 404.
   */
  cancel(orderId: string, marketTicker: string | undefined): CancelOutcome {
    // `market_ticker` routes the cancel to that market's exchange shard: an order of another market is not there
    const o = this.orders.find((x) => x.record.order_id === orderId && (marketTicker === undefined || x.record.ticker === marketTicker));
    const resting = o ? this.exchange.resting(o.record.client_order_id) : 0n;
    if (!o || resting === 0n) return refused(404, "not_found", "order not found");
    this.exchange.cancel(o.record.client_order_id);
    const at = this.now();
    o.record.last_update_time = new Date(at).toISOString();
    return { kind: "cancelled", body: { order_id: orderId, client_order_id: o.record.client_order_id, reduced_by: formatCount(resting), ts_ms: at } };
  }

  /**
   * Another trader takes up to `shares` contracts of what rests of the order, at its limit: the order's fill as the maker
   * (`is_taker` false, no fee), listed from now on. Answers the fill's trade id; undefined when nothing of it rests.
   */
  takeResting(orderId: string, shares: ShareMicro): string | undefined {
    const o = this.orders.find((x) => x.record.order_id === orderId);
    const fill = o && this.exchange.takeResting(o.record.client_order_id, shares);
    if (!o || !fill) return undefined;
    const at = this.now();
    this.recordFill(fill, orderId, o.record.ticker, o.record.book_side, false, at);
    o.filled += fill.shares;
    o.record.fill_count_fp = formatCount(o.filled);
    o.record.last_update_time = new Date(at).toISOString();
    return fill.tradeId;
  }

  /** A fill of the order, as `GET /portfolio/fills` lists it, in the terms of the outcome it bought (`bid`: YES, `ask`: NO). */
  private recordFill(f: VenueFill, orderId: string, ticker: string, bookSide: "bid" | "ask", isTaker: boolean, at: number): void {
    const side = bookSide === "bid" ? "yes" : "no";
    const yesPrice = bookSide === "bid" ? f.price : ONE - f.price;
    this.fills.push({
      fill_id: f.tradeId,
      exchange_index: 0,
      trade_id: f.tradeId,
      order_id: orderId,
      ticker,
      market_ticker: ticker,
      side,
      action: "buy",
      outcome_side: side,
      book_side: bookSide,
      count_fp: formatCount(f.shares),
      yes_price_dollars: formatDollars(yesPrice),
      no_price_dollars: formatDollars(ONE - yesPrice),
      is_taker: isTaker,
      fee_cost: formatDollars(f.fee),
      created_time: new Date(at).toISOString(),
      ts: Math.floor(at / 1000),
    });
  }

  /** A live order (`GET /portfolio/orders/{order_id}`); one past the historical cutoff is not found there (assumed). */
  order(orderId: string): KalshiOrderRecord | undefined {
    const o = this.orders.find((x) => x.record.order_id === orderId);
    const view = o && this.view(o);
    return view && !this.historical(view) ? view : undefined;
  }

  /** Newest first, as Kalshi lists them: the live orders (`GET /portfolio/orders`) or, with `historical`, those past the cutoff (`GET /historical/orders`). */
  listOrders(filter: { ticker?: string; status?: string; minTs?: number; maxTs?: number }, historical = false): KalshiOrderRecord[] {
    return this.orders
      .map((o) => this.view(o))
      .filter(
        (o) =>
          this.historical(o) === historical &&
          (filter.ticker === undefined || o.ticker === filter.ticker) &&
          (filter.status === undefined || o.status === filter.status) &&
          (filter.minTs === undefined || Date.parse(o.created_time) / 1000 >= filter.minTs) &&
          (filter.maxTs === undefined || Date.parse(o.created_time) / 1000 <= filter.maxTs),
      )
      .reverse();
  }

  /** Newest first, as Kalshi lists them: the live fills (`GET /portfolio/fills`) or, with `historical`, those made before the cutoff (`GET /historical/fills`). */
  listFills(filter: { orderId?: string; ticker?: string; minTs?: number; maxTs?: number }, historical = false): KalshiFillRecord[] {
    return this.fills
      .filter(
        (f) =>
          Date.parse(f.created_time) < this.cutoff() === historical &&
          (filter.orderId === undefined || f.order_id === filter.orderId) &&
          (filter.ticker === undefined || f.ticker === filter.ticker) &&
          (filter.minTs === undefined || f.ts >= filter.minTs) &&
          (filter.maxTs === undefined || f.ts <= filter.maxTs),
      )
      .reverse();
  }

  /** Whether an order is past the historical cutoff: it ended (cancelled or executed) before it. Resting orders are always live. */
  private historical(o: KalshiOrderRecord): boolean {
    return o.status !== "resting" && Date.parse(o.last_update_time) < this.cutoff();
  }

  /**
   * The account's position in a market, as Kalshi nets it: contracts of YES held less contracts of NO
   * held (the exchange books an `ask` as a buy of NO).
   */
  private position(ticker: string): bigint {
    return this.exchange.positions.held(OWN_ACCOUNT, ticker, "YES") - this.exchange.positions.held(OWN_ACCOUNT, ticker, "NO");
  }

  /**
   * `reduce_only` (Create Order V2: "the order place count should be capped by the member's current
   * position"): an `ask` reduces a YES position, a `bid` a NO one; 0 when the order would reduce nothing.
   */
  private reducible(ticker: string, side: "bid" | "ask", count: ShareMicro): ShareMicro {
    const position = this.position(ticker);
    const open = side === "ask" ? position : -position;
    if (open <= 0n) return 0n;
    return count < open ? count : open;
  }

  /** The order as Kalshi shows it now: `resting` with its remaining count while part of it rests on the book (the `resting` fault). */
  private view(o: StoredOrder): KalshiOrderRecord {
    const resting = this.exchange.resting(o.record.client_order_id);
    const status = resting > 0n ? "resting" : o.filled === o.count ? "executed" : "canceled";
    return { ...o.record, status, remaining_count_fp: formatCount(resting) };
  }
}

interface CreateRequest {
  ticker: string;
  clientOrderId: string;
  side: "bid" | "ask";
  price: PriceMicro;
  count: ShareMicro;
  reduceOnly: boolean;
}

function parseCreate(body: unknown): CreateRequest | { message: string } {
  if (typeof body !== "object" || body === null) return { message: "body must be an object" };
  const b = body as Record<string, unknown>;
  if (typeof b.ticker !== "string" || b.ticker === "") return { message: "ticker is required" };
  if (b.side !== "bid" && b.side !== "ask") return { message: "side must be bid or ask" };
  if (b.time_in_force !== "immediate_or_cancel") return { message: "this simulator only executes immediate_or_cancel orders" };
  // required in CreateOrderV2Request (kalshi-typescript 3.30.0); the refusal's words are assumed
  if (b.self_trade_prevention_type !== "taker_at_cross" && b.self_trade_prevention_type !== "maker") return { message: "self_trade_prevention_type must be taker_at_cross or maker" };
  if (b.client_order_id !== undefined && (typeof b.client_order_id !== "string" || !/^[-\w:+=/]{1,64}$/.test(b.client_order_id))) {
    return { message: "client_order_id must be 1-64 characters of [A-Za-z0-9_-:+=/]" };
  }
  // Create Order (V2): "The immediate_or_cancel time-in-force value cannot be combined with expiration_time"
  if (b.expiration_time !== undefined) return { message: "immediate_or_cancel cannot be combined with expiration_time" };
  if (b.reduce_only !== undefined && typeof b.reduce_only !== "boolean") return { message: "reduce_only must be a boolean" };
  try {
    const price = parseDollars(b.price, "price");
    const count = parseCount(b.count, "count");
    if (price <= 0n || price >= ONE) return { message: "price must be strictly between 0 and 1" };
    return {
      ticker: b.ticker,
      clientOrderId: (b.client_order_id as string | undefined) ?? randomUUID(),
      side: b.side,
      price,
      count,
      reduceOnly: b.reduce_only === true,
    };
  } catch (err) {
    return { message: err instanceof Error ? err.message : String(err) };
  }
}

function refused(status: number, code: string, message: string, details?: string): KalshiRefusal {
  return { kind: "refused", status, code, message, ...(details === undefined ? {} : { details }) };
}

/** Dollars with up to 6 decimals, as Kalshi's responses emit averages and costs. */
function formatMicroDollars(micro: bigint): string {
  const whole = micro / ONE;
  return `${whole}.${(micro % ONE).toString().padStart(6, "0")}`;
}

