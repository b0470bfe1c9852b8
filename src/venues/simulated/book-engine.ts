import { notional, ONE, type Micro, type PriceMicro, type ShareMicro } from "../../domain/money.ts";
import type { Level, Outcome } from "../../domain/types.ts";
import type { Rng } from "./prng.ts";

export interface BookEngineParams {
  tick: PriceMicro;
  /** Every resting size is a multiple of this, so any fill of lot-sized orders leaves the book on the lot grid. */
  lot: ShareMicro;
  /** Where this venue's mid reverts to: the event's base price plus the venue's own offset. */
  anchor: PriceMicro;
  rng: Rng;
  minLevels?: number;
  maxLevels?: number;
  /** Bounds of a resting order's size in whole shares; sizes are drawn log-uniformly between them. */
  minOrderSize?: number;
  maxOrderSize?: number;
}

export interface TwoSidedBook {
  /** Best first: price descending. */
  bids: Level[];
  /** Best first: price ascending. */
  asks: Level[];
}

/** Per-step reversion toward the anchor; with the volatility below, the mid wanders about half a cent from it. */
const REVERSION = 0.02;
const VOLATILITY = 4_000;
const CANCEL_LEVEL = 0.04;
const SHRINK_LEVEL = 0.08;

/**
 * One binary market's order book. Only the YES book is held: a NO ask at 1 − p is a YES bid at p
 * (the same shares seen from the other side), so buying NO consumes YES bids and both outcomes stay
 * consistent by construction. Knows nothing of venues, orders or fees, so a wire-protocol simulator
 * can drive the same engine.
 */
export class BookEngine {
  private tick: PriceMicro;
  readonly lot: ShareMicro;
  private readonly anchor: number;
  private readonly rng: Rng;
  private readonly minLevels: number;
  private readonly maxLevels: number;
  private readonly logMinSize: number;
  private readonly logMaxSize: number;
  private readonly minRestingShares: ShareMicro;
  /** The latent fair value in micro-USDC: the quotes are built around it but it is never itself a price of record. */
  private fair: number;
  private readonly bids: Level[] = [];
  private readonly asks: Level[] = [];

  constructor(p: BookEngineParams) {
    if (p.lot <= 0n) throw new RangeError("lot must be positive");
    this.tick = checkedTick(p.tick);
    this.lot = p.lot;
    this.rng = p.rng;
    this.minLevels = p.minLevels ?? 10;
    this.maxLevels = p.maxLevels ?? 25;
    this.logMinSize = Math.log(p.minOrderSize ?? 10);
    this.logMaxSize = Math.log(p.maxOrderSize ?? 3_000);
    this.minRestingShares = BigInt(p.minOrderSize ?? 10) * ONE;
    this.anchor = this.clampFair(Number(p.anchor));
    this.fair = this.anchor;
    const target = this.rng.int(this.minLevels, this.maxLevels);
    this.refill(this.bids, "bid", target);
    this.refill(this.asks, "ask", target);
  }

  /** Quotes on another tick from now on (a venue's tick size change); those resting stay where they are. */
  setTick(tick: PriceMicro): void {
    this.tick = checkedTick(tick);
  }

  /** The mid the quotes are built around, in micro-USDC per YES share. */
  get fairValue(): number {
    return this.fair;
  }

  /**
   * Advances the market by one step: the fair value walks, quotes it crossed are taken by other
   * traders, some orders are cancelled or shrink, new orders arrive. Returns the notional the
   * other traders took, which the venue counts as volume.
   */
  step(): Micro {
    const p = this.fair / Number(ONE);
    const drift = REVERSION * (this.anchor - this.fair);
    this.fair = this.clampFair(Math.round(this.fair + drift + VOLATILITY * p * (1 - p) * this.rng.normal()));
    const { bidTop, askTop } = this.tops();
    let traded = 0n;
    while (this.bids[0] && this.bids[0].price > bidTop) traded += levelNotional(this.bids.shift()!);
    while (this.asks[0] && this.asks[0].price < askTop) traded += levelNotional(this.asks.shift()!);
    this.cancel(this.bids);
    this.cancel(this.asks);
    for (let n = this.rng.int(1, 3); n > 0; n--) this.arrive(this.bids, "bid");
    for (let n = this.rng.int(1, 3); n > 0; n--) this.arrive(this.asks, "ask");
    this.bids.length = Math.min(this.bids.length, this.maxLevels);
    this.asks.length = Math.min(this.asks.length, this.maxLevels);
    this.refill(this.bids, "bid", this.minLevels);
    this.refill(this.asks, "ask", this.minLevels);
    return traded;
  }

  /** A copy of the book of one outcome, best first on both sides. */
  book(outcome: Outcome): TwoSidedBook {
    if (outcome === "YES") return { bids: copy(this.bids), asks: copy(this.asks) };
    return { bids: this.asks.map(flip), asks: this.bids.map(flip) };
  }

  /**
   * Takes up to `maxShares` of `outcome` at prices no worse than `limitPrice`, best first, and
   * removes what it takes. Returns the levels taken, in the outcome's prices.
   */
  take(outcome: Outcome, limitPrice: PriceMicro, maxShares: ShareMicro): Level[] {
    return this.consume(outcome === "YES" ? this.asks : this.bids, outcome, (price) => price <= limitPrice, (taken) => maxShares - sharesOf(taken));
  }

  /**
   * Buys `outcome` for up to `budget` micro-USDC at prices no worse than `limitPrice`, best first, as a
   * market buy spends its amount: at each level as many micro-shares as what is left of the budget buys
   * there, rounded down, so a better price buys more shares. Removes what it takes and returns the levels taken.
   */
  spend(outcome: Outcome, limitPrice: PriceMicro, budget: Micro): Level[] {
    return this.consume(outcome === "YES" ? this.asks : this.bids, outcome, (price) => price <= limitPrice, (taken, price) => ((budget - costOf(taken)) * ONE) / price);
  }

  /**
   * Sells up to `maxShares` of `outcome` at prices no worse than `limitPrice` into the outcome's
   * bids, best first, and removes what it takes. Returns the levels sold into, in the outcome's prices.
   * A NO bid at q is a YES ask at 1 − q, so selling NO consumes YES asks.
   */
  sell(outcome: Outcome, limitPrice: PriceMicro, maxShares: ShareMicro): Level[] {
    return this.consume(outcome === "YES" ? this.bids : this.asks, outcome, (price) => price >= limitPrice, (taken) => maxShares - sharesOf(taken));
  }

  /**
   * Consumes one side of the YES book, best first, while its price in `outcome`'s terms is acceptable
   * and `wanted` (given what is taken so far and the level's price) asks for more shares.
   */
  private consume(side: Level[], outcome: Outcome, acceptable: (price: PriceMicro) => boolean, wanted: (taken: readonly Level[], price: PriceMicro) => ShareMicro): Level[] {
    const taken: Level[] = [];
    while (side[0]) {
      const resting = side[0];
      const price = outcome === "YES" ? resting.price : ONE - resting.price;
      if (!acceptable(price)) break;
      const left = wanted(taken, price);
      if (left <= 0n) break;
      const shares = resting.shares < left ? resting.shares : left;
      taken.push({ price, shares });
      resting.shares -= shares;
      if (resting.shares === 0n) side.shift();
    }
    return taken;
  }

  private clampFair(micro: number): number {
    const lo = 2 * Number(this.tick);
    return Math.min(Number(ONE) - lo, Math.max(lo, micro));
  }

  /** The best prices quotes may rest at: always at least one tick apart, so the book never crosses. */
  private tops(): { bidTop: PriceMicro; askTop: PriceMicro } {
    const t = Number(this.tick);
    return {
      bidTop: BigInt(Math.ceil(this.fair / t)) * this.tick - this.tick,
      askTop: BigInt(Math.floor(this.fair / t)) * this.tick + this.tick,
    };
  }

  /** Grid prices a side may rest at, best first: bids down to one tick, asks up to one tick below 1. */
  private gridSize(kind: "bid" | "ask"): number {
    const { bidTop, askTop } = this.tops();
    return Number(kind === "bid" ? bidTop / this.tick : (ONE - askTop) / this.tick);
  }

  private cancel(side: Level[]): void {
    for (let i = side.length - 1; i >= 0; i--) {
      const level = side[i]!;
      if (this.rng.chance(CANCEL_LEVEL)) {
        side.splice(i, 1);
      } else if (this.rng.chance(SHRINK_LEVEL)) {
        const lots = level.shares / this.lot;
        level.shares -= ((lots * BigInt(this.rng.int(10, 60))) / 100n) * this.lot;
        // what is left of a level below the smallest resting order is noise no trader would post
        if (level.shares < this.minRestingShares) side.splice(i, 1);
      }
    }
  }

  /** One new resting order: near the top more often than deep, as in real books. */
  private arrive(side: Level[], kind: "bid" | "ask"): void {
    const grid = this.gridSize(kind);
    if (grid <= 0) return;
    const span = Math.min(grid, Math.ceil(this.maxLevels * 1.6));
    const k = BigInt(Math.floor(this.rng.next() ** 1.5 * span));
    const { bidTop, askTop } = this.tops();
    const price = kind === "bid" ? bidTop - k * this.tick : askTop + k * this.tick;
    const shares = this.drawSize();
    const at = side.findIndex((l) => (kind === "bid" ? l.price <= price : l.price >= price));
    if (at >= 0 && side[at]!.price === price) side[at]!.shares += shares;
    else if (at < 0) side.push({ price, shares });
    else side.splice(at, 0, { price, shares });
  }

  private refill(side: Level[], kind: "bid" | "ask", target: number): void {
    const reachable = Math.min(target, this.gridSize(kind));
    while (side.length < reachable) this.arrive(side, kind);
  }

  private drawSize(): ShareMicro {
    const shares = Math.exp(this.logMinSize + this.rng.next() * (this.logMaxSize - this.logMinSize));
    const lots = BigInt(Math.max(1, Math.round((shares * Number(ONE)) / Number(this.lot))));
    return lots * this.lot;
  }
}

function copy(levels: Level[]): Level[] {
  return levels.map((l) => ({ price: l.price, shares: l.shares }));
}

function flip(l: Level): Level {
  return { price: ONE - l.price, shares: l.shares };
}

function levelNotional(l: Level): Micro {
  return notional(l.price, l.shares);
}

function sharesOf(levels: readonly Level[]): ShareMicro {
  return levels.reduce((s, l) => s + l.shares, 0n);
}

/** What taking `levels` costs: each level's notional, rounded up to the micro-USDC. */
export function costOf(levels: readonly Level[]): Micro {
  return levels.reduce((s, l) => s + levelNotional(l), 0n);
}

function checkedTick(tick: PriceMicro): PriceMicro {
  if (tick <= 0n || ONE % tick !== 0n) throw new RangeError(`tick ${tick} does not divide 1`);
  return tick;
}
