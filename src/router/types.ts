import type { FeeModel } from "../domain/fees.ts";
import type { Micro, Ppm, PriceMicro, ShareMicro } from "../domain/money.ts";
import type { Level, Strategy, TimeInForce } from "../domain/types.ts";

/** What the router knows of one venue's market at routing time. */
export interface VenueQuote {
  venue: string;
  venueMarketId: string;
  /** Best first (ascending price); price in micro-USDC per share, shares in micro-shares. The venue's book's own: never changed. */
  asks: readonly Level[];
  feeModel: FeeModel;
  tickSize: PriceMicro;
  minOrderShares: ShareMicro;
  lotShares: ShareMicro;
  /** Smallest amount of a child order, `proceedsOf` its limit and shares (money.ts); absent: none. */
  minOrderAmount?: Micro;
  /** Measured p50 latency of place(); undefined while not measured yet (ranks last for speed). */
  latencyMs: number | undefined;
  /**
   * How long a child order sent now would wait in the venue's queue (its client-side write limit)
   * before it is even sent, in ms; absent: no queue.
   */
  queueDelayMs?: number;
}

/** How an order of either side is routed. */
export interface RouteOptions {
  maxSlippage: Ppm;
  strategy: Strategy;
  timeInForce: TimeInForce;
  /**
   * A fee-adjusted limit fixed earlier, instead of the reference maxSlippage away (above it for a
   * buy, below it for a sell): re-routing the rest of an order keeps the slippage bound taken when
   * the order was first routed.
   */
  limitPrice?: PriceMicro;
}

/** A buy: spend up to `amount` over the venues' asks. */
export interface PlanRequest extends RouteOptions {
  side?: "buy";
  /** Budget in micro-USDC, fees included. */
  amount: Micro;
}

/** What the router knows of one venue's market for a sell: its bids, and what can be sold there. */
export interface SellQuote extends Omit<VenueQuote, "asks"> {
  /** Best first (descending price); price in micro-USDC per share, shares in micro-shares. The venue's book's own: never changed. */
  bids: readonly Level[];
  /**
   * Shares of the outcome the operator's account holds on this venue (the app computes it): the
   * most this venue can sell. A venue whose inventory does not reach its minimum order size cannot
   * be sold on.
   */
  inventory: ShareMicro;
}

/** A sell: sell up to `shares` over the venues' bids. */
export interface SellRequest extends RouteOptions {
  side: "sell";
  shares: ShareMicro;
}

/** Either side's request; `side` tells which (a request without one is a buy). */
export type RouteRequest = PlanRequest | SellRequest;

/** One child order of either side: the levels it takes on one venue, priced as that venue charges one order. */
export interface ChildLeg {
  venue: string;
  venueMarketId: string;
  /** The worst level price taken (a buy's highest ask, a sell's lowest bid): the child order's limit. */
  limitPrice: PriceMicro;
  /**
   * The shares the child order delivers: the levels' shares, less on a buy that pays its fee in
   * contracts (Limitless) the contracts withheld. A child order asks for these (ChildOrder.shares).
   */
  shares: ShareMicro;
  /** Σ price × shares over the levels, each rounded to the micro-USDC: up for a buy, down for a sell (of the shares delivered). */
  notional: Micro;
  /** In USDC; a fee in contracts is the value of the contracts withheld (fees.ts, netOfWithheld). */
  fee: Micro;
  /** What the child order takes of the book, best first. */
  levels: Level[];
}

/** One child buy order. */
export interface Leg extends ChildLeg {
  /** What the child order can cost at most: all of it at its limit (worstOrderCost). */
  worstCost: Micro;
}

export interface Plan {
  kind: "plan";
  /** In the order of the quotes given. */
  legs: Leg[];
  shares: ShareMicro;
  notional: Micro;
  fees: Micro;
  /** notional + fees, never more than the amount. */
  cost: Micro;
  /** What the legs can cost at most if the books move before they arrive; never more than the amount. */
  worstCost: Micro;
  /** Best marginal ask (fees.ts `marginalAsk`: a share's price plus the fee it adds to an order) across venues. */
  referencePrice: PriceMicro;
  /** reference * (1 + maxSlippage), rounded down: no level above it is taken, nor is the average above it. */
  limitPrice: PriceMicro;
  /** Whether the plan fills the order: the budget it leaves is dust, as FOK requires (always so under FOK). */
  complete: boolean;
}

/** One child sell order: it sells at its limit or better. */
export interface SellLeg extends ChildLeg {
  /** notional − fee: what the leg pays if the books hold. */
  proceeds: Micro;
}

export interface SellPlan {
  kind: "plan";
  /** In the order of the quotes given. */
  legs: SellLeg[];
  /** Never more than the shares asked. */
  shares: ShareMicro;
  notional: Micro;
  fees: Micro;
  /** notional − fees: the USDC the plan is expected to pay, after every venue's fee. */
  proceeds: Micro;
  /** Best marginal bid (fees.ts `marginalBid`: a share's price less the fee it adds to an order) across the venues that can sell. */
  referencePrice: PriceMicro;
  /** reference × (1 − maxSlippage), rounded up: no level nets under it, nor does the average. */
  limitPrice: PriceMicro;
  /** Whether the plan fills the order: the shares it leaves are dust, as FOK requires (always so under FOK). */
  complete: boolean;
}

export type RefusalCode = "slippage_exceeded" | "insufficient_liquidity" | "order_too_small" | "venue_unavailable";

export interface Refusal {
  kind: "refusal";
  code: RefusalCode;
  message: string;
  details?: Record<string, unknown>;
}
