import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ONE, proceedsOf } from "../domain/money.ts";
import { orderFee } from "../domain/fees.ts";
import { BidCurve, slopeLess, type Segment } from "./curve.ts";
import { opinionSaleCase, saleCase, sellQuote } from "./testkit.ts";

describe("BidCurve", () => {
  it("pays every lot count exactly as per-level proceeds less orderFee do, and never past the inventory", () => {
    fc.assert(
      fc.property(fc.oneof(saleCase("any"), opinionSaleCase("any")), ({ quotes }) => {
        for (const q of quotes) {
          const c = new BidCurve(q, null, q.inventory);
          expect(c.maxLots * c.lot).toBeLessThanOrEqual(q.inventory);
          for (let k = 0n; k <= c.maxLots; k++) {
            const fills = c.fills(k);
            expect(c.proceeds(k)).toBe(fills.reduce((s, l) => s + proceedsOf(l.price, l.shares), 0n) - orderFee(q.feeModel, fills));
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
          const c = new BidCurve(q, null, q.inventory);
          let at = 0n;
          let last: Segment | undefined;
          for (let seg = c.segmentAfter(0n); seg !== undefined; seg = c.segmentAfter(seg.to)) {
            expect(seg.from).toBe(at);
            expect(seg.to).toBeGreaterThan(seg.from);
            if (last) expect(slopeLess(last.slope, seg.slope)).toBe(false);
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
      fc.property(saleCase("any"), fc.bigInt({ min: 0n, max: ONE }), ({ quotes }, price) => {
        const lambda = price * ONE * ONE * ONE * ONE;
        for (const q of quotes) {
          const c = new BidCurve(q, null, q.inventory);
          const peak = c.peak(lambda);
          for (let k = 0n; k <= c.maxLots; k++) expect(c.raw(k) - lambda * k * c.lot).toBeLessThanOrEqual(peak);
        }
      }),
      { numRuns: 300, seed: 53 },
    );
  });

  it("stops at the first bid that nets under the floor, even if a later one nets more", () => {
    // One contract at 0.10 pays a whole cent of Kalshi fee (0.09 net); 1000 at 0.099 pay 6.25 (0.09275 net).
    const q = sellQuote("k", [[0.1, 1], [0.099, 1000]], { feeModel: { kind: "kalshi", ratePpm: 70_000n }, lotShares: ONE });
    expect(new BidCurve(q, 92_000n, q.inventory).maxLots).toBe(0n);
    expect(new BidCurve(q, 90_000n, q.inventory).maxLots).toBe(1_001n);
    expect(new BidCurve(q, 90_000n, 40n * ONE).maxLots).toBe(40n);
  });
});
