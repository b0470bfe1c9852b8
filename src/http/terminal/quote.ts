import type { Static } from "@sinclair/typebox";
import { AppError } from "../../domain/errors.ts";
import { microToNumber, ONE } from "../../domain/money.ts";
import { validateOrder } from "../../orders/validate.ts";
import type { Quote, QuoteQuery } from "./schemas.ts";
import type { QuoteDeps } from "./deps.ts";

/**
 * Runs the router on the books as they are now, exactly as POST /v1/order would plan the same request,
 * without locking or placing anything. The books move, so the order itself is planned again when sent.
 */
export function quoteOrder(deps: QuoteDeps, query: Static<typeof QuoteQuery>, now: number): Static<typeof Quote> {
  const { intent } = validateOrder({ ...query, side: "buy" }, undefined, deps.limits);
  const event = deps.event(intent.eventId);
  if (!event) throw new AppError("unknown_event", `No event has the id ${JSON.stringify(intent.eventId)}.`, { market_id: intent.eventId });
  if (event.status !== "open") throw new AppError("market_closed", `The event ${event.eventId} is ${event.status}.`, { status: event.status });
  const result = deps.plan(
    { amount: intent.amount, maxSlippage: intent.maxSlippage, strategy: intent.strategy, timeInForce: intent.timeInForce },
    deps.quotes(event, intent.outcome),
  );
  if (result.kind === "refusal") throw new AppError(result.code, result.message, result.details);
  return {
    market_id: intent.eventId,
    outcome: intent.outcome,
    strategy: intent.strategy,
    time_in_force: intent.timeInForce,
    amount_usdc: microToNumber(intent.amount),
    shares: microToNumber(result.shares),
    average_price: perShare(result.notional, result.shares),
    fee_adjusted_price: perShare(result.cost, result.shares),
    notional_usdc: microToNumber(result.notional),
    fees_usdc: microToNumber(result.fees),
    cost_usdc: microToNumber(result.cost),
    reference_price: microToNumber(result.referencePrice),
    limit_price: microToNumber(result.limitPrice),
    legs: result.legs.map((l) => ({
      venue: l.venue,
      shares: microToNumber(l.shares),
      average_price: perShare(l.notional, l.shares),
      limit_price: microToNumber(l.limitPrice),
      notional_usdc: microToNumber(l.notional),
      fee_usdc: microToNumber(l.fee),
    })),
    quoted_at: new Date(now).toISOString(),
  };
}

/** USDC per share, to the micro-USDC; exact division of the integers, rounded down. */
function perShare(usdc: bigint, shares: bigint): number {
  return shares === 0n ? 0 : microToNumber((usdc * ONE) / shares);
}
