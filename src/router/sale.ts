import { BEAM, cheaper, Heap, legCount, movers, nextPiece, REACH, type Next } from "./allocate.ts";
import { versusAverage, type BidCurve } from "./curve.ts";

/** Lots per venue (indexed like the curves) with the micro-shares they sell and the exact micro-USDC they pay (exact in doubles: curve.ts, SAFE). */
export interface Sale {
  lots: number[];
  proceeds: number;
  shares: number;
}

/** The two limits every sell keeps: the shares to sell, and the floor under the average net price per share. */
export interface SaleLimits {
  shares: number;
  floor: number;
}

function fits(limits: SaleLimits, proceeds: number, shares: number): boolean {
  return shares <= limits.shares && versusAverage(proceeds, shares, limits.floor) >= 0;
}

/** More proceeds, then more shares sold, then fewer legs. */
export function betterSale(a: Sale, b: Sale): boolean {
  if (a.proceeds !== b.proceeds) return a.proceeds > b.proceeds;
  if (a.shares !== b.shares) return a.shares > b.shares;
  return legCount(a) < legCount(b);
}

/** Whether `a` sells something and beats `b`, an empty sale counting as none. */
function preferred(a: Sale, b: Sale): boolean {
  return a.shares > 0 && (b.shares === 0 || betterSale(a, b));
}

const NONE = (curves: readonly BidCurve[]): Sale => ({ lots: curves.map(() => 0), proceeds: 0, shares: 0 });

/**
 * The sale with the most proceeds whose shares stay within the order's and whose average net price
 * per share keeps the floor; among those the one selling more shares, then the one with fewer legs.
 *
 * The mirror of bestAllocation for buys, where the shares are the budget and the proceeds what is
 * bought: a greedy merge of every venue's pieces by unrounded net price, best first, until the shares
 * run out at a price λ; then an exact search over venues (`refine`) of every sale the Lagrangian
 * bound at λ cannot rule out, near the greedy's on each venue.
 */
export function bestSale(curves: readonly BidCurve[], limits: SaleLimits): Sale {
  const { kept, lambda } = greedy(curves, limits);
  if (lambda === undefined) return kept;
  const refined = refine(curves, limits, kept, lambda);
  return preferred(refined, kept) ? refined : kept;
}

/**
 * Grows a sale by selling the best-paying unrounded piece of any open venue next (a k-way merge of
 * the venues' concave segments through a heap keyed by the negated slope), each piece as far as the
 * shares left allow. A venue starting at zero must first take its minimum size as one indivisible
 * piece. A venue that cannot take its whole next piece closes: the shares left only shrink. λ is the
 * net price of the first piece the shares cut, or 0 when none was cut (every venue sold all it could,
 * and the shares never bound).
 *
 * The floor binds only through rounding (every eligible level nets at least it before rounding), so
 * growth follows the shares and the result is the best state met that also keeps the floor.
 */
function greedy(curves: readonly BidCurve[], limits: SaleLimits): { kept: Sale; lambda: number | undefined } {
  const lots = curves.map(() => 0);
  const venueProceeds = curves.map(() => 0);
  let proceeds = 0;
  let shares = 0;
  let kept = NONE(curves);
  const keep = (a: Sale) => {
    if (fits(limits, a.proceeds, a.shares) && preferred(a, kept)) kept = a;
  };
  const heap = new Heap<Next>(cheaper);
  const push = (v: number, k: number) => {
    const p = nextPiece(curves[v]!, k);
    if (p) heap.push({ v, piece: { ...p, slope: -p.slope } });
  };
  curves.forEach((_, v) => push(v, 0));
  let lambda: number | undefined;
  let took = false;
  for (let top = heap.pop(); top !== undefined; top = heap.pop()) {
    const { v, piece } = top;
    const c = curves[v]!;
    const from = lots[v]!;
    // The shares this venue may hold: what the others leave of the order.
    const room = limits.shares - shares + from * c.lot;
    let to = piece.to;
    const cut = to * c.lot > room;
    took = true;
    if (cut) {
      lambda ??= -piece.slope;
      to = piece.whole ? from : Math.floor(room / c.lot);
    }
    const toProceeds = c.proceeds(to);
    const next = { proceeds: proceeds - venueProceeds[v]! + toProceeds, shares: shares + (to - from) * c.lot };
    if (!fits(limits, next.proceeds, next.shares)) keep({ lots: [...lots], proceeds, shares });
    proceeds = next.proceeds;
    shares = next.shares;
    lots[v] = to;
    venueProceeds[v] = toProceeds;
    if (!cut) push(v, to);
  }
  keep({ lots, proceeds, shares });
  if (!took) return { kept, lambda: undefined };
  return { kept, lambda: lambda === undefined || lambda < 0 ? 0 : lambda };
}

/** An interval of allowed lot counts this narrow is searched whole. */
const WHOLE = 64;

interface Option {
  k: number;
  shares: number;
  proceeds: number;
}

interface State {
  shares: number;
  proceeds: number;
  legs: number;
  v: number;
  k: number;
  prev: State | undefined;
}

/**
 * A search over venues, one at a time, near the greedy sale g. Per-order fee rounding, minimum sizes
 * and lots of different sizes make the best sale differ from the greedy's by a few lots, by dropping
 * a venue, or by a venue with small lots filling what one with large lots leaves.
 *
 * The Lagrangian bound rules choices out: for any price λ ≥ 0 and any sale of at most S shares, with
 * R_v(k) the unrounded proceeds of k lots on venue v, h_v(k) = R_v(k) − λ·shares_v(k), H_v its
 * maximum and b_v how far above R_v the venue's rounding can go,
 *     P ≤ Σ R_v(k_v) + Σ b_v = Σ h_v(k_v) + λ·Σ shares_v + Σ b_v ≤ Σ H_v − Σ (H_v − h_v(k_v)) + λ·S + Σ b_v,
 * so a sale paying at least g's has H_v − h_v(k_v) ≤ D = Σ H_v + λ·S + Σ b_v − P_g on every venue.
 * h_v is concave, so on each venue that is one interval of lot counts (and none, when H_v ≤ D). Of
 * those, each venue that may move (`movers`: all with a lot when they are few, else those priced
 * nearest λ) offers none, the interval's ends, the counts
 * within REACH of g's (all of them when the interval is narrower than WHOLE), and, for each partial
 * sale, the most lots the shares it leaves allow. Venue by venue only states no other dominates are
 * kept, and, while venues remain to fill what they leave, at most BEAM of them, ranked by their
 * proceeds plus what the shares they leave would fetch at λ.
 */
function refine(curves: readonly BidCurve[], limits: SaleLimits, g: Sale, lambda: number): Sale {
  const H = curves.map((c) => c.peak(lambda));
  const above = curves.reduce((s, c) => s + c.below, 0);
  const sumH = H.reduce((s, x) => s + x, 0);
  // The doubles' rounding, far below a micro-USDC, widened to one: the bound only admits more.
  const D = sumH + lambda * limits.shares + above - g.proceeds + 2 + (sumH + lambda * limits.shares + g.proceeds) * 1e-9;
  const { moved } = movers(curves, g.lots, lambda);
  let base: State = { shares: 0, proceeds: 0, legs: 0, v: -1, k: 0, prev: undefined };
  const choice = new Map<number, Choices>();
  for (const [v, c] of curves.entries()) {
    const k = g.lots[v]!;
    const ch = moved.has(v) ? choices(c, k, lambda, H[v]!, D, limits.shares) : undefined;
    if (ch && (ch.options.length > 1 || ch.run !== undefined)) choice.set(v, ch);
    else if (k > 0) base = step(base, v, option(c, k));
  }
  // The venues with the widest choice last: they fill what the others leave.
  const open = [...choice.keys()].sort((x, y) => width(choice.get(x)!) - width(choice.get(y)!) || x - y);
  const promise = (s: State) => s.proceeds + lambda * (limits.shares - s.shares);
  let states = [base];
  for (const [i, v] of open.entries()) {
    const next: State[] = [];
    const c = curves[v]!;
    const { options, run } = choice.get(v)!;
    const listed = new Set(options.map((o) => o.k));
    for (const st of states) {
      const left = limits.shares - st.shares;
      for (const o of options) {
        if (o.shares > left) break;
        next.push(step(st, v, o));
      }
      if (run === undefined) continue;
      const most = Math.floor(left / c.lot);
      const k = most < run.hi ? most : run.hi;
      if (k >= run.lo && !listed.has(k)) next.push(step(st, v, option(c, k)));
    }
    states = undominated(next);
    // The beam ranks states by what their shares left could still fetch: after the last venue, nothing.
    if (i < open.length - 1 && states.length > BEAM) {
      const ranked = states.map((st) => ({ st, promise: promise(st) }));
      ranked.sort((a, b) => (a.promise !== b.promise ? (a.promise > b.promise ? -1 : 1) : a.st.shares < b.st.shares ? -1 : a.st.shares > b.st.shares ? 1 : 0));
      states = ranked.slice(0, BEAM).map((r) => r.st);
    }
  }
  let best: State | undefined;
  for (const s of states) {
    if (s.shares === 0 || !fits(limits, s.proceeds, s.shares)) continue;
    if (best === undefined || s.proceeds > best.proceeds || (s.proceeds === best.proceeds && (s.shares > best.shares || (s.shares === best.shares && s.legs < best.legs)))) best = s;
  }
  const lots = curves.map(() => 0);
  for (let s = best; s !== undefined; s = s.prev) if (s.v >= 0) lots[s.v] = s.k;
  return best ? { lots, proceeds: best.proceeds, shares: best.shares } : NONE(curves);
}

function step(st: State, v: number, o: Option): State {
  return { shares: st.shares + o.shares, proceeds: st.proceeds + o.proceeds, legs: st.legs + (o.k > 0 ? 1 : 0), v, k: o.k, prev: st };
}

interface Choices {
  /** Ascending, so their shares ascend. */
  options: Option[];
  /** The interval of counts the bound allows, when it holds more than `options` lists. */
  run: { lo: number; hi: number } | undefined;
}

/** One venue's choices (see refine): the lot counts k the bound allows, near the greedy's g. */
function choices(c: BidCurve, g: number, lambda: number, H: number, D: number, shares: number): Choices {
  const ks = new Set<number>([g]);
  if (H <= D) ks.add(0);
  let run: Choices["run"];
  // Never more lots than the order's shares; reading the book no further than that.
  const cap = Math.floor(shares / c.lot);
  const K = c.has(cap) ? cap : c.maxLots;
  if (K >= c.minLots) {
    const h = (k: number) => c.raw(k) - lambda * k * c.lot;
    const least = H - D;
    // h is concave over lots: bisect for its peak, then for each end of the interval where h ≥ H − D.
    let lo = c.minLots;
    let hi = K;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (h(mid + 1) > h(mid)) lo = mid + 1;
      else hi = mid;
    }
    const top = lo;
    if (h(top) >= least) {
      let a = c.minLots;
      let b = top;
      while (a < b) {
        const mid = Math.floor((a + b) / 2);
        if (h(mid) >= least) b = mid;
        else a = mid + 1;
      }
      const first = a;
      a = top;
      b = K;
      while (a < b) {
        const mid = Math.floor((a + b + 1) / 2);
        if (h(mid) >= least) a = mid;
        else b = mid - 1;
      }
      const last = a;
      ks.add(first);
      ks.add(last);
      const from = last - first < WHOLE ? first : g - REACH > first ? g - REACH : first;
      const to = last - first < WHOLE ? last : g + REACH < last ? g + REACH : last;
      for (let k = from; k <= to; k++) ks.add(k);
      if (last - first + 1 > to - from + 1) run = { lo: first, hi: last };
    }
  }
  const options = [...ks]
    .filter((k) => k === 0 || (k >= c.minLots && k <= K))
    .sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))
    .map((k) => option(c, k));
  return { options, run };
}

function option(c: BidCurve, k: number): Option {
  return { k, shares: k * c.lot, proceeds: c.proceeds(k) };
}

function width(o: Choices): number {
  return o.options.length + (o.run === undefined ? 0 : 64);
}

/**
 * The states no other state dominates. A state selling no more shares that pays more dominates (it
 * leaves at least as much of the order to the venues after it, and every completion of it keeps the
 * floor whenever the same completion of the other does); one selling as many for as much with no
 * more legs does too. One selling fewer shares for the same proceeds does not: the other sells more.
 * Sorted by shares, fewest first, the first of each share count is kept when it pays at least as
 * much as every state kept before it.
 */
function undominated(states: State[]): State[] {
  states.sort((a, b) => (a.shares !== b.shares ? (a.shares < b.shares ? -1 : 1) : a.proceeds !== b.proceeds ? (a.proceeds > b.proceeds ? -1 : 1) : a.legs - b.legs));
  const kept: State[] = [];
  let most: number | undefined;
  for (const s of states) {
    const last = kept[kept.length - 1];
    if (last !== undefined && last.shares === s.shares) continue;
    if (most !== undefined && s.proceeds < most) continue;
    kept.push(s);
    most = s.proceeds;
  }
  return kept;
}

/**
 * Whether the shares left after `a` are dust: no venue could sell one more lot (or its minimum size
 * when unused) of them within the floor; a venue whose eligible book or inventory ran out counts as
 * not dust — the order wanted more than it could take.
 */
export function saleDust(curves: readonly BidCurve[], a: Sale, limits: SaleLimits): boolean {
  const left = limits.shares - a.shares;
  for (const [v, c] of curves.entries()) {
    // A venue with no tradable size within the floor has no lot to measure dust against.
    if (!c.has(c.minLots)) continue;
    const k = a.lots[v]!;
    const next = k === 0 ? c.minLots : k + 1;
    if ((next - k) * c.lot > left) continue;
    if (!c.has(next) || fits(limits, a.proceeds - c.proceeds(k) + c.proceeds(next), a.shares + (next - k) * c.lot)) return false;
  }
  return true;
}
