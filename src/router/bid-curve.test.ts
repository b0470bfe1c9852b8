import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ONE, proceedsOf } from "../domain/money.ts";
import { orderFee } from "../domain/fees.ts";
import { BidCurve, SAFE, type Segment } from "./curve.ts";
import { opinionSaleCase, saleCase, sellQuote } from "./testkit.ts";

/** An inventory as the most micro-shares a curve reads: the inventory, or SAFE when it holds more. */
const cap = (inventory: bigint) => (inventory < BigInt(SAFE) ? Number(inventory) : SAFE);

describe("BidCurve", () => {
  it("pays every lot count exactly as per-level proceeds less orderFee do, and never past the inventory", () => {
    fc.assert(
      fc.property(fc.oneof(saleCase("any"), opinionSaleCase("any")), ({ quotes }) => {
        for (const q of quotes) {
          const c = new BidCurve(q, null, cap(q.inventory));
          expect(BigInt(c.maxLots * c.lot)).toBeLessThanOrEqual(q.inventory);
          for (let k = 0; k <= c.maxLots; k++) {
            const fills = c.fills(k);
            expect(BigInt(c.proceeds(k))).toBe(fills.reduce((s, l) => s + proceedsOf(l.price, l.shares), 0n) - orderFee(q.feeModel, fills));
          }
        }
      }),
      { numRuns: 300, seed: 43 },
    );
  });

  it("cuts the lots into contiguous segments of non-increasing slope", () => {
    fc.assert(
      fc.property(saleCase("any"), ({ quotes }) => {
        for (const q of quotes) {
          const c = new BidCurve(q, null, cap(q.inventory));
          let at = 0;
          let last: Segment | undefined;
          for (let seg = c.segmentAfter(0); seg !== undefined; seg = c.segmentAfter(seg.to)) {
            expect(seg.from).toBe(at);
            expect(seg.to).toBeGreaterThan(seg.from);
            // Slopes are doubles: a straddling lot's blended slope may sit a rounding error off.
            if (last) expect(seg.slope).toBeLessThanOrEqual(last.slope + Math.abs(last.slope) * 1e-12);
            at = seg.to;
            last = seg;
          }
          expect(at).toBe(c.maxLots);
        }
      }),
      { numRuns: 300, seed: 47 },
    );
  });

  it("bounds raw(k) − λ·shares from above by its peak at every lot count", () => {
    fc.assert(
      fc.property(saleCase("any"), fc.integer({ min: 0, max: 1_000_000 }), ({ quotes }, price) => {
        const lambda = price / 1e6;
        for (const q of quotes) {
          const c = new BidCurve(q, null, cap(q.inventory));
          const peak = c.peak(lambda);
          // Doubles: within a rounding error of the peak.
          for (let k = 0; k <= c.maxLots; k++) expect(c.raw(k) - lambda * k * c.lot).toBeLessThanOrEqual(peak + 1e-6);
        }
      }),
      { numRuns: 300, seed: 53 },
    );
  });

  it("ends the eligible bids at the first whose shares add less than the floor to an order, not at one whose fee alone rounds up", () => {
    // One contract at 0.10 pays a whole cent of Kalshi fee alone (0.09 net), and adds 0.0063 to an order's
    // (0.0937 net); each of 1000 at 0.099 adds 0.006244 (0.092756 net).
    const q = sellQuote("k", [[0.1, 1], [0.099, 1000]], { feeModel: { kind: "kalshi", ratePpm: 70_000n }, lotShares: ONE });
    expect(new BidCurve(q, 93_701n, cap(q.inventory)).maxLots).toBe(0);
    expect(new BidCurve(q, 92_757n, cap(q.inventory)).maxLots).toBe(1);
    expect(new BidCurve(q, 92_756n, cap(q.inventory)).maxLots).toBe(1_001);
    expect(new BidCurve(q, 92_756n, 40_000_000).maxLots).toBe(40);
  });
});
