import { describe, expect, it } from "vitest";
import { MAX_QUEUE_MS, plan, type Refusal, type SellPlan, type SellQuote, type SellRequest } from "./index.ts";
import { KALSHI, salePlanViolation, sellQuote, usdc } from "./testkit.ts";

const S = 1_000_000n; // one share in micro-shares

function sell(shares: number, over: Partial<SellRequest> = {}): SellRequest {
  return { side: "sell", shares: BigInt(Math.round(shares * 1e6)), maxSlippage: 10_000n, strategy: "optimize_price", timeInForce: "FOK", ...over };
}

function planned(r: SellRequest, quotes: SellQuote[]): SellPlan {
  const p = plan(r, quotes);
  if (p.kind !== "plan") throw new Error(`expected a plan, got ${p.code}: ${p.message}`);
  expect(salePlanViolation(r, quotes, p)).toBeUndefined();
  return p;
}

function refused(r: SellRequest, quotes: SellQuote[]): Refusal {
  const p = plan(r, quotes);
  if (p.kind !== "refusal") throw new Error(`expected a refusal, got a plan of ${p.shares} micro-shares`);
  return p;
}

const legs = (p: SellPlan) => p.legs.map((l) => [l.venue, l.shares]);

describe("selling, optimize_price", () => {
  it("sells the whole order into a single venue's best bid", () => {
    const p = planned(sell(20), [sellQuote("poly", [[0.5, 100]])]);
    expect(legs(p)).toEqual([["poly", 20n * S]]);
    expect(p).toMatchObject({ proceeds: usdc(10), notional: usdc(10), fees: 0n, referencePrice: 500_000n, limitPrice: 495_000n });
    expect(p.legs[0]).toMatchObject({ limitPrice: 500_000n, proceeds: usdc(10), levels: [{ price: 500_000n, shares: 20n * S }] });
  });

  it("splits across venues' bids when that pays more, each leg's limit its lowest bid", () => {
    const quotes = [sellQuote("a", [[0.5, 10], [0.4, 100]]), sellQuote("b", [[0.49, 10], [0.4, 100]])];
    const p = planned(sell(20, { maxSlippage: 200_000n }), quotes);
    expect(legs(p)).toEqual([["a", 10n * S], ["b", 10n * S]]);
    expect(p.proceeds).toBe(usdc(9.9));
    expect(p.legs.map((l) => l.limitPrice)).toEqual([500_000n, 490_000n]);
  });

  it("ranks bids by what they net after the venue's fee, not by their price", () => {
    // 0.50 less Polymarket's 25% × 0.5 × 0.5 = 0.0625 fee nets 0.4375 a share; 0.45 with no fee nets more.
    const quotes = [sellQuote("dear", [[0.5, 100]], { feeModel: { kind: "polymarket", ratePpm: 250_000n, exponent: 1 } }), sellQuote("free", [[0.45, 100]])];
    const p = planned(sell(10, { maxSlippage: 100_000n }), quotes);
    expect(legs(p)).toEqual([["free", 10n * S]]);
    expect(p).toMatchObject({ referencePrice: 450_000n, proceeds: usdc(4.5) });
  });

  it("deducts the venue's own fee from the proceeds, and keeps one Kalshi order where rounding each to the cent makes a split pay less", () => {
    // 4 contracts at 0.50 in one order pay 0.07 of fee (1.93 net); 1 + 3 pay 0.02 + 0.06 (1.92 net).
    const quotes = [sellQuote("b", [[0.5, 1]], { feeModel: KALSHI, lotShares: S }), sellQuote("a", [[0.5, 4]], { feeModel: KALSHI, lotShares: S })];
    const p = planned(sell(4), quotes);
    expect(legs(p)).toEqual([["a", 4n * S]]);
    expect(p).toMatchObject({ notional: usdc(2), fees: usdc(0.07), proceeds: usdc(1.93) });
  });

  it("sells no more on a venue than the shares held there, and the rest on the next venue", () => {
    const quotes = [sellQuote("a", [[0.5, 100]], { inventory: 5n * S }), sellQuote("b", [[0.49, 100]])];
    const p = planned(sell(20, { maxSlippage: 20_000n }), quotes);
    expect(legs(p)).toEqual([["a", 5n * S], ["b", 15n * S]]);
    expect(p.proceeds).toBe(usdc(9.85));
  });

  it("gives Opinion no sell whose amount at the leg's limit, its lowest bid, is under the minimum order amount", () => {
    // 5 USDC at 0.40 is 12.5 shares: a sell of 10 goes to the next venue, and on Opinion alone is too small.
    const opinion = { feeModel: { kind: "opinion" as const, ratePpm: 0n, minFee: 0n }, minOrderAmount: usdc(5) };
    const quotes = [sellQuote("opinion", [[0.4, 100]], opinion), sellQuote("poly", [[0.39, 100]])];
    expect(legs(planned(sell(10, { maxSlippage: 50_000n }), quotes))).toEqual([["poly", 10n * S]]);
    expect(refused(sell(10), [quotes[0]!])).toMatchObject({ code: "order_too_small", details: { min_shares: 12.5 } });
    expect(legs(planned(sell(12.5), [quotes[0]!]))).toEqual([["opinion", 12_500_000n]]);
    // 13 shares into 0.50 then 0.30 have a notional of 6.30 but sign 13 × 0.30 = 3.90: the leg stops at the 12 shares at 0.50.
    const steep = planned(sell(13, { maxSlippage: 500_000n, timeInForce: "IOC" }), [sellQuote("opinion", [[0.5, 12], [0.3, 100]], opinion)]);
    expect(steep.legs[0]).toMatchObject({ shares: 12n * S, limitPrice: 500_000n, proceeds: usdc(6) });
  });

  it("cannot sell on a venue that holds none of the outcome: its bid neither takes the order nor sets the reference", () => {
    // Were 0.60 the reference, a 1% floor of 0.594 would leave no bid to sell into.
    const quotes = [sellQuote("empty", [[0.6, 100]], { inventory: 0n }), sellQuote("held", [[0.5, 100]])];
    const p = planned(sell(10), quotes);
    expect(legs(p)).toEqual([["held", 10n * S]]);
    expect(p).toMatchObject({ referencePrice: 500_000n, proceeds: usdc(5) });
    expect(refused(sell(10), [quotes[0]!]).code).toBe("insufficient_liquidity");
  });

  it("cannot sell on a venue where the shares held fall short of its least order by the minimum fee or amount: its bid does not set the reference", () => {
    // 10 shares at 0.60 on Opinion's 4% curve pay 0.0576 of fee, under its 0.25 minimum: Opinion sells
    // nothing of them. Were its 0.594 net the reference, a 1% floor of 0.5883 would leave poly's 0.58 out.
    const minFee = sellQuote("opinion", [[0.6, 1000]], { feeModel: { kind: "opinion", ratePpm: 40_000n, minFee: usdc(0.25) }, inventory: 10n * S });
    const poly = sellQuote("poly", [[0.58, 1000]]);
    expect(planned(sell(10), [minFee, poly])).toMatchObject({ referencePrice: 580_000n, proceeds: usdc(5.8) });
    expect(refused(sell(10), [minFee])).toMatchObject({
      code: "insufficient_liquidity",
      message: "No venue holds enough of the outcome for its minimum order with a bid that nets anything after fees.",
    });
    // 5 shares at 0.60 sign 3 USDC, under Opinion's 5 USDC minimum order.
    const minAmount = sellQuote("opinion", [[0.6, 1000]], { feeModel: { kind: "opinion", ratePpm: 0n, minFee: 0n }, minOrderAmount: usdc(5), inventory: 5n * S });
    expect(planned(sell(5), [minAmount, poly])).toMatchObject({ referencePrice: 580_000n, proceeds: usdc(2.9) });
  });

  it("takes no reference from a venue whose least order is more shares than the sell: a small sell is judged by the bids it can sell into", () => {
    // Opinion's 0.60 nets 0.59424 a share after its 4% curve, but its 0.25 minimum fee makes its least order
    // 44 shares (fee 0.25344): a sell of 10 sells nothing there, and a 1% floor of 0.588298 under it left
    // poly's 0.57 out, so the sell was refused slippage_exceeded whatever the books held.
    const opinion = sellQuote("opinion", [[0.6, 1000]], { feeModel: { kind: "opinion", ratePpm: 40_000n, minFee: usdc(0.25) } });
    const poly = sellQuote("poly", [[0.57, 1000]]);
    const small = planned(sell(10), [opinion, poly]);
    expect(small).toMatchObject({ referencePrice: 570_000n, limitPrice: 564_300n, proceeds: usdc(5.7) });
    expect(legs(small)).toEqual([["poly", 10n * S]]);
    // A sell that reaches Opinion's least order is judged from Opinion's net bid, as before.
    const large = planned(sell(50), [opinion, poly]);
    expect(large).toMatchObject({ referencePrice: 594_240n, limitPrice: 588_298n });
    expect(legs(large)).toEqual([["opinion", 50n * S]]);
    // No venue's least order within the shares: too small for all of them.
    expect(refused(sell(10), [opinion, sellQuote("poly-min", [[0.57, 1000]], { minOrderShares: 20n * S })]).code).toBe("order_too_small");
  });

  it("takes a venue's reference from the bid its least order reaches, not from a top bid smaller than its minimum size", () => {
    // 2 shares rest at 0.60 on a venue whose orders sell 5 at least: no sale nets 0.60 a share there, and
    // a 1% floor of 0.594 under it would leave no bid to sell into. Its least order reaches 0.55.
    const thinTop = sellQuote("thin-top", [[0.6, 2], [0.55, 1000]], { minOrderShares: 5n * S });
    expect(planned(sell(100), [thinTop])).toMatchObject({ referencePrice: 550_000n, proceeds: usdc(55.1) });
    expect(planned(sell(5), [thinTop])).toMatchObject({ referencePrice: 550_000n, proceeds: usdc(2.85) });
    const other = sellQuote("other", [[0.56, 1000]]);
    expect(planned(sell(100), [thinTop, other])).toMatchObject({ referencePrice: 560_000n, proceeds: usdc(56) });
  });

  it("judges a Kalshi bid by what its contracts add to an order's fee, not by its fee alone: a one-contract top bid on a deci-cent market that nets nothing alone still sets the reference", () => {
    // One contract bid at 0.005 pays a whole cent of fee alone (it nets −0.005); inside an order it adds
    // 0.000349 of fee (0.004651), and each of 1,000 at 0.004 adds 0.000279 (0.003721). Selling all 1,001
    // pays 4.005 less one fee of 0.28 (0.003721 a share).
    const q = sellQuote("kalshi", [[0.005, 1], [0.004, 1000]], { feeModel: KALSHI, lotShares: S, tickSize: 1_000n });
    const p = planned(sell(1001, { maxSlippage: 250_000n }), [q]);
    expect(p).toMatchObject({ referencePrice: 4_651n, limitPrice: 3_489n, shares: 1001n * S, notional: usdc(4.005), fees: usdc(0.28), proceeds: usdc(3.725) });
  });

  it("never sells into a bid that nets under the floor; FOK refuses what only those bids could take, IOC sells the rest", () => {
    const quotes = [sellQuote("a", [[0.5, 10], [0.48, 10], [0.4, 1000]])];
    const ioc = planned(sell(100, { maxSlippage: 50_000n, timeInForce: "IOC" }), quotes);
    expect(ioc.limitPrice).toBe(475_000n);
    expect(ioc.legs[0]!.levels.map((l) => l.price)).toEqual([500_000n, 480_000n]);
    expect(ioc).toMatchObject({ shares: 20n * S, proceeds: usdc(9.8) });
    expect(refused(sell(100, { maxSlippage: 50_000n }), quotes)).toMatchObject({
      code: "slippage_exceeded",
      message: "The order cannot be filled in full within the slippage limit (fill-or-kill): the limit price is 0.475, max_slippage from the reference price 0.5.",
    });
  });

  it("FOK refuses bids too thin for the shares; IOC sells what they take", () => {
    const quotes = [sellQuote("a", [[0.5, 10]])];
    const r = refused(sell(100, { maxSlippage: 500_000n }), quotes);
    expect(r).toMatchObject({ code: "insufficient_liquidity", details: { shares: 100, fillable_shares: 10 } });
    expect(planned(sell(100, { maxSlippage: 500_000n, timeInForce: "IOC" }), quotes)).toMatchObject({ shares: 10n * S, proceeds: usdc(5), complete: false });
    expect(planned(sell(10, { maxSlippage: 500_000n, timeInForce: "IOC" }), quotes)).toMatchObject({ shares: 10n * S, complete: true });
  });

  it("FOK refuses when the venues' inventories, not their bids, fall short", () => {
    const quotes = [sellQuote("a", [[0.5, 100]], { inventory: 4n * S }), sellQuote("b", [[0.5, 100]], { inventory: 3n * S })];
    expect(refused(sell(10), quotes).code).toBe("insufficient_liquidity");
    expect(planned(sell(10, { timeInForce: "IOC" }), quotes)).toMatchObject({ legs: [{ venue: "a", shares: 4n * S }, { venue: "b", shares: 3n * S }], complete: false });
  });

  it("counts shares left under one lot as sold under FOK", () => {
    const p = planned(sell(10.004), [sellQuote("a", [[0.5, 100]])]);
    expect(p).toMatchObject({ shares: 10n * S, proceeds: usdc(5) });
  });

  it("refuses shares under every venue's minimum size as too small, and an empty book as illiquid", () => {
    const kalshi = [sellQuote("k", [[0.5, 100]], { feeModel: KALSHI, lotShares: S })];
    const small = refused(sell(0.5), kalshi);
    expect(small).toMatchObject({ code: "order_too_small", details: { min_shares: 1, shares: 0.5 } });
    expect(refused(sell(0.5, { timeInForce: "IOC" }), kalshi).code).toBe("order_too_small");
    expect(refused(sell(10), [sellQuote("a", [])]).code).toBe("insufficient_liquidity");
    expect(refused(sell(10), [sellQuote("a", [[0.5, 100]], { inventory: S / 2n })]).code).toBe("insufficient_liquidity");
  });

  it("keeps the average net price above the floor when rounding alone would break it", () => {
    // At 0.71 a contract adds 0.014413 of Kalshi fee to an order (0.695587 net, the reference; 1% under
    // it, 0.688632). With the fee rounded up to the cent 6 lots of 0.1 net 0.693333 a share (0.426 less
    // 0.01) and 7 lots 0.681429, so the most the floor allows is 6 lots.
    const q = sellQuote("k", [[0.71, 0.700011]], { feeModel: KALSHI, lotShares: 100_000n, minOrderShares: 200_000n });
    const p = planned(sell(10, { timeInForce: "IOC" }), [q]);
    expect(p).toMatchObject({ referencePrice: 695_587n, limitPrice: 688_632n, shares: 600_000n, proceeds: usdc(0.416) });
  });
});

describe("selling, optimize_speed", () => {
  const speed = (shares: number, over: Partial<SellRequest> = {}) => sell(shares, { strategy: "optimize_speed", maxSlippage: 100_000n, ...over });

  it("sells on the fastest venue that can take the whole order, even if another pays more", () => {
    const quotes = [sellQuote("rich", [[0.5, 100]], { latencyMs: 120 }), sellQuote("fast", [[0.48, 100]], { latencyMs: 20 })];
    expect(legs(planned(speed(10), quotes))).toEqual([["fast", 10n * S]]);
    expect(legs(planned(sell(10), quotes))).toEqual([["rich", 10n * S]]);
  });

  it("falls to the next fastest when the fastest holds too few shares", () => {
    const quotes = [sellQuote("fast", [[0.5, 100]], { latencyMs: 10, inventory: 5n * S }), sellQuote("next", [[0.49, 100]], { latencyMs: 40 })];
    expect(legs(planned(speed(10), quotes))).toEqual([["next", 10n * S]]);
  });

  it("never splits: FOK refuses when only a split could sell it all, IOC sells what the fastest can", () => {
    const quotes = [sellQuote("a", [[0.5, 10]], { latencyMs: 30 }), sellQuote("b", [[0.5, 10]], { latencyMs: 10 })];
    expect(legs(planned(sell(15, { maxSlippage: 100_000n }), quotes))).toHaveLength(2);
    expect(refused(speed(15), quotes).code).toBe("insufficient_liquidity");
    expect(legs(planned(speed(15, { timeInForce: "IOC" }), quotes))).toEqual([["b", 10n * S]]);
  });

  it("ranks a venue by its queue plus its latency", () => {
    const quotes = [sellQuote("fast", [[0.5, 100]], { latencyMs: 10, queueDelayMs: 900 }), sellQuote("steady", [[0.5, 100]], { latencyMs: 80 })];
    expect(legs(planned(speed(10), quotes))).toEqual([["steady", 10n * S]]);
  });
});

describe("selling past venue queues", () => {
  it("spills to the next best venue rather than wait on the best one's queue, unless only the queued venue can take it", () => {
    const quotes = [sellQuote("best", [[0.5, 100]], { queueDelayMs: 2_000 }), sellQuote("next", [[0.498, 100]], { queueDelayMs: 20 })];
    expect(legs(planned(sell(10), quotes))).toEqual([["next", 10n * S]]);
    expect(legs(planned(sell(10), [{ ...quotes[0]!, queueDelayMs: MAX_QUEUE_MS }, quotes[1]!]))).toEqual([["best", 10n * S]]);
    const thin = [quotes[0]!, sellQuote("thin", [[0.498, 5]])];
    expect(legs(planned(sell(10), thin))).toEqual([["best", 10n * S]]);
  });

  it("adds the venue with the next shortest queue when the shorter ones cannot sell it all", () => {
    const quotes = [sellQuote("best", [[0.5, 100]], { queueDelayMs: 5_000 }), sellQuote("thin", [[0.5, 4]]), sellQuote("next", [[0.498, 100]], { queueDelayMs: 300 })];
    expect(legs(planned(sell(10), quotes))).toEqual([
      ["thin", 4n * S],
      ["next", 6n * S],
    ]);
  });

  it("spreads over the shortest queues when every venue's queue is long", () => {
    const quotes = [sellQuote("best", [[0.5, 100]], { queueDelayMs: 5_000 }), sellQuote("next", [[0.498, 100]], { queueDelayMs: 2_000 })];
    expect(legs(planned(sell(10), quotes))).toEqual([["next", 10n * S]]);
    expect(legs(planned(sell(10), [{ ...quotes[0]!, queueDelayMs: 2_000 + MAX_QUEUE_MS }, quotes[1]!]))).toEqual([["best", 10n * S]]);
  });
});
