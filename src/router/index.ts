import { formatMicro, notional, ONE, type Micro, type PriceMicro } from "../domain/money.ts";
import { feeAdjustedPrice, orderFee } from "../domain/fees.ts";
import { bestAllocation, better, dust, type Allocation, type Limits } from "./allocate.ts";
import { Curve } from "./curve.ts";
import type { Leg, Plan, PlanRequest, Refusal, RefusalCode, VenueQuote } from "./types.ts";

export type { Leg, Plan, PlanRequest, Refusal, RefusalCode, VenueQuote } from "./types.ts";

/**
 * Routes a buy of `req.amount` micro-USDC (fees included) over the venues' asks. Pure and
 * deterministic: the same request and quotes always give the same plan or refusal.
 *
 * A venue fills a child order at any price up to its limit, so books that move between planning
 * and arrival can make a leg cost more than planned, up to all of it at the limit: the plan keeps
 * the sum of those worst cases within the amount, and buys the most shares that allows.
 *
 * FOK counts an order as filled when the budget left is dust: no venue could take one more lot
 * (or its minimum size) within the limits, a venue whose eligible book ran out counting as selling
 * at the limit price. A refusal says `slippage_exceeded` when the whole book, uncapped, could have
 * done it (filled it under FOK, bought anything under IOC), `order_too_small` when the amount
 * cannot buy any venue's minimum size, else `insufficient_liquidity`.
 *
 * A venue's queue is part of the plan: optimize_price leaves out a venue whose queue is longer than
 * MAX_QUEUE_MS when the other venues fill the order as well within the same limit, and
 * optimize_speed ranks venues by queue plus latency.
 */
export function plan(req: PlanRequest, quotes: readonly VenueQuote[]): Plan | Refusal {
  const reference = referencePrice(quotes);
  if (reference === undefined) {
    return refuse("insufficient_liquidity", "No venue has any ask for this outcome.", {});
  }
  const limit = req.limitPrice ?? (reference * (ONE + req.maxSlippage)) / ONE;
  const everywhere = route(req, quotes, reference, limit);
  if (req.strategy !== "optimize_price") return everywhere;
  // A venue whose queue would hold the order back is left out when the others fill the order
  // within the same limit (taken from every venue's best price), or, under IOC, buy as many shares.
  const ready = quotes.filter((q) => (q.queueDelayMs ?? 0) <= MAX_QUEUE_MS);
  if (ready.length === quotes.length || ready.length === 0) return everywhere;
  const filled = route({ ...req, timeInForce: "FOK" }, ready, reference, limit);
  if (filled.kind === "plan") return filled;
  if (req.timeInForce === "IOC") {
    const partial = route(req, ready, reference, limit);
    if (partial.kind === "plan" && (everywhere.kind === "refusal" || partial.shares >= everywhere.shares)) return partial;
  }
  return everywhere;
}

/**
 * How long a venue's queue may hold a child order before optimize_price prefers the other venues:
 * an order waiting longer than this for one venue while another can fill it is an order that set
 * the pace of every order behind it.
 */
export const MAX_QUEUE_MS = 250;

function route(req: PlanRequest, quotes: readonly VenueQuote[], reference: PriceMicro, limit: PriceMicro): Plan | Refusal {
  const ctx: Context = {
    req,
    quotes,
    reference,
    limit,
    curves: quotes.map((q) => new Curve(q, limit)),
    limits: { budget: req.amount, avgCap: limit },
  };
  return req.strategy === "optimize_price" ? routeForPrice(ctx) : routeForSpeed(ctx);
}

/**
 * How much wider the search is when it only decides a refusal's code (could the whole book,
 * uncapped, have filled the order?): a rare path, where the books' wide price gaps make the
 * greedy a poorer start.
 */
const REFUSAL_BREADTH = 16;

interface Context {
  req: PlanRequest;
  quotes: readonly VenueQuote[];
  reference: PriceMicro;
  limit: PriceMicro;
  /** Each venue's book up to the slippage limit. */
  curves: Curve[];
  limits: Limits;
}

function referencePrice(quotes: readonly VenueQuote[]): PriceMicro | undefined {
  let best: PriceMicro | undefined;
  for (const q of quotes) {
    const top = q.asks.find((l) => l.shares > 0n);
    if (top === undefined) continue;
    const p = feeAdjustedPrice(q.feeModel, top);
    if (best === undefined || p < best) best = p;
  }
  return best;
}

function routeForPrice(ctx: Context): Plan | Refusal {
  const a = bestAllocation(ctx.curves, ctx.limits);
  if (a.shares === 0n) return refuseEmpty(ctx);
  if (ctx.req.timeInForce === "FOK" && !dust(ctx.curves, a, ctx.limits, ctx.limit)) {
    const full = fullBook(ctx);
    const fa = bestAllocation(full, fullLimits(ctx), REFUSAL_BREADTH);
    return refuseUnfilled(ctx, fa.shares > 0n && dust(full, fa, fullLimits(ctx), ONE), a);
  }
  return toPlan(ctx, a);
}

/**
 * The fastest venue that fills the whole order alone; ties go to the better fill. Under IOC, when
 * no venue can fill it all, the fastest venue that can fill part of it takes what it can.
 */
function routeForSpeed(ctx: Context): Plan | Refusal {
  const order = ctx.curves.map((_, v) => v).sort((x, y) => latencyRank(ctx.quotes[x]!) - latencyRank(ctx.quotes[y]!) || x - y);
  const alone = (curves: readonly Curve[], v: number, limits: Limits) => {
    const only = [curves[v]!];
    const a = bestAllocation(only, limits);
    const complete = a.shares > 0n && dust(only, a, limits, limits.avgCap ?? ONE);
    return { a: { ...a, lots: curves.map((_, u) => (u === v ? a.lots[0]! : 0n)) }, complete };
  };
  const singles = order.map((v) => ({ v, ...alone(ctx.curves, v, ctx.limits) }));
  const pick = (eligible: typeof singles) => {
    let best: (typeof singles)[number] | undefined;
    for (const s of eligible) {
      if (best === undefined) best = s;
      else if (latencyRank(ctx.quotes[s.v]!) === latencyRank(ctx.quotes[best.v]!) && better(s.a, best.a)) best = s;
    }
    return best;
  };
  const filled = pick(singles.filter((s) => s.complete));
  if (filled) return toPlan(ctx, filled.a);
  if (singles.every((s) => s.a.shares === 0n)) return refuseEmpty(ctx);
  if (ctx.req.timeInForce === "IOC") return toPlan(ctx, pick(singles.filter((s) => s.a.shares > 0n))!.a);
  const full = fullBook(ctx);
  const couldFill = order.some((v) => alone(full, v, fullLimits(ctx)).complete);
  return refuseUnfilled(ctx, couldFill, undefined);
}

/** Expected time to a fill: the wait in the venue's queue, then its measured latency; unmeasured venues rank after every measured one. */
function latencyRank(q: VenueQuote): number {
  return (q.queueDelayMs ?? 0) + (q.latencyMs ?? Number.POSITIVE_INFINITY);
}

/** The whole book with no slippage cap: what tells a slippage refusal from a liquidity one. */
function fullBook(ctx: Context): Curve[] {
  return ctx.quotes.map((q) => new Curve(q, null));
}

function fullLimits(ctx: Context): Limits {
  return { budget: ctx.req.amount, avgCap: null };
}

function refuseEmpty(ctx: Context): Refusal {
  const full = fullBook(ctx);
  const tradable = full.filter((c) => c.has(c.minLots));
  const details = priceDetails(ctx);
  if (tradable.length === 0) {
    return refuse("insufficient_liquidity", "No venue has enough liquidity for its minimum order size.", details);
  }
  const cheapestMin = tradable.map((c) => c.worst(c.minLots)).reduce((m, x) => (x < m ? x : m));
  if (cheapestMin > ctx.req.amount) {
    return refuse("order_too_small", `The amount cannot buy the minimum order size on any venue (needs ${formatMicro(cheapestMin)} USDC).`, {
      ...details,
      min_amount_usdc: formatMicro(cheapestMin),
    });
  }
  if (ctx.req.timeInForce === "FOK") {
    const fa = bestAllocation(full, fullLimits(ctx), REFUSAL_BREADTH);
    if (!dust(full, fa, fullLimits(ctx), ONE)) return refuseUnfilled(ctx, false, undefined);
  }
  return refuse("slippage_exceeded", "No liquidity within the slippage limit can fill any part of the order.", details);
}

function refuseUnfilled(ctx: Context, couldFill: boolean, partial: Allocation | undefined): Refusal {
  const details = { ...priceDetails(ctx), ...(partial ? { fillable_usdc: formatMicro(partial.cost) } : {}) };
  return couldFill
    ? refuse("slippage_exceeded", "The order cannot be filled in full within the slippage limit (fill-or-kill).", details)
    : refuse("insufficient_liquidity", "The books do not hold enough liquidity to fill the order in full (fill-or-kill).", details);
}

function priceDetails(ctx: Context): Record<string, unknown> {
  return {
    amount_usdc: formatMicro(ctx.req.amount),
    reference_price: formatMicro(ctx.reference),
    limit_price: formatMicro(ctx.limit),
  };
}

function refuse(code: RefusalCode, message: string, details: Record<string, unknown>): Refusal {
  return { kind: "refusal", code, message, details };
}

function toPlan(ctx: Context, a: Allocation): Plan {
  const legs: Leg[] = [];
  for (const [v, c] of ctx.curves.entries()) {
    const k = a.lots[v]!;
    if (k === 0n) continue;
    const levels = c.fills(k);
    const limitPrice = levels[levels.length - 1]!.price;
    const legNotional = levels.reduce((sum, l) => sum + notional(l.price, l.shares), 0n);
    const fee = orderFee(c.quote.feeModel, levels);
    legs.push({
      venue: c.quote.venue,
      venueMarketId: c.quote.venueMarketId,
      limitPrice,
      shares: k * c.lot,
      notional: legNotional,
      fee,
      worstCost: c.worst(k),
      levels,
    });
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
    referencePrice: ctx.reference,
    limitPrice: ctx.limit,
  };
}
