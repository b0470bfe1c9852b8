import { ceilDiv, notional, ONE, proceedsOf, type Micro, type PriceMicro, type ShareMicro } from "../domain/money.ts";
import { feeAdjustedPrice, sellFeeAdjustedPrice, worstOrderCost, type FeeModel } from "../domain/fees.ts";
import type { Level } from "../domain/types.ts";
import type { SellQuote, VenueQuote } from "./types.ts";

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
 * How far below the unrounded fee one order's rounded fee can sit, in micro-USDC: so how far below
 * its unrounded cost a buy's exact cost (or its worst case) can sit, and how far above its
 * unrounded proceeds a sell's can. Polymarket floors its fee to 10 micro-USDC; every other rounding
 * goes the other way (fees up, a buy's notional up, a sell's down).
 */
export function roundingBelow(model: FeeModel): Micro {
  return model.kind === "polymarket" ? 10n : 0n;
}

/** 1e-36 USDC per micro-USDC. */
export const RAW_PER_MICRO = ONE_5;
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

/** What a curve reads of a venue's quote, whichever side of the book it prices. */
export interface Rules {
  feeModel: FeeModel;
  lotShares: ShareMicro;
  minOrderShares: ShareMicro;
}

/**
 * One side of one venue's book as the router may take it, priced lot by lot exactly as the venue
 * charges one order that takes it: the levels up to the slippage limit (and, for a sell, up to the
 * shares the venue can sell), with prefix sums of shares, notional, the fee's linear part and the
 * unrounded value, in which each level's slope is its price plus (buy) or minus (sell) its fee per
 * share.
 *
 * Levels are read on demand: a plan over a hundred deep books touches only the levels it could
 * take, so its time follows the order, not the depth of the books.
 */
export abstract class Ladder<Q extends Rules = Rules> {
  readonly lot: ShareMicro;
  /** A non-empty leg has at least this many lots. */
  readonly minLots: bigint;
  protected readonly levels: Level[] = [];
  private read = 0;
  private ended = false;
  protected readonly cumShares: bigint[] = [0n];
  protected readonly cumNotional: bigint[] = [0n];
  protected readonly cumFee: bigint[] = [0n];
  protected readonly cumRaw: bigint[] = [0n];
  protected readonly unitFee: bigint[] = [];
  protected readonly slope: bigint[] = [];

  /**
   * `feeSign` adds the fee to the price (a buy pays it) or subtracts it (a sell's proceeds bear it);
   * `cap`, when set, ends the book after that many shares.
   */
  constructor(
    readonly quote: Q,
    private readonly side: readonly Level[],
    private readonly feeSign: 1n | -1n,
    private readonly cap: ShareMicro | null,
  ) {
    this.lot = quote.lotShares;
    const min = ceilDiv(quote.minOrderShares, this.lot);
    this.minLots = min > 1n ? min : 1n;
  }

  /** Whether a level lies past the slippage limit: it and every level after it are not taken. */
  protected abstract beyond(level: Level): boolean;

  /** The notional of `shares` at `price` as this side rounds it. */
  protected abstract notionalOf(price: PriceMicro, shares: ShareMicro): Micro;

  /** Whether the eligible book holds k lots. */
  has(k: bigint): boolean {
    const s = k * this.lot;
    while (this.cumShares[this.levels.length]! < s && this.readLevel());
    return this.cumShares[this.levels.length]! >= s;
  }

  /** Every lot of the eligible book; reads all of it. */
  get maxLots(): bigint {
    while (this.readLevel());
    return this.cumShares[this.levels.length]! / this.lot;
  }

  /**
   * Exact value in micro-USDC of one order for k lots, the book holding them: its notional (per
   * level, as the side rounds it) plus the venue's rounded fee for a buy (what the order costs), less
   * it for a sell (what the order pays).
   */
  protected value(k: bigint): Micro {
    if (k === 0n) return 0n;
    const s = k * this.lot;
    const i = this.levelOf(s);
    const x = s - this.cumShares[i]!;
    const fee = roundFee(this.quote.feeModel, this.cumFee[i]! + this.unitFee[i]! * x);
    return this.cumNotional[i]! + this.notionalOf(this.levels[i]!.price, x) + this.feeSign * fee;
  }

  /** The venue's rounded fee on one order for k lots. */
  fee(k: bigint): Micro {
    if (k === 0n) return 0n;
    const s = k * this.lot;
    const i = this.levelOf(s);
    return roundFee(this.quote.feeModel, this.cumFee[i]! + this.unitFee[i]! * (s - this.cumShares[i]!));
  }

  /** Unrounded value of k lots in 1e-36 USDC (cost for a buy, proceeds for a sell): the rounded value's envelope up to the rounding. */
  raw(k: bigint): bigint {
    if (k === 0n) return 0n;
    const s = k * this.lot;
    const i = this.levelOf(s);
    return this.cumRaw[i]! + this.slope[i]! * (s - this.cumShares[i]!);
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

  /**
   * The run of lots after lot j over which the unrounded value grows at one slope: the whole lots
   * left in j's level, or one lot that straddles a level boundary at its blended slope. Prices in
   * book order make the slopes ascend (asks) or descend (bids) for every fee rate below 100%, so the
   * unrounded cost is convex, and the unrounded proceeds concave, over lots. Undefined past the
   * eligible book.
   */
  segmentAfter(j: bigint): Segment | undefined {
    if (!this.has(j + 1n)) return undefined;
    const s = j * this.lot;
    const i = this.levelOf(s + 1n);
    const run = (this.cumShares[i + 1]! - s) / this.lot;
    if (run > 0n) return { from: j, to: j + run, slope: { num: this.slope[i]!, den: 1n } };
    return { from: j, to: j + 1n, slope: { num: this.raw(j + 1n) - this.raw(j), den: this.lot } };
  }

  /**
   * The lots of this venue that end in each level read so far, as (first, last] runs with the
   * level's slope: a leg whose last lot is in level i is priced at level i in the worst case.
   */
  levelRuns(): { from: bigint; to: bigint; slope: bigint }[] {
    const runs: { from: bigint; to: bigint; slope: bigint }[] = [];
    for (let i = 0; i < this.levels.length; i++) {
      const from = this.cumShares[i]! / this.lot;
      const to = this.cumShares[i + 1]! / this.lot;
      if (to > from) runs.push({ from, to, slope: this.slope[i]! });
    }
    return runs;
  }

  /** The slope (raw per micro-share) of the level lot k+1 would be in, or of the last level held. */
  priceAt(k: bigint): bigint {
    this.has(k + 1n);
    const s = k * this.lot + 1n;
    return this.slope[s > this.cumShares[this.levels.length]! ? this.levels.length - 1 : this.levelOf(s)]!;
  }

  /** Reads the next level and returns its run as levelRuns() would; undefined when the eligible book ends. */
  readRun(): { from: bigint; to: bigint; slope: bigint } | undefined {
    if (!this.readLevel()) return undefined;
    const i = this.levels.length - 1;
    return { from: this.cumShares[i]! / this.lot, to: this.cumShares[i + 1]! / this.lot, slope: this.slope[i]! };
  }

  /** Index of the level that holds micro-share s (1-based count s), i.e. cumShares[i] < s <= cumShares[i+1]. */
  protected levelOf(s: bigint): number {
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
   * Reads the next eligible level. A venue fills a limit order through every level up to its price,
   * so the eligible book is the prefix before the first level past the limit, never a selection
   * that skips one; a cap cuts the level that reaches it and ends the book there.
   */
  protected readLevel(): boolean {
    const model = this.quote.feeModel;
    while (!this.ended) {
      const next = this.side[this.read++];
      if (next === undefined || (next.shares > 0n && this.beyond(next))) {
        this.ended = true;
        break;
      }
      if (next.shares <= 0n) continue;
      const i = this.levels.length;
      let level = next;
      if (this.cap !== null && this.cumShares[i]! + level.shares >= this.cap) {
        this.ended = true;
        if (this.cap <= this.cumShares[i]!) break;
        level = { price: level.price, shares: this.cap - this.cumShares[i]! };
      }
      const unit = feePerShare(model, level.price);
      this.levels.push(level);
      this.unitFee.push(unit);
      this.slope.push(level.price * PRICE_TO_RAW + this.feeSign * unit * feeScale(model));
      this.cumShares.push(this.cumShares[i]! + level.shares);
      this.cumNotional.push(this.cumNotional[i]! + this.notionalOf(level.price, level.shares));
      this.cumFee.push(this.cumFee[i]! + unit * level.shares);
      this.cumRaw.push(this.cumRaw[i]! + this.slope[i]! * level.shares);
      return true;
    }
    return false;
  }
}

/** A venue's asks for a buy: each lot count priced as one order that takes them costs (notional rounded up per level, fee on the whole order). */
export class Curve extends Ladder<VenueQuote> {
  /** `limit` null takes the whole book: what the order could have had without a slippage cap. */
  constructor(
    quote: VenueQuote,
    private readonly limit: PriceMicro | null,
  ) {
    super(quote, quote.asks, 1n, null);
  }

  protected beyond(level: Level): boolean {
    return this.limit !== null && feeAdjustedPrice(this.quote.feeModel, level) > this.limit;
  }

  protected notionalOf(price: PriceMicro, shares: ShareMicro): Micro {
    return notional(price, shares);
  }

  /** Exact cost in micro-USDC of one order for k lots (notional + fee); the book must hold them. */
  cost(k: bigint): Micro {
    return this.value(k);
  }

  /**
   * What one order for k lots can cost at most: all of it at its limit, the price of the last level
   * it takes (and never less than its planned cost). The amount must cover this, since a book that
   * moves before the order arrives can fill it anywhere up to its limit.
   */
  worst(k: bigint): Micro {
    if (k === 0n) return 0n;
    const s = k * this.lot;
    const atLimit = worstOrderCost(this.quote.feeModel, this.levels[this.levelOf(s)]!.price, s);
    const planned = this.cost(k);
    return atLimit > planned ? atLimit : planned;
  }

  /** `worst` before rounding, in 1e-36 USDC: all k lots at the slope of the last level they take. */
  rawWorst(k: bigint): bigint {
    return k === 0n ? 0n : k * this.lot * this.slope[this.levelOf(k * this.lot)]!;
  }

  /** The most lots in [from, to] (held by the book) whose `f` stays within `budget`, given that `from` does; `f` grows with k. */
  mostWithin(from: bigint, to: bigint, budget: Micro, f: (k: bigint) => Micro): bigint {
    let lo = from;
    let hi = to;
    while (lo < hi) {
      const mid = (lo + hi + 1n) / 2n;
      if (f(mid) <= budget) lo = mid;
      else hi = mid - 1n;
    }
    return lo;
  }

  /**
   * The most lots in [from, to] whose worst case stays within `budget`, given that `from` does,
   * when every count in (from, to] ends in one level: there the worst case is the level's slope
   * times the shares, rounded by less than a cent either way, so division narrows the search to a
   * lot or two before bisection settles it.
   */
  mostWorstWithin(from: bigint, to: bigint, budget: Micro): bigint {
    const per = this.lot * this.slope[this.levelOf(to * this.lot)]!;
    const sure = ((budget - CENT - 2n) * RAW_PER_MICRO) / per;
    const maybe = ((budget + CENT) * RAW_PER_MICRO) / per;
    const lo = sure > from ? (sure < to ? sure : to) : from;
    const hi = maybe < to ? (maybe > lo ? maybe : lo) : to;
    return this.mostWithin(this.worst(lo) <= budget ? lo : from, hi, budget, (k) => this.worst(k));
  }

  /** Reads levels while the last one read is priced under `slope` (raw per micro-share). */
  readBelow(slope: bigint): void {
    while ((this.levels.length === 0 || this.slope[this.levels.length - 1]! < slope) && this.readLevel());
  }
}

/**
 * A venue's bids for a sell, up to the shares it can sell (the operator's inventory there, and
 * never more than the order): each lot count priced as what one order selling them pays (notional
 * rounded down per level, less the fee on the whole order). A sell fills at its limit or better,
 * and a better price always nets more (the fee's slope is below 1), so a sell has no worst case
 * to budget for.
 */
export class BidCurve extends Ladder<SellQuote> {
  /** `limit` null takes the whole book: what the order could have had without a slippage floor. */
  constructor(
    quote: SellQuote,
    private readonly limit: PriceMicro | null,
    cap: ShareMicro,
  ) {
    super(quote, quote.bids, -1n, cap);
  }

  protected beyond(level: Level): boolean {
    return this.limit !== null && sellFeeAdjustedPrice(this.quote.feeModel, level) < this.limit;
  }

  protected notionalOf(price: PriceMicro, shares: ShareMicro): Micro {
    return proceedsOf(price, shares);
  }

  /** Exact proceeds in micro-USDC of one order selling k lots (notional less fee); the book must hold them. */
  proceeds(k: bigint): Micro {
    return this.value(k);
  }

  /**
   * The most `raw(k) − λ·shares` can be over every share count of the eligible book, real or not
   * (an upper bound of it over lot counts): the unrounded proceeds are concave, so it peaks at the
   * end of the last level whose slope is above λ. Reads the levels that far.
   */
  peak(lambda: bigint): bigint {
    while ((this.levels.length === 0 || this.slope[this.levels.length - 1]! > lambda) && this.readLevel());
    let best = 0n;
    for (let i = 1; i <= this.levels.length; i++) {
      const h = this.cumRaw[i]! - lambda * this.cumShares[i]!;
      if (h > best) best = h;
    }
    return best;
  }
}
