import { ceilDiv, ONE, proceedsOf, type Micro, type PriceMicro, type ShareMicro } from "../domain/money.ts";
import { deliveredShares, feeInShares, marginalAsk, marginalBid, minimumFee, polymarketCurve, worstFee, type FeeModel } from "../domain/fees.ts";
import type { Level } from "../domain/types.ts";
import type { SellQuote, VenueQuote } from "./types.ts";

const CENT = 10_000n;
const ONE_2 = ONE * ONE;
const ONE_3 = ONE_2 * ONE;
const ONE_5 = ONE_3 * ONE_2;
const M = 1_000_000;

/**
 * The search counts shares and money in doubles, which hold every integer below 2^53 exactly. A
 * routing of n venues reads no venue's book past ⌊SAFE / n⌋ micro-shares (22 million shares with
 * 100 venues, deeper than any book the venues list), so every count of shares any allocation
 * makes stays under SAFE; a share costs less than one USDC plus its fee, so no cost, worst case or
 * proceeds reaches 2^53 either, and sums of two of them stay exact. One worst case can: a Polymarket
 * buy on a market of fee exponent 0 locks up to 10^4 times its notional in fee (fees.ts `worstFee`);
 * its double is then still past any budget, which is all the search compares it with.
 */
export const SAFE = 2 ** 51;

/**
 * ⌈a·s / 10^6⌉ for integers a ≥ 0 and 0 ≤ s < 2^51. Below 2^22 for a (every price, and every limit
 * short of four USDC a share): s = q·10^6 + r, a·q < 2^53 and a·r < 2^42 are exact, and a·r/10^6
 * is an integer or at least 10^-6 from one, more than its rounding moves it. Larger a, in bigints.
 */
export function mulMicroUp(a: number, s: number): number {
  if (a >= 2 ** 22) return Number(ceilDiv(BigInt(a) * BigInt(s), ONE));
  const r = s % M;
  return a * ((s - r) / M) + Math.ceil((a * r) / M);
}

/** ⌊a·s / 10^6⌋, as mulMicroUp. */
export function mulMicroDown(a: number, s: number): number {
  if (a >= 2 ** 22) return Number((BigInt(a) * BigInt(s)) / ONE);
  const r = s % M;
  return a * ((s - r) / M) + Math.floor((a * r) / M);
}

/**
 * The sign of value·10^6 − price·shares, exactly: whether value / shares sits under, at or over the
 * price (micro-USDC per share). Doubles decide when the two sides are apart, integers when close.
 */
export function versusAverage(value: number, shares: number, price: number): number {
  const lhs = value * M;
  const rhs = price * shares;
  if (lhs < rhs * (1 - 1e-12)) return -1;
  if (lhs > rhs * (1 + 1e-12)) return 1;
  const d = BigInt(value) * ONE - BigInt(price) * BigInt(shares);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

/**
 * Every fee model is linear in each level's shares until its one final rounding per order. The
 * router prices many candidate legs per plan, so it keeps that linear part as exact prefix sums
 * instead of re-walking the levels through orderFee; curve.test.ts pins `roundFee(model, Σ
 * feePerShare * shares)` to orderFee so the two cannot drift apart.
 */
function feePerShare(model: FeeModel, price: PriceMicro): bigint {
  switch (model.kind) {
    case "kalshi":
      return model.ratePpm * price * (ONE - price); // 1e-24 USDC per micro-share
    case "polymarket":
      return model.ratePpm * polymarketCurve(model, price); // 1e-36
    case "limitless":
      return model.ratePpm * price; // 1e-18
    case "opinion":
      return model.ratePpm * price * price * (ONE - price); // 1e-30
  }
}

/** feePerShare's unit in micro-USDC: what turns it into the fee in micro-USDC per micro-share. */
function feeUnit(model: FeeModel): number {
  switch (model.kind) {
    case "kalshi":
      return 1e-18;
    case "polymarket":
      return 1e-30;
    case "limitless":
      return 1e-12;
    case "opinion":
      return 1e-24;
  }
}

export function roundFee(model: FeeModel, raw: bigint): bigint {
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
export function roundingBelow(model: FeeModel): number {
  return model.kind === "polymarket" ? 10 : 0;
}

/** How far above the unrounded fee one order's rounded fee can sit, in micro-USDC: Kalshi rounds up to the cent. */
function roundingAbove(model: FeeModel): number {
  return model.kind === "kalshi" ? 10_001 : model.kind === "polymarket" ? 0 : 1;
}

/** The fee per micro-share in micro-USDC, before rounding, of a level whose feePerShare is `unit`. */
function feeRate(model: FeeModel, unit: bigint): number {
  return model.ratePpm === 0n ? 0 : Number(unit) * feeUnit(model);
}

/**
 * Where a share's marginal price can lie (fees.ts: a buy's `marginalAsk`, `sign` +1, or a sell's
 * `marginalBid`, −1), found from the unrounded fee per share `rate`: its rounding to the micro-USDC
 * and the doubles' own keep it within `spread` of `mid`.
 */
function marginalRange(model: FeeModel, price: PriceMicro, rate: number, sign: 1 | -1): { mid: number; spread: number } {
  // a buy that pays its fee in contracts: price / (1 − rate), rounded up once
  const mid = feeInShares(model, sign > 0 ? "buy" : "sell") ? (Number(price) * M) / (M - Number(model.ratePpm)) : Number(price) + sign * rate * M;
  return { mid, spread: 2 + Math.abs(mid) * 1e-12 };
}

function marginal(model: FeeModel, price: PriceMicro, sign: 1 | -1): PriceMicro {
  return sign > 0 ? marginalAsk(model, price) : marginalBid(model, price);
}

/**
 * The best of the marginal prices of shares at `prices` (`sign` +1: a buy's, the lowest; −1: a
 * sell's, the highest), exactly; undefined for none. Only the prices whose range reaches the best
 * range's near end are priced exactly: usually one.
 */
export function bestMarginal(prices: readonly { model: FeeModel; price: PriceMicro }[], sign: 1 | -1): PriceMicro | undefined {
  const ranges = prices.map(({ model, price }) => marginalRange(model, price, feeRate(model, feePerShare(model, price)), sign));
  let reach = Infinity;
  for (const { mid, spread } of ranges) reach = Math.min(reach, sign * mid + spread);
  let best: PriceMicro | undefined;
  for (const [i, { model, price }] of prices.entries()) {
    const { mid, spread } = ranges[i]!;
    if (sign * mid - spread > reach) continue;
    const p = marginal(model, price, sign);
    if (best === undefined || (sign > 0 ? p < best : p > best)) best = p;
  }
  return best;
}

/** A run of lots (from, to] of one venue over which the unrounded value grows at one slope (USDC per share). */
export interface Segment {
  from: number;
  to: number;
  slope: number;
}

/** What a curve reads of a venue's quote, whichever side of the book it prices. */
export interface Rules {
  feeModel: FeeModel;
  lotShares: ShareMicro;
  minOrderShares: ShareMicro;
  minOrderAmount?: Micro;
}

/**
 * One side of one venue's book as the router may take it, priced lot by lot exactly as the venue
 * charges one order that takes it: the levels up to the slippage limit (and, for a sell, up to the
 * shares the venue can sell), with prefix sums of shares, notional and the fee's linear part, and
 * the unrounded value, in which each level's slope is its price plus (buy) or minus (sell) its fee
 * per share.
 *
 * Shares (micro-shares) and money (micro-USDC) are integers held exactly in doubles (see SAFE); the
 * fee's linear part is a bigint until it is rounded, and the unrounded value and slopes are doubles
 * that only order the search and bound it, never price a leg.
 *
 * Levels are read on demand: a plan over a hundred deep books touches only the levels it could
 * take, so its time follows the order, not the depth of the books.
 */
export abstract class Ladder<Q extends Rules = Rules> {
  /**
   * Micro-shares a lot delivers: a lot of the book, less the contracts a buy that pays its fee in
   * contracts (Limitless) leaves to the venue. Every count of shares of a plan counts these.
   */
  readonly lot: number;
  /** Micro-shares of the book per lot: what an order for k lots takes. */
  protected readonly grossLot: number;
  /** Whether the fee is paid in the contracts bought (lot < grossLot), not in USDC on top of the notional. */
  readonly feeInShares: boolean;
  /** Lots of the venue's minimum order size (at least 1). */
  private readonly sizeMinLots: number;
  private leastLots: number | undefined;
  /** The venue's minimum fee per order (micro-USDC), 0 for none. */
  private readonly minFee: bigint;
  /** The venue's minimum order amount (micro-USDC, `proceedsOf` a leg's limit and shares), 0 for none. */
  private readonly minAmount: Micro;
  protected readonly levels: Level[] = [];
  private read = 0;
  private ended = false;
  protected readonly price: number[] = [];
  protected readonly cumShares: number[] = [0];
  private readonly cumNotional: number[] = [0];
  private readonly cumFee: bigint[] = [0n];
  private readonly unitFee: bigint[] = [];
  /** Each level's value per micro-share in micro-USDC (USDC per share): its price, plus (buy) or minus (sell) its fee. */
  protected readonly slope: number[] = [];
  /** Each level's value per micro-share of the book: its slope, unless part of each lot is withheld. */
  private readonly rawSlope: number[] = [];
  protected readonly cumRaw: number[] = [0];
  private readonly model: FeeModel;
  /** A rate of 0 charges nothing under every model. */
  private readonly free: boolean;
  /** How far below / above the unrounded fee the rounded one can sit (micro-USDC). */
  readonly below: number;
  protected readonly above: number;

  /**
   * `feeSign` adds the fee to the price (a buy pays it) or subtracts it (a sell's proceeds bear it);
   * `cap` ends the book after that many micro-shares.
   */
  constructor(
    readonly quote: Q,
    private readonly side: readonly Level[],
    private readonly feeSign: 1 | -1,
    private readonly cap: number,
  ) {
    this.feeInShares = feeSign > 0 && feeInShares(quote.feeModel, "buy");
    this.grossLot = Number(quote.lotShares);
    if (this.feeInShares && (quote.feeModel.ratePpm * quote.lotShares) % ONE !== 0n) {
      throw new RangeError(`${quote.feeModel.kind}: a fee of ${quote.feeModel.ratePpm} ppm in contracts is not whole micro-shares on a lot of ${quote.lotShares}`);
    }
    this.lot = this.feeInShares ? Number(deliveredShares(quote.feeModel, quote.lotShares)) : this.grossLot;
    const min = Number(ceilDiv(quote.minOrderShares, quote.lotShares));
    this.sizeMinLots = min > 1 ? min : 1;
    this.model = quote.feeModel;
    this.free = quote.feeModel.ratePpm === 0n || this.feeInShares;
    this.minFee = this.free ? 0n : minimumFee(quote.feeModel);
    this.minAmount = quote.minOrderAmount ?? 0n;
    this.below = this.free ? 0 : roundingBelow(quote.feeModel);
    this.above = this.free ? 0 : roundingAbove(quote.feeModel);
  }

  /**
   * A non-empty leg has at least this many lots: the venue's minimum order size; on a venue with
   * a minimum fee per order (Opinion) the first lot count whose fee by the formula reaches it. A
   * smaller leg would pay the minimum on fewer shares, a fixed cost that the exact search has no
   * room for; the formula's fee only grows with lots, so this is one more minimum size, taken whole
   * (docs/router.md, "Minimum fee"); and on a venue with a minimum order amount (Opinion) the first
   * lot count whose amount at its limit reaches it (docs/router.md, "Minimum amount"). Past the
   * eligible book when the book cannot reach them.
   */
  get minLots(): number {
    this.leastLots ??= Math.max(this.sizeMinLots, this.minFee === 0n ? 0 : this.feeMinLots(), this.minAmount === 0n ? 0 : this.amountMinLots());
    return this.leastLots;
  }

  /** The fewest lots whose amount at the limit they end at reaches the minimum amount; one more than the eligible book holds if none does. */
  private amountMinLots(): number {
    for (let i = 0; ; i++) {
      if (i === this.price.length && !this.readLevel()) return this.maxLots + 1;
      const { from, to } = this.run(i);
      const price = this.levels[i]!.price;
      if (price === 0n) continue;
      // proceedsOf(price, k·lot) ≥ min exactly when price·k·lot ≥ min·10^6
      const need = Number(ceilDiv(this.minAmount * ONE, price * BigInt(this.lot)));
      const k = need > from ? need : from + 1;
      if (k <= to) return k;
    }
  }

  /**
   * Whether a level at `price`, read after `held` micro-shares, would take a leg's amount back
   * under the minimum amount once the lots before it reached it: a sell's limit, its lowest bid,
   * falls level by level, so its amount can drop when a leg reaches a lower bid (a buy's never
   * does). The eligible book ends there, so the lot counts from minLots to the end of the book all
   * reach the minimum, as the search needs; the legs past it that would reach it again, deep in
   * lower bids, are not planned (docs/router.md, "Minimum amount").
   */
  private fallsUnderMinAmount(price: PriceMicro, held: number): boolean {
    const last = Math.floor(held / this.grossLot);
    if (last === 0) return false;
    const reached = proceedsOf(this.levels[this.levelOf(last * this.grossLot)]!.price, BigInt(last * this.lot)) >= this.minAmount;
    return reached && proceedsOf(price, BigInt((last + 1) * this.lot)) < this.minAmount;
  }

  /** The fewest lots whose fee by the formula reaches the minimum fee; one more than the eligible book holds if none does. */
  private feeMinLots(): number {
    let i = 0;
    for (; ; i++) {
      if (i === this.price.length && !this.readLevel()) return this.maxLots + 1;
      if (roundFee(this.model, this.cumFee[i + 1]!) >= this.minFee) break;
    }
    // the fee reaches the minimum within level i: the first lot that ends in it and does, or else the lot that straddles its end
    const base = this.cumShares[i]!;
    const unit = this.unitFee[i]!;
    const reaches = (k: number) => roundFee(this.model, this.cumFee[i]! + unit * BigInt(k * this.grossLot - base)) >= this.minFee;
    let lo = Math.floor(base / this.grossLot) + 1;
    let hi = Math.floor(this.cumShares[i + 1]! / this.grossLot) + 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (!reaches(mid)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Whether a level lies past the slippage limit: it and every level after it are not taken. */
  protected abstract beyond(level: Level, feeRate: number): boolean;

  /** The notional of `shares` at `price` as this side rounds it. */
  protected abstract notionalOf(price: number, shares: number): number;

  /** Whether the eligible book holds k lots. */
  has(k: number): boolean {
    const s = k * this.grossLot;
    while (this.cumShares[this.price.length]! < s && this.readLevel());
    return this.cumShares[this.price.length]! >= s;
  }

  /**
   * The level of the book a least leg (`minLots`: the venue's minimum size, and on Opinion the lots
   * whose fee reaches the minimum fee and whose amount reaches the minimum amount) ends in, whole, as
   * the venue shows it: the top level unless it holds less than that leg; undefined when the eligible
   * book does not hold one.
   */
  leastLevel(): Level | undefined {
    if (!this.has(this.minLots)) return undefined;
    const price = this.levels[this.levelOfLots(this.minLots)]!.price;
    return this.side.find((l) => l.shares > 0n && l.price === price);
  }

  /** Every lot of the eligible book; reads all of it. */
  get maxLots(): number {
    while (this.readLevel());
    return Math.floor(this.cumShares[this.price.length]! / this.grossLot);
  }

  /** The venue's fee (rounded, at least its minimum) of one order for the first i levels plus x micro-shares of level i. */
  private feeAt(i: number, x: number): number {
    if (this.free) return 0;
    return this.atLeastMinFee(roundFee(this.model, this.cumFee[i]! + this.unitFee[i]! * BigInt(x)));
  }

  /** What above the notional at level i's price one order for s micro-shares at no worse than it can pay (fees.ts `worstFee`). */
  protected worstFeeAt(i: number, s: number): number {
    return this.free ? 0 : Number(worstFee(this.model, this.levels[i]!.price, BigInt(s)));
  }

  private atLeastMinFee(fee: bigint): number {
    return Number(fee < this.minFee ? this.minFee : fee);
  }

  /**
   * Exact value in micro-USDC of one order for k lots, the book holding them: its notional (per
   * level, as the side rounds it) plus the venue's rounded fee for a buy (what the order costs), less
   * it for a sell (what the order pays).
   */
  protected value(k: number): number {
    if (k === 0) return 0;
    const s = k * this.grossLot;
    const i = this.levelOf(s);
    const x = s - this.cumShares[i]!;
    return this.cumNotional[i]! + this.notionalOf(this.price[i]!, x) + this.feeSign * this.feeAt(i, x);
  }

  /** The venue's rounded fee on one order for k lots. */
  fee(k: number): number {
    if (k === 0) return 0;
    const s = k * this.grossLot;
    const i = this.levelOf(s);
    return this.feeAt(i, s - this.cumShares[i]!);
  }

  /** Unrounded value of k lots in micro-USDC (cost for a buy, proceeds for a sell): the exact value up to the rounding. */
  raw(k: number): number {
    if (k === 0) return 0;
    const s = k * this.grossLot;
    const i = this.levelOf(s);
    return this.cumRaw[i]! + this.rawSlope[i]! * (s - this.cumShares[i]!);
  }

  /** The level fills of an order for k lots, best first: of the book, before any fee in contracts. */
  fills(k: number): Level[] {
    const fills: Level[] = [];
    let left = BigInt(k * this.grossLot);
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
  segmentAfter(j: number): Segment | undefined {
    if (!this.has(j + 1)) return undefined;
    const s = j * this.grossLot;
    const i = this.levelOf(s + 1);
    const run = Math.floor((this.cumShares[i + 1]! - s) / this.grossLot);
    if (run > 0) return { from: j, to: j + run, slope: this.slope[i]! };
    return { from: j, to: j + 1, slope: (this.raw(j + 1) - this.raw(j)) / this.lot };
  }

  /** The levels read so far. */
  get depth(): number {
    return this.price.length;
  }

  /** The lots that end in level i, as (from, to] — empty when no lot ends there — and the level's slope. */
  run(i: number): Segment {
    return { from: Math.floor(this.cumShares[i]! / this.grossLot), to: Math.floor(this.cumShares[i + 1]! / this.grossLot), slope: this.slope[i]! };
  }

  /** Reads the next level; false when the eligible book ends. */
  readNext(): boolean {
    return this.readLevel();
  }

  /** The slope of the level lot k+1 would be in, or of the last level held. */
  priceAt(k: number): number {
    this.has(k + 1);
    const s = k * this.grossLot + 1;
    return this.slope[s > this.cumShares[this.price.length]! ? this.price.length - 1 : this.levelOf(s)]!;
  }

  /** The index of the level that holds the last of k lots (k ≥ 1, held). */
  levelOfLots(k: number): number {
    return this.levelOf(k * this.grossLot);
  }

  /** Index of the level that holds micro-share s (1-based count s), i.e. cumShares[i] < s <= cumShares[i+1]. */
  protected levelOf(s: number): number {
    const cum = this.cumShares;
    let lo = 0;
    let hi = this.price.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid + 1]! >= s) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /**
   * Reads the next eligible level. A venue fills a limit order through every level up to its price,
   * so the eligible book is the prefix before the first level past the limit, never a selection
   * that skips one; the cap cuts the level that reaches it and ends the book there.
   */
  private readLevel(): boolean {
    const model = this.model;
    while (!this.ended) {
      const next = this.side[this.read++];
      if (next === undefined) {
        this.ended = true;
        break;
      }
      if (next.shares <= 0n) continue;
      const unit = this.free ? 0n : feePerShare(model, next.price);
      const rate = feeRate(model, unit);
      const i = this.price.length;
      const held = this.cumShares[i]!;
      if (this.beyond(next, rate) || (this.minAmount > 0n && this.fallsUnderMinAmount(next.price, held))) {
        this.ended = true;
        break;
      }
      let level = next;
      if (Number(next.shares) >= this.cap - held) {
        this.ended = true;
        if (this.cap <= held) break;
        level = { price: next.price, shares: BigInt(this.cap - held) };
      }
      const price = Number(level.price);
      const shares = Number(level.shares);
      const raw = price / M + this.feeSign * rate;
      this.levels.push(level);
      this.price.push(price);
      this.unitFee.push(unit);
      this.rawSlope.push(raw);
      // per micro-share delivered: a lot of the book delivers `lot` of its `grossLot`
      this.slope.push(this.lot === this.grossLot ? raw : (raw * this.grossLot) / this.lot);
      this.cumShares.push(held + shares);
      this.cumNotional.push(this.cumNotional[i]! + this.notionalOf(price, shares));
      this.cumFee.push(this.cumFee[i]! + unit * level.shares);
      this.cumRaw.push(this.cumRaw[i]! + raw * shares);
      return true;
    }
    return false;
  }

  /**
   * Whether a level's marginal price (what each of its shares adds to an order, fee included) passes
   * `limit` in the direction `sign` (+1: over it, a buy's; −1: under it, a sell's). Its unrounded fee
   * decides when that is far enough from the limit (marginalRange); the exact price otherwise.
   */
  protected passes(level: Level, feeRate: number, limit: bigint, sign: 1 | -1): boolean {
    const { mid, spread } = marginalRange(this.model, level.price, feeRate, sign);
    const gap = sign * (mid - Number(limit));
    if (gap > spread) return true;
    if (gap < -spread) return false;
    return sign * Number(marginal(this.model, level.price, sign) - limit) > 0;
  }
}

/** A venue's asks for a buy: each lot count priced as one order that takes them costs (notional rounded up per level, fee on the whole order). */
export class Curve extends Ladder<VenueQuote> {
  /** `limit` null takes the whole book: what the order could have had without a slippage cap. `cap`: the most micro-shares read. */
  constructor(
    quote: VenueQuote,
    private readonly limit: PriceMicro | null,
    cap: number,
  ) {
    super(quote, quote.asks, 1, cap);
  }

  protected beyond(level: Level, feeRate: number): boolean {
    const limit = this.limit;
    return limit !== null && this.passes(level, feeRate, limit, 1);
  }

  protected notionalOf(price: number, shares: number): number {
    return mulMicroUp(price, shares);
  }

  /** Costs and worst cases priced so far, by lot count: the search asks for many twice. */
  private costs: Map<number, number> | undefined;
  private worsts: Map<number, number> | undefined;

  /** Exact cost in micro-USDC of one order for k lots (notional + fee); the book must hold them. */
  cost(k: number): number {
    if (k === 0) return 0;
    this.costs ??= new Map();
    let cost = this.costs.get(k);
    if (cost === undefined) {
      cost = this.value(k);
      this.costs.set(k, cost);
    }
    return cost;
  }

  /**
   * What one order for k lots can cost at most, filled anywhere up to its limit, the price of the last
   * level it takes (`worstOrderCost`; never less than its planned cost). The amount must cover this,
   * since a book that moves before the order arrives can fill it anywhere up to its limit. Grows with
   * k: a later level's price plus fee per share is higher (every fee's slope in the price is below 1).
   */
  worst(k: number): number {
    if (k === 0) return 0;
    this.worsts ??= new Map();
    let worst = this.worsts.get(k);
    if (worst === undefined) {
      const s = k * this.grossLot;
      const i = this.levelOf(s);
      const atLimit = mulMicroUp(this.price[i]!, s) + this.worstFeeAt(i, s);
      const planned = this.cost(k);
      worst = atLimit > planned ? atLimit : planned;
      this.worsts.set(k, worst);
    }
    return worst;
  }

  /** `worst` before rounding: all k lots at the slope of the last level they take. */
  rawWorst(k: number): number {
    return k === 0 ? 0 : k * this.lot * this.slope[this.levelOf(k * this.grossLot)]!;
  }

  /**
   * The most lots in [from, to] (held by the book) whose `f` — the worst case or the cost, both
   * growing with k — stays within `budget`, given that `from`'s does. Both sit within a cent or so
   * of k lots at the slope of their last level, so the search starts where that estimate puts it
   * and gallops out to a bracket before bisecting: two or three exact prices for lots of ordinary
   * size, a logarithm of the range for any.
   */
  mostWithin(from: number, to: number, budget: number, f: (k: number) => number): number {
    if (to <= from || f(from + 1) > budget) return from;
    let guess = Math.floor(budget / (this.lot * this.slope[this.levelOf(to * this.grossLot)]!));
    guess = guess <= from ? from + 1 : guess > to ? to : guess;
    let lo: number;
    let hi: number;
    if (f(guess) <= budget) {
      lo = guess;
      hi = to;
      for (let step = 1; lo < to; step *= 2) {
        const at = lo + step < to ? lo + step : to;
        if (f(at) > budget) {
          hi = at - 1;
          break;
        }
        lo = at;
      }
    } else {
      // from + 1 fits, so the gallop down ends there at the latest.
      hi = guess - 1;
      lo = from + 1;
      for (let step = 1; ; step *= 2) {
        const at = hi - step + 1 > lo ? hi - step + 1 : lo;
        if (f(at) <= budget) {
          lo = at;
          break;
        }
        hi = at - 1;
      }
    }
    while (lo < hi) {
      const mid = lo + Math.ceil((hi - lo) / 2);
      if (f(mid) <= budget) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /**
   * A lower bound on what k more lots than `from` add to the worst case: the unrounded growth less
   * what rounding can take off the one and add to the other (a micro-USDC per level of notional,
   * the fee's rounding both ways) and a margin for the doubles.
   */
  addsAtLeast(from: number, to: number): number {
    const grow = this.rawWorst(to) - this.rawWorst(from);
    return grow - this.below - this.above - (from === 0 ? 0 : this.levelOfLots(from) + 2) - 2 - this.rawWorst(to) * 1e-12;
  }

  /** Reads levels while the last one read is priced under `slope`. */
  readBelow(slope: number): void {
    while ((this.price.length === 0 || this.slope[this.price.length - 1]! < slope) && this.readNext());
  }
}

/**
 * A venue's bids for a sell, up to the shares it can sell (the operator's inventory there, and
 * never more than the order): each lot count priced as what one order selling them pays (notional
 * rounded down per level, less the fee on the whole order). A sell fills at its limit or better,
 * and a better price nets more but for the fee's rounding (the unrounded fee's slope is below 1), so
 * a sell has no worst case to budget for (docs/router.md, "Sells").
 */
export class BidCurve extends Ladder<SellQuote> {
  /** `limit` null takes the whole book: what the order could have had without a slippage floor. `cap`: the most micro-shares read. */
  constructor(
    quote: SellQuote,
    private readonly limit: PriceMicro | null,
    cap: number,
  ) {
    super(quote, quote.bids, -1, cap);
  }

  protected beyond(level: Level, feeRate: number): boolean {
    const limit = this.limit;
    return limit !== null && this.passes(level, feeRate, limit, -1);
  }

  protected notionalOf(price: number, shares: number): number {
    return mulMicroDown(price, shares);
  }

  /** Exact proceeds in micro-USDC of one order selling k lots (notional less fee); the book must hold them. */
  proceeds(k: number): number {
    return this.value(k);
  }

  /**
   * The most `raw(k) − λ·shares` can be over every share count of the eligible book, real or not
   * (an upper bound of it over lot counts): the unrounded proceeds are concave, so it peaks at the
   * end of the last level whose slope is above λ. Reads the levels that far.
   */
  peak(lambda: number): number {
    while ((this.price.length === 0 || this.slope[this.price.length - 1]! > lambda) && this.readNext());
    let best = 0;
    for (let i = 1; i <= this.price.length; i++) {
      const h = this.cumRaw[i]! - lambda * this.cumShares[i]!;
      if (h > best) best = h;
    }
    return best;
  }
}
