import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { MAX_QUEUE_MS, plan } from "./index.ts";
import { expected, mismatch, opinionCase, planViolation, queueViolation, routingCase, type Shape } from "./testkit.ts";
import type { PlanRequest, VenueQuote } from "./types.ts";
import { parseMicro } from "../domain/money.ts";

/**
 * Every instance is checked against the exhaustive search; the seed is printed on a failure.
 * ROUTER_RUNS and ROUTER_SEED run a larger set, or another (docs/router.md).
 */
const RUNS = Number(process.env.ROUTER_RUNS ?? 20_000);
const SEED = Number(process.env.ROUTER_SEED ?? 20_261_124);

/** Books the search takes whole (docs/router.md): up to 8 venues of small books, and deeper books. */
const MANY: Shape = { venues: [4, 8], levels: 2, lots: 3n };
const DEEP: Shape = { venues: [1, 3], levels: 3, lots: 20n };
/** Books past that: more venues than the search moves, levels deeper than it lists whole. */
const LARGE: Shape = { venues: [1, 12], levels: 8, lots: 400n };

function optimal({ req, quotes }: { req: PlanRequest; quotes: VenueQuote[] }): void {
  const got = plan(req, quotes);
  if (got.kind === "plan") expect(planViolation(req, quotes, got)).toBeUndefined();
  expect(mismatch(expected(req, quotes), got)).toBeUndefined();
}

describe("optimize_price against the exhaustive optimum", () => {
  it(`plans the optimum or refuses with the right code on ${RUNS} seeded small books`, () => {
    fc.assert(fc.property(fc.oneof(routingCase("any"), routingCase("real")), optimal), { numRuns: RUNS, seed: SEED });
  }, 600_000);

  it("plans the optimum or refuses with the right code on Opinion's fee curve", () => {
    fc.assert(fc.property(fc.oneof(opinionCase("any"), opinionCase("real")), optimal), { numRuns: 4_000, seed: 17 });
  });

  it("plans the optimum or refuses with the right code over 4 to 8 venues", () => {
    fc.assert(fc.property(fc.oneof(routingCase("any", MANY), routingCase("real", MANY)), optimal), { numRuns: 2_000, seed: 23 });
  }, 60_000);

  it("plans the optimum or refuses with the right code on books of up to 60 lots a venue", () => {
    fc.assert(fc.property(fc.oneof(routingCase("any", DEEP), routingCase("real", DEEP)), optimal), { numRuns: 2_000, seed: 29 });
  }, 60_000);

  it("never spends more than the amount, even at its worst case, on books past the exhaustive search", () => {
    fc.assert(
      fc.property(fc.oneof(routingCase("any", LARGE), routingCase("real", LARGE)), fc.constantFrom("FOK" as const, "IOC" as const), ({ req, quotes }, timeInForce) => {
        const p = plan({ ...req, timeInForce }, quotes);
        if (p.kind === "plan") expect(planViolation(req, quotes, p)).toBeUndefined();
      }),
      { numRuns: 500, seed: 31 },
    );
  }, 60_000);

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
      { numRuns: 1_000, seed: 11 },
    );
  });

  it("is exact with one venue for optimize_speed too", () => {
    fc.assert(
      fc.property(routingCase("any"), ({ req, quotes }) => {
        const one = quotes.slice(0, 1);
        const speed = { ...req, strategy: "optimize_speed" as const };
        expect(mismatch(expected(speed, one), plan(speed, one))).toBeUndefined();
      }),
      { numRuns: 2_000, seed: 13 },
    );
  });

  it("routes on the venues with the shortest queues unless venues queued longer fill more", () => {
    const delay = fc.constantFrom(undefined, 0, MAX_QUEUE_MS, MAX_QUEUE_MS + 1, 5_000, 5_000 + MAX_QUEUE_MS, 5_001 + MAX_QUEUE_MS);
    fc.assert(
      fc.property(routingCase("any"), fc.array(delay, { minLength: 3, maxLength: 3 }), ({ req, quotes }, delays) => {
        const withQueues = quotes.map((q, i) => ({ ...q, queueDelayMs: delays[i] }));
        const p = plan(req, withQueues);
        if (p.kind === "refusal") {
          expect(plan(req, quotes)).toMatchObject({ kind: "refusal", code: p.code });
          return;
        }
        expect(planViolation(req, quotes, p)).toBeUndefined();
        expect(queueViolation((r, q) => plan(r, q), req, withQueues, p)).toBeUndefined();
      }),
      { numRuns: 2_000, seed: 17 },
    );
  });

  it("is deterministic", () => {
    fc.assert(
      fc.property(routingCase("any"), ({ req, quotes }) => {
        expect(plan(req, quotes)).toEqual(plan(req, structuredClone(quotes)));
      }),
      { numRuns: 200, seed: 3 },
    );
  });
});

describe("optimize_speed against each venue alone", () => {
  it("routes the fastest venue that fills the order alone within its limit, else (IOC) the fastest that takes part of it, else refuses", () => {
    const delay = fc.constantFrom(undefined, 0, 1, 3);
    fc.assert(
      fc.property(routingCase("any", MANY), fc.array(delay, { minLength: 8, maxLength: 8 }), ({ req, quotes }, delays) => {
        const qs = quotes.map((q, i) => ({ ...q, queueDelayMs: delays[i] }));
        const speed = { ...req, strategy: "optimize_speed" as const };
        const got = plan(speed, qs);
        const limit = got.kind === "plan" ? got.limitPrice : got.details?.limit_price;
        // No book has a price to take a reference from: no venue has one alone either.
        if (limit === undefined) {
          expect(qs.every((q) => plan(speed, [q]).kind === "refusal")).toBe(true);
          return;
        }
        const limitPrice = typeof limit === "bigint" ? limit : parseMicro(limit, "limit_price");
        const alone = (timeInForce: "FOK" | "IOC") => qs.filter((q) => plan({ ...speed, timeInForce, limitPrice }, [q]).kind === "plan");
        const rank = (q: VenueQuote) => (q.queueDelayMs ?? 0) + (q.latencyMs ?? Number.POSITIVE_INFINITY);
        const candidates = alone("FOK").length > 0 ? alone("FOK") : req.timeInForce === "IOC" ? alone("IOC") : [];
        if (candidates.length === 0) {
          expect(got.kind).toBe("refusal");
          return;
        }
        if (got.kind !== "plan") throw new Error(`refused ${got.code} although ${candidates.map((q) => q.venue).join(", ")} could take it alone`);
        expect(got.legs).toHaveLength(1);
        const chosen = candidates.find((q) => q.venue === got.legs[0]!.venue);
        expect(chosen).toBeDefined();
        expect(rank(chosen!)).toBe(Math.min(...candidates.map(rank)));
      }),
      { numRuns: 4_000, seed: 37 },
    );
  });
});
