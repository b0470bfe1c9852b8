import { formatMicro, microToNumber, type Micro, type PriceMicro, type ShareMicro } from "../domain/money.ts";
import { netOfWithheld, orderFee } from "../domain/fees.ts";
import type { TimeInForce } from "../domain/types.ts";
import { SAFE, type Ladder, type Rules } from "./curve.ts";
import type { ChildLeg, Refusal, RefusalCode, RouteOptions } from "./types.ts";

/** What routing reads of any venue's quote, whichever side. */
export interface Quote extends Rules {
  venue: string;
  venueMarketId: string;
  latencyMs: number | undefined;
  queueDelayMs?: number;
}

/** An allocation of lots over the venues (indexed like their quotes), and the micro-shares it takes. */
export interface Allotment {
  lots: number[];
  shares: number;
}

/** A plan of either side. */
interface Planned {
  kind: "plan";
  shares: ShareMicro;
  complete: boolean;
}

/**
 * One side of the books as routing sees it: a buy spends an amount over the asks, a sell sells shares
 * over the bids. Routing (strategies, time in force, queues, refusal codes) is the same for both; a
 * side says how its venues' books are read and how an allocation of lots over them is found, checked
 * and planned.
 */
export interface Side<Q extends Quote, C extends Ladder<Q>, A extends Allotment, P extends Planned> {
  order: RouteOptions;
  /** The best marginal price (fees.ts `marginalAsk`, `marginalBid`) of the tops of the books the order can take: the slippage reference; undefined if none. */
  reference(quotes: readonly Q[]): PriceMicro | undefined;
  /** Why there is no reference. */
  noReference: string;
  /** The slippage limit, maxSlippage away from the reference, rounded toward it. */
  limit(reference: PriceMicro): PriceMicro;
  /**
   * A venue's book up to `limit` (null: the whole book, what the order could have had without a
   * slippage limit), read to at most `depth` micro-shares.
   */
  curve(q: Q, limit: PriceMicro | null, depth: number): C;
  /** The best allocation within the order's size, and, with a limit, with an average that keeps it. */
  best(curves: readonly C[], limit: PriceMicro | null): A;
  /** Whether `a` fills the order: what it leaves is dust. */
  filled(curves: readonly C[], a: A, limit: PriceMicro | null): boolean;
  better(a: A, b: A): boolean;
  /** order_too_small, when the order is under the minimum size of every venue whose whole book could trade (`tradable`). */
  tooSmall(tradable: readonly C[], details: Record<string, unknown>): Refusal | undefined;
  /** The order's size, for a refusal's details. */
  size: Record<string, number>;
  /** What a partial allocation fills, for a fill-or-kill refusal's details. */
  fillable(a: A): Record<string, number>;
  /** The plan of `a`; `complete` when it fills the order (Side.filled). */
  plan(curves: readonly C[], a: A, reference: PriceMicro, limit: PriceMicro, complete: boolean): P;
}

/**
 * How much longer than a shorter queue a venue's queue may hold a child order before optimize_price
 * prefers the venues with the shorter queues: an order waiting longer than this for one venue while
 * others could fill it sooner is an order that set the pace of every order behind it. It is each
 * venue's capacity: with the orders planned onto it counted in its queue (VenueQuote.queueDelayMs), a
 * venue takes what its write limit sends within this time of the others, and a burst spills past it.
 */
export const MAX_QUEUE_MS = 250;

/**
 * Routes an order of either side. Pure and deterministic: the same request and quotes always give the
 * same plan or refusal.
 *
 * FOK counts an order as filled when what is left of it is dust (Side.filled); a plan says whether it
 * fills the order so (`complete`), which an IOC plan of thin books does not. A refusal says
 * `slippage_exceeded` when the whole book, uncapped, could have done it (filled it under FOK, taken
 * anything under IOC), `order_too_small` when the order is under every venue's minimum size, else
 * `insufficient_liquidity`; with no quote at all, `venue_unavailable`.
 *
 * A venue's queue is part of the plan. optimize_price routes on the venues whose queues are within
 * MAX_QUEUE_MS of the shortest one when they fill the order within the same limit (or, under IOC, take
 * as many shares as every venue would); else on those within MAX_QUEUE_MS of the next shortest queue,
 * and so on, every venue last. So a burst fills the venues with short queues first and spills past a
 * long one, and a refusal is the refusal of the books without queues. optimize_speed ranks venues by
 * queue plus latency.
 */
export function route<Q extends Quote, C extends Ladder<Q>, A extends Allotment, P extends Planned>(
  side: Side<Q, C, A, P>,
  quotes: readonly Q[],
): P | Refusal {
  // No quote at all is no venue to take the order now (every one down, stale or not connected), not thin books.
  if (quotes.length === 0) return refuse("venue_unavailable", "No venue can take the order now: none of the event's venues is quoting it.", {});
  const reference = side.reference(quotes);
  if (reference === undefined) return refuse("insufficient_liquidity", side.noReference, {});
  const limit = side.order.limitPrice ?? side.limit(reference);
  const everywhere = routeOn(side, side.order.timeInForce, quotes, reference, limit);
  if (side.order.strategy !== "optimize_price") return everywhere;
  // The limit is taken from every venue's best price, queued ones included.
  for (const ready of byQueue(quotes)) {
    const filled = routeOn(side, "FOK", ready, reference, limit);
    if (filled.kind === "plan") return filled;
    if (side.order.timeInForce === "IOC") {
      const partial = routeOn(side, "IOC", ready, reference, limit);
      if (partial.kind === "plan" && (everywhere.kind === "refusal" || partial.shares >= everywhere.shares)) return partial;
    }
  }
  return everywhere;
}

/**
 * The venues by their queues (no queue counts as 0): those within MAX_QUEUE_MS of the shortest queue,
 * then of the next shortest, and so on, each set short of every venue; a queue within MAX_QUEUE_MS of
 * a shorter one adds nothing new.
 */
function byQueue<Q extends Quote>(quotes: readonly Q[]): Q[][] {
  const delay = (q: Q) => q.queueDelayMs ?? 0;
  const sets: Q[][] = [];
  for (const d of [...new Set(quotes.map(delay))].sort((x, y) => x - y)) {
    const ready = quotes.filter((q) => delay(q) <= d + MAX_QUEUE_MS);
    if (ready.length === quotes.length) break;
    if (ready.length > (sets[sets.length - 1]?.length ?? 0)) sets.push(ready);
  }
  return sets;
}

function routeOn<Q extends Quote, C extends Ladder<Q>, A extends Allotment, P extends Planned>(
  side: Side<Q, C, A, P>,
  timeInForce: TimeInForce,
  quotes: readonly Q[],
  reference: PriceMicro,
  limit: PriceMicro,
): P | Refusal {
  const r = new Routing(side, timeInForce, quotes, reference, limit);
  return side.order.strategy === "optimize_price" ? r.forPrice() : r.forSpeed();
}

/** One routing of an order over a set of quotes, at one time in force and limit. */
class Routing<Q extends Quote, C extends Ladder<Q>, A extends Allotment, P extends Planned> {
  /** Each venue's book up to the slippage limit. */
  private readonly curves: C[];
  /** How deep each venue's book is read, in micro-shares: the venues' together stay under SAFE. */
  private readonly depth: number;

  constructor(
    private readonly side: Side<Q, C, A, P>,
    private readonly timeInForce: TimeInForce,
    private readonly quotes: readonly Q[],
    private readonly reference: PriceMicro,
    private readonly limit: PriceMicro,
  ) {
    this.depth = Math.floor(SAFE / Math.max(1, quotes.length));
    this.curves = quotes.map((q) => side.curve(q, limit, this.depth));
  }

  forPrice(): P | Refusal {
    const { side } = this;
    const a = side.best(this.curves, this.limit);
    if (a.shares === 0) return this.refuseEmpty();
    const complete = side.filled(this.curves, a, this.limit);
    if (this.timeInForce === "FOK" && !complete) {
      const full = this.fullBook();
      const fa = side.best(full, null);
      return this.refuseUnfilled(fa.shares > 0 && side.filled(full, fa, null), a);
    }
    return side.plan(this.curves, a, this.reference, this.limit, complete);
  }

  /**
   * The fastest venue that fills the whole order alone; ties go to the better fill. Under IOC, when
   * no venue can fill it all, the fastest venue that can fill part of it takes what it can.
   */
  forSpeed(): P | Refusal {
    const { side, quotes } = this;
    const order = this.curves.map((_, v) => v).sort((x, y) => latencyRank(quotes[x]!) - latencyRank(quotes[y]!) || x - y);
    const alone = (curves: readonly C[], v: number, limit: PriceMicro | null) => {
      const only = [curves[v]!];
      const a = side.best(only, limit);
      const complete = a.shares > 0 && side.filled(only, a, limit);
      return { a: { ...a, lots: curves.map((_, u) => (u === v ? a.lots[0]! : 0)) }, complete };
    };
    type Single = { v: number } & ReturnType<typeof alone>;
    const pick = (eligible: readonly Single[]) => {
      let best: Single | undefined;
      for (const s of eligible) {
        if (best === undefined) best = s;
        else if (latencyRank(quotes[s.v]!) === latencyRank(quotes[best.v]!) && side.better(s.a, best.a)) best = s;
      }
      return best;
    };
    // The venues alone, a rank of equal expected time at a time, fastest first: the first rank where a
    // venue fills the whole order decides, and the slower venues are not planned at all.
    const singles: Single[] = [];
    for (let i = 0; i < order.length; ) {
      const rank = latencyRank(quotes[order[i]!]!);
      const from = singles.length;
      for (; i < order.length && latencyRank(quotes[order[i]!]!) === rank; i++) singles.push({ v: order[i]!, ...alone(this.curves, order[i]!, this.limit) });
      const filled = pick(singles.slice(from).filter((s) => s.complete));
      if (filled) return side.plan(this.curves, filled.a, this.reference, this.limit, true);
    }
    if (singles.every((s) => s.a.shares === 0)) return this.refuseEmpty();
    if (this.timeInForce === "IOC") return side.plan(this.curves, pick(singles.filter((s) => s.a.shares > 0))!.a, this.reference, this.limit, false);
    const full = this.fullBook();
    const couldFill = order.some((v) => alone(full, v, null).complete);
    return this.refuseUnfilled(couldFill, undefined);
  }

  /** The whole book with no slippage limit: what tells a slippage refusal from a liquidity one. */
  private fullBook(): C[] {
    return this.quotes.map((q) => this.side.curve(q, null, this.depth));
  }

  private refuseEmpty(): Refusal {
    const { side } = this;
    const full = this.fullBook();
    const tradable = full.filter((c) => c.has(c.minLots));
    const details = this.priceDetails();
    if (tradable.length === 0) {
      return refuse("insufficient_liquidity", "No venue has enough liquidity for its minimum order size.", details);
    }
    const small = side.tooSmall(tradable, details);
    if (small) return small;
    if (this.timeInForce === "FOK") {
      const fa = side.best(full, null);
      if (fa.shares === 0 || !side.filled(full, fa, null)) return this.refuseUnfilled(false, undefined);
    }
    return refuse("slippage_exceeded", `No liquidity within the slippage limit can fill any part of the order: ${this.limitText()}.`, details);
  }

  private refuseUnfilled(couldFill: boolean, partial: A | undefined): Refusal {
    const details = { ...this.priceDetails(), ...(partial ? this.side.fillable(partial) : {}) };
    return couldFill
      ? refuse("slippage_exceeded", `The order cannot be filled in full within the slippage limit (fill-or-kill): ${this.limitText()}.`, details)
      : refuse(
          "insufficient_liquidity",
          this.side.order.strategy === "optimize_speed"
            ? "No venue holds enough liquidity to fill the order alone, and optimize_speed does not split an order across venues (fill-or-kill)."
            : "The books do not hold enough liquidity to fill the order in full (fill-or-kill).",
          details,
        );
  }

  /** The limit a slippage refusal names in its message, as its details do. */
  private limitText(): string {
    return `the limit price is ${formatMicro(this.limit)}, max_slippage from the reference price ${formatMicro(this.reference)}`;
  }

  private priceDetails(): Record<string, unknown> {
    return { ...this.side.size, reference_price: microToNumber(this.reference), limit_price: microToNumber(this.limit) };
  }
}

/** Expected time to a fill: the wait in the venue's queue, then its measured latency; unmeasured venues rank after every measured one. */
function latencyRank(q: Quote): number {
  return (q.queueDelayMs ?? 0) + (q.latencyMs ?? Number.POSITIVE_INFINITY);
}

/**
 * What a leg of either side is: the venue's child order for k lots, the levels it takes, its limit
 * (the last level's price), its notional as the side rounds it (`notionalOf`, per level) and the
 * venue's own fee on the one order. A buy that pays its fee in contracts counts the shares it
 * delivers, its notional theirs, and its fee the USDC value of the contracts withheld (netOfWithheld):
 * notional + fee is still what the venue takes for the levels.
 */
export function legOf(c: Ladder<Quote>, k: number, notionalOf: (price: PriceMicro, shares: ShareMicro) => Micro): ChildLeg {
  const levels = c.fills(k);
  const shares = BigInt(k * c.lot);
  // a fee in contracts: the leg delivers `shares` of the levels' shares, and its fee is the value of the rest
  const priced = c.feeInShares ? netOfWithheld(levels, levels.reduce((s, l) => s + l.shares, 0n) - shares) : undefined;
  return {
    venue: c.quote.venue,
    venueMarketId: c.quote.venueMarketId,
    limitPrice: levels[levels.length - 1]!.price,
    shares,
    notional: (priced ?? levels).reduce((sum, l) => sum + notionalOf(l.price, l.shares), 0n),
    fee: priced ? priced.reduce((sum, l) => sum + l.fee, 0n) : orderFee(c.quote.feeModel, levels),
    levels,
  };
}

export function refuse(code: RefusalCode, message: string, details: Record<string, unknown>): Refusal {
  return { kind: "refusal", code, message, details };
}
