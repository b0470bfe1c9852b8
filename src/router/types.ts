import type { FeeModel } from "../domain/fees.ts";
import type { Micro, Ppm, PriceMicro, ShareMicro } from "../domain/money.ts";
import type { Level, Strategy, TimeInForce } from "../domain/types.ts";

/** What the router knows of one venue's market at routing time. */
export interface VenueQuote {
  venue: string;
  venueMarketId: string;
  /** Best first (ascending price); price in micro-USDC per share, shares in micro-shares. */
  asks: Level[];
  feeModel: FeeModel;
  tickSize: PriceMicro;
  minOrderShares: ShareMicro;
  lotShares: ShareMicro;
  /** Measured p50 latency of place(); undefined while not measured yet (ranks last for speed). */
  latencyMs: number | undefined;
  /**
   * How long a child order sent now would wait in the venue's queue (its client-side write limit)
   * before it is even sent, in ms; absent: no queue.
   */
  queueDelayMs?: number;
}

export interface PlanRequest {
  /** Budget in micro-USDC, fees included. */
  amount: Micro;
  maxSlippage: Ppm;
  strategy: Strategy;
  timeInForce: TimeInForce;
  /**
   * A fee-adjusted limit fixed earlier, instead of reference × (1 + maxSlippage): re-routing the rest
   * of an order keeps the slippage bound taken when the order was first routed.
   */
  limitPrice?: PriceMicro;
}

/** One child order: the levels it takes on one venue, priced as that venue charges one order. */
export interface Leg {
  venue: string;
  venueMarketId: string;
  /** The worst level price taken: the child order's limit. */
  limitPrice: PriceMicro;
  shares: ShareMicro;
  notional: Micro;
  fee: Micro;
  /** What the child order can cost at most: all of it at its limit (worstOrderCost). */
  worstCost: Micro;
  levels: Level[];
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
  /** Best fee-adjusted ask across venues. */
  referencePrice: PriceMicro;
  /** reference * (1 + maxSlippage), rounded down: no level above it is taken, nor is the average above it. */
  limitPrice: PriceMicro;
}

export type RefusalCode = "slippage_exceeded" | "insufficient_liquidity" | "order_too_small";

export interface Refusal {
  kind: "refusal";
  code: RefusalCode;
  message: string;
  details?: Record<string, unknown>;
}
