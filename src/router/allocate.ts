import { ceilDiv, ONE, type Micro, type PriceMicro, type ShareMicro } from "../domain/money.ts";
import { RAW_PER_MICRO, roundingBelow, slopeLess, type Curve, type Ladder, type Slope } from "./curve.ts";

/** Lots per venue (indexed like the curves) with the exact total they cost and can cost at most. */
export interface Allocation {
  lots: bigint[];
  cost: Micro;
  /** Σ of the legs' worst cases (all of each leg at its limit): what the budget must cover. */
  worst: Micro;
  shares: ShareMicro;
}

/** The two limits every plan keeps: the budget, and the average price cap (null: none). */
export interface Limits {
  budget: Micro;
  avgCap: PriceMicro | null;
}

function fits(limits: Limits, worst: Micro, cost: Micro, shares: ShareMicro): boolean {
  return worst <= limits.budget && (limits.avgCap === null || cost * ONE <= limits.avgCap * shares);
}

export function legCount(a: { lots: readonly bigint[] }): number {
  return a.lots.filter((k) => k > 0n).length;
}

/** More shares, then lower cost, then fewer legs. */
export function better(a: Allocation, b: Allocation): boolean {
  if (a.shares !== b.shares) return a.shares > b.shares;
  if (a.cost !== b.cost) return a.cost < b.cost;
  return legCount(a) < legCount(b);
}

/**
 * The allocation with the most shares whose legs' worst cases fit the budget and whose average
 * price keeps the cap; among those the cheapest, then the one with fewest legs.
 *
 * Two steps, both polynomial in venues: a greedy merge of every venue's pieces by unrounded price
 * gives a good allocation and a price λ where the budget ran out; then an exact search over
 * venues (`refine`) looks at every allocation the Lagrangian bound at λ cannot rule out, within
 * REACH lots of the greedy's on each venue (plus every run end, where a leg's limit changes).
 */
export function bestAllocation(curves: readonly Curve[], limits: Limits, breadth = 1): Allocation {
  const { kept, lambda } = greedy(curves, limits);
  if (lambda === undefined) return kept;
  const refined = refine(curves, limits, kept, lambda, breadth);
  return better(refined, kept) ? refined : kept;
}

export interface Piece {
  to: bigint;
  slope: Slope;
  /** A minimum size of more than one lot, taken whole or not at all. */
  whole: boolean;
}

/** The piece after lot k of a venue's book, whichever side: its first piece is its minimum size when that is more than one lot. */
export function nextPiece(c: Ladder, k: bigint): Piece | undefined {
  if (k === 0n && c.minLots > 1n) {
    return c.has(c.minLots) ? { to: c.minLots, slope: { num: c.raw(c.minLots), den: c.minLots * c.lot }, whole: true } : undefined;
  }
  const seg = c.segmentAfter(k);
  return seg && { to: seg.to, slope: seg.slope, whole: false };
}

/**
 * Grows an allocation by taking the cheapest unrounded piece of any open venue next (a k-way
 * merge of the venues' convex segments through a heap), each piece as far as the budget allows.
 * A venue starting at zero must first take its minimum size as one indivisible piece. A venue that
 * cannot take its next lot closes: its later pieces would need that lot first. λ is the price of
 * the first piece the budget cut, or of the last piece taken when none was cut.
 *
 * The average-price cap binds only through rounding (every eligible level is under it before
 * rounding), so growth follows the budget and the result is the best state met that also keeps
 * the cap — or, inside the piece that broke it, the most lots that keep it.
 */
function greedy(curves: readonly Curve[], limits: Limits): { kept: Allocation; lambda: bigint | undefined } {
  const lots = curves.map(() => 0n);
  const venueCost = curves.map(() => 0n);
  const venueWorst = curves.map(() => 0n);
  let cost = 0n;
  let worst = 0n;
  let shares = 0n;
  let kept: Allocation = { lots: [...lots], cost: 0n, worst: 0n, shares: 0n };
  const keep = (a: Allocation) => {
    if (fits(limits, a.worst, a.cost, a.shares) && better(a, kept)) kept = a;
  };
  const heap = new PieceHeap();
  for (const [v, c] of curves.entries()) {
    const p = nextPiece(c, 0n);
    if (p) heap.push(v, p);
  }
  let lambda: bigint | undefined;
  let last: Slope | undefined;
  for (let top = heap.pop(); top !== undefined; top = heap.pop()) {
    const { v, piece } = top;
    const c = curves[v]!;
    const from = lots[v]!;
    const baseWorst = worst - venueWorst[v]!;
    const baseCost = cost - venueCost[v]!;
    let to = piece.to;
    let toWorst = c.worst(to);
    const cut = baseWorst + toWorst > limits.budget;
    last = piece.slope;
    if (cut) {
      lambda ??= piece.slope.num / piece.slope.den;
      to = piece.whole ? from : c.mostWithin(from, to - 1n, limits.budget - baseWorst, (k) => c.worst(k));
      toWorst = c.worst(to);
    }
    const toCost = c.cost(to);
    const toShares = shares + (to - from) * c.lot;
    if (limits.avgCap !== null && !fits(limits, baseWorst + toWorst, baseCost + toCost, toShares)) {
      keep({ lots: [...lots], cost, worst, shares });
      const under = piece.whole ? from : underAverageCap(c, from, to, shares - from * c.lot, baseCost, limits.avgCap);
      if (under > from) {
        const at = lots.map((k, u) => (u === v ? under : k));
        keep({ lots: at, cost: baseCost + c.cost(under), worst: baseWorst + c.worst(under), shares: shares + (under - from) * c.lot });
      }
    }
    cost = baseCost + toCost;
    worst = baseWorst + toWorst;
    shares = toShares;
    lots[v] = to;
    venueCost[v] = toCost;
    venueWorst[v] = toWorst;
    const next = cut ? undefined : nextPiece(c, to);
    if (next) heap.push(v, next);
  }
  keep({ lots, cost, worst, shares });
  lambda ??= last && last.num / last.den;
  return { kept, lambda: lambda === 0n ? 1n : lambda };
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
    k = ceiling < c.cost(from) ? from : c.mostWithin(from, k - 1n, ceiling, (x) => c.cost(x));
  }
  return k;
}

/** How far from the greedy's lots on one venue the search looks, besides the ends of levels. */
const REACH = 6n;
/** How many partial allocations the search carries from one venue to the next. */
const BEAM = 64;
/** How many venues, those priced nearest λ where the budget ran out, the search may move off the greedy's lots. */
const MARGIN = 4;
/** How many levels before the greedy's last one on a venue the search may stop at instead. */
const BACK = 3;

interface Option {
  k: bigint;
  shares: ShareMicro;
  cost: Micro;
  worst: Micro;
}

interface State {
  shares: ShareMicro;
  cost: Micro;
  worst: Micro;
  legs: number;
  v: number;
  k: bigint;
  prev: State | undefined;
}

/**
 * A search over venues, one at a time, near the greedy allocation g. Per-order fee rounding,
 * minimum sizes, lots of different sizes, and a leg's worst case jumping when it reaches a new
 * level (all its shares repriced at the new limit) make the best allocation differ from the
 * greedy's by a few lots, by dropping a venue, or by a leg stopping at an earlier level while
 * another takes up the budget that frees.
 *
 * The Lagrangian bound rules choices out: for any price λ > 0 and any allocation within the
 * budget B, with Wr_v(k) the unrounded worst case of k lots on venue v (all at the slope of the
 * last level taken), h_v(k) = λ·shares_v(k) − Wr_v(k), H_v its maximum over k and b_v how far
 * below Wr_v the venue's rounding can go,
 *     λ·S = Σ Wr_v(k_v) + Σ h_v(k_v) ≤ B + Σ b_v + Σ H_v − Σ (H_v − h_v(k_v)),
 * so an allocation at least as good as g has H_v − h_v(k_v) ≤ D = B + Σ b_v + Σ H_v − λ·S_g on
 * every venue: per level, an interval of lot counts. Of those, each of the MARGIN venues priced
 * nearest λ offers none, the counts within REACH of g's, the ends of each level's interval (for
 * the level of g's last lot, BACK levels before it and one after), and, for each partial
 * allocation, the most lots the budget it leaves allows in each of those intervals. Venue by
 * venue only states no other dominates are kept (as many shares or more at no higher cost nor
 * worst case), at most BEAM of them: a dynamic programme over venues, never over sets of them,
 * in O(venues + MARGIN × BEAM × choices).
 */
function refine(curves: readonly Curve[], limits: Limits, g: Allocation, lambda: bigint, breadth: number): Allocation {
  const H = curves.map((c) => {
    c.readBelow(lambda);
    let best = 0n;
    for (const run of c.levelRuns()) if (run.slope < lambda && run.to * c.lot * (lambda - run.slope) > best) best = run.to * c.lot * (lambda - run.slope);
    return best;
  });
  const below = curves.reduce((s, c) => s + roundingBelow(c.quote.feeModel) * RAW_PER_MICRO, 0n);
  const D = limits.budget * RAW_PER_MICRO + below + H.reduce((s, x) => s + x, 0n) - lambda * g.shares;
  const moved = nearest(curves, g.lots, lambda, MARGIN * breadth);
  let base: State = { shares: 0n, cost: 0n, worst: 0n, legs: 0, v: -1, k: 0n, prev: undefined };
  const choice = new Map<number, Choices>();
  for (const [v, c] of curves.entries()) {
    const k = g.lots[v]!;
    const ch = moved.has(v) ? choices(c, k, lambda, H[v]!, D) : undefined;
    if (ch && (ch.options.length > 1 || ch.runs.length > 0)) choice.set(v, ch);
    else if (k > 0n) base = step(base, v, option(c, k));
  }
  // The venues with the widest choice last: they fill what the others leave.
  const open = [...choice.keys()].sort((x, y) => width(choice.get(x)!) - width(choice.get(y)!) || x - y);
  // Shares, plus what the budget left could buy at λ: how promising a partial allocation is.
  const promise = (s: State) => lambda * s.shares + (limits.budget - s.worst) * RAW_PER_MICRO;
  let states = [base];
  for (const v of open) {
    const next: State[] = [];
    const c = curves[v]!;
    const { options, runs } = choice.get(v)!;
    const listed = new Set(options.map((o) => o.k));
    for (const st of states) {
      const left = limits.budget - st.worst;
      for (const o of options) {
        if (o.worst > left) break;
        next.push(step(st, v, o));
      }
      for (const run of runs) {
        if (run.lo.worst > left || run.hi.worst <= left) continue;
        const k = c.mostWorstWithin(run.lo.k, run.hi.k - 1n, left);
        if (!listed.has(k)) next.push(step(st, v, option(c, k)));
      }
    }
    states = undominated(next);
    if (states.length > BEAM * breadth) {
      const ranked = states.map((st) => ({ st, promise: promise(st) }));
      ranked.sort((a, b) => (a.promise !== b.promise ? (a.promise > b.promise ? -1 : 1) : a.st.cost < b.st.cost ? -1 : a.st.cost > b.st.cost ? 1 : 0));
      states = ranked.slice(0, BEAM * breadth).map((r) => r.st);
    }
  }
  let best: State | undefined;
  for (const s of states) {
    if (!fits(limits, s.worst, s.cost, s.shares) || s.shares === 0n) continue;
    if (best === undefined || s.shares > best.shares || (s.shares === best.shares && (s.cost < best.cost || (s.cost === best.cost && s.legs < best.legs)))) best = s;
  }
  const lots = curves.map(() => 0n);
  for (let s = best; s !== undefined; s = s.prev) if (s.v >= 0) lots[s.v] = s.k;
  return best ? { lots, cost: best.cost, worst: best.worst, shares: best.shares } : { lots, cost: 0n, worst: 0n, shares: 0n };
}

/** The `count` venues (of those with any lot) whose next lot after `lots` is priced nearest λ; ties to the lower index. */
export function nearest(curves: readonly Ladder[], lots: readonly bigint[], lambda: bigint, count: number): Set<number> {
  const near = curves.flatMap((c, v) => {
    if (!c.has(1n)) return [];
    const d = c.priceAt(lots[v]!) - lambda;
    return [{ v, distance: d < 0n ? -d : d }];
  });
  near.sort((x, y) => (x.distance !== y.distance ? (x.distance < y.distance ? -1 : 1) : x.v - y.v));
  return new Set(near.slice(0, count).map((x) => x.v));
}

function step(st: State, v: number, o: Option): State {
  return { shares: st.shares + o.shares, cost: st.cost + o.cost, worst: st.worst + o.worst, legs: st.legs + (o.k > 0n ? 1 : 0), v, k: o.k, prev: st };
}

interface Choices {
  /** Ascending, so their worst cases ascend. */
  options: Option[];
  /** Intervals of counts, all ending in one level, with more between their ends than `options` lists. */
  runs: { lo: Option; hi: Option }[];
}

/** One venue's choices (see refine): the lot counts k the bound allows, near the greedy's g. */
function choices(c: Curve, g: bigint, lambda: bigint, H: bigint, D: bigint): Choices {
  const ks = new Set<bigint>([g]);
  const runs: { lo: Option; hi: Option }[] = [];
  if (H <= D) ks.add(0n);
  const add = (from: bigint, to: bigint, slope: bigint) => {
    let lo = from + 1n > c.minLots ? from + 1n : c.minLots;
    let hi = to;
    // h(k) = k·lot·(λ − slope) over the lots ending in this level.
    const rate = c.lot * (lambda - slope);
    if (rate > 0n) {
      const least = ceilDiv(H - D, rate);
      if (least > lo) lo = least;
    } else if (rate < 0n) {
      if (H > D) return;
      const most = (D - H) / -rate;
      if (most < hi) hi = most;
    } else if (H > D) return;
    if (lo > hi) return;
    ks.add(lo);
    ks.add(hi);
    const a = g - REACH > lo ? g - REACH : lo;
    const b = g + REACH < hi ? g + REACH : hi;
    for (let k = a; k <= b; k++) ks.add(k);
    if (hi - lo > b - a + 1n) runs.push({ lo: option(c, lo), hi: option(c, hi) });
  };
  const read = c.levelRuns();
  const at = read.findIndex((r) => g <= r.to);
  for (const run of read.slice(at < 0 ? Math.max(0, read.length - BACK) : Math.max(0, at - BACK))) add(run.from, run.to, run.slope);
  // Levels past those read count only while their first lot is within the bound.
  for (let run = c.readRun(); run !== undefined; run = c.readRun()) {
    if (run.slope > lambda && (H > D || run.from * c.lot * (run.slope - lambda) > D - H)) break;
    add(run.from, run.to, run.slope);
    if (run.from > g) break;
  }
  const options = [...ks]
    .filter((k) => k === 0n || (k >= c.minLots && c.has(k)))
    .sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))
    .map((k) => option(c, k));
  return { options, runs };
}

function option(c: Curve, k: bigint): Option {
  return { k, shares: k * c.lot, cost: c.cost(k), worst: c.worst(k) };
}

function width(o: Choices): number {
  return o.options.length + 64 * o.runs.length;
}

/**
 * The states no other state dominates: as many shares or more at no higher cost nor worst case.
 * Sorted by shares (most first), each is checked against the staircase of those kept so far:
 * ascending cost, descending worst case, so the entry with the largest cost not above the state's
 * holds the least worst case among all that could dominate it.
 */
function undominated(states: State[]): State[] {
  states.sort((a, b) => (a.shares !== b.shares ? (a.shares > b.shares ? -1 : 1) : a.cost !== b.cost ? (a.cost < b.cost ? -1 : 1) : a.worst !== b.worst ? (a.worst < b.worst ? -1 : 1) : a.legs - b.legs));
  const kept: State[] = [];
  const stairs: State[] = [];
  for (const s of states) {
    let lo = 0;
    let hi = stairs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (stairs[mid]!.cost <= s.cost) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0 && stairs[lo - 1]!.worst <= s.worst) continue;
    kept.push(s);
    let end = lo;
    while (end < stairs.length && stairs[end]!.worst >= s.worst) end++;
    stairs.splice(lo, end - lo, s);
  }
  return kept;
}

/**
 * Whether the budget left after `a` is dust: no venue could take one more lot (or its minimum size
 * when unused) within the limits, counting a venue whose book ran out as selling at `beyondPrice`
 * — the order wanted more than the book had.
 */
export function dust(curves: readonly Curve[], a: Allocation, limits: Limits, beyondPrice: PriceMicro): boolean {
  const left = limits.budget - a.worst;
  for (const [v, c] of curves.entries()) {
    // A venue with no tradable size within the limit has no lot to measure dust against.
    if (!c.has(c.minLots)) continue;
    const k = a.lots[v]!;
    const next = k === 0n ? c.minLots : k + 1n;
    if (c.has(next)) {
      if (fits(limits, a.worst - c.worst(k) + c.worst(next), a.cost - c.cost(k) + c.cost(next), a.shares + (next - k) * c.lot)) return false;
    } else if (ceilDiv(beyondPrice * (next - k) * c.lot, ONE) <= left) {
      return false;
    }
  }
  return true;
}

/** A binary min-heap of venues keyed by the slope of their next piece; ties go to the lower venue index. */
export class PieceHeap {
  private readonly items: { v: number; piece: Piece }[] = [];

  push(v: number, piece: Piece): void {
    const items = this.items;
    items.push({ v, piece });
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): { v: number; piece: Piece } | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && this.less(l, m)) m = l;
        if (r < items.length && this.less(r, m)) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m]!, items[i]!];
        i = m;
      }
    }
    return top;
  }

  private less(i: number, j: number): boolean {
    const a = this.items[i]!;
    const b = this.items[j]!;
    if (slopeLess(a.piece.slope, b.piece.slope)) return true;
    return !slopeLess(b.piece.slope, a.piece.slope) && a.v < b.v;
  }
}
