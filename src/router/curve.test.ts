import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { notional } from "../domain/money.ts";
import { feeInShares, orderFee, withheldShares, worstOrderCost } from "../domain/fees.ts";
import { Curve, SAFE, type Segment } from "./curve.ts";
import { opinionCase, routingCase } from "./testkit.ts";

describe("Curve", () => {
  it("prices every lot count exactly as orderFee and per-level notionals do, a fee in contracts as the contracts withheld", () => {
    fc.assert(
      fc.property(routingCase("any"), ({ quotes }) => {
        for (const q of quotes) {
          const c = new Curve(q, null, SAFE);
          for (let k = 0; k <= c.maxLots; k++) {
            const fills = c.fills(k);
            const gross = fills.reduce((s, l) => s + l.shares, 0n);
            const inShares = feeInShares(q.feeModel, "buy");
            expect(BigInt(k * c.lot)).toBe(inShares ? gross - withheldShares(q.feeModel, gross) : gross);
            const fee = inShares ? 0n : orderFee(q.feeModel, fills);
            expect(BigInt(c.fee(k))).toBe(fee);
            expect(BigInt(c.cost(k))).toBe(fills.reduce((s, l) => s + notional(l.price, l.shares), 0n) + fee);
          }
        }
      }),
      { numRuns: 300, seed: 5 },
    );
  });

  it("prices Opinion's fee curve exactly as orderFee does", () => {
    fc.assert(
      fc.property(opinionCase("any"), ({ quotes }) => {
        for (const q of quotes) {
          const c = new Curve(q, null, SAFE);
          for (let k = 0; k <= c.maxLots; k++) expect(BigInt(c.fee(k))).toBe(orderFee(q.feeModel, c.fills(k)));
        }
      }),
      { numRuns: 300, seed: 8 },
    );
  });

  it("cuts the lots into contiguous segments of non-decreasing slope", () => {
    fc.assert(
      fc.property(routingCase("any"), ({ quotes }) => {
        for (const q of quotes) {
          const c = new Curve(q, null, SAFE);
          let at = 0;
          let last: Segment | undefined;
          for (let seg = c.segmentAfter(0); seg !== undefined; seg = c.segmentAfter(seg.to)) {
            expect(seg.from).toBe(at);
            expect(seg.to).toBeGreaterThan(seg.from);
            // Slopes are doubles: a straddling lot's blended slope may sit a rounding error off.
            if (last) expect(seg.slope).toBeGreaterThanOrEqual(last.slope * (1 - 1e-12));
            at = seg.to;
            last = seg;
          }
          expect(at).toBe(c.maxLots);
        }
      }),
      { numRuns: 300, seed: 6 },
    );
  });

  it("prices a leg's worst case as one fill of all of it at its limit, never under its cost", () => {
    fc.assert(
      fc.property(routingCase("any"), ({ quotes }) => {
        for (const q of quotes) {
          const c = new Curve(q, null, SAFE);
          for (let k = 1; k <= c.maxLots; k++) {
            const fills = c.fills(k);
            const atLimit = worstOrderCost(q.feeModel, fills[fills.length - 1]!.price, fills.reduce((s, l) => s + l.shares, 0n));
            const cost = BigInt(c.cost(k));
            expect(BigInt(c.worst(k))).toBe(atLimit > cost ? atLimit : cost);
          }
        }
      }),
      { numRuns: 300, seed: 8 },
    );
  });

  it("ends the eligible book at the first level whose shares add more than the limit to an order, not at one whose fee alone rounds up", () => {
    const kalshi = { kind: "kalshi", ratePpm: 70_000n } as const;
    // One contract at 0.90 pays a whole cent of fee alone (0.91 a share), and adds 0.0063 to an order's
    // (0.9063); each of 1000 at 0.901 adds 0.006244 (0.907244).
    const asks = [
      { price: 900_000n, shares: 1_000_000n },
      { price: 901_000n, shares: 1_000_000_000n },
    ];
    const q = { venue: "k", venueMarketId: "m", asks, feeModel: kalshi, tickSize: 1_000n, minOrderShares: 1_000_000n, lotShares: 1_000_000n, latencyMs: 1 };
    expect(new Curve(q, 906_299n, SAFE).maxLots).toBe(0);
    expect(new Curve(q, 907_243n, SAFE).maxLots).toBe(1);
    expect(new Curve(q, 907_244n, SAFE).maxLots).toBe(1_001);
  });
});
