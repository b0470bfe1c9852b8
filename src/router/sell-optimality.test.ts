import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { MAX_QUEUE_MS, plan } from "./index.ts";
import { expectedSale, opinionSaleCase, queueViolation, saleCase, saleMismatch, salePlanViolation, type Shape } from "./testkit.ts";
import type { SellQuote, SellRequest } from "./types.ts";

/**
 * Every instance is checked against the exhaustive search; the seed is printed on a failure.
 * ROUTER_RUNS and ROUTER_SEED run a larger set, or another (docs/router.md).
 */
const RUNS = Number(process.env.ROUTER_RUNS ?? 20_000);
const SEED = Number(process.env.ROUTER_SEED ?? 20_261_125);

/** Up to 8 venues of small books, and deeper books. */
const MANY: Shape = { venues: [4, 8], levels: 2, lots: 3n };
const DEEP: Shape = { venues: [1, 3], levels: 3, lots: 20n };

function optimal({ req, quotes }: { req: SellRequest; quotes: SellQuote[] }): void {
  const got = plan(req, quotes);
  if (got.kind === "plan") expect(salePlanViolation(req, quotes, got)).toBeUndefined();
  expect(saleMismatch(expectedSale(req, quotes), got)).toBeUndefined();
}

describe("selling for optimize_price against the exhaustive optimum", () => {
  it(`sells for the most USDC or refuses with the right code on ${RUNS} seeded small books, inventories capping venues`, () => {
    fc.assert(fc.property(fc.oneof(saleCase("any"), saleCase("real")), optimal), { numRuns: RUNS, seed: SEED });
  }, 600_000);

  it("sells for the most USDC or refuses with the right code on Opinion's fee curve", () => {
    fc.assert(fc.property(fc.oneof(opinionSaleCase("any"), opinionSaleCase("real")), optimal), { numRuns: 4_000, seed: 19 });
  });

  it("sells for the most USDC or refuses with the right code over 4 to 8 venues", () => {
    fc.assert(fc.property(fc.oneof(saleCase("any", MANY), saleCase("real", MANY)), optimal), { numRuns: 2_000, seed: 37 });
  }, 60_000);

  it("sells for the most USDC or refuses with the right code on books of up to 60 lots a venue", () => {
    fc.assert(fc.property(fc.oneof(saleCase("any", DEEP), saleCase("real", DEEP)), optimal), { numRuns: 2_000, seed: 41 });
  }, 60_000);

  it("keeps every invariant for either strategy and time in force", () => {
    fc.assert(
      fc.property(saleCase("any"), fc.constantFrom("optimize_price" as const, "optimize_speed" as const), ({ req, quotes }, strategy) => {
        const p = plan({ ...req, strategy }, quotes);
        if (p.kind === "plan") {
          expect(salePlanViolation(req, quotes, p)).toBeUndefined();
          if (strategy === "optimize_speed") expect(p.legs).toHaveLength(1);
        }
      }),
      { numRuns: 1_000, seed: 23 },
    );
  });

  it("is exact with one venue for optimize_speed too", () => {
    fc.assert(
      fc.property(saleCase("real"), ({ req, quotes }) => {
        const one = quotes.slice(0, 1);
        const speed = { ...req, strategy: "optimize_speed" as const };
        expect(saleMismatch(expectedSale(speed, one), plan(speed, one))).toBeUndefined();
      }),
      { numRuns: 2_000, seed: 29 },
    );
  });

  it("keeps a floor fixed earlier: re-routing with the plan's own floor gives the same plan", () => {
    fc.assert(
      fc.property(saleCase("any"), ({ req, quotes }) => {
        const p = plan(req, quotes);
        if (p.kind === "plan") expect(plan({ ...req, limitPrice: p.limitPrice }, quotes)).toEqual(p);
      }),
      { numRuns: 1_000, seed: 31 },
    );
  });

  it("routes on the venues with the shortest queues unless venues queued longer sell more", () => {
    const delay = fc.constantFrom(undefined, 0, MAX_QUEUE_MS, MAX_QUEUE_MS + 1, 5_000, 5_000 + MAX_QUEUE_MS, 5_001 + MAX_QUEUE_MS);
    fc.assert(
      fc.property(saleCase("any"), fc.array(delay, { minLength: 3, maxLength: 3 }), ({ req, quotes }, delays) => {
        const withQueues = quotes.map((q, i) => ({ ...q, queueDelayMs: delays[i] }));
        const p = plan(req, withQueues);
        if (p.kind === "refusal") {
          expect(plan(req, quotes)).toMatchObject({ kind: "refusal", code: p.code });
          return;
        }
        expect(salePlanViolation(req, quotes, p)).toBeUndefined();
        expect(queueViolation((r, q) => plan(r, q), req, withQueues, p)).toBeUndefined();
      }),
      { numRuns: 2_000, seed: 37 },
    );
  });

  it("is deterministic", () => {
    fc.assert(
      fc.property(saleCase("any"), ({ req, quotes }) => {
        expect(plan(req, quotes)).toEqual(plan(req, structuredClone(quotes)));
      }),
      { numRuns: 200, seed: 41 },
    );
  });
});
