import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ceilDiv, ONE } from "../domain/money.ts";
import { feeAdjustedPrice } from "../domain/fees.ts";
import { plan } from "./index.ts";
import { bruteForce, opinionCase, planViolation, routingCase } from "./testkit.ts";
import type { PlanRequest, VenueQuote } from "./types.ts";

const RUNS = 400;

/** The bound allocate.ts proves: one lot plus what the venues' rounding allowance buys at the cheapest eligible price. */
function proven(quotes: readonly VenueQuote[], limit: bigint): bigint {
  let lot = 0n;
  let allowance = 0n;
  let cheapest = ONE;
  for (const q of quotes) {
    if (q.lotShares > lot) lot = q.lotShares;
    const unit = q.feeModel.kind === "kalshi" ? 10_000n : q.feeModel.kind === "polymarket" ? 10n : 1n;
    allowance += unit + BigInt(q.asks.length);
    for (const l of q.asks) if (feeAdjustedPrice(q.feeModel, l) <= limit && l.price < cheapest) cheapest = l.price;
  }
  return lot + ceilDiv(allowance * ONE, cheapest);
}

function iocPrice(req: PlanRequest): PlanRequest {
  return { ...req, timeInForce: "IOC" };
}

describe("optimize_price against the brute-force optimum", () => {
  it("is never better than the optimum and within the proven bound of it", () => {
    let exact = 0;
    fc.assert(
      fc.property(routingCase("any"), ({ req, quotes }) => {
        const best = bruteForce(req, quotes);
        const p = plan(iocPrice(req), quotes);
        if (p.kind === "refusal") {
          expect(best.shares).toBeLessThanOrEqual(proven(quotes, best.limit));
          if (best.shares === 0n) exact++;
          return;
        }
        expect(planViolation(req, quotes, p)).toBeUndefined();
        expect(p.shares).toBeLessThanOrEqual(best.shares);
        expect(best.shares - p.shares).toBeLessThanOrEqual(proven(quotes, best.limit));
        if (p.shares === best.shares && p.cost === best.cost && p.legs.length === best.legs) exact++;
      }),
      { numRuns: RUNS, seed: 20_260_101 },
    );
    // Rounding luck is all that the greedy can miss; it should be rare.
    expect(exact).toBeGreaterThanOrEqual(RUNS * 0.99);
  });

  it("is within one lot per venue of the optimum on real venue grids", () => {
    fc.assert(
      fc.property(routingCase("real"), ({ req, quotes }) => {
        const best = bruteForce(req, quotes);
        const p = plan(iocPrice(req), quotes);
        const shares = p.kind === "plan" ? p.shares : 0n;
        const slack = quotes.reduce((s, q) => s + q.lotShares, 0n);
        expect(shares).toBeLessThanOrEqual(best.shares);
        expect(best.shares - shares).toBeLessThanOrEqual(slack);
      }),
      { numRuns: RUNS, seed: 7 },
    );
  });

  it("is exact with one venue, for either strategy", () => {
    fc.assert(
      fc.property(routingCase("any"), fc.constantFrom("optimize_price" as const, "optimize_speed" as const), ({ req, quotes }, strategy) => {
        const one = quotes.slice(0, 1);
        const best = bruteForce(req, one);
        const p = plan({ ...iocPrice(req), strategy }, one);
        expect(p.kind === "plan" ? [p.shares, p.cost] : [0n, 0n]).toEqual([best.shares, best.cost]);
      }),
      { numRuns: RUNS, seed: 13 },
    );
  });

  it("is exact with one venue on Opinion's fee curve, and within one lot per venue of the optimum across venues", () => {
    fc.assert(
      fc.property(opinionCase("any"), ({ req, quotes }) => {
        const one = quotes.slice(0, 1);
        const best = bruteForce(req, one);
        const p = plan(iocPrice(req), one);
        expect(p.kind === "plan" ? [p.shares, p.cost] : [0n, 0n]).toEqual([best.shares, best.cost]);
      }),
      { numRuns: RUNS, seed: 17 },
    );
    fc.assert(
      fc.property(opinionCase("real"), ({ req, quotes }) => {
        const best = bruteForce(req, quotes);
        const p = plan(iocPrice(req), quotes);
        const shares = p.kind === "plan" ? p.shares : 0n;
        if (p.kind === "plan") expect(planViolation(req, quotes, p)).toBeUndefined();
        expect(shares).toBeLessThanOrEqual(best.shares);
        expect(best.shares - shares).toBeLessThanOrEqual(quotes.reduce((s, q) => s + q.lotShares, 0n));
      }),
      { numRuns: RUNS, seed: 19 },
    );
  });

  it("keeps every invariant for either strategy and time in force", () => {
    fc.assert(
      fc.property(
        routingCase("any"),
        fc.constantFrom("optimize_price" as const, "optimize_speed" as const),
        ({ req, quotes }, strategy) => {
          const p = plan({ ...req, strategy }, quotes);
          if (p.kind === "plan") {
            expect(planViolation(req, quotes, p)).toBeUndefined();
            if (strategy === "optimize_speed") expect(p.legs).toHaveLength(1);
          }
        },
      ),
      { numRuns: RUNS, seed: 11 },
    );
  });

  it("is deterministic", () => {
    fc.assert(
      fc.property(routingCase("any"), ({ req, quotes }) => {
        expect(plan(req, quotes)).toEqual(plan(req, structuredClone(quotes)));
      }),
      { numRuns: 100, seed: 3 },
    );
  });
});
