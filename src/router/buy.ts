import { formatMicro, microToNumber, notional, ONE, type Micro, type PriceMicro } from "../domain/money.ts";
import type { FeeModel } from "../domain/fees.ts";
import type { Level } from "../domain/types.ts";
import { bestAllocation, better, dust, type Allocation, type Limits } from "./allocate.ts";
import { bestMarginal, Curve, SAFE } from "./curve.ts";
import { legOf, refuse, type Side } from "./route.ts";
import type { Leg, Plan, PlanRequest, VenueQuote } from "./types.ts";

/**
 * A buy of `req.amount` micro-USDC (fees included) over the venues' asks.
 *
 * A venue fills a child order at any price up to its limit, so books that move between planning
 * and arrival can make a leg cost more than planned, up to all of it at the limit: the plan keeps
 * the sum of those worst cases within the amount, and buys the most shares that allows.
 *
 * FOK counts an order as filled when the budget left is dust: no venue could take one more lot
 * (or its minimum size) within the limits, a venue whose eligible book ran out counting as selling
 * at the limit price. `order_too_small`: the amount cannot buy any venue's minimum size.
 */
export function buySide(req: PlanRequest): Side<VenueQuote, Curve, Allocation, Plan> {
  // Above 2^53 the double only approximates the amount, but every worst case it is compared with is under 2^52 (SAFE), and stays on the same side of it.
  const limits = (limit: PriceMicro | null): Limits => ({ budget: Number(req.amount), avgCap: limit === null ? null : Number(limit) });
  return {
    order: req,
    reference: (quotes) => referencePrice(quotes, req.amount),
    noReference: "No venue has asks enough for its minimum order size.",
    limit: (reference) => (reference * (ONE + req.maxSlippage)) / ONE,
    curve: (q, limit, depth) => new Curve(q, limit, depth),
    best: (curves, limit) => bestAllocation(curves, limits(limit)),
    filled: (curves, a, limit) => dust(curves, a, limits(limit), Number(limit ?? ONE)),
    better,
    tooSmall: (tradable, details) => {
      const cheapestMin = BigInt(tradable.map((c) => c.worst(c.minLots)).reduce((m, x) => (x < m ? x : m)));
      if (cheapestMin <= req.amount) return undefined;
      return refuse("order_too_small", `The amount cannot buy the minimum order size on any venue (needs ${formatMicro(cheapestMin)} USDC).`, {
        ...details,
        min_amount_usdc: microToNumber(cheapestMin),
      });
    },
    size: { amount_usdc: microToNumber(req.amount) },
    fillable: (a) => ({ fillable_usdc: microToNumber(BigInt(a.cost)) }),
    plan: toPlan,
  };
}

/**
 * The ask a venue's least leg reaches (`Ladder.leastLevel`): its top ask, unless the top level holds
 * less than that leg, which no buy pays alone (docs/decisions.md, "a venue's reference price").
 * Undefined when the venue's whole book does not hold that leg.
 */
export function leastLegAsk(q: VenueQuote): Level | undefined {
  return new Curve(q, null, SAFE).leastLevel();
}

/**
 * The best marginal ask (fees.ts `marginalAsk`) a least leg reaches over the venues whose least leg
 * the amount buys, all of it at its limit: a venue the order cannot buy on sets no limit for it
 * (docs/decisions.md, "A venue the order is too small for sets no reference"). Over every venue when
 * the amount buys none of them, which is then order_too_small.
 */
function referencePrice(quotes: readonly VenueQuote[], amount: Micro): PriceMicro | undefined {
  // A loop: flatMap's one-element arrays cost ~7 % of a plan over 100 venues (docs/bench.md, twenty-sixth pass).
  const reached: { model: FeeModel; price: PriceMicro; buys: boolean }[] = [];
  for (const q of quotes) {
    const c = new Curve(q, null, SAFE);
    const level = c.leastLevel();
    if (level) reached.push({ model: q.feeModel, price: level.price, buys: BigInt(c.worst(c.minLots)) <= amount });
  }
  const bought = reached.filter((r) => r.buys);
  return bestMarginal(bought.length > 0 ? bought : reached, 1);
}

function toPlan(curves: readonly Curve[], a: Allocation, referencePrice: PriceMicro, limitPrice: PriceMicro, complete: boolean): Plan {
  const legs: Leg[] = [];
  for (const [v, c] of curves.entries()) {
    const k = a.lots[v]!;
    if (k > 0) legs.push({ ...legOf(c, k, notional), worstCost: BigInt(c.worst(k)) });
  }
  const sum = (f: (l: Leg) => Micro) => legs.reduce((s, l) => s + f(l), 0n);
  const notionalTotal = sum((l) => l.notional);
  const fees = sum((l) => l.fee);
  return {
    kind: "plan",
    legs,
    shares: sum((l) => l.shares),
    notional: notionalTotal,
    fees,
    cost: notionalTotal + fees,
    worstCost: sum((l) => l.worstCost),
    referencePrice,
    limitPrice,
    complete,
  };
}
