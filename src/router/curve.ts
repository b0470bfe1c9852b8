import { ceilDiv, notional, ONE, type Micro, type PriceMicro, type ShareMicro } from "../domain/money.ts";
import { feeAdjustedPrice, type FeeModel } from "../domain/fees.ts";
import type { Level } from "../domain/types.ts";
import type { VenueQuote } from "./types.ts";

const CENT = 10_000n;
const ONE_2 = ONE * ONE;
const ONE_3 = ONE_2 * ONE;
const ONE_5 = ONE_3 * ONE_2;

/**
 * Every fee model is linear in each level's shares until its one final rounding per order. The
 * router prices hundreds of candidate legs per plan, so it keeps that linear part as prefix sums
 * instead of re-walking the levels through orderFee; curve.test.ts pins `roundFee(model, Σ
 * feePerShare * shares)` to orderFee so the two cannot drift apart.
 */
function feePerShare(model: FeeModel, price: PriceMicro): bigint {
  switch (model.kind) {
    case "kalshi":
      return model.ratePpm * price * (ONE - price); // 1e-24 USDC per micro-share
    case "polymarket": {
      const pq = price * (ONE - price);
      return model.exponent === 1 ? model.ratePpm * pq * ONE_2 : model.ratePpm * pq * pq; // 1e-36
    }
    case "limitless":
      return model.ratePpm * price; // 1e-18
    case "opinion":
      return model.ratePpm * price * price * (ONE - price); // 1e-30
  }
}

export function roundFee(model: FeeModel, raw: bigint): Micro {
  switch (model.kind) {
    case "kalshi":
      return ceilDiv(ceilDiv(raw, ONE_3), CENT) * CENT;
    case "polymarket":
      return (raw / ONE_5 / 10n) * 10n;
    case "limitless":
      return ceilDiv(raw, ONE_2);
    case "opinion":
      return ceilDiv(raw, ONE_2 * ONE_2);
  }
}

/**
 * How far one order's exact cost can sit from its unrounded cost, in micro-USDC: above it by less
 * than the fee's rounding unit plus 1 per level (notional ceilings), below it by less than `below`
 * (Polymarket floors its fee to 10 micro-USDC).
 */
function roundingSpread(model: FeeModel, levels: number): { above: Micro; below: Micro } {
  const unit = model.kind === "kalshi" ? CENT : model.kind === "limitless" || model.kind === "opinion" ? 1n : 0n;
  return { above: unit + BigInt(levels), below: model.kind === "polymarket" ? 10n : 0n };
}

/** 1e-36 USDC per micro-USDC. */
const RAW_PER_MICRO = ONE_5;
/** A price in micro-USDC per share is this many 1e-36 USDC per micro-share. */
const PRICE_TO_RAW = ONE_2 * ONE_2;

/** Converts feePerShare's unit to 1e-36 USDC, the unit slopes are compared in. */
function feeScale(model: FeeModel): bigint {
  switch (model.kind) {
    case "kalshi":
      return ONE_2;
    case "polymarket":
      return 1n;
    case "limitless":
      return ONE_3;
    case "opinion":
      return ONE;
  }
}

/** A price per micro-share as the exact fraction num/den, in 1e-36 USDC. */
export interface Slope {
  num: bigint;
  den: bigint;
}

export function slopeLess(a: Slope, b: Slope): boolean {
  return a.num * b.den < b.num * a.den;
}

/** A run of lots (from, to] of one venue over which the unrounded cost grows at one slope. */
export interface Segment {
  from: bigint;
  to: bigint;
  slope: Slope;
}

/**
 * One venue's book as the router may take it: the levels up to the slippage limit, priced lot by
 * lot exactly as the venue charges one order that takes them (notional rounded up per level, fee
 * on the whole order with the venue's rounding).
 */
export class Curve {
  readonly levels: readonly Level[];
  readonly lot: ShareMicro;
  /** A non-empty leg has at least this many lots. */
  readonly minLots: bigint;
  readonly maxLots: bigint;
  /** Unrounded cost grows by convex pieces; `segments` lists them after the first lot. */
  readonly segments: readonly Segment[];
  private readonly cumShares: bigint[] = [0n];
  private readonly cumNotional: bigint[] = [0n];
  private readonly cumFee: bigint[] = [0n];
  private readonly cumRaw: bigint[] = [0n];
  private readonly unitFee: bigint[] = [];
  private readonly slope: bigint[] = [];
  private minCostMemo: Micro | undefined;
  private minSlopeMemo: Slope | undefined;
  private readonly segmentCostMemo: (Micro | undefined)[] = [];

  /** `limit` null takes the whole book: what the order could have had without a slippage cap. */
  constructor(
    readonly quote: VenueQuote,
    limit: PriceMicro | null,
  ) {
    const levels: Level[] = [];
    // A venue fills a limit order through every level up to its price, so the eligible book is
    // the prefix before the first level over the limit, never a selection that skips one.
    for (const level of quote.asks) {
      if (level.shares <= 0n) continue;
      if (limit !== null && feeAdjustedPrice(quote.feeModel, level) > limit) break;
      levels.push(level);
    }
    this.levels = levels;
    this.lot = quote.lotShares;
    const model = quote.feeModel;
    for (const [i, level] of levels.entries()) {
      const unit = feePerShare(model, level.price);
      this.unitFee.push(unit);
      this.slope.push(level.price * PRICE_TO_RAW + unit * feeScale(model));
      this.cumShares.push(this.cumShares[i]! + level.shares);
      this.cumNotional.push(this.cumNotional[i]! + notional(level.price, level.shares));
      this.cumFee.push(this.cumFee[i]! + unit * level.shares);
      this.cumRaw.push(this.cumRaw[i]! + this.slope[i]! * level.shares);
    }
    const min = ceilDiv(quote.minOrderShares, this.lot);
    this.minLots = min > 1n ? min : 1n;
    this.maxLots = this.cumShares[levels.length]! / this.lot;
    this.segments = this.buildSegments();
  }

  /** Exact cost of the venue's minimum size; every candidate allocation starts from it. */
  get minCost(): Micro {
    this.minCostMemo ??= this.cost(this.minLots);
    return this.minCostMemo;
  }

  /** The unrounded price per micro-share of the minimum size taken whole. */
  get minSlope(): Slope {
    this.minSlopeMemo ??= { num: this.raw(this.minLots), den: this.minLots * this.lot };
    return this.minSlopeMemo;
  }

  /** Exact cost at the end of segment i; every candidate allocation revisits the same ends. */
  segmentCost(i: number): Micro {
    return (this.segmentCostMemo[i] ??= this.cost(this.segments[i]!.to));
  }

  /** Exact cost in micro-USDC of one order for k lots (notional + fee). */
  cost(k: bigint): Micro {
    if (k === 0n) return 0n;
    const s = k * this.lot;
    const i = this.levelOf(s);
    const x = s - this.cumShares[i]!;
    const level = this.levels[i]!;
    const fee = roundFee(this.quote.feeModel, this.cumFee[i]! + this.unitFee[i]! * x);
    return this.cumNotional[i]! + notional(level.price, x) + fee;
  }

  /** The venue's rounded fee on one order for k lots. */
  fee(k: bigint): Micro {
    if (k === 0n) return 0n;
    const s = k * this.lot;
    const i = this.levelOf(s);
    return roundFee(this.quote.feeModel, this.cumFee[i]! + this.unitFee[i]! * (s - this.cumShares[i]!));
  }

  /**
   * The most lots in [from, to] whose cost stays within `budget`, given that `from` does. The
   * unrounded cost brackets the exact one within the rounding spread, so over a run of lots inside
   * one level (linear before rounding) the answer lies in a window of a lot or two, found by
   * division; bisection settles that window, or the whole range when it spans levels.
   */
  mostWithin(from: bigint, to: bigint, budget: Micro): bigint {
    let lo = from;
    let hi = to;
    if (to - from > 2n && this.levelOf((from + 1n) * this.lot) === this.levelOf(to * this.lot)) {
      const rate = this.raw(from + 1n) - this.raw(from);
      const base = this.raw(from);
      const { above, below } = roundingSpread(this.quote.feeModel, this.levels.length);
      const sure = from + ((budget - above) * RAW_PER_MICRO - base) / rate;
      const maybe = from + ((budget + below) * RAW_PER_MICRO - base) / rate + 1n;
      if (sure > lo) lo = sure < to ? sure : to;
      if (maybe < hi) hi = maybe > lo ? maybe : lo;
    }
    while (lo < hi) {
      const mid = (lo + hi + 1n) / 2n;
      if (this.cost(mid) <= budget) lo = mid;
      else hi = mid - 1n;
    }
    return lo;
  }

  /** The level fills of an order for k lots, best first. */
  fills(k: bigint): Level[] {
    const fills: Level[] = [];
    let left = k * this.lot;
    for (const level of this.levels) {
      if (left === 0n) break;
      const take = left < level.shares ? left : level.shares;
      fills.push({ price: level.price, shares: take });
      left -= take;
    }
    return fills;
  }

  /** Unrounded cost of k lots in 1e-36 USDC: a lower envelope of `cost` up to the rounding. */
  raw(k: bigint): bigint {
    if (k === 0n) return 0n;
    const s = k * this.lot;
    const i = this.levelOf(s);
    return this.cumRaw[i]! + this.slope[i]! * (s - this.cumShares[i]!);
  }

  /** Index of the level that holds micro-share s (1-based count s), i.e. cumShares[i] < s <= cumShares[i+1]. */
  private levelOf(s: bigint): number {
    let lo = 0;
    let hi = this.levels.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumShares[mid + 1]! >= s) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /**
   * Runs of whole lots inside one level share that level's slope; a lot that straddles a level
   * boundary is its own segment at its blended slope. Ascending prices make fee-adjusted slopes
   * ascend for every fee rate below 100%, so the unrounded cost is convex over lots.
   */
  private buildSegments(): Segment[] {
    const out: Segment[] = [];
    let j = 0n;
    let i = 0;
    while (j < this.maxLots) {
      const s = j * this.lot;
      while (this.cumShares[i + 1]! <= s) i++;
      const fit = (this.cumShares[i + 1]! - s) / this.lot;
      const run = fit < this.maxLots - j ? fit : this.maxLots - j;
      if (run > 0n) {
        out.push({ from: j, to: j + run, slope: { num: this.slope[i]!, den: 1n } });
        j += run;
      } else {
        out.push({ from: j, to: j + 1n, slope: { num: this.raw(j + 1n) - this.raw(j), den: this.lot } });
        j += 1n;
      }
    }
    return out;
  }
}
