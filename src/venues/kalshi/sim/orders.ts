import { randomUUID } from "node:crypto";
import { ONE, type PriceMicro, type ShareMicro } from "../../../domain/money.ts";
import type { Outcome } from "../../../domain/types.ts";
import type { SimExchange } from "../../simulated/exchange.ts";
import type { ChildOrder } from "../../venue.ts";
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
  created_time: string;
  last_update_time: string;
}

/** Kalshi's Fill object, as GET /portfolio/fills returns it. */
export interface KalshiFillRecord {
  fill_id: string;
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

export type CreateOutcome =
  | { kind: "created"; status: 201; body: Record<string, unknown> }
  | { kind: "refused"; status: number; code: string; message: string };

/**
 * The portfolio side of the Kalshi simulator: turns V2 create-order requests (one YES book, `bid` /
 * `ask`) into IOC buys on the shared exchange and keeps Kalshi's order and fill records for the
 * status and fills endpoints.
 */
export class KalshiOrderBook {
  private readonly orders: KalshiOrderRecord[] = [];
  private readonly byClientId = new Map<string, KalshiOrderRecord>();
  private readonly fills: KalshiFillRecord[] = [];

  constructor(
    private readonly exchange: SimExchange,
    private readonly userId: string,
    private readonly now: () => number,
  ) {}

  create(body: unknown): CreateOutcome {
    const req = parseCreate(body);
    if ("message" in req) return { kind: "refused", status: 400, code: "invalid_parameters", message: req.message };
    if (this.byClientId.has(req.clientOrderId)) {
      return { kind: "refused", status: 409, code: "order_already_exists", message: `client_order_id ${req.clientOrderId} was already used` };
    }
    // selling YES at p or better is buying NO at 1 − p or better: one $1 contract between the two sides
    const outcome: Outcome = req.side === "bid" ? "YES" : "NO";
    const limitPrice = req.side === "bid" ? req.price : ONE - req.price;
    const child: ChildOrder = { clientOrderId: req.clientOrderId, venueMarketId: req.ticker, outcome, side: "buy", limitPrice, shares: req.count };
    const result = this.exchange.place(child);
    if (result.kind === "rejected" && !result.reason.startsWith("no_match")) {
      const code = result.reason.split(":")[0]!;
      return { kind: "refused", status: code === "unknown_market" ? 404 : 400, code, message: result.reason };
    }
    const at = this.now();
    const orderId = result.kind === "filled" || result.kind === "partial" ? result.venueOrderId : randomUUID();
    const taken = result.kind === "filled" || result.kind === "partial" ? result.fills : [];
    const side = outcome === "YES" ? "yes" : "no";
    let filled = 0n;
    let cost = 0n;
    let fees = 0n;
    for (const f of taken) {
      filled += f.shares;
      cost += (f.price * f.shares) / ONE;
      fees += f.fee;
      const yesPrice = outcome === "YES" ? f.price : ONE - f.price;
      this.fills.push({
        fill_id: randomUUID(),
        trade_id: f.tradeId,
        order_id: orderId,
        ticker: req.ticker,
        market_ticker: req.ticker,
        side,
        action: "buy",
        outcome_side: side,
        book_side: req.side,
        count_fp: formatCount(f.shares),
        yes_price_dollars: formatDollars(yesPrice),
        no_price_dollars: formatDollars(ONE - yesPrice),
        is_taker: true,
        fee_cost: formatDollars(f.fee),
        created_time: new Date(at).toISOString(),
        ts: Math.floor(at / 1000),
      });
    }
    const record: KalshiOrderRecord = {
      order_id: orderId,
      user_id: this.userId,
      client_order_id: req.clientOrderId,
      ticker: req.ticker,
      side,
      action: "buy",
      outcome_side: side,
      book_side: req.side,
      type: "limit",
      status: filled === req.count ? "executed" : "canceled",
      yes_price_dollars: formatDollars(req.price),
      no_price_dollars: formatDollars(ONE - req.price),
      fill_count_fp: formatCount(filled),
      remaining_count_fp: "0.00",
      initial_count_fp: formatCount(req.count),
      taker_fill_cost_dollars: formatMicroDollars(cost),
      maker_fill_cost_dollars: "0.0000",
      taker_fees_dollars: formatDollars(fees),
      maker_fees_dollars: "0.0000",
      created_time: new Date(at).toISOString(),
      last_update_time: new Date(at).toISOString(),
    };
    this.orders.push(record);
    this.byClientId.set(req.clientOrderId, record);
    const avgYes = filled === 0n ? undefined : req.side === "bid" ? (cost * ONE) / filled : ONE - (cost * ONE) / filled;
    return {
      kind: "created",
      status: 201,
      body: {
        order_id: orderId,
        client_order_id: req.clientOrderId,
        fill_count: formatCount(filled),
        remaining_count: "0.00",
        ...(avgYes === undefined ? {} : { average_fill_price: formatMicroDollars(avgYes), average_fee_paid: formatMicroDollars((fees * ONE) / filled) }),
        ts_ms: at,
      },
    };
  }

  order(orderId: string): KalshiOrderRecord | undefined {
    return this.orders.find((o) => o.order_id === orderId);
  }

  /** Newest first, as Kalshi lists them. */
  listOrders(filter: { ticker?: string; status?: string; minTs?: number }): KalshiOrderRecord[] {
    return this.orders
      .filter(
        (o) =>
          (filter.ticker === undefined || o.ticker === filter.ticker) &&
          (filter.status === undefined || o.status === filter.status) &&
          (filter.minTs === undefined || Date.parse(o.created_time) / 1000 >= filter.minTs),
      )
      .reverse();
  }

  listFills(filter: { orderId?: string; ticker?: string }): KalshiFillRecord[] {
    return this.fills
      .filter((f) => (filter.orderId === undefined || f.order_id === filter.orderId) && (filter.ticker === undefined || f.ticker === filter.ticker))
      .reverse();
  }
}

interface CreateRequest {
  ticker: string;
  clientOrderId: string;
  side: "bid" | "ask";
  price: PriceMicro;
  count: ShareMicro;
}

function parseCreate(body: unknown): CreateRequest | { message: string } {
  if (typeof body !== "object" || body === null) return { message: "body must be an object" };
  const b = body as Record<string, unknown>;
  if (typeof b.ticker !== "string" || b.ticker === "") return { message: "ticker is required" };
  if (b.side !== "bid" && b.side !== "ask") return { message: "side must be bid or ask" };
  if (b.time_in_force !== "immediate_or_cancel") return { message: "this simulator only executes immediate_or_cancel orders" };
  if (b.client_order_id !== undefined && (typeof b.client_order_id !== "string" || !/^[-\w:+=/]{1,64}$/.test(b.client_order_id))) {
    return { message: "client_order_id must be 1-64 characters of [A-Za-z0-9_-:+=/]" };
  }
  try {
    const price = parseDollars(b.price, "price");
    const count = parseCount(b.count, "count");
    if (price <= 0n || price >= ONE) return { message: "price must be strictly between 0 and 1" };
    return { ticker: b.ticker, clientOrderId: (b.client_order_id as string | undefined) ?? randomUUID(), side: b.side, price, count };
  } catch (err) {
    return { message: err instanceof Error ? err.message : String(err) };
  }
}

/** Dollars with up to 6 decimals, as Kalshi's responses emit averages and costs. */
function formatMicroDollars(micro: bigint): string {
  const whole = micro / ONE;
  return `${whole}.${(micro % ONE).toString().padStart(6, "0")}`;
}

