/**
 * Test support for the router: random books and a brute-force optimum that shares no code with
 * the router beyond the domain's own formulas, so agreement between the two means something.
 */
import fc from "fast-check";
import { ceilDiv, notional, ONE, type Micro, type PriceMicro, type ShareMicro } from "../domain/money.ts";
import { feeAdjustedPrice, orderFee, worstOrderCost, type FeeModel } from "../domain/fees.ts";
import type { Level } from "../domain/types.ts";
import type { Plan, PlanRequest, VenueQuote } from "./types.ts";

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

export function usdc(x: number): Micro {
  return BigInt(Math.round(x * 1e6));
}

const feeModel: fc.Arbitrary<FeeModel> = fc.oneof(
  fc.constant(KALSHI),
  fc.record({
    kind: fc.constant("polymarket" as const),
    ratePpm: fc.constantFrom(0n, 20_000n, 250_000n),
    exponent: fc.constantFrom(1 as const, 2 as const),
  }),
  fc.record({ kind: fc.constant("limitless" as const), ratePpm: fc.constantFrom(0n, 10_000n, 30_000n) }),
);

/** Small books: at most 3 levels of at most 8 lots (plus an odd remainder), so every allocation can be enumerated. */
function venueQuote(name: string, grid: "any" | "real"): fc.Arbitrary<VenueQuote> {
  return fc
    .record({
      feeModel,
      lot: grid === "real" ? fc.constant(0n) : fc.constantFrom(1n, 10_000n, 100_000n, 1_000_000n),
      minLots: fc.bigInt({ min: 1n, max: 3n }),
      prices: fc.uniqueArray(fc.integer({ min: 1, max: 99 }), { minLength: 1, maxLength: 3 }),
      sizes: fc.array(fc.tuple(fc.bigInt({ min: 1n, max: 8n }), fc.bigInt({ min: 0n, max: 999_999n })), { minLength: 3, maxLength: 3 }),
      latencyMs: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
    })
    .map(({ feeModel, lot, minLots, prices, sizes, latencyMs }) => {
      // Real grids: Kalshi trades whole contracts at cent prices; the others 0.01-share lots.
      const lotShares = grid === "real" ? (feeModel.kind === "kalshi" ? ONE : 10_000n) : lot;
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

/** The same cases with every venue on Opinion's fee curve, at its rates of 4% and 8% (1% and 2% at P = 0.5). */
export function opinionCase(grid: "any" | "real"): fc.Arbitrary<{ req: PlanRequest; quotes: VenueQuote[] }> {
  return routingCase(grid).map(({ req, quotes }) => ({
    req,
    quotes: quotes.map((q, i): VenueQuote => ({ ...q, feeModel: { kind: "opinion", ratePpm: i % 2 === 0 ? 40_000n : 80_000n } })),
  }));
}

export function routingCase(grid: "any" | "real"): fc.Arbitrary<{ req: PlanRequest; quotes: VenueQuote[] }> {
  return fc
    .integer({ min: 1, max: 3 })
    .chain((n) =>
      fc.record({
        quotes: fc.tuple(...Array.from({ length: n }, (_, i) => venueQuote(`v${i}`, grid))),
        amount: fc.bigInt({ min: 1n, max: 25_000_000n }),
        maxSlippage: fc.constantFrom(0n, 10_000n, 100_000n, 500_000n),
        timeInForce: fc.constantFrom("FOK" as const, "IOC" as const),
      }),
    )
    .map(({ quotes, amount, maxSlippage, timeInForce }) => ({
      quotes,
      req: { amount, maxSlippage, strategy: "optimize_price" as const, timeInForce },
    }));
}

export interface Optimum {
  shares: ShareMicro;
  cost: Micro;
  legs: number;
  limit: PriceMicro;
}

/** The optimum by enumerating every allocation of whole lots (or none) on every venue. */
export function bruteForce(req: PlanRequest, quotes: readonly VenueQuote[]): Optimum {
  const tops = quotes.flatMap((q) => (q.asks[0] ? [feeAdjustedPrice(q.feeModel, q.asks[0])] : []));
  const reference = tops.reduce((m, x) => (x < m ? x : m));
  const limit = (reference * (ONE + req.maxSlippage)) / ONE;
  const venues = quotes.map((q) => {
    const levels: Level[] = [];
    for (const l of q.asks) {
      if (feeAdjustedPrice(q.feeModel, l) > limit) break;
      levels.push(l);
    }
    const depth = levels.reduce((s, l) => s + l.shares, 0n);
    const minLots = ceilDiv(q.minOrderShares, q.lotShares) || 1n;
    const options: { lots: bigint; cost: Micro }[] = [{ lots: 0n, cost: 0n }];
    for (let k = minLots; k * q.lotShares <= depth; k++) options.push({ lots: k, cost: walkCost(q.feeModel, levels, k * q.lotShares) });
    return { q, options };
  });
  let best: Optimum = { shares: 0n, cost: 0n, legs: 0, limit };
  const visit = (v: number, shares: bigint, cost: bigint, legs: number) => {
    if (cost > req.amount) return;
    if (v === venues.length) {
      if (shares === 0n || cost * ONE > limit * shares) return;
      const improves = shares > best.shares || (shares === best.shares && (cost < best.cost || (cost === best.cost && legs < best.legs)));
      if (improves) best = { shares, cost, legs, limit };
      return;
    }
    const { q, options } = venues[v]!;
    for (const o of options) visit(v + 1, shares + o.lots * q.lotShares, cost + o.cost, legs + (o.lots > 0n ? 1 : 0));
  };
  visit(0, 0n, 0n, 0);
  return best;
}

function walkCost(model: FeeModel, levels: readonly Level[], shares: ShareMicro): Micro {
  const fills: Level[] = [];
  let left = shares;
  for (const l of levels) {
    if (left === 0n) break;
    const take = left < l.shares ? left : l.shares;
    fills.push({ price: l.price, shares: take });
    left -= take;
  }
  return fills.reduce((s, f) => s + notional(f.price, f.shares), 0n) + orderFee(model, fills);
}

/** Every property a plan must have whatever the strategy; returns the first one broken. */
export function planViolation(req: PlanRequest, quotes: readonly VenueQuote[], p: Plan): string | undefined {
  if (p.cost > req.amount) return "cost over amount";
  if (p.worstCost > req.amount) return "worst-case cost over amount";
  if (p.cost * ONE > p.limitPrice * p.shares) return "average fee-adjusted price over the limit";
  let shares = 0n;
  let cost = 0n;
  for (const leg of p.legs) {
    const q = quotes.find((x) => x.venue === leg.venue)!;
    if (leg.shares % q.lotShares !== 0n) return `${leg.venue}: shares not a multiple of the lot`;
    if (leg.shares < q.minOrderShares) return `${leg.venue}: under the minimum size`;
    if (leg.fee !== orderFee(q.feeModel, leg.levels)) return `${leg.venue}: fee differs from orderFee`;
    if (leg.notional !== leg.levels.reduce((s, l) => s + notional(l.price, l.shares), 0n)) return `${leg.venue}: notional`;
    if (leg.levels.reduce((s, l) => s + l.shares, 0n) !== leg.shares) return `${leg.venue}: level shares`;
    for (const [i, l] of leg.levels.entries()) {
      const book = q.asks[i]!;
      if (book.price !== l.price || l.shares > book.shares) return `${leg.venue}: not a prefix of the book`;
      if (i < leg.levels.length - 1 && l.shares !== book.shares) return `${leg.venue}: skips part of a level`;
      if (feeAdjustedPrice(q.feeModel, book) > p.limitPrice) return `${leg.venue}: takes a level over the limit`;
    }
    if (leg.limitPrice !== leg.levels[leg.levels.length - 1]!.price) return `${leg.venue}: limit price`;
    if (leg.worstCost < worstOrderCost(q.feeModel, leg.limitPrice, leg.shares) || leg.worstCost < leg.notional + leg.fee) return `${leg.venue}: worst-case cost`;
    shares += leg.shares;
    cost += leg.notional + leg.fee;
  }
  if (shares !== p.shares || cost !== p.cost || p.notional + p.fees !== p.cost) return "totals";
  return undefined;
}
