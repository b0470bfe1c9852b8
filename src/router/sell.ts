import { ceilDiv, formatMicro, microToNumber, ONE, proceedsOf, type Micro, type PriceMicro, type ShareMicro } from "../domain/money.ts";
import type { FeeModel } from "../domain/fees.ts";
import type { Level } from "../domain/types.ts";
import { BidCurve, bestMarginal, SAFE } from "./curve.ts";
import { legOf, refuse, type Side } from "./route.ts";
import { bestSale, betterSale, saleDust, type Sale, type SaleLimits } from "./sale.ts";
import type { SellLeg, SellPlan, SellQuote, SellRequest } from "./types.ts";

/**
 * A sell of `req.shares` over the venues' bids, each venue's sell capped by the shares the operator
 * holds there (`SellQuote.inventory`). The plan sells for the most USDC after every venue's fee
 * (per-order rounding and minimum sizes included), then sells the most shares, then in the fewest
 * legs; the reference is the best marginal bid of the venues that can sell (what a share sold there
 * adds to an order's proceeds, `marginalBid`), the floor reference × (1 − maxSlippage), and neither a level under the floor
 * nor an average under it is taken. Without a slippage limit (to tell `slippage_exceeded` from
 * `insufficient_liquidity`) the floor is 0: a bid that nets nothing is no liquidity.
 *
 * FOK counts a sell as filled when the shares left are dust: no venue could sell one more lot (or
 * its minimum size) of them within the floor, a venue whose eligible bids or inventory ran out
 * counting as wanting more. `order_too_small`: the shares are fewer than every venue's minimum size.
 */
export function sellSide(req: SellRequest): Side<SellQuote, BidCurve, Sale, SellPlan> {
  // Above 2^53 the double only approximates the shares, but every sum of shares it is compared with is under SAFE, and stays on the same side of it.
  const limits = (limit: PriceMicro | null): SaleLimits => ({ shares: Number(req.shares), floor: Number(limit ?? 0n) });
  return {
    order: req,
    reference: (quotes) => sellReference(quotes, req.shares),
    noReference: "No venue holds enough of the outcome for its minimum order with a bid that nets anything after fees.",
    limit: (reference) => ceilDiv(reference * (ONE - req.maxSlippage), ONE),
    curve: (q, limit, depth) => new BidCurve(q, limit ?? 0n, q.inventory < BigInt(depth) ? Number(q.inventory) : depth),
    best: (curves, limit) => bestSale(curves, limits(limit)),
    filled: (curves, a, limit) => saleDust(curves, a, limits(limit)),
    better: betterSale,
    tooSmall: (tradable, details) => {
      const leastMin = BigInt(tradable.map((c) => c.minLots * c.lot).reduce((m, x) => (x < m ? x : m)));
      if (leastMin <= req.shares) return undefined;
      return refuse("order_too_small", `The shares are fewer than the minimum order size of every venue (needs ${formatMicro(leastMin)} shares).`, {
        ...details,
        min_shares: microToNumber(leastMin),
      });
    },
    size: { shares: microToNumber(req.shares) },
    fillable: (a) => ({ fillable_shares: microToNumber(BigInt(a.shares)) }),
    plan: toSellPlan,
  };
}

/**
 * The bid a venue's least leg reaches (`Ladder.leastLevel`): its top bid, unless the top level holds
 * less than that leg, which no sale nets alone (docs/decisions.md, "a venue's reference price").
 * Undefined when the venue cannot sell: its bids down to those that net nothing, read no further than
 * the shares held there, do not hold that leg.
 */
export function leastLegBid(q: SellQuote): Level | undefined {
  return leastLegCurve(q).leastLevel();
}

/** A venue's bids down to those that net nothing, read no further than the shares held there. */
function leastLegCurve(q: SellQuote): BidCurve {
  return new BidCurve(q, 0n, q.inventory < BigInt(SAFE) ? Number(q.inventory) : SAFE);
}

/**
 * The best marginal bid (fees.ts `marginalBid`) a least leg reaches over the venues that can sell a
 * least leg of the order's shares (docs/decisions.md, "A venue the order is too small for sets no
 * reference"), over every venue that can sell when the shares reach none's, which is then
 * order_too_small; undefined when none nets more than nothing.
 */
function sellReference(quotes: readonly SellQuote[], shares: ShareMicro): PriceMicro | undefined {
  // A loop, not flatMap, as the buy's referencePrice.
  const reached: { model: FeeModel; price: PriceMicro; sells: boolean }[] = [];
  for (const q of quotes) {
    const c = leastLegCurve(q);
    const level = c.leastLevel();
    if (level) reached.push({ model: q.feeModel, price: level.price, sells: BigInt(c.minLots * c.lot) <= shares });
  }
  const sold = reached.filter((r) => r.sells);
  const best = bestMarginal(sold.length > 0 ? sold : reached, -1);
  return best === undefined || best <= 0n ? undefined : best;
}

function toSellPlan(curves: readonly BidCurve[], a: Sale, referencePrice: PriceMicro, limitPrice: PriceMicro, complete: boolean): SellPlan {
  const legs: SellLeg[] = [];
  for (const [v, c] of curves.entries()) {
    const k = a.lots[v]!;
    if (k === 0) continue;
    const order = legOf(c, k, proceedsOf);
    legs.push({ ...order, proceeds: order.notional - order.fee });
  }
  const sum = (f: (l: SellLeg) => Micro) => legs.reduce((s, l) => s + f(l), 0n);
  const notionalTotal = sum((l) => l.notional);
  const fees = sum((l) => l.fee);
  return { kind: "plan", legs, shares: sum((l) => l.shares), notional: notionalTotal, fees, proceeds: notionalTotal - fees, referencePrice, limitPrice, complete };
}
