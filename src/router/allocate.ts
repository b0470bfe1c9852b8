import { mulMicroDown, mulMicroUp, versusAverage, type Curve, type Ladder } from "./curve.ts";

/**
 * Lots per venue (indexed like the curves) with the exact total they cost and can cost at most, in
 * micro-USDC, and the micro-shares they buy: integers, exact in doubles (curve.ts, SAFE).
 */
export interface Allocation {
  lots: number[];
  cost: number;
  /** Σ of the legs' worst cases (all of each leg at its limit): what the budget must cover. */
  worst: number;
  shares: number;
}

/** The two limits every plan keeps: the budget, and the average price cap (null: none). */
export interface Limits {
  budget: number;
  avgCap: number | null;
}

function fits(limits: Limits, worst: number, cost: number, shares: number): boolean {
  return worst <= limits.budget && (limits.avgCap === null || versusAverage(cost, shares, limits.avgCap) <= 0);
}

export function legCount(a: { lots: readonly number[] }): number {
  let legs = 0;
  for (const k of a.lots) if (k > 0) legs++;
  return legs;
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
 * gives a good allocation and a price λ where the budget ran out; then a search over venues
 * (`refine`) of the allocations the Lagrangian bound at λ cannot rule out.
 */
export function bestAllocation(curves: readonly Curve[], limits: Limits): Allocation {
  // One venue: more shares are always better, so its most lots that fit are the optimum.
  if (curves.length === 1) return complete(curves, limits, { lots: [0], cost: 0, worst: 0, shares: 0 });
  const { kept, lambda } = greedy(curves, limits);
  if (lambda === undefined) return kept;
  const refined = refine(curves, limits, kept, lambda);
  return complete(curves, limits, better(refined, kept) ? refined : kept);
}

/**
 * `a`, with each venue in turn taking the most lots more (or, unused, its minimum size and more)
 * that the budget it leaves and the average cap allow. More shares are always better, so a venue
 * that could take another lot marks an allocation short of the optimum; after one pass none can,
 * since the budget left only shrinks.
 */
function complete(curves: readonly Curve[], limits: Limits, a: Allocation): Allocation {
  let { cost, worst, shares } = a;
  const lots = [...a.lots];
  for (let v = 0; v < curves.length; v++) {
    const c = curves[v]!;
    const k = lots[v]!;
    const first = k === 0 ? c.minLots : k + 1;
    const room = limits.budget - worst + c.worst(k);
    if (!c.has(first) || c.worst(k) + c.addsAtLeast(k, first) > room || c.worst(first) > room) continue;
    // Doubling the span until its end no longer fits, then the most within it.
    let to = first;
    while (c.has(to + 1) && c.worst(to + 1) <= room) to = c.mostWithin(to, c.has(2 * to) ? 2 * to : c.maxLots, room, (x) => c.worst(x));
    if (limits.avgCap !== null && !fits(limits, worst - c.worst(k) + c.worst(to), cost - c.cost(k) + c.cost(to), shares + (to - k) * c.lot)) {
      to = underAverageCap(c, k, to, shares - k * c.lot, cost - c.cost(k), limits.avgCap);
      if (to < first) to = k;
    }
    if (to === k) continue;
    cost += c.cost(to) - c.cost(k);
    worst += c.worst(to) - c.worst(k);
    shares += (to - k) * c.lot;
    lots[v] = to;
  }
  return { lots, cost, worst, shares };
}

export interface Piece {
  to: number;
  /** Unrounded value per micro-share, in micro-USDC (USDC per share). */
  slope: number;
  /** A minimum size of more than one lot, taken whole or not at all. */
  whole: boolean;
}

/** The piece after lot k of a venue's book, whichever side: its first piece is its minimum size when that is more than one lot. */
export function nextPiece(c: Ladder, k: number): Piece | undefined {
  if (k === 0 && c.minLots > 1) {
    return c.has(c.minLots) ? { to: c.minLots, slope: c.raw(c.minLots) / (c.minLots * c.lot), whole: true } : undefined;
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
function greedy(curves: readonly Curve[], limits: Limits): { kept: Allocation; lambda: number | undefined } {
  const n = curves.length;
  const lots = new Array<number>(n).fill(0);
  const venueCost = new Array<number>(n).fill(0);
  const venueWorst = new Array<number>(n).fill(0);
  let cost = 0;
  let worst = 0;
  let shares = 0;
  let kept: Allocation = { lots: [...lots], cost: 0, worst: 0, shares: 0 };
  const keep = (a: Allocation) => {
    if (fits(limits, a.worst, a.cost, a.shares) && better(a, kept)) kept = a;
  };
  const heap = new Heap<Next>(cheaper);
  for (let v = 0; v < n; v++) {
    const p = nextPiece(curves[v]!, 0);
    if (p) heap.push({ v, piece: p });
  }
  let lambda: number | undefined;
  let last: number | undefined;
  for (let top = heap.pop(); top !== undefined; top = heap.pop()) {
    const { v, piece } = top;
    const c = curves[v]!;
    const from = lots[v]!;
    const baseWorst = worst - venueWorst[v]!;
    const baseCost = cost - venueCost[v]!;
    // The most this venue's leg may cost at worst: what the other legs leave of the budget.
    const room = limits.budget - baseWorst;
    let to = piece.to;
    last = piece.slope;
    let cut = true;
    // A piece whose first lot (or whole minimum) cannot fit is cut to nothing before it is priced.
    if (venueWorst[v]! + c.addsAtLeast(from, piece.whole ? to : from + 1) > room) to = from;
    else if (c.worst(to) > room) to = piece.whole ? from : c.mostWithin(from, to - 1, room, (k) => c.worst(k));
    else cut = false;
    if (cut) lambda ??= piece.slope;
    const toWorst = c.worst(to);
    const toCost = c.cost(to);
    const toShares = shares + (to - from) * c.lot;
    if (limits.avgCap !== null && !fits(limits, baseWorst + toWorst, baseCost + toCost, toShares)) {
      keep({ lots: [...lots], cost, worst, shares });
      const under = piece.whole ? from : underAverageCap(c, from, to, shares - from * c.lot, baseCost, limits.avgCap);
      if (under > from) {
        const at = [...lots];
        at[v] = under;
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
    if (next) heap.push({ v, piece: next });
  }
  keep({ lots, cost, worst, shares });
  lambda ??= last;
  return { kept, lambda: lambda === undefined || lambda > 0 ? lambda : Number.MIN_VALUE };
}

/**
 * The largest k in (from, most] whose total keeps the average cap, else `from`. What the venue's
 * leg may cost under the cap at k lots only falls as k falls, and the cost is monotone, so any k
 * that keeps the cap costs no more than that allowance at the k just refused: bisecting on it
 * skips whole runs of lots and never skips a k that keeps the cap.
 */
function underAverageCap(c: Curve, from: number, most: number, otherShares: number, otherCost: number, cap: number): number {
  const allowance = (k: number) => mulMicroDown(cap, otherShares + k * c.lot) - otherCost;
  let k = most;
  while (k > from && c.cost(k) > allowance(k)) {
    const ceiling = allowance(k);
    k = ceiling < c.cost(from) ? from : c.mostWithin(from, k - 1, ceiling, (x) => c.cost(x));
  }
  return k;
}

/** How far from the greedy's lots on a wide venue the search looks, besides the ends of levels. */
export const REACH = 6;
/** How many partial allocations the search carries from one venue to the next, once they are too many to carry whole. */
export const BEAM = 64;
/** How many venues, those priced nearest λ where the budget ran out, the search may move off the greedy's lots… */
const MARGIN = 4;
/** …unless no more than this many have a lot: then all of them may. */
const MOVABLE = 8;
/** How many levels before the greedy's last one a wide venue may stop at instead. */
const BACK = 3;
/** A venue whose lot counts allowed by the bound number at most this many offers every one of them. */
const WHOLE = 64;
/** While the partial allocations number at most this many, the search carries them all. */
const EXACT = 4096;

interface Option {
  k: number;
  shares: number;
  cost: number;
  worst: number;
  /** The bound's reduced cost H − h(k) (see refine). */
  r: number;
}

interface State {
  shares: number;
  cost: number;
  worst: number;
  legs: number;
  /** Σ of the venues' reduced costs so far. */
  r: number;
  /** Set by `frontier`. */
  promise: number;
  v: number;
  k: number;
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
 * so an allocation at least as good as g (S ≥ S_g) has Σ_v r_v(k_v) ≤ D = B + Σ b_v + Σ H_v − λ·S_g,
 * where r_v(k) = H_v − h_v(k) ≥ 0: the venues' reduced costs together stay within D, and each
 * venue's allowed lot counts are, per level, an interval.
 *
 * Exhaustive when it can be (docs/router.md, "Exactness"): every venue with a lot may move when at
 * most MOVABLE have one (else the MARGIN whose next lot is priced nearest λ), each offering every
 * lot count the bound allows when those number at most WHOLE; a partial allocation is dropped only
 * when another dominates it (as many shares or more at no higher cost, cost and legs compared in
 * that order, nor worst case: every completion of it is then no better) or its reduced costs pass
 * D; the last venue takes, per partial allocation, the most lots that fit. While the partial
 * allocations number at most EXACT all go on; past that, and whenever a venue is wide or a venue
 * with a lot stays put, the search is bounded: BEAM of them go on, those whose shares plus what
 * their budget left would buy at λ are most. A wide venue offers none, the counts within REACH of
 * g's, the ends of each level's interval (for the level of g's last lot, BACK levels before it and
 * the levels after it the bound allows), and, for each partial allocation, the most lots the budget
 * it leaves allows.
 */
function refine(curves: readonly Curve[], limits: Limits, g: Allocation, lambda: number): Allocation {
  const n = curves.length;
  const H = curves.map((c) => peak(c, lambda));
  const r = (v: number, k: number) => {
    const c = curves[v]!;
    return k === 0 ? H[v]! : H[v]! - (lambda * k * c.lot - c.rawWorst(k));
  };
  let sumH = 0;
  let below = 0;
  for (let v = 0; v < n; v++) {
    sumH += H[v]!;
    below += curves[v]!.below;
  }
  const scale = limits.budget + sumH + lambda * g.shares;
  // The doubles' rounding, far below a micro-USDC, widened to one: the bound only admits more.
  const D = limits.budget + below + sumH - lambda * g.shares + 2 + scale * 1e-9;
  const { moved, all } = movers(curves, g.lots, lambda);
  // The venues that do not move keep g's lots; those with none add only their reduced cost, H_v.
  let base: State = { shares: 0, cost: 0, worst: 0, legs: 0, r: 0, promise: 0, v: -1, k: 0, prev: undefined };
  let idle = 0;
  const choice = new Map<number, Choices>();
  for (let v = 0; v < n; v++) {
    const c = curves[v]!;
    const k = g.lots[v]!;
    const ch = moved.has(v) ? choices(c, k, lambda, H[v]!, D, (x) => r(v, x)) : undefined;
    if (ch && (ch.options.length > 1 || ch.runs.length > 0)) choice.set(v, ch);
    else if (k > 0) base = step(base, v, option(c, k, r(v, k)));
    else idle += H[v]!;
  }
  base = { ...base, r: base.r + idle };
  // The venues with the widest choice last: they fill what the others leave.
  const open = [...choice.keys()].sort((x, y) => width(choice.get(x)!) - width(choice.get(y)!) || x - y);
  // Whole while every venue with a lot may move and lists every count it is allowed, and the partial allocations stay few.
  let whole = all && open.every((v) => choice.get(v)!.runs.length === 0);
  let best: State | undefined;
  /** Whether s is a plan (shares, within the limits), keeping it when it is the best yet. */
  const consider = (s: State): boolean => {
    if (s.shares === 0 || !fits(limits, s.worst, s.cost, s.shares)) return false;
    if (best === undefined || s.shares > best.shares || (s.shares === best.shares && (s.cost < best.cost || (s.cost === best.cost && s.legs < best.legs)))) best = s;
    return true;
  };
  if (open.length === 0) consider(base);
  let states = [base];
  for (const [i, v] of open.entries()) {
    const c = curves[v]!;
    const { options, runs, listed } = choice.get(v)!;
    // The most lots the budget `left` allows in the run where it runs out, unless the options list them.
    const fill = (left: number): Option | undefined => {
      for (const run of runs) {
        if (run.lo.worst > left || run.hi.worst <= left) continue;
        const k = c.mostWithin(run.lo.k, run.hi.k - 1, left, (x) => c.worst(x));
        return listed.has(k) ? undefined : option(c, k, r(v, k));
      }
      return undefined;
    };
    if (i === open.length - 1) {
      // The last venue: more shares always win, so each state takes the most lots that fit and keep the cap.
      for (const st of states) {
        const left = limits.budget - st.worst;
        const extra = fill(left);
        if (extra && consider(step(st, v, extra))) continue;
        let j = options.length - 1;
        while (j >= 0 && options[j]!.worst > left) j--;
        while (j >= 0 && !consider(step(st, v, options[j]!))) j--;
      }
      break;
    }
    const at = { lambda, budget: limits.budget, D };
    const every = whole ? expand(states, v, options, at) : undefined;
    if (every && every.length <= EXACT) states = every;
    else {
      whole = false;
      states = frontier(states, v, options, fill, at);
    }
  }
  const lots = new Array<number>(n).fill(0);
  const found = best as State | undefined;
  for (let s = found; s !== undefined; s = s.prev) if (s.v >= 0) lots[s.v] = s.k;
  return found ? { lots, cost: found.cost, worst: found.worst, shares: found.shares } : { lots, cost: 0, worst: 0, shares: 0 };
}

/** H_v: the most h(k) = λ·k·lot − Wr(k) can be, at the end of a level priced under λ (or 0, no lot). Reads the levels under λ. */
function peak(c: Curve, lambda: number): number {
  c.readBelow(lambda);
  let best = 0;
  for (let i = 0; i < c.depth; i++) {
    const run = c.run(i);
    if (run.to > run.from && run.slope < lambda) {
      const h = run.to * c.lot * (lambda - run.slope);
      if (h > best) best = h;
    }
  }
  return best;
}

/**
 * The venues a search may move off the greedy's `lots`: every venue with a lot when at most MOVABLE
 * have one (`all`), else the MARGIN whose next lot is priced nearest λ (ties to the lower index).
 */
export function movers(curves: readonly Ladder[], lots: readonly number[], lambda: number): { moved: Set<number>; all: boolean } {
  const near: { v: number; distance: number }[] = [];
  for (let v = 0; v < curves.length; v++) {
    const c = curves[v]!;
    if (c.has(1)) near.push({ v, distance: Math.abs(c.priceAt(lots[v]!) - lambda) });
  }
  if (near.length <= MOVABLE) return { moved: new Set(near.map((x) => x.v)), all: true };
  near.sort((x, y) => x.distance - y.distance || x.v - y.v);
  return { moved: new Set(near.slice(0, MARGIN).map((x) => x.v)), all: false };
}

function step(st: State, v: number, o: Option): State {
  return { shares: st.shares + o.shares, cost: st.cost + o.cost, worst: st.worst + o.worst, legs: st.legs + (o.k > 0 ? 1 : 0), r: st.r + o.r, promise: 0, v, k: o.k, prev: st };
}

interface Choices {
  /** Ascending, so their worst cases ascend. */
  options: Option[];
  /** Intervals of counts, all ending in one level, with more between their ends than `options` lists. */
  runs: { lo: Option; hi: Option }[];
  listed: Set<number>;
}

/**
 * One venue's choices (see refine): the lot counts k whose reduced cost is within D. Level by
 * level that is an interval: h(k) = k·lot·(λ − slope) over the lots ending in the level, rising
 * under λ and falling over it, so the levels over λ are read only while their first lot is
 * allowed. At most WHOLE counts in all: every one. More: the venue is wide (see refine).
 */
function choices(c: Curve, g: number, lambda: number, H: number, D: number, r: (k: number) => number): Choices {
  const spans: { lo: number; hi: number; level: number }[] = [];
  let count = H <= D ? 1 : 0;
  const at = g === 0 ? -1 : c.levelOfLots(g);
  for (let i = 0; i < c.depth || c.readNext(); i++) {
    const run = c.run(i);
    if (count > WHOLE && i > at + 1 && run.from > g) break;
    if (run.to <= run.from) continue;
    const rate = c.lot * (lambda - run.slope);
    let lo = run.from + 1 > c.minLots ? run.from + 1 : c.minLots;
    let hi = run.to;
    if (rate > 0) lo = Math.max(lo, Math.ceil((H - D) / rate));
    else if (rate < 0) {
      const most = Math.floor((D - H) / -rate);
      if (most <= run.from) break;
      if (most < hi) hi = most;
    } else if (H > D) continue;
    if (lo > hi) continue;
    spans.push({ lo, hi, level: i });
    count += hi - lo + 1;
  }
  const ks = new Set<number>([g]);
  if (H <= D) ks.add(0);
  const near: { lo: number; hi: number }[] = [];
  if (count <= WHOLE) {
    for (const { lo, hi } of spans) for (let k = lo; k <= hi; k++) ks.add(k);
  } else {
    const first = spans.findIndex((s) => s.level >= at - BACK);
    for (const { lo, hi } of first < 0 ? [] : spans.slice(first)) {
      ks.add(lo);
      ks.add(hi);
      const a = g - REACH > lo ? g - REACH : lo;
      const b = g + REACH < hi ? g + REACH : hi;
      for (let k = a; k <= b; k++) ks.add(k);
      if (hi - lo > b - a + 1) near.push({ lo, hi });
    }
  }
  const options = [...ks].sort((x, y) => x - y).map((k) => option(c, k, r(k)));
  const runs = near.map(({ lo, hi }) => ({ lo: option(c, lo, r(lo)), hi: option(c, hi, r(hi)) }));
  return { options, runs, listed: ks };
}

function option(c: Curve, k: number, r: number): Option {
  return { k, shares: k * c.lot, cost: c.cost(k), worst: c.worst(k), r };
}

function width(o: Choices): number {
  return o.options.length + 64 * o.runs.length;
}

/** What a step of the search keeps within: λ, the budget, and D, the most the venues' reduced costs may add up to. */
interface Bounds {
  lambda: number;
  budget: number;
  D: number;
}

/**
 * Every state taking every option of the venue within the budget and the bound, less those another
 * dominates; undefined when they would pass 4 × EXACT before dominance (too many to carry whole).
 */
function expand(states: readonly State[], v: number, options: readonly Option[], at: Bounds): State[] | undefined {
  let count = 0;
  for (const st of states) {
    const left = at.budget - st.worst;
    for (const o of options) {
      if (o.worst > left) break;
      count++;
    }
  }
  if (count > 4 * EXACT) return undefined;
  const every: State[] = [];
  for (const st of states) {
    const left = at.budget - st.worst;
    for (const o of options) {
      if (o.worst > left) break;
      if (o.r <= at.D - st.r) every.push(step(st, v, o));
    }
  }
  return undominated(every);
}

/** A partial allocation `st` taking option `o` (the j-th of its venue's by value; −1: its fill) on the next venue. */
interface Pick {
  st: State;
  o: Option;
  j: number;
  shares: number;
  cost: number;
  worst: number;
  legs: number;
  /** Shares, plus what the budget they leave would buy at λ. */
  promise: number;
}

/** Most promise first, then lower cost, fewer legs, more shares, lower worst case. */
function ahead(a: Pick, b: Pick): boolean {
  if (a.promise !== b.promise) return a.promise > b.promise;
  if (a.cost !== b.cost) return a.cost < b.cost;
  if (a.legs !== b.legs) return a.legs < b.legs;
  if (a.shares !== b.shares) return a.shares > b.shares;
  return a.worst < b.worst;
}

/**
 * The next venue's step of the search: the `size` partial allocations of most promise — shares,
 * plus what the budget they leave would buy at λ — among those no other dominates (as many shares
 * or more at no higher cost, cost and legs compared in that order, nor worst case) and whose
 * reduced costs stay within D, each a state taking one of the venue's options (or its fill).
 *
 * A state's promise is never above that of one dominating it, and ties only where shares and worst
 * case tie too, so in the order of `ahead` a state comes after every state that dominates it: taken
 * in that order, a state is kept when none kept before dominates it, until `size` are kept. A
 * state's promise is its own plus the option's value λ·shares − worst case, so with the options
 * sorted by value each state's steps come in order, and a heap holding each state's next step
 * yields them all in order while building only those it reaches.
 */
function frontier(
  states: readonly State[],
  v: number,
  options: readonly Option[],
  fill: (left: number) => Option | undefined,
  at: Bounds,
): State[] {
  const { lambda, budget, D } = at;
  const value = (o: Option) => lambda * o.shares - o.worst;
  const byValue = [...options].sort((a, b) => value(b) - value(a) || a.cost - b.cost || a.k - b.k);
  const pick = (st: State, o: Option, j: number): Pick => {
    const shares = st.shares + o.shares;
    const worst = st.worst + o.worst;
    return { st, o, j, shares, cost: st.cost + o.cost, worst, legs: st.legs + (o.k > 0 ? 1 : 0), promise: lambda * shares + (budget - worst) };
  };
  // The state's next step from its j-th option by value on: one within the budget and the bound.
  const after = (st: State, j: number): Pick | undefined => {
    const left = budget - st.worst;
    const slack = D - st.r;
    for (; j < byValue.length; j++) {
      const o = byValue[j]!;
      if (o.worst <= left && o.r <= slack) return pick(st, o, j);
    }
    return undefined;
  };
  const heap = new Heap<Pick>(ahead);
  for (const st of states) {
    const first = after(st, 0);
    if (first) heap.push(first);
    const extra = fill(budget - st.worst);
    if (extra && extra.r <= D - st.r) heap.push(pick(st, extra, -1));
  }
  const kept: State[] = [];
  for (let p = heap.pop(); p !== undefined && kept.length < BEAM; p = heap.pop()) {
    let dominated = false;
    for (const t of kept) {
      if (t.shares >= p.shares && t.worst <= p.worst && (t.cost < p.cost || (t.cost === p.cost && t.legs <= p.legs))) {
        dominated = true;
        break;
      }
    }
    if (!dominated) kept.push(step(p.st, v, p.o));
    if (p.j >= 0) {
      const next = after(p.st, p.j + 1);
      if (next) heap.push(next);
    }
  }
  return kept;
}

/**
 * The states no other dominates, when all are kept. Sorted by shares (most first), each is checked
 * against the staircase of those kept so far: ascending (cost, legs), descending worst case, so the
 * entry with the largest (cost, legs) not above the state's holds the least worst case among all
 * that could dominate it.
 */
function undominated(states: State[]): State[] {
  states.sort((a, b) => b.shares - a.shares || a.cost - b.cost || a.legs - b.legs || a.worst - b.worst);
  const kept: State[] = [];
  const stairs: State[] = [];
  for (const s of states) {
    let lo = 0;
    let hi = stairs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const t = stairs[mid]!;
      if (t.cost < s.cost || (t.cost === s.cost && t.legs <= s.legs)) lo = mid + 1;
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
export function dust(curves: readonly Curve[], a: Allocation, limits: Limits, beyondPrice: number): boolean {
  const left = limits.budget - a.worst;
  for (let v = 0; v < curves.length; v++) {
    const c = curves[v]!;
    // A venue with no tradable size within the limit has no lot to measure dust against.
    if (!c.has(c.minLots)) continue;
    const k = a.lots[v]!;
    const next = k === 0 ? c.minLots : k + 1;
    if (c.has(next)) {
      if (c.addsAtLeast(k, next) > left) continue;
      if (fits(limits, a.worst - c.worst(k) + c.worst(next), a.cost - c.cost(k) + c.cost(next), a.shares + (next - k) * c.lot)) return false;
    } else if (mulMicroUp(beyondPrice, (next - k) * c.lot) <= left) {
      return false;
    }
  }
  return true;
}

/** A binary heap: pop gives the item no other is `before`. */
export class Heap<T> {
  private readonly items: T[] = [];

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  push(item: T): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && this.before(items[l]!, items[m]!)) m = l;
        if (r < items.length && this.before(items[r]!, items[m]!)) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m]!, items[i]!];
        i = m;
      }
    }
    return top;
  }
}

/** A venue and its next piece. */
export interface Next {
  v: number;
  piece: Piece;
}

/** The cheaper piece first (a sell negates its slopes: the better-paying first); ties to the lower venue index. */
export function cheaper(a: Next, b: Next): boolean {
  return a.piece.slope < b.piece.slope || (a.piece.slope === b.piece.slope && a.v < b.v);
}
