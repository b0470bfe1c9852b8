/**
 * Test support for the router: random books and a brute-force optimum that shares no code with
 * the router beyond the domain's own formulas, so agreement between the two means something.
 */
import fc from "fast-check";
import { ceilDiv, notional, ONE, proceedsOf, type Micro, type PriceMicro, type ShareMicro } from "../domain/money.ts";
import { curveFee, deliveredShares, feeInShares, marginalAsk, marginalBid, minimumFee, netOfWithheld, orderFee, worstOrderCost, type FeeModel } from "../domain/fees.ts";
import type { Level } from "../domain/types.ts";
import { MAX_QUEUE_MS } from "./route.ts";
import type { Plan, PlanRequest, Refusal, RefusalCode, SellPlan, SellQuote, SellRequest, VenueQuote } from "./types.ts";

export const KALSHI: FeeModel = { kind: "kalshi", ratePpm: 70_000n };

export function quote(venue: string, asks: [number, number][], over: Partial<VenueQuote> = {}): VenueQuote {
  return {
    venue,
    venueMarketId: `${venue}-m`,
    asks: asks.map(([price, shares]) => ({ price: BigInt(Math.round(price * 1e6)), shares: BigInt(Math.round(shares * 1e6)) })),
    feeModel: { kind: "polymarket", ratePpm: 0n, exponent: 1 },
    tickSize: 10_000n,
    minOrderShares: 1_000_000n,
    lotShares: 10_000n,
    latencyMs: 50,
    ...over,
  };
}

/** A venue's bids for a sell, best first, with the shares held there (by default more than any book here). */
export function sellQuote(venue: string, bids: [number, number][], over: Partial<SellQuote> = {}): SellQuote {
  const { asks, ...rest } = quote(venue, bids);
  return { ...rest, bids: asks, inventory: 1_000_000n * ONE, ...over };
}

export function usdc(x: number): Micro {
  return BigInt(Math.round(x * 1e6));
}

const feeModel: fc.Arbitrary<FeeModel> = fc.oneof(
  fc.constant(KALSHI),
  fc.record({
    kind: fc.constant("polymarket" as const),
    ratePpm: fc.constantFrom(0n, 20_000n, 250_000n),
    exponent: fc.constantFrom(0 as const, 1 as const, 2 as const),
  }),
  fc.record({ kind: fc.constant("limitless" as const), ratePpm: fc.constantFrom(0n, 10_000n, 30_000n) }),
  fc.record({ kind: fc.constant("opinion" as const), ratePpm: fc.constantFrom(0n, 40_000n, 80_000n), minFee: fc.constantFrom(0n, 500n, 5_000n) }),
);

/** How large the random books are: how many venues (at least, at most), levels a venue and lots a level (at most). */
export interface Shape {
  venues: [number, number];
  levels: number;
  lots: bigint;
}

/** Small books: 1–3 venues of at most 3 levels of at most 8 lots (plus an odd remainder), so every allocation can be enumerated. */
export const SMALL: Shape = { venues: [1, 3], levels: 3, lots: 8n };

/** A venue's book of the shape's size; the levels' prices rise (asks). */
function venueQuote(name: string, grid: "any" | "real", shape: Shape = SMALL): fc.Arbitrary<VenueQuote> {
  return fc
    .record({
      feeModel,
      lot: grid === "real" ? fc.constant(0n) : fc.constantFrom(1n, 10_000n, 100_000n, 1_000_000n),
      minLots: fc.bigInt({ min: 1n, max: 3n }),
      prices: fc.uniqueArray(fc.integer({ min: 1, max: 99 }), { minLength: 1, maxLength: shape.levels }),
      sizes: fc.array(fc.tuple(fc.bigInt({ min: 1n, max: shape.lots }), fc.bigInt({ min: 0n, max: 999_999n })), { minLength: shape.levels, maxLength: shape.levels }),
      latencyMs: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
    })
    .map(({ feeModel, lot, minLots, prices, sizes, latencyMs }) => {
      // Real grids: Kalshi trades whole contracts at cent prices; the others 0.01-share lots. A
      // Limitless buy's fee in contracts is whole micro-shares a lot only on lots of 100 or more.
      const lotShares = grid === "real" ? (feeModel.kind === "kalshi" ? ONE : 10_000n) : feeModel.kind === "limitless" && lot === 1n ? 100n : lot;
      const asks: Level[] = [...prices]
        .sort((a, b) => a - b)
        .map((p, i) => {
          const [lots, odd] = sizes[i]!;
          return { price: BigInt(p) * 10_000n, shares: lots * lotShares + (grid === "real" ? 0n : odd % lotShares) };
        });
      return {
        venue: name,
        venueMarketId: `${name}-m`,
        asks,
        feeModel,
        tickSize: 10_000n,
        minOrderShares: minLots * lotShares,
        lotShares,
        latencyMs,
      };
    });
}

/**
 * Every venue on Opinion's fee curve, at its rates of 4% and 8% (1% and 2% at P = 0.5), with a
 * minimum fee per order from none to more than most of these small books' legs pay by the curve,
 * and a minimum order amount from none to more than most of their legs' amounts.
 */
function onOpinion<R, Q extends { feeModel: FeeModel }>(cases: fc.Arbitrary<{ req: R; quotes: Q[] }>): fc.Arbitrary<{ req: R; quotes: Q[] }> {
  return cases.chain(({ req, quotes }) =>
    fc.tuple(...quotes.map(() => fc.tuple(fc.constantFrom(0n, 50n, 500n, 5_000n, 250_000n), fc.constantFrom(0n, 1_000n, 50_000n, 1_000_000n, 5_000_000n)))).map((minimums) => ({
      req,
      quotes: quotes.map((q, i) => {
        const [minFee, minOrderAmount] = minimums[i]!;
        return { ...q, feeModel: { kind: "opinion" as const, ratePpm: i % 2 === 0 ? 40_000n : 80_000n, minFee }, minOrderAmount };
      }),
    })),
  );
}

/** The same cases with every venue on Opinion's fee curve. */
export function opinionCase(grid: "any" | "real", shape: Shape = SMALL): fc.Arbitrary<{ req: PlanRequest; quotes: VenueQuote[] }> {
  return onOpinion(routingCase(grid, shape));
}

/** The sell cases with every venue on Opinion's fee curve. */
export function opinionSaleCase(grid: "any" | "real", shape: Shape = SMALL): fc.Arbitrary<{ req: SellRequest; quotes: SellQuote[] }> {
  return onOpinion(saleCase(grid, shape));
}

/**
 * The same small books as bids (prices descending), each venue holding all of its book, none of
 * it, or some shares in between: the cap the inventory puts on its sell.
 */
function venueSellQuote(name: string, grid: "any" | "real", shape: Shape = SMALL): fc.Arbitrary<SellQuote> {
  return venueQuote(name, grid, shape).chain(({ asks, ...q }) => {
    const depth = asks.reduce((s, l) => s + l.shares, 0n);
    const inventory = fc.oneof(
      { weight: 3, arbitrary: fc.constant(1_000_000n * ONE) },
      { weight: 1, arbitrary: fc.constant(0n) },
      { weight: 3, arbitrary: fc.bigInt({ min: 1n, max: depth }) },
    );
    return inventory.map((inventory) => ({ ...q, bids: [...asks].reverse(), inventory }));
  });
}

/** Sells of up to 1.3 times what the venues together hold and could sell, or of up to 30 shares whatever they hold. */
export function saleCase(grid: "any" | "real", shape: Shape = SMALL): fc.Arbitrary<{ req: SellRequest; quotes: SellQuote[] }> {
  return fc
    .integer({ min: shape.venues[0], max: shape.venues[1] })
    .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => venueSellQuote(`v${i}`, grid, shape))))
    .chain((quotes) => {
      const held = quotes.reduce((s, q) => {
        const depth = q.bids.reduce((d, l) => d + l.shares, 0n);
        return s + (depth < q.inventory ? depth : q.inventory);
      }, 0n);
      return fc.record({
        quotes: fc.constant(quotes),
        shares: fc.oneof({ weight: 4, arbitrary: fc.bigInt({ min: 1n, max: (held * 13n) / 10n + 1n }) }, { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: 30_000_000n }) }),
        maxSlippage: fc.constantFrom(0n, 10_000n, 100_000n, 500_000n),
        timeInForce: fc.constantFrom("FOK" as const, "IOC" as const),
      });
    })
    .map(({ quotes, shares, maxSlippage, timeInForce }) => ({
      quotes,
      req: { side: "sell" as const, shares, maxSlippage, strategy: "optimize_price" as const, timeInForce },
    }));
}

/** Buys of up to 25 USDC over small books, more over larger ones (in proportion to their lots). */
export function routingCase(grid: "any" | "real", shape: Shape = SMALL): fc.Arbitrary<{ req: PlanRequest; quotes: VenueQuote[] }> {
  return fc
    .integer({ min: shape.venues[0], max: shape.venues[1] })
    .chain((n) =>
      fc.record({
        quotes: fc.tuple(...Array.from({ length: n }, (_, i) => venueQuote(`v${i}`, grid, shape))),
        amount: fc.bigInt({ min: 1n, max: (25_000_000n * shape.lots * BigInt(shape.levels)) / (SMALL.lots * BigInt(SMALL.levels)) }),
        maxSlippage: fc.constantFrom(0n, 10_000n, 100_000n, 500_000n),
        timeInForce: fc.constantFrom("FOK" as const, "IOC" as const),
      }),
    )
    .map(({ quotes, amount, maxSlippage, timeInForce }) => ({
      quotes,
      req: { amount, maxSlippage, strategy: "optimize_price" as const, timeInForce },
    }));
}

/** A venue's choices in the brute force: no leg, or k whole lots from its minimum up to its eligible depth. */
interface Option {
  lots: bigint;
  shares: ShareMicro;
  cost: Micro;
  /** What the leg can cost at most: all of it at its limit, as the plan must keep within the amount. */
  worst: Micro;
}

export interface Optimum {
  shares: ShareMicro;
  cost: Micro;
  legs: number;
  /** Whether every / some allocation reaching this optimum leaves only dust (what FOK calls filled). */
  dustAll: boolean;
  dustAny: boolean;
}

/**
 * The best marginal ask (`marginalAsk`) of the venues whose books hold a least leg the amount buys (all
 * of the leg at its limit), each venue's the ask that leg ends in; of every venue whose book holds a
 * least leg when the amount buys none.
 */
function referenceOf(req: PlanRequest, quotes: readonly VenueQuote[]): PriceMicro | undefined {
  const tops = quotes.flatMap((q) => {
    const { minLots, options } = optionsOf(q, null);
    if (options.length === 1) return [];
    return [{ price: marginalAsk(q.feeModel, q.asks[walk(q.asks, minLots * q.lotShares).length - 1]!.price), buys: options[1]!.worst <= req.amount }];
  });
  const bought = tops.filter((t) => t.buys);
  const from = bought.length > 0 ? bought : tops;
  return from.length === 0 ? undefined : from.map((t) => t.price).reduce((m, x) => (x < m ? x : m));
}

function optionsOf(q: VenueQuote, limit: PriceMicro | null): { minLots: bigint; depthLots: bigint; options: Option[] } {
  const levels: Level[] = [];
  for (const l of q.asks) {
    if (limit !== null && marginalAsk(q.feeModel, l.price) > limit) break;
    levels.push(l);
  }
  const { first, last: depthLots } = amountLots(q, levels, levels.reduce((s, l) => s + l.shares, 0n) / q.lotShares, (gross) => deliveredShares(q.feeModel, gross));
  const minLots = leastLots(q, levels, depthLots, "buy", first);
  const options: Option[] = [{ lots: 0n, shares: 0n, cost: 0n, worst: 0n }];
  for (let k = minLots; k <= depthLots; k++) {
    const fills = walk(levels, k * q.lotShares);
    const cost = fills.reduce((s, f) => s + notional(f.price, f.shares), 0n) + (feeInShares(q.feeModel, "buy") ? 0n : orderFee(q.feeModel, fills));
    const atLimit = worstOrderCost(q.feeModel, fills[fills.length - 1]!.price, k * q.lotShares);
    options.push({ lots: k, shares: deliveredShares(q.feeModel, k * q.lotShares), cost, worst: atLimit > cost ? atLimit : cost });
  }
  return { minLots, depthLots, options };
}

/**
 * The optimum by enumerating every allocation of whole lots (or none) on every venue: the most
 * shares whose legs' worst cases fit the amount and whose average price keeps the limit (none with
 * `limit` null: the whole book, uncapped), then the lowest cost, then the fewest legs.
 */
export function bruteForce(req: PlanRequest, quotes: readonly VenueQuote[], limit: PriceMicro | null): Optimum {
  const venues = quotes.map((q) => ({ q, ...optionsOf(q, limit) }));
  const beyond = limit ?? ONE;
  const fits = (worst: Micro, cost: Micro, shares: ShareMicro) => worst <= req.amount && (limit === null || cost * ONE <= limit * shares);
  /** FOK's "filled": no venue could take one more lot (or its minimum) within the limits, a venue whose book ran out selling at `beyond`. */
  const dust = (picked: Option[], shares: ShareMicro, cost: Micro, worst: Micro) =>
    venues.every(({ q, minLots, depthLots, options }, v) => {
      if (depthLots < minLots) return true;
      const o = picked[v]!;
      const next = o.lots === 0n ? minLots : o.lots + 1n;
      if (next > depthLots) return ceilDiv(beyond * deliveredShares(q.feeModel, (next - o.lots) * q.lotShares), ONE) > req.amount - worst;
      const n = options[Number(next - minLots) + 1]!;
      return !fits(worst - o.worst + n.worst, cost - o.cost + n.cost, shares - o.shares + n.shares);
    });
  let best: Optimum = { shares: 0n, cost: 0n, legs: 0, dustAll: false, dustAny: false };
  const picked: Option[] = [];
  const visit = (v: number, shares: bigint, cost: bigint, worst: bigint, legs: number) => {
    if (v === venues.length) {
      if (shares === 0n || !fits(worst, cost, shares)) return;
      const d = dust(picked, shares, cost, worst);
      if (shares > best.shares || (shares === best.shares && (cost < best.cost || (cost === best.cost && legs < best.legs)))) {
        best = { shares, cost, legs, dustAll: d, dustAny: d };
      } else if (shares === best.shares && cost === best.cost && legs === best.legs) {
        best = { ...best, dustAll: best.dustAll && d, dustAny: best.dustAny || d };
      }
      return;
    }
    for (const o of venues[v]!.options) {
      if (worst + o.worst > req.amount) break;
      picked[v] = o;
      visit(v + 1, shares + o.shares, cost + o.cost, worst + o.worst, legs + (o.lots > 0n ? 1 : 0));
    }
  };
  visit(0, 0n, 0n, 0n, 0);
  return best;
}

/** What the router must answer: a plan of this optimum, or a refusal with one of these codes. */
export type Expected =
  | { kind: "plan"; shares: ShareMicro; cost: Micro; legs: number }
  | { kind: "refusal"; codes: RefusalCode[] }
  | { kind: "either"; shares: ShareMicro; cost: Micro; legs: number; codes: RefusalCode[] };

/**
 * The answer the exhaustive search gives: IOC buys the optimum within the slippage limit; FOK buys it
 * only when it leaves dust. A refusal says `insufficient_liquidity` only when the uncapped book could
 * not do it either (fill the order under FOK, buy anything under IOC), `order_too_small` when the
 * amount cannot buy any venue's minimum, `slippage_exceeded` otherwise. Ties between allocations of
 * the same optimum that differ on dust allow either answer.
 */
export function expected(req: PlanRequest, quotes: readonly VenueQuote[]): Expected {
  const reference = referenceOf(req, quotes);
  if (reference === undefined) return { kind: "refusal", codes: ["insufficient_liquidity"] };
  const limit = req.limitPrice ?? (reference * (ONE + req.maxSlippage)) / ONE;
  const best = bruteForce(req, quotes, limit);
  const uncappedCodes = (): RefusalCode[] => {
    const full = bruteForce(req, quotes, null);
    if (full.dustAll) return ["slippage_exceeded"];
    if (!full.dustAny) return ["insufficient_liquidity"];
    return ["slippage_exceeded", "insufficient_liquidity"];
  };
  if (best.shares === 0n) {
    const mins = quotes.flatMap((q) => {
      const { minLots, depthLots, options } = optionsOf(q, null);
      return depthLots >= minLots ? [options[1]!.worst] : [];
    });
    if (mins.length === 0) return { kind: "refusal", codes: ["insufficient_liquidity"] };
    if (mins.every((m) => m > req.amount)) return { kind: "refusal", codes: ["order_too_small"] };
    return { kind: "refusal", codes: req.timeInForce === "IOC" ? ["slippage_exceeded"] : uncappedCodes() };
  }
  const found = { shares: best.shares, cost: best.cost, legs: best.legs };
  if (req.timeInForce === "IOC" || best.dustAll) return { kind: "plan", ...found };
  if (!best.dustAny) return { kind: "refusal", codes: uncappedCodes() };
  return { kind: "either", ...found, codes: uncappedCodes() };
}

/** How a router's answer differs from the expected one, or undefined when it matches. */
export function mismatch(want: Expected, got: Plan | Refusal): string | undefined {
  if (got.kind === "refusal") {
    if (want.kind === "plan") return `refused ${got.code} where a plan of ${want.shares} shares exists`;
    return want.codes.includes(got.code) ? undefined : `refused ${got.code}, expected ${want.codes.join(" or ")}`;
  }
  if (want.kind === "refusal") return `planned ${got.shares} shares, expected a refusal (${want.codes.join(" or ")})`;
  const triple = (x: { shares: bigint; cost: bigint; legs: number }) => `${x.shares} shares for ${x.cost} in ${x.legs} legs`;
  const planned = { shares: got.shares, cost: got.cost, legs: got.legs.length };
  return planned.shares === want.shares && planned.cost === want.cost && planned.legs === want.legs
    ? undefined
    : `planned ${triple(planned)}, optimum ${triple(want)}`;
}

function walk(levels: readonly Level[], shares: ShareMicro): Level[] {
  const fills: Level[] = [];
  let left = shares;
  for (const l of levels) {
    if (left === 0n) break;
    const take = left < l.shares ? left : l.shares;
    fills.push({ price: l.price, shares: take });
    left -= take;
  }
  return fills;
}

/** Every property a plan must have whatever the strategy; returns the first one broken. */
export function planViolation(req: PlanRequest, quotes: readonly VenueQuote[], p: Plan): string | undefined {
  if (p.cost > req.amount) return "cost over amount";
  if (p.worstCost > req.amount) return "worst-case cost over amount";
  if (p.cost * ONE > p.limitPrice * p.shares) return "average fee-adjusted price over the limit";
  const reference = referenceOf(req, quotes);
  if (p.referencePrice !== reference) return "reference price";
  if (p.limitPrice !== (req.limitPrice ?? (reference * (ONE + req.maxSlippage)) / ONE)) return "limit price";
  if (new Set(p.legs.map((l) => l.venue)).size !== p.legs.length) return "two legs on one venue";
  let shares = 0n;
  let cost = 0n;
  for (const leg of p.legs) {
    const q = quotes.find((x) => x.venue === leg.venue)!;
    const gross = leg.levels.reduce((s, l) => s + l.shares, 0n);
    if (gross % q.lotShares !== 0n) return `${leg.venue}: shares not a multiple of the lot`;
    if (gross < q.minOrderShares) return `${leg.venue}: under the minimum size`;
    if (proceedsOf(leg.limitPrice, leg.shares) < (q.minOrderAmount ?? 0n)) return `${leg.venue}: under the minimum amount`;
    if (deliveredShares(q.feeModel, gross) !== leg.shares) return `${leg.venue}: shares delivered`;
    if (feeInShares(q.feeModel, "buy")) {
      const net = netOfWithheld(leg.levels, gross - leg.shares);
      if (leg.fee !== net.reduce((s, l) => s + l.fee, 0n)) return `${leg.venue}: fee differs from the contracts withheld`;
      if (leg.notional !== net.reduce((s, l) => s + notional(l.price, l.shares), 0n)) return `${leg.venue}: notional`;
      if (leg.notional + leg.fee !== leg.levels.reduce((s, l) => s + notional(l.price, l.shares), 0n)) return `${leg.venue}: cost differs from what the venue takes`;
    } else {
      if (leg.fee !== orderFee(q.feeModel, leg.levels)) return `${leg.venue}: fee differs from orderFee`;
      if (leg.notional !== leg.levels.reduce((s, l) => s + notional(l.price, l.shares), 0n)) return `${leg.venue}: notional`;
    }
    for (const [i, l] of leg.levels.entries()) {
      const book = q.asks[i]!;
      if (book.price !== l.price || l.shares > book.shares) return `${leg.venue}: not a prefix of the book`;
      if (i < leg.levels.length - 1 && l.shares !== book.shares) return `${leg.venue}: skips part of a level`;
      if (marginalAsk(q.feeModel, book.price) > p.limitPrice) return `${leg.venue}: takes a level over the limit`;
    }
    if (leg.limitPrice !== leg.levels[leg.levels.length - 1]!.price) return `${leg.venue}: limit price`;
    if (leg.worstCost < worstOrderCost(q.feeModel, leg.limitPrice, gross) || leg.worstCost < leg.notional + leg.fee) return `${leg.venue}: worst-case cost`;
    shares += leg.shares;
    cost += leg.notional + leg.fee;
  }
  const sum = (f: (l: Plan["legs"][number]) => bigint) => p.legs.reduce((s, l) => s + f(l), 0n);
  if (shares !== p.shares || cost !== p.cost || p.notional + p.fees !== p.cost) return "totals";
  if (sum((l) => l.notional) !== p.notional || sum((l) => l.fee) !== p.fees || sum((l) => l.worstCost) !== p.worstCost) return "totals of notional, fees or worst cases";
  return undefined;
}

/** A venue's choices in the sell brute force: no leg, or k whole lots from its minimum up to what it can sell within the floor. */
interface SaleOption {
  lots: bigint;
  shares: ShareMicro;
  proceeds: Micro;
}

export interface SaleOptimum {
  shares: ShareMicro;
  proceeds: Micro;
  legs: number;
  /** Whether every / some sale reaching this optimum leaves only dust (what FOK calls filled). */
  dustAll: boolean;
  dustAny: boolean;
}

function minLotsOf(q: { minOrderShares: ShareMicro; lotShares: ShareMicro }): bigint {
  return ceilDiv(q.minOrderShares, q.lotShares) || 1n;
}

/**
 * The fewest lots a leg on this venue may take: its minimum size, at least `from`, and on a venue
 * with a minimum fee per order the first lot count whose fee by the formula alone reaches that
 * minimum (crossfill's rule, docs/router.md "Minimum fee"); depthLots + 1 when the eligible book
 * holds no such count.
 */
function leastLots(q: VenueQuote | SellQuote, levels: readonly Level[], depthLots: bigint, side: "buy" | "sell", from: bigint): bigint {
  const least = feeInShares(q.feeModel, side) ? 0n : minimumFee(q.feeModel);
  const size = minLotsOf(q);
  let k = size > from ? size : from;
  while (k <= depthLots && curveFee(q.feeModel, walk(levels, k * q.lotShares)) < least) k++;
  return k;
}

/**
 * The lot counts of the eligible book (`depthLots` of them) a leg may take by the venue's minimum
 * order amount (crossfill's rule, docs/router.md "Minimum amount"): from the first whose amount at
 * its limit, of the shares it delivers, reaches the minimum up to the last before one falls back
 * under it; first past the book when none reaches it.
 */
function amountLots(q: VenueQuote | SellQuote, levels: readonly Level[], depthLots: bigint, delivered: (gross: ShareMicro) => ShareMicro): { first: bigint; last: bigint } {
  const reaches = (k: bigint) => {
    const fills = walk(levels, k * q.lotShares);
    return proceedsOf(fills[fills.length - 1]!.price, delivered(k * q.lotShares)) >= (q.minOrderAmount ?? 0n);
  };
  let first = 1n;
  while (first <= depthLots && !reaches(first)) first++;
  let last = first;
  while (last < depthLots && reaches(last + 1n)) last++;
  return { first, last: last < depthLots ? last : depthLots };
}

/**
 * The best net bid of the venues that can sell a leg of the shares held there (down to bids that net
 * nothing) and of the order's shares, each venue's the bid its least leg ends in; of every venue that
 * can sell when the order's shares reach no least leg; undefined when none nets more than nothing.
 */
function saleReferenceOf(req: SellRequest, quotes: readonly SellQuote[]): PriceMicro | undefined {
  const tops = quotes.flatMap((q) => {
    const { minLots, options } = saleOptionsOf(q, 0n);
    if (options.length === 1) return [];
    return [{ price: marginalBid(q.feeModel, q.bids[walk(q.bids, minLots * q.lotShares).length - 1]!.price), sells: minLots * q.lotShares <= req.shares }];
  });
  const sold = tops.filter((t) => t.sells);
  const from = sold.length > 0 ? sold : tops;
  const best = from.length === 0 ? undefined : from.map((t) => t.price).reduce((m, x) => (x > m ? x : m));
  return best === undefined || best <= 0n ? undefined : best;
}

function saleOptionsOf(q: SellQuote, floor: PriceMicro): { minLots: bigint; depthLots: bigint; options: SaleOption[] } {
  const levels: Level[] = [];
  for (const l of q.bids) {
    if (marginalBid(q.feeModel, l.price) < floor) break;
    levels.push(l);
  }
  const held = levels.reduce((s, l) => s + l.shares, 0n);
  const { first, last: depthLots } = amountLots(q, levels, (held < q.inventory ? held : q.inventory) / q.lotShares, (gross) => gross);
  const minLots = leastLots(q, levels, depthLots, "sell", first);
  const options: SaleOption[] = [{ lots: 0n, shares: 0n, proceeds: 0n }];
  for (let k = minLots; k <= depthLots; k++) {
    const fills = walk(levels, k * q.lotShares);
    options.push({ lots: k, shares: k * q.lotShares, proceeds: fills.reduce((s, f) => s + proceedsOf(f.price, f.shares), 0n) - orderFee(q.feeModel, fills) });
  }
  return { minLots, depthLots, options };
}

/**
 * The sell optimum by enumerating every sale of whole lots (or none) on every venue: the most
 * proceeds among the non-empty sales of at most the order's shares whose average net price keeps
 * the floor, then the most shares, then the fewest legs.
 */
export function bruteSale(req: SellRequest, quotes: readonly SellQuote[], floor: PriceMicro): SaleOptimum {
  const venues = quotes.map((q) => ({ q, ...saleOptionsOf(q, floor) }));
  const fits = (proceeds: Micro, shares: ShareMicro) => shares <= req.shares && proceeds * ONE >= floor * shares;
  /** FOK's "filled": no venue could sell one more lot (or its minimum) of what is left within the floor, a venue out of bids or inventory wanting more. */
  const dust = (picked: SaleOption[], shares: ShareMicro, proceeds: Micro) =>
    venues.every(({ q, minLots, depthLots, options }, v) => {
      if (depthLots < minLots) return true;
      const o = picked[v]!;
      const next = o.lots === 0n ? minLots : o.lots + 1n;
      if ((next - o.lots) * q.lotShares > req.shares - shares) return true;
      if (next > depthLots) return false;
      const n = options[Number(next - minLots) + 1]!;
      return !fits(proceeds - o.proceeds + n.proceeds, shares - o.shares + n.shares);
    });
  let best: SaleOptimum | undefined;
  const picked: SaleOption[] = [];
  const visit = (v: number, shares: bigint, proceeds: bigint, legs: number) => {
    if (v === venues.length) {
      if (shares === 0n || !fits(proceeds, shares)) return;
      const d = dust(picked, shares, proceeds);
      if (best === undefined || proceeds > best.proceeds || (proceeds === best.proceeds && (shares > best.shares || (shares === best.shares && legs < best.legs)))) {
        best = { shares, proceeds, legs, dustAll: d, dustAny: d };
      } else if (shares === best.shares && proceeds === best.proceeds && legs === best.legs) {
        best = { ...best, dustAll: best.dustAll && d, dustAny: best.dustAny || d };
      }
      return;
    }
    for (const o of venues[v]!.options) {
      if (shares + o.shares > req.shares) break;
      picked[v] = o;
      visit(v + 1, shares + o.shares, proceeds + o.proceeds, legs + (o.lots > 0n ? 1 : 0));
    }
  };
  visit(0, 0n, 0n, 0);
  return best ?? { shares: 0n, proceeds: 0n, legs: 0, dustAll: false, dustAny: false };
}

/** What the router must answer to a sell: a plan of this optimum, or a refusal with one of these codes. */
export type SaleExpected =
  | { kind: "plan"; shares: ShareMicro; proceeds: Micro; legs: number }
  | { kind: "refusal"; codes: RefusalCode[] }
  | { kind: "either"; shares: ShareMicro; proceeds: Micro; legs: number; codes: RefusalCode[] };

/**
 * The answer the exhaustive search gives a sell, by the rules of `expected` for buys: IOC sells the
 * optimum within the floor, FOK only when it leaves dust; a refusal says `insufficient_liquidity`
 * only when the book without a slippage floor (down to bids that net nothing) could not do it either,
 * `order_too_small` when the shares are under every venue's minimum, `slippage_exceeded` otherwise.
 */
export function expectedSale(req: SellRequest, quotes: readonly SellQuote[]): SaleExpected {
  const reference = saleReferenceOf(req, quotes);
  if (reference === undefined) return { kind: "refusal", codes: ["insufficient_liquidity"] };
  const floor = req.limitPrice ?? ceilDiv(reference * (ONE - req.maxSlippage), ONE);
  const best = bruteSale(req, quotes, floor);
  const uncappedCodes = (): RefusalCode[] => {
    const full = bruteSale(req, quotes, 0n);
    if (full.dustAll) return ["slippage_exceeded"];
    if (!full.dustAny) return ["insufficient_liquidity"];
    return ["slippage_exceeded", "insufficient_liquidity"];
  };
  if (best.shares === 0n) {
    const mins = quotes.flatMap((q) => {
      const { minLots, depthLots } = saleOptionsOf(q, 0n);
      return depthLots >= minLots ? [minLots * q.lotShares] : [];
    });
    if (mins.length === 0) return { kind: "refusal", codes: ["insufficient_liquidity"] };
    if (mins.every((m) => m > req.shares)) return { kind: "refusal", codes: ["order_too_small"] };
    return { kind: "refusal", codes: req.timeInForce === "IOC" ? ["slippage_exceeded"] : uncappedCodes() };
  }
  const found = { shares: best.shares, proceeds: best.proceeds, legs: best.legs };
  if (req.timeInForce === "IOC" || best.dustAll) return { kind: "plan", ...found };
  if (!best.dustAny) return { kind: "refusal", codes: uncappedCodes() };
  return { kind: "either", ...found, codes: uncappedCodes() };
}

/** How a router's answer to a sell differs from the expected one, or undefined when it matches. */
export function saleMismatch(want: SaleExpected, got: SellPlan | Refusal): string | undefined {
  if (got.kind === "refusal") {
    if (want.kind === "plan") return `refused ${got.code} where a sale of ${want.shares} shares exists`;
    return want.codes.includes(got.code) ? undefined : `refused ${got.code}, expected ${want.codes.join(" or ")}`;
  }
  if (want.kind === "refusal") return `planned ${got.shares} shares, expected a refusal (${want.codes.join(" or ")})`;
  const triple = (x: { shares: bigint; proceeds: bigint; legs: number }) => `${x.shares} shares for ${x.proceeds} in ${x.legs} legs`;
  const planned = { shares: got.shares, proceeds: got.proceeds, legs: got.legs.length };
  return planned.shares === want.shares && planned.proceeds === want.proceeds && planned.legs === want.legs
    ? undefined
    : `planned ${triple(planned)}, optimum ${triple(want)}`;
}

/** Every property a sell plan must have whatever the strategy; returns the first one broken. */
export function salePlanViolation(req: SellRequest, quotes: readonly SellQuote[], p: SellPlan): string | undefined {
  if (p.shares > req.shares) return "more shares than the order";
  if (p.proceeds * ONE < p.limitPrice * p.shares) return "average net price under the floor";
  const reference = saleReferenceOf(req, quotes);
  if (p.referencePrice !== reference) return "reference price";
  if (p.limitPrice !== (req.limitPrice ?? ceilDiv(reference * (ONE - req.maxSlippage), ONE))) return "floor";
  if (new Set(p.legs.map((l) => l.venue)).size !== p.legs.length) return "two legs on one venue";
  let shares = 0n;
  let proceeds = 0n;
  for (const leg of p.legs) {
    const q = quotes.find((x) => x.venue === leg.venue)!;
    if (leg.shares % q.lotShares !== 0n) return `${leg.venue}: shares not a multiple of the lot`;
    if (leg.shares < q.minOrderShares) return `${leg.venue}: under the minimum size`;
    if (proceedsOf(leg.limitPrice, leg.shares) < (q.minOrderAmount ?? 0n)) return `${leg.venue}: under the minimum amount`;
    if (leg.shares > q.inventory) return `${leg.venue}: more than the inventory`;
    if (leg.fee !== orderFee(q.feeModel, leg.levels)) return `${leg.venue}: fee differs from orderFee`;
    if (leg.notional !== leg.levels.reduce((s, l) => s + proceedsOf(l.price, l.shares), 0n)) return `${leg.venue}: notional`;
    if (leg.proceeds !== leg.notional - leg.fee) return `${leg.venue}: proceeds`;
    if (leg.levels.reduce((s, l) => s + l.shares, 0n) !== leg.shares) return `${leg.venue}: level shares`;
    for (const [i, l] of leg.levels.entries()) {
      const book = q.bids[i]!;
      if (book.price !== l.price || l.shares > book.shares) return `${leg.venue}: not a prefix of the book`;
      if (i < leg.levels.length - 1 && l.shares !== book.shares) return `${leg.venue}: skips part of a level`;
      if (marginalBid(q.feeModel, book.price) < p.limitPrice) return `${leg.venue}: takes a level under the floor`;
    }
    if (leg.limitPrice !== leg.levels[leg.levels.length - 1]!.price) return `${leg.venue}: limit price`;
    shares += leg.shares;
    proceeds += leg.proceeds;
  }
  if (shares !== p.shares || proceeds !== p.proceeds || p.notional - p.fees !== p.proceeds) return "totals";
  if (p.legs.reduce((s, l) => s + l.notional, 0n) !== p.notional || p.legs.reduce((s, l) => s + l.fee, 0n) !== p.fees) return "totals of notional or fees";
  return undefined;
}

const json = (x: unknown) => JSON.stringify(x, (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v));

/**
 * What routing past venue queues must have done to plan `p` on `quotes` (src/router/route.ts), stated
 * apart from the router: of the sets of venues within MAX_QUEUE_MS of some venue's queue, the least that
 * holds every leg is the one routed on; none of the smaller ones fills the order at the plan's limit, nor,
 * under IOC, takes as many shares as every venue would; and the plan is what those venues alone give at
 * that limit, or, when the set is every venue, what the same books without queues give. Undefined when
 * all holds.
 */
export function queueViolation<R extends PlanRequest | SellRequest, Q extends VenueQuote | SellQuote, P extends Plan | SellPlan>(
  route: (req: R, quotes: Q[]) => P | Refusal,
  req: R,
  quotes: Q[],
  p: P,
): string | undefined {
  const delay = (q: Q) => q.queueDelayMs ?? 0;
  const unqueued = (qs: Q[]) => qs.map((q) => ({ ...q, queueDelayMs: undefined }));
  const sets = [...new Set(quotes.map(delay))].sort((x, y) => x - y).map((d) => quotes.filter((q) => delay(q) <= d + MAX_QUEUE_MS));
  const k = sets.findIndex((set) => p.legs.every((l) => set.some((q) => q.venue === l.venue)));
  const at = { ...req, limitPrice: p.limitPrice };
  const everywhere = route(req, unqueued(quotes));
  for (const smaller of sets.slice(0, k)) {
    const names = smaller.map((q) => q.venue).join(", ");
    if (route({ ...at, timeInForce: "FOK" }, unqueued(smaller)).kind === "plan") return `${names} fill the order, but the plan goes past their queues`;
    const partial = route(at, unqueued(smaller));
    if (req.timeInForce === "IOC" && partial.kind === "plan" && (everywhere.kind === "refusal" || partial.shares >= everywhere.shares)) {
      return `${names} take ${partial.shares} shares, as many as every venue, but the plan goes past their queues`;
    }
  }
  const set = sets[k]!;
  if (set.length === quotes.length) return json(p) === json(everywhere) ? undefined : "the plan on every venue is not that of the books without queues";
  const alone = route(at, unqueued(set));
  return alone.kind === "plan" && json(alone.legs) === json(p.legs) ? undefined : `the plan is not what ${set.map((q) => q.venue).join(", ")} alone give at its limit`;
}
