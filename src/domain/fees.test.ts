import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  describeFeeModel,
  feeAdjustedPrice,
  grossForDelivered,
  limitlessFee,
  marginalAsk,
  marginalBid,
  netOfWithheld,
  orderFee,
  POLYMARKET_LOWEST_PRICE,
  sellFeeAdjustedPrice,
  withheldShares,
  worstFee,
  worstOrderCost,
  type FeeModel,
} from "./fees.ts";
import { notional } from "./money.ts";

const fills = fc.array(
  fc.record({ price: fc.bigInt({ min: 1n, max: 999_999n }), shares: fc.bigInt({ min: 1n, max: 10_000_000_000n }) }),
  { minLength: 1, maxLength: 6 },
);

describe("a Limitless buy's fee in contracts", () => {
  it("charges exactly what the venue took: price × net + fee per fill, net ≤ gross, fee ≥ 0, the withheld contracts all accounted", () => {
    fc.assert(
      fc.property(
        fills.chain((f) => fc.tuple(fc.constant(f), fc.bigInt({ min: 0n, max: f.reduce((s, l) => s + l.shares, 0n) }))),
        ([gross, withheld]) => {
          const net = netOfWithheld(gross, withheld);
          let delivered = 0n;
          for (const [i, n] of net.entries()) {
            const g = gross[i]!;
            expect(n.price).toBe(g.price);
            expect(n.shares).toBeGreaterThanOrEqual(0n);
            expect(n.shares).toBeLessThanOrEqual(g.shares);
            expect(n.fee).toBeGreaterThanOrEqual(0n);
            expect(notional(n.price, n.shares) + n.fee).toBe(notional(g.price, g.shares));
            delivered += n.shares;
          }
          expect(gross.reduce((s, l) => s + l.shares, 0n) - delivered).toBe(withheld);
        },
      ),
      { numRuns: 2_000, seed: 11 },
    );
  });

  it("withholds rate × contracts, whole micro-shares on 0.01-share lots, and finds the gross size of what a buy delivers", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 9_999n }), fc.bigInt({ min: 1n, max: 100_000n }), (bps, lots) => {
        const model = limitlessFee(bps * 100n);
        const gross = lots * 10_000n;
        expect(withheldShares(model, gross)).toBe(lots * bps);
        expect(grossForDelivered(model, 10_000n, gross - lots * bps)).toBe(gross);
        // off the delivered grid (a lot delivers 10 000 − bps micro-shares): no gross size
        if (bps < 9_999n) expect(grossForDelivered(model, 10_000n, gross - lots * bps + 1n)).toBeUndefined();
      }),
      { numRuns: 500, seed: 12 },
    );
  });

  it("prices a share delivered at price / (1 − rate), and a buy at worst at the notional of its gross size", () => {
    const model = limitlessFee(30_000n);
    // the documented example: 100 shares at 0.65, 3 % → 97 delivered for 65 USDC
    expect(withheldShares(model, 100_000_000n)).toBe(3_000_000n);
    expect(feeAdjustedPrice(model, { price: 650_000n, shares: 100_000_000n })).toBe(670_104n);
    expect(worstOrderCost(model, 650_000n, 100_000_000n)).toBe(65_000_000n);
  });

  it("refuses a rate of 100 % or more, or of part of a basis point", () => {
    expect(() => limitlessFee(1_000_000n)).toThrow(/below 100 %/);
    expect(() => limitlessFee(1_500_000n)).toThrow(/below 100 %/);
    expect(() => limitlessFee(150n)).toThrow(/whole basis points/);
    expect(limitlessFee(990_000n).ratePpm).toBe(990_000n);
  });
});

describe("a share's marginal price", () => {
  it("is what a share adds to a large order, fee included: a whole level of a million shares priced per share, within the micro-USDC", () => {
    const models: fc.Arbitrary<FeeModel> = fc.oneof(
      fc.bigInt({ min: 0n, max: 200_000n }).map((ratePpm) => ({ kind: "kalshi" as const, ratePpm })),
      fc.record({ ratePpm: fc.bigInt({ min: 0n, max: 250_000n }), exponent: fc.constantFrom(0 as const, 1 as const, 2 as const) }).map((m) => ({ kind: "polymarket" as const, ...m })),
      fc.bigInt({ min: 0n, max: 990_000n }).map((bps) => limitlessFee(bps - (bps % 100n))),
      fc.record({ ratePpm: fc.bigInt({ min: 0n, max: 200_000n }), minFee: fc.constant(0n) }).map((m) => ({ kind: "opinion" as const, ...m })),
    );
    fc.assert(
      fc.property(models, fc.bigInt({ min: 1n, max: 999_999n }), (m, price) => {
        const level = { price, shares: 1_000_000n * 1_000_000n };
        const within = (a: bigint, b: bigint) => expect(a - b <= 1n && b - a <= 1n).toBe(true);
        within(marginalAsk(m, price), feeAdjustedPrice(m, level));
        within(marginalBid(m, price), sellFeeAdjustedPrice(m, level));
      }),
      { numRuns: 5_000 },
    );
  });

  it("leaves out the rounding of an order's fee: one contract at 0.957 on Kalshi adds 0.002881 to an order's fee, and pays 0.01 alone", () => {
    const KALSHI: FeeModel = { kind: "kalshi", ratePpm: 70_000n };
    expect(marginalAsk(KALSHI, 957_000n)).toBe(959_881n);
    expect(feeAdjustedPrice(KALSHI, { price: 957_000n, shares: 1_000_000n })).toBe(967_000n);
    expect(marginalBid(KALSHI, 5_000n)).toBe(4_651n);
    expect(sellFeeAdjustedPrice(KALSHI, { price: 5_000n, shares: 1_000_000n })).toBe(-5_000n);
  });
});

describe("a buy's worst case", () => {
  const KALSHI: FeeModel = { kind: "kalshi", ratePpm: 70_000n };

  it("covers a Kalshi fill one deci-cent better than the limit, whose fee rounds up a cent more", () => {
    const better = notional(827_000n, 1_000_000n) + orderFee(KALSHI, [{ price: 827_000n, shares: 1_000_000n }]);
    expect(better).toBe(847_000n);
    expect(notional(828_000n, 1_000_000n) + orderFee(KALSHI, [{ price: 828_000n, shares: 1_000_000n }])).toBe(838_000n);
    expect(worstOrderCost(KALSHI, 828_000n, 1_000_000n)).toBeGreaterThanOrEqual(better);
  });

  it("covers Kalshi's documented rounding: each fill's fee up to $0.0001, the debit up to the cent, whole cents rebated", () => {
    // docs.kalshi.com, fee rounding: 47 contracts at 0.003 debit 0.16 (0.141 + a fee of 0.0099); one fee per order rounded up to the cent makes 0.151.
    expect(worstOrderCost(KALSHI, 3_000n, 47_000_000n)).toBeGreaterThanOrEqual(160_000n);
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1_000n, max: 999_000n }).map((p) => p - (p % 1_000n)),
        fc.array(fc.record({ better: fc.bigInt({ min: 0n, max: 20n }), contracts: fc.bigInt({ min: 1n, max: 30n }) }), { minLength: 1, maxLength: 6 }),
        (limit, parts) => {
          const fills = parts.map((p) => ({ price: limit - 1_000n * p.better > 0n ? limit - 1_000n * p.better : 1_000n, shares: p.contracts * 1_000_000n }));
          expect(kalshiDebit(fills)).toBeLessThanOrEqual(worstOrderCost(KALSHI, limit, fills.reduce((s, f) => s + f.shares, 0n)));
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it("bounds a Kalshi buy of sub-cent fills whose rebates the page caps at each fill's own fee: two contracts at 0.001 filled apart debit 0.02", () => {
    // each fill: 0.001 + a trade fee of 0.00007 debits 0.01; the second's cent of accumulated rounding exceeds its own fee (0.009), so nothing is rebated
    expect(kalshiDebitNow(70_000n, [{ price: 1_000n, shares: 1_000_000n }, { price: 1_000n, shares: 1_000_000n }])).toBe(20_000n);
    expect(worstOrderCost(KALSHI, 1_000n, 2_000_000n)).toBeGreaterThanOrEqual(20_000n);
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 200_000n }),
        fc.bigInt({ min: 1n, max: 999n }).map((p) => p * 1_000n),
        fc.array(fc.record({ better: fc.bigInt({ min: 0n, max: 20n }), contracts: fc.bigInt({ min: 1n, max: 30n }) }), { minLength: 1, maxLength: 8 }),
        (ratePpm, limit, parts) => {
          const model: FeeModel = { kind: "kalshi", ratePpm };
          const fills = parts.map((p) => ({ price: limit - 1_000n * p.better > 0n ? limit - 1_000n * p.better : 1_000n, shares: p.contracts * 1_000_000n }));
          expect(kalshiDebitNow(ratePpm, fills)).toBeLessThanOrEqual(worstOrderCost(model, limit, fills.reduce((s, f) => s + f.shares, 0n)));
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it("bounds a Kalshi buy of whole-cent fills by what it costs at its limit: one contract at 0.50 locks 0.52, a hundred 51.75", () => {
    const cents: FeeModel = { kind: "kalshi", ratePpm: 70_000n, wholeCents: true };
    expect(worstOrderCost(cents, 500_000n, 1_000_000n)).toBe(520_000n);
    expect(worstOrderCost(cents, 500_000n, 100_000_000n)).toBe(51_750_000n);
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1_000n, max: 200_000n }),
        fc.bigInt({ min: 1n, max: 99n }).map((cents) => cents * 10_000n),
        fc.array(fc.record({ better: fc.bigInt({ min: 0n, max: 20n }), contracts: fc.bigInt({ min: 1n, max: 30n }) }), { minLength: 1, maxLength: 8 }),
        (ratePpm, limit, parts) => {
          const model: FeeModel = { kind: "kalshi", ratePpm, wholeCents: true };
          const fills = parts.map((p) => ({ price: limit - 10_000n * p.better > 0n ? limit - 10_000n * p.better : 10_000n, shares: p.contracts * 1_000_000n }));
          const bound = worstOrderCost(model, limit, fills.reduce((s, f) => s + f.shares, 0n));
          expect(kalshiDebitNow(ratePpm, fills)).toBeLessThanOrEqual(bound);
          expect(fills.reduce((s, f) => s + notional(f.price, f.shares), 0n) + orderFee(model, fills)).toBeLessThanOrEqual(bound);
        },
      ),
      { numRuns: 20_000 },
    );
  });

  const polymarket = fc
    .record({ ratePpm: fc.bigInt({ min: 1n, max: 250_000n }), exponent: fc.constantFrom(0 as const, 1 as const, 2 as const) })
    .map((m) => ({ kind: "polymarket" as const, ...m }));
  /**
   * The lowest price a fill can take: the bound of exponent 0 is that of the venue's prices, never
   * below its finest tick; the other curves' bounds hold at any price.
   */
  const lowest = (m: FeeModel) => (m.kind === "polymarket" && m.exponent === 0 ? POLYMARKET_LOWEST_PRICE : 1n);
  const model: fc.Arbitrary<FeeModel> = fc.oneof(
    fc.bigInt({ min: 1n, max: 200_000n }).map((ratePpm) => ({ kind: "kalshi" as const, ratePpm })),
    polymarket,
    fc.record({ ratePpm: fc.bigInt({ min: 1n, max: 200_000n }), minFee: fc.bigInt({ min: 0n, max: 250_000n }) }).map((m) => ({ kind: "opinion" as const, ...m })),
  );

  it("bounds what every fill of the order at its limit or better costs, fees included, under every fee model", () => {
    fc.assert(
      fc.property(
        model,
        fc.bigInt({ min: 2n, max: 999_999n }),
        // whole contracts, so that any micro-USDC price makes a whole micro-USDC notional, as on the venues' grids
        fc.array(fc.record({ better: fc.bigInt({ min: 0n, max: 30_000n }), contracts: fc.bigInt({ min: 1n, max: 40n }) }), { minLength: 1, maxLength: 4 }),
        (m, drawn, parts) => {
          const limit = drawn < lowest(m) ? lowest(m) : drawn;
          const filled = parts.map((p) => ({ price: limit - p.better >= lowest(m) ? limit - p.better : lowest(m), shares: p.contracts * 1_000_000n }));
          const shares = filled.reduce((s, f) => s + f.shares, 0n);
          const cost = filled.reduce((s, f) => s + notional(f.price, f.shares), 0n) + orderFee(m, filled);
          expect(cost).toBeLessThanOrEqual(worstOrderCost(m, limit, shares));
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it("bounds a Polymarket buy that spends its whole maker amount, limit × shares, at asks as low as one micro-pUSD (exponent 0: the finest tick)", () => {
    fc.assert(
      fc.property(
        polymarket,
        fc.bigInt({ min: 2n, max: 999_999n }),
        fc.bigInt({ min: 1n, max: 400n }),
        // as deep as a buy at the lowest price can take: 400 shares at 0.9999 spend 3.9996 million shares' worth at 0.0001
        fc.array(fc.record({ price: fc.bigInt({ min: 1n, max: 999_999n }), contracts: fc.bigInt({ min: 1n, max: 4_000_000n }) }), { minLength: 1, maxLength: 5 }),
        (m, drawn, contracts, asks) => {
          const limit = drawn < lowest(m) ? lowest(m) : drawn;
          const shares = contracts * 1_000_000n;
          const at = (price: bigint) => (price > limit ? limit : price < lowest(m) ? lowest(m) : price);
          const filled = spend(notional(limit, shares), asks.map((a) => ({ price: at(a.price), shares: a.contracts * 1_000_000n })));
          const cost = filled.reduce((s, f) => s + notional(f.price, f.shares), 0n) + orderFee(m, filled);
          expect(cost).toBeLessThanOrEqual(worstOrderCost(m, limit, shares));
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it("charges a Polymarket buy more fee at a better price than at its limit, which the bound covers", () => {
    const m: FeeModel = { kind: "polymarket", ratePpm: 50_000n, exponent: 1 };
    // FAK "5 at 0.99" hitting an ask at 0.98 spends 4.95 pUSD: 5.051020 shares here, 5.051019 as the venue filled it (py-clob-client-v2#89)
    const filled = spend(notional(990_000n, 5_000_000n), [{ price: 980_000n, shares: 100_000_000n }]);
    expect(filled).toEqual([{ price: 980_000n, shares: 5_051_020n }]);
    expect(orderFee(m, filled)).toBeGreaterThan(orderFee(m, [{ price: 990_000n, shares: 5_000_000n }]));
    expect(notional(980_000n, 5_051_020n) + orderFee(m, filled)).toBeLessThanOrEqual(worstOrderCost(m, 990_000n, 5_000_000n));
    expect(worstFee(m, 990_000n, 5_000_000n)).toBe(247_500n);
    expect(worstFee({ ...m, exponent: 2 }, 990_000n, 5_000_000n)).toBe(36_667n);
    expect(worstFee({ ...m, exponent: 2 }, 200_000n, 5_000_000n)).toBe(6_400n);
  });

  it("charges a Polymarket buy on a market of exponent 0 r × C at any price, and locks the fee of spending its amount at the finest tick", () => {
    const m: FeeModel = { kind: "polymarket", ratePpm: 20_000n, exponent: 0 };
    // clob-client-v2 1.1.0, adjustBuyAmountForFees: amount / price × rate × (p(1 − p))^0 — 50 pUSD at 0.50 pay 2 pUSD for 100 shares, 90 at 0.90 too
    expect(orderFee(m, [{ price: 500_000n, shares: 100_000_000n }])).toBe(2_000_000n);
    expect(orderFee(m, [{ price: 900_000n, shares: 100_000_000n }])).toBe(2_000_000n);
    // 7.654321 shares: 0.15308642 floored to 5 decimals
    expect(orderFee(m, [{ price: 330_000n, shares: 7_654_321n }])).toBe(153_080n);
    expect(feeAdjustedPrice(m, { price: 500_000n, shares: 100_000_000n })).toBe(520_000n);
    expect(sellFeeAdjustedPrice(m, { price: 500_000n, shares: 100_000_000n })).toBe(480_000n);
    expect(describeFeeModel(m)).toEqual({ type: "polymarket", formula: "C * fee_rate * (P * (1 - P))^exponent", fee_rate: 0.02, exponent: 0 });
    // FAK "10 at 0.50" spends 5 pUSD: at an ask of 0.0001 it buys 50,000 shares, whose fee is 1,000 pUSD, all of the lock
    const filled = spend(notional(500_000n, 10_000_000n), [{ price: POLYMARKET_LOWEST_PRICE, shares: 100_000_000_000n }]);
    expect(filled).toEqual([{ price: 100n, shares: 50_000_000_000n }]);
    expect(orderFee(m, filled)).toBe(1_000_000_000n);
    expect(worstFee(m, 500_000n, 10_000_000n)).toBe(1_000_000_000n);
    expect(worstFee(m, 500_000n, 10_000_000n)).toBeGreaterThan(orderFee(m, [{ price: 500_000n, shares: 10_000_000n }]));
  });
});

/** What a buy spending `budget` micro-pUSD takes of `asks`, cheapest first: at each, as many micro-shares as what is left buys. */
function spend(budget: bigint, asks: readonly { price: bigint; shares: bigint }[]): { price: bigint; shares: bigint }[] {
  const taken: { price: bigint; shares: bigint }[] = [];
  let left = budget;
  for (const a of [...asks].sort((x, y) => (x.price < y.price ? -1 : x.price > y.price ? 1 : 0))) {
    const affordable = (left * 1_000_000n) / a.price;
    const shares = affordable < a.shares ? affordable : a.shares;
    if (shares === 0n) break;
    taken.push({ price: a.price, shares });
    left -= notional(a.price, shares);
  }
  return taken;
}

/** What Kalshi debits a buyer for an order's fills, as its fee rounding page says, for a member whose balance is kept to the cent. */
function kalshiDebit(fills: readonly { price: bigint; shares: bigint }[]): bigint {
  let debit = 0n;
  let overpaid = 0n;
  for (const f of fills) {
    const tradeFee = ((70_000n * f.shares * f.price * (1_000_000n - f.price) + 10n ** 20n - 1n) / 10n ** 20n) * 100n; // up to $0.0001
    const exact = notional(f.price, f.shares) + tradeFee;
    const paid = ((exact + 9_999n) / 10_000n) * 10_000n; // the balance floored to the cent
    overpaid += paid - exact;
    debit += paid;
    if (overpaid > 10_000n) {
      debit -= 10_000n;
      overpaid -= 10_000n;
    }
  }
  return debit;
}

/**
 * What Kalshi debits a buyer for an order's fills by its fee rounding page as of 2026-12-06, for a member
 * whose balance is kept to the cent: each fill's trade fee rounded up to $0.000001, its debit up to the
 * cent, the rounding accumulated over the order and rebated in whole cents, never past the fill's own fee.
 */
function kalshiDebitNow(ratePpm: bigint, fills: readonly { price: bigint; shares: bigint }[]): bigint {
  let debit = 0n;
  let accumulated = 0n;
  for (const f of fills) {
    const exact = notional(f.price, f.shares) + (ratePpm * f.shares * f.price * (1_000_000n - f.price) + 10n ** 18n - 1n) / 10n ** 18n;
    const paid = ((exact + 9_999n) / 10_000n) * 10_000n;
    accumulated += paid - exact;
    const fee = paid - notional(f.price, f.shares);
    let rebate = (accumulated / 10_000n) * 10_000n;
    while (rebate > fee) rebate -= 10_000n;
    accumulated -= rebate;
    debit += paid - rebate;
  }
  return debit;
}

describe("describeFeeModel", () => {
  it("gives an Opinion market the minimum fee it is charged: none at a rate of 0", () => {
    const charged: FeeModel = { kind: "opinion", ratePpm: 40_000n, minFee: 250_000n };
    const free: FeeModel = { kind: "opinion", ratePpm: 0n, minFee: 250_000n };
    expect(describeFeeModel(charged)).toMatchObject({ rate: 0.04, min_fee: 0.25 });
    expect(orderFee(free, [{ price: 500_000n, shares: 1_000_000n }])).toBe(0n);
    expect(describeFeeModel(free)).toMatchObject({ rate: 0, min_fee: 0 });
  });
});
