import type { Static } from "@sinclair/typebox";
import { ceilDiv, microToNumber, ONE } from "../../domain/money.ts";
import type { OrderIntent } from "../../domain/types.ts";
import type { Plan, SellPlan } from "../../router/index.ts";
import type { Quote } from "./schemas.ts";

/**
 * The JSON of a quote: the plan the router makes for the order on the books of `now`. A buy's plan
 * costs (`cost_usdc`, fees included), a sell's pays (`proceeds_usdc`, after fees).
 */
export function quoteView(intent: OrderIntent, result: Plan | SellPlan, now: number): Static<typeof Quote> {
  const sell = "proceeds" in result;
  return {
    market_id: intent.eventId,
    outcome: intent.outcome,
    side: sell ? "sell" : "buy",
    strategy: intent.strategy,
    time_in_force: intent.timeInForce,
    amount_usdc: sell ? null : microToNumber(intent.amount),
    shares: microToNumber(result.shares),
    average_price: perShare(result.notional, result.shares, sell),
    fee_adjusted_price: perShare(sell ? result.proceeds : result.cost, result.shares, sell),
    notional_usdc: microToNumber(result.notional),
    fees_usdc: microToNumber(result.fees),
    cost_usdc: sell ? null : microToNumber(result.cost),
    proceeds_usdc: sell ? microToNumber(result.proceeds) : null,
    reference_price: microToNumber(result.referencePrice),
    limit_price: microToNumber(result.limitPrice),
    legs: result.legs.map((l) => ({
      venue: l.venue,
      shares: microToNumber(l.shares),
      average_price: perShare(l.notional, l.shares, sell),
      limit_price: microToNumber(l.limitPrice),
      notional_usdc: microToNumber(l.notional),
      fee_usdc: microToNumber(l.fee),
    })),
    quoted_at: new Date(now).toISOString(),
  };
}

/**
 * USDC per share, to the micro-USDC: a buy's rounded up (a share costs the client no less), a sell's
 * rounded down (a share pays the client no more).
 */
function perShare(usdc: bigint, shares: bigint, sell: boolean): number {
  if (shares === 0n) return 0;
  return microToNumber(sell ? (usdc * ONE) / shares : ceilDiv(usdc * ONE, shares));
}
