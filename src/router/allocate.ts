import { ceilDiv, ONE, type Micro, type PriceMicro, type ShareMicro } from "../domain/money.ts";
import { slopeLess, type Curve, type Segment, type Slope } from "./curve.ts";

/** Lots per venue (indexed like the curves) with the exact total they cost. */
export interface Allocation {
  lots: bigint[];
  cost: Micro;
  shares: ShareMicro;
}

/** The two limits every plan keeps: the budget, and the average price cap (null: none). */
export interface Limits {
  budget: Micro;
  avgCap: PriceMicro | null;
}

function fits(limits: Limits, cost: Micro, shares: ShareMicro): boolean {
  return cost <= limits.budget && (limits.avgCap === null || cost * ONE <= limits.avgCap * shares);
}

function legCount(a: Allocation): number {
  return a.lots.filter((k) => k > 0n).length;
}

/** More shares, then lower cost, then fewer legs. */
export function better(a: Allocation, b: Allocation): boolean {
  if (a.shares !== b.shares) return a.shares > b.shares;
  if (a.cost !== b.cost) return a.cost < b.cost;
  return legCount(a) < legCount(b);
}

/**
 * Grows an allocation by taking the cheapest unrounded piece of any open venue next (a k-way
 * merge of the venues' convex segments), each piece as far as the budget allows. A venue starting
 * at zero must first take its minimum size as one indivisible piece. A venue that cannot take its
 * next lot closes: its later pieces would need that lot first.
 *
 * The average-price cap binds only through rounding (every eligible level is under it before
 * rounding), and more lots dilute rounding, so growth follows the budget alone and the result is
 * the last state that also keeps the cap — or, inside the piece that broke it, the most lots that
 * keep it.
 */
function grow(curves: readonly Curve[], start: readonly bigint[], open: readonly boolean[], limits: Limits): Allocation {
  const lots = [...start];
  const venueCost = curves.map((c, v) => c.cost(lots[v]!));
  let cost = venueCost.reduce((s, x) => s + x, 0n);
  let shares = curves.reduce((s, c, v) => s + lots[v]! * c.lot, 0n);
  const live = curves.map((c, v) => open[v]! && lots[v]! < c.maxLots && c.maxLots >= c.minLots);
  const cursor = curves.map((c, v) => firstSegmentAfter(c.segments, lots[v]!));
  let kept: Allocation = { lots: curves.map(() => 0n), cost: 0n, shares: 0n };
  const keep = (a: Allocation) => {
    if (fits(limits, a.cost, a.shares) && better(a, kept)) kept = a;
  };

  for (;;) {
    let pick = -1;
    let pickSlope: Slope | undefined;
    for (const [v, c] of curves.entries()) {
      if (!live[v]) continue;
      const slope = lots[v] === 0n && c.minLots > 1n ? c.minSlope : c.segments[cursor[v]!]!.slope;
      if (pickSlope === undefined || slopeLess(slope, pickSlope)) {
        pick = v;
        pickSlope = slope;
      }
    }
    if (pick < 0) break;
    const c = curves[pick]!;
    const from = lots[pick]!;
    const whole = from === 0n && c.minLots > 1n;
    const base = cost - venueCost[pick]!;
    let to = whole ? c.minLots : c.segments[cursor[pick]!]!.to;
    let toCost = whole ? c.minCost : c.segmentCost(cursor[pick]!);
    if (base + toCost > limits.budget) {
      live[pick] = false;
      // A minimum size is taken whole or not at all.
      to = whole ? from : c.mostWithin(from, to - 1n, limits.budget - base);
      toCost = c.cost(to);
    }
    const toShares = shares + (to - from) * c.lot;
    if (limits.avgCap !== null && !fits(limits, base + toCost, toShares)) {
      keep({ lots: [...lots], cost, shares });
      const under = whole ? from : underAverageCap(c, from, to, shares - from * c.lot, base, limits.avgCap);
      if (under > from) keep({ lots: lots.map((k, v) => (v === pick ? under : k)), cost: base + c.cost(under), shares: shares + (under - from) * c.lot });
    }
    cost = base + toCost;
    shares = toShares;
    lots[pick] = to;
    venueCost[pick] = toCost;
    if (to === c.maxLots) live[pick] = false;
    while (cursor[pick]! < c.segments.length && c.segments[cursor[pick]!]!.to <= to) cursor[pick]!++;
  }
  keep({ lots, cost, shares });
  return kept;
}

/**
 * The largest k in (from, most] whose total keeps the average cap, else `from`. What the venue's
 * leg may cost under the cap at k lots only falls as k falls, and the cost is monotone, so any k
 * that keeps the cap costs no more than that allowance at the k just refused: bisecting on it
 * skips whole runs of lots and never skips a k that keeps the cap.
 */
function underAverageCap(c: Curve, from: bigint, most: bigint, otherShares: ShareMicro, otherCost: Micro, cap: PriceMicro): bigint {
  const allowance = (k: bigint) => (cap * (otherShares + k * c.lot)) / ONE - otherCost;
  let k = most;
  while (k > from && c.cost(k) > allowance(k)) {
    const ceiling = allowance(k);
    k = ceiling < c.cost(from) ? from : c.mostWithin(from, k - 1n, ceiling);
  }
  return k;
}

function firstSegmentAfter(segments: readonly Segment[], k: bigint): number {
  let i = 0;
  while (i < segments.length && segments[i]!.to <= k) i++;
  return i;
}

/**
 * The best allocation found over all venues: one greedy candidate per set of venues, then a last
 * pass that lets every venue join or grow.
 *
 * Optimality claim — provably within one lot plus the rounding allowance of the optimum; exact
 * with one venue (checked against brute force in optimality.test.ts):
 * let k* be an optimal allocation, T* its venues, S* its shares, and S the plan's. The candidate
 * for T* starts from the minimum sizes of more than one lot and stops growing first when the next
 * lot of some venue w, at unrounded price σ per share, does not fit. Until then it took pieces in
 * ascending unrounded slope — the fractional-knapsack greedy over curves that are convex (ascending
 * asks and any fee rate below 100%) — so no allocation over T* of unrounded cost X buys more than
 * that greedy does with X. A venue's exact cost sits within its rounding allowance ρ_v of the
 * unrounded one (fee rounding: 1¢ on Kalshi, 10 µUSDC on Polymarket, 1 µUSDC on Limitless; plus
 * 1 µUSDC per level of notional ceilings), hence
 *     S* - S  <  lot_w + Σ_{v in T*} ρ_v / σ.
 * With one venue the search is exact: cost is monotone in lots and the largest affordable count
 * is found exactly. On real venue grids the rounding term is under a lot (whole Kalshi contracts
 * against a 1¢ fee rounding; 0.01-share lots against 10 µUSDC), so the plan is within one lot per
 * venue of optimal. Where rounding alone makes the average-price cap bind, `grow` keeps the best
 * state under the cap it passes, which the bound above does not cover. In practice the search is
 * exact far more often than the bound promises: it matched the brute-force optimum (shares, cost
 * and legs) on every one of 6,000 random small books, arbitrary and real grids alike.
 */
export function bestAllocation(curves: readonly Curve[], limits: Limits): Allocation {
  const usable = curves.map((c) => c.maxLots >= c.minLots && c.minCost <= limits.budget);
  let best: Allocation = { lots: curves.map(() => 0n), cost: 0n, shares: 0n };
  // One candidate per set of venues: per-order rounding (Kalshi's cent) can make one more leg
  // dearer than it looks unrounded, which only a candidate without that venue reveals.
  for (let mask = 1; mask < 1 << curves.length; mask++) {
    const open = curves.map((_, v) => (mask & (1 << v)) !== 0);
    if (open.some((o, v) => o && !usable[v])) continue;
    // A minimum of more than one lot makes a curve non-convex from zero, so it is taken up front.
    const start = curves.map((c, v) => (open[v] && c.minLots > 1n ? c.minLots : 0n));
    // Minimum sizes alone may sit over the average cap through rounding, and more lots can bring
    // them back under it, so only the budget rules a start out.
    if (start.reduce((s, k, v) => s + (k > 0n ? curves[v]!.minCost : 0n), 0n) > limits.budget) continue;
    const candidate = grow(curves, start, open, limits);
    if (better(candidate, best)) best = candidate;
  }
  // Lets any venue still join or grow, so that no lot anywhere is left that the budget could buy.
  const filled = grow(
    curves,
    best.lots,
    curves.map(() => true),
    limits,
  );
  return better(filled, best) ? filled : best;
}

/**
 * Whether the budget left after `a` is dust: no venue of `open` could take one more lot (or its
 * minimum size when unused) within the limits, counting a venue whose book ran out as selling at
 * `beyondPrice` — the order wanted more than the book had.
 */
export function exhausted(
  curves: readonly Curve[],
  open: readonly boolean[],
  a: Allocation,
  limits: Limits,
  beyondPrice: PriceMicro,
): boolean {
  const left = limits.budget - a.cost;
  for (const [v, c] of curves.entries()) {
    // A venue with no tradable size within the limit has no lot to measure dust against.
    if (!open[v] || c.maxLots < c.minLots) continue;
    const k = a.lots[v]!;
    const next = k === 0n ? c.minLots : k + 1n;
    const addShares = (next - k) * c.lot;
    if (next <= c.maxLots) {
      if (fits(limits, a.cost - c.cost(k) + c.cost(next), a.shares + addShares)) return false;
    } else if (ceilDiv(beyondPrice * addShares, ONE) <= left) {
      return false;
    }
  }
  return true;
}
