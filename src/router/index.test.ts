import { describe, expect, it } from "vitest";
import { limitlessFee } from "../domain/fees.ts";
import { MAX_QUEUE_MS, plan, sameQuotes, type Plan, type PlanRequest, type Refusal } from "./index.ts";
import { KALSHI, planViolation, quote, usdc } from "./testkit.ts";
import type { VenueQuote } from "./types.ts";

const S = 1_000_000n; // one share in micro-shares

function req(amount: number, over: Partial<PlanRequest> = {}): PlanRequest {
  return { amount: usdc(amount), maxSlippage: 10_000n, strategy: "optimize_price", timeInForce: "FOK", ...over };
}

function planned(r: PlanRequest, quotes: VenueQuote[]): Plan {
  const p = plan(r, quotes);
  if (p.kind !== "plan") throw new Error(`expected a plan, got ${p.code}: ${p.message}`);
  expect(planViolation(r, quotes, p)).toBeUndefined();
  return p;
}

function refused(r: PlanRequest, quotes: VenueQuote[]): Refusal {
  const p = plan(r, quotes);
  if (p.kind !== "refusal") throw new Error(`expected a refusal, got a plan of ${p.shares} micro-shares`);
  return p;
}

const legs = (p: Plan) => p.legs.map((l) => [l.venue, l.shares]);

describe("optimize_price", () => {
  it("buys the whole amount on a single venue", () => {
    const p = planned(req(10), [quote("poly", [[0.5, 100]])]);
    expect(legs(p)).toEqual([["poly", 20n * S]]);
    expect(p).toMatchObject({ cost: usdc(10), fees: 0n, referencePrice: 500_000n, limitPrice: 505_000n });
    expect(p.legs[0]).toMatchObject({ limitPrice: 500_000n, notional: usdc(10), levels: [{ price: 500_000n, shares: 20n * S }] });
  });

  it("never sends a leg that could cost more than the amount were all of it filled at its limit", () => {
    // 100 at 0.50 and 50 at 0.51 cost 75.50; the same 150 shares all at 0.51 would cost 76.50.
    const quotes = [quote("poly", [[0.5, 100], [0.51, 100]], { lotShares: S / 100n })];
    const p = planned(req(75.5, { maxSlippage: 50_000n }), quotes);
    expect(p.worstCost).toBeLessThanOrEqual(usdc(75.5));
    expect(p.legs[0]!.limitPrice).toBe(510_000n);
    expect(p.shares).toBe(14_803n * (S / 100n));
    expect(p.cost).toBeLessThan(usdc(75.5));
  });

  it("counts in a Kalshi leg's worst case a fill at a better price whose fee rounds up a cent more", () => {
    // One contract at 0.828 costs 0.838 at that price, and 0.847 filled one deci-cent better, at 0.827.
    const quotes = [quote("kalshi", [[0.828, 5]], { feeModel: KALSHI, lotShares: S, minOrderShares: S, tickSize: 1_000n })];
    expect(plan(req(0.838), quotes)).toMatchObject({ kind: "refusal", code: "order_too_small", details: { min_amount_usdc: 0.848069 } });
    const p = planned(req(0.85), quotes);
    expect(p.shares).toBe(S);
    expect(p.legs[0]!.worstCost).toBeGreaterThanOrEqual(847_000n);
  });

  it("buys on a Kalshi market of whole-cent fills as many contracts as the amount pays at their limit, fee included", () => {
    // 1 at 0.50 costs 0.52 (a fee of 0.0175 rounded up to the cent) and 100 cost 51.75: the worst case locked is that, no more.
    const quotes = [quote("kalshi", [[0.5, 1000]], { feeModel: { kind: "kalshi", ratePpm: 70_000n, wholeCents: true }, lotShares: S, minOrderShares: S })];
    expect(planned(req(0.52, { timeInForce: "IOC" }), quotes)).toMatchObject({ shares: S, cost: 520_000n, worstCost: 520_000n });
    expect(planned(req(51.75, { timeInForce: "IOC" }), quotes)).toMatchObject({ shares: 100n * S, cost: usdc(51.75), worstCost: usdc(51.75) });
  });

  it("splits across venues when that buys more", () => {
    const quotes = [quote("a", [[0.5, 10], [0.6, 100]]), quote("b", [[0.51, 10], [0.6, 100]])];
    const p = planned(req(10.1, { maxSlippage: 200_000n }), quotes);
    expect(legs(p)).toEqual([["a", 10n * S], ["b", 10n * S]]);
    expect(p.cost).toBe(usdc(10.1));
  });

  it("buys the most shares whose worst case the amount covers, not on a Polymarket ask cheaper after its fee at the ask: its lock counts the fee of spending its maker amount at any better price", () => {
    // 0.89 on Polymarket at 2 % (exponent 1) is 0.891958 after its fee there, the price record's best execution;
    // Limitless's 0.891 at 0.4 % is 0.894579. A Polymarket buy spends its maker amount M whatever the asks,
    // paying 0.02 × m × (1 − q) for m spent at q: up to 0.02 × M, so M + 0.02 × M stays within the $1000 locked.
    const poly = quote("poly", [[0.89, 5000]], { feeModel: { kind: "polymarket", ratePpm: 20_000n, exponent: 1 }, minOrderShares: 5n * S, lotShares: S / 100n });
    const lim = quote("lim", [[0.891, 5000]], { feeModel: limitlessFee(4_000n), minOrderShares: 5n * S, lotShares: S / 100n });
    const alone = planned(req(1000, { timeInForce: "IOC" }), [poly]);
    expect(alone).toMatchObject({ shares: 1_101_560_000n, cost: 982_545_250n, worstCost: 999_996_168n });
    const p = planned(req(1000, { timeInForce: "IOC" }), [poly, lim]);
    expect(legs(p)).toEqual([["lim", 1_117_840_680n]]);
    expect(p).toMatchObject({ referencePrice: 891_958n, cost: 999_996_030n });
  });

  it("keeps one Kalshi order when rounding each order's fee up to the cent makes a split dearer", () => {
    // Same price on both: 4 contracts on one order pay 0.07 in fees (2.07), 1 + 3 pay 0.02 + 0.06 (2.08).
    // Their worst cases, with a cent and $0.0001 a contract for Kalshi's rounding: 2.080399, and 0.527599 + 1.562799.
    const quotes = [quote("b", [[0.5, 1]], { feeModel: KALSHI, lotShares: S }), quote("a", [[0.5, 4]], { feeModel: KALSHI, lotShares: S })];
    const p = planned(req(2.09), quotes);
    expect(legs(p)).toEqual([["a", 4n * S]]);
    expect(p).toMatchObject({ cost: usdc(2.07), fees: usdc(0.07) });
  });

  it("leaves out a venue whose minimum size the amount cannot reach", () => {
    const quotes = [quote("cheap", [[0.4, 100]], { minOrderShares: 10n * S }), quote("other", [[0.45, 100]])];
    const p = planned(req(3, { maxSlippage: 200_000n }), quotes);
    expect(legs(p)).toEqual([["other", 6_660_000n]]);
    expect(p.cost).toBe(usdc(2.997));
  });

  it("takes a venue's reference from the ask its least order reaches, not from a top ask smaller than its minimum size", () => {
    // 2 shares rest at 0.40 on a venue whose orders buy 5 at least: no buy pays 0.40 a share there, and a
    // 1% limit of 0.404 over it would leave no ask to buy. Its least order reaches 0.45.
    const thinTop = quote("thin-top", [[0.4, 2], [0.45, 1000]], { minOrderShares: 5n * S });
    expect(planned(req(45), [thinTop])).toMatchObject({ referencePrice: 450_000n, shares: 100n * S, cost: usdc(44.9) });
    const other = quote("other", [[0.44, 1000]]);
    expect(planned(req(44), [thinTop, other])).toMatchObject({ referencePrice: 440_000n, shares: 100n * S, cost: usdc(44) });
    expect(refused(req(45), [quote("thin", [[0.4, 2]], { minOrderShares: 5n * S })]).code).toBe("insufficient_liquidity");
  });

  it("takes no reference from a venue whose least order the amount cannot buy: a small order is judged by the asks it can pay", () => {
    // Opinion's 0.50 adds 0.505 a share with its 4% curve, but its 0.25 minimum fee makes its least order
    // 50 shares (25.25 USDC): a 10 USDC order buys nothing there, and a 1% limit of 0.51005 over it left
    // poly's 0.52 out, so the order was refused slippage_exceeded whatever the books held.
    const opinion = quote("opinion", [[0.5, 1000]], { feeModel: { kind: "opinion", ratePpm: 40_000n, minFee: usdc(0.25) } });
    const poly = quote("poly", [[0.52, 1000]]);
    const small = planned(req(10), [opinion, poly]);
    expect(small).toMatchObject({ referencePrice: 520_000n, limitPrice: 525_200n, cost: usdc(9.9996) });
    expect(legs(small)).toEqual([["poly", 1_923n * (S / 100n)]]);
    // An order that buys Opinion's least order is judged from Opinion's price, as before.
    const large = planned(req(30), [opinion, poly]);
    expect(large).toMatchObject({ referencePrice: 505_000n, limitPrice: 510_050n });
    expect(large.legs.map((l) => l.venue)).toEqual(["opinion"]);
    // No venue's least order within the amount: too small for all of them.
    expect(refused(req(10), [opinion, quote("poly-min", [[0.52, 1000]], { minOrderShares: 50n * S })]).code).toBe("order_too_small");
  });

  it("judges a Kalshi ask by what its contracts add to an order's fee, not by its fee alone: a one-contract top ask on a deci-cent market neither loses the reference nor cuts the venue's book", () => {
    // One contract at 0.957 pays a whole cent of fee alone (0.967 a share); inside an order it adds 0.00288
    // of fee (0.959881), and each of 500 at 0.958 adds 0.00282 (0.960817). 104 contracts across both cost
    // 98.973 for 103 with the order's fee rounded up once (0.960903 a share): more shares than Polymarket's 0.962 gives.
    // The lock allows 103, not 104: filled a contract at a time at the limit, each debits 0.9618 + its fee rounded up to
    // 0.97, which the venue's cap on rebates (at most a fill's own fee) can leave unrebated (104 would lock 100.88).
    const kalshi = quote("kalshi", [[0.957, 1], [0.958, 500]], { feeModel: KALSHI, lotShares: S, tickSize: 1_000n });
    const poly = quote("poly", [[0.962, 1000]]);
    const p = planned(req(100, { maxSlippage: 2_000n }), [kalshi, poly]);
    expect(p).toMatchObject({ referencePrice: 959_881n, limitPrice: 961_800n, shares: 103n * S, cost: usdc(98.973), fees: usdc(0.3) });
    expect(legs(p)).toEqual([["kalshi", 103n * S]]);
  });

  it("gives Opinion only legs whose fee by its curve reaches its minimum fee, and covers the minimum in a leg's worst case", () => {
    // 4% at 0.5: 0.005 a share, so the 0.25 minimum fee is reached at 50 shares (25 USDC + 0.25).
    const opinion = { feeModel: { kind: "opinion" as const, ratePpm: 40_000n, minFee: usdc(0.25) } };
    const quotes = [quote("opinion", [[0.5, 100]], opinion), quote("poly", [[0.51, 1000]])];
    expect(legs(planned(req(10, { maxSlippage: 50_000n }), quotes))).toEqual([["poly", 1_960n * (S / 100n)]]);
    const p = planned(req(60, { maxSlippage: 50_000n }), quotes);
    expect(legs(p)).toEqual([["opinion", 100n * S], ["poly", 1_862n * (S / 100n)]]);
    expect(p.legs[0]).toMatchObject({ notional: usdc(50), fee: usdc(0.5) });
    const alone = refused(req(10, { maxSlippage: 50_000n }), [quotes[0]!]);
    expect(alone).toMatchObject({ code: "order_too_small", details: { min_amount_usdc: 25.25 } });
    // Taking 0.95 after 0.80, the leg's limit: all of it at 0.95 pays less than 0.25 by the curve, so its worst case counts the minimum.
    const steep = planned(req(60, { maxSlippage: 200_000n, timeInForce: "IOC" }), [quote("opinion", [[0.8, 50], [0.95, 100]], opinion)]);
    const leg = steep.legs[0]!;
    expect(leg.limitPrice).toBe(950_000n);
    expect(leg.worstCost).toBe((950_000n * leg.shares) / S + usdc(0.25));
  });

  it("gives Opinion no buy whose amount at the leg's limit, its highest ask, is under the minimum order amount", () => {
    // 10 shares at 0.40 sign 4 USDC; 10.01 shares take the last 0.01 at 0.50 and sign 5.005 (a notional of 4.005).
    const opinion = { feeModel: { kind: "opinion" as const, ratePpm: 0n, minFee: 0n }, minOrderAmount: usdc(5) };
    const quotes = [quote("opinion", [[0.4, 10], [0.5, 100]], opinion)];
    expect(refused(req(5, { maxSlippage: 500_000n }), quotes)).toMatchObject({ code: "order_too_small", details: { min_amount_usdc: 5.005 } });
    const p = planned(req(5.005, { maxSlippage: 500_000n }), quotes);
    expect(p.legs[0]).toMatchObject({ shares: 10_010_000n, limitPrice: 500_000n, notional: usdc(4.005), worstCost: usdc(5.005) });
  });

  it("never takes a level over the slippage limit, and FOK refuses what only those levels could fill", () => {
    const quotes = [quote("a", [[0.5, 10], [0.52, 10], [0.6, 1000]])];
    const ioc = planned(req(100, { maxSlippage: 50_000n, timeInForce: "IOC" }), quotes);
    expect(ioc.limitPrice).toBe(525_000n);
    expect(ioc.legs[0]!.levels.map((l) => l.price)).toEqual([500_000n, 520_000n]);
    expect(ioc).toMatchObject({ shares: 20n * S, cost: usdc(10.2) });
    expect(refused(req(100, { maxSlippage: 50_000n }), quotes)).toMatchObject({
      code: "slippage_exceeded",
      message: "The order cannot be filled in full within the slippage limit (fill-or-kill): the limit price is 0.525, max_slippage from the reference price 0.5.",
    });
    // One Kalshi contract at 0.05 adds 0.053325 to an order, but alone pays a whole cent of fee: 0.06, over the limit.
    const kalshi = quote("kalshi", [[0.05, 1000]], { feeModel: KALSHI, lotShares: S, tickSize: 1_000n });
    expect(refused(req(0.07, { timeInForce: "IOC" }), [kalshi])).toMatchObject({
      code: "slippage_exceeded",
      message: "No liquidity within the slippage limit can fill any part of the order: the limit price is 0.053858, max_slippage from the reference price 0.053325.",
    });
  });

  it("FOK refuses a book too thin for the amount; IOC takes what there is, a plan that does not fill the order", () => {
    const quotes = [quote("a", [[0.5, 10]])];
    expect(refused(req(100, { maxSlippage: 500_000n }), quotes).code).toBe("insufficient_liquidity");
    const p = planned(req(100, { maxSlippage: 500_000n, timeInForce: "IOC" }), quotes);
    expect(p).toMatchObject({ shares: 10n * S, cost: usdc(5), complete: false });
    expect(planned(req(5, { maxSlippage: 500_000n, timeInForce: "IOC" }), quotes)).toMatchObject({ shares: 10n * S, complete: true });
    expect(planned(req(5, { maxSlippage: 500_000n }), quotes).complete).toBe(true);
  });

  it("counts budget under one lot as filled under FOK", () => {
    const p = planned(req(10.004), [quote("a", [[0.5, 100]])]);
    expect(p).toMatchObject({ shares: 20n * S, cost: usdc(10) });
  });

  it("refuses an amount under every venue's minimum size as too small, and an empty book as illiquid", () => {
    const kalshi = [quote("k", [[0.5, 100]], { feeModel: KALSHI, lotShares: S })];
    const small = refused(req(0.1), kalshi);
    expect(small.code).toBe("order_too_small");
    expect(small.details).toMatchObject({ min_amount_usdc: 0.527599 }); // 0.52 at 0.50, and the fee's rounding at worst
    expect(refused(req(0.1, { timeInForce: "IOC" }), kalshi).code).toBe("order_too_small");
    expect(refused(req(10), [quote("a", [])]).code).toBe("insufficient_liquidity");
    expect(refused(req(10, { timeInForce: "IOC" }), [quote("a", [[0.5, 0.5]])]).code).toBe("insufficient_liquidity");
  });

  it("refuses venue_unavailable, not insufficient_liquidity, when no venue quotes the event at all: none is there to take the order now", () => {
    // No fresh book anywhere (every venue down, stale or not connected) says nothing of the markets' liquidity: a retry may fill.
    for (const timeInForce of ["FOK", "IOC"] as const) {
      expect(refused(req(10, { timeInForce }), [])).toMatchObject({ code: "venue_unavailable", message: "No venue can take the order now: none of the event's venues is quoting it." });
      expect(plan({ side: "sell", shares: 10n * S, maxSlippage: 10_000n, strategy: "optimize_speed", timeInForce }, [])).toMatchObject({ kind: "refusal", code: "venue_unavailable" });
    }
  });

  it("keeps the average fee-adjusted price under the limit when rounding alone would break it", () => {
    // At 0.29 a contract adds 0.014413 of Kalshi fee to an order (0.304413, the reference; 1% over it,
    // 0.307457). With the fee rounded up to the cent 6 lots of 0.1 average 0.306667 and 7 lots 0.318571,
    // so the most the limit allows is 6 lots (the amount, 0.31, is what a contract filled alone at the limit can debit).
    const q = quote("k", [[0.29, 0.700011]], { feeModel: KALSHI, lotShares: 100_000n, minOrderShares: 200_000n });
    const p = planned(req(0.31, { timeInForce: "IOC" }), [q]);
    expect(p).toMatchObject({ referencePrice: 304_413n, limitPrice: 307_457n, shares: 600_000n, cost: usdc(0.184) });
  });
});

describe("optimize_speed", () => {
  const speed = (amount: number, over: Partial<PlanRequest> = {}) => req(amount, { strategy: "optimize_speed", maxSlippage: 100_000n, ...over });

  it("picks the fastest venue that can fill the whole order, even if another is cheaper", () => {
    const quotes = [quote("cheap", [[0.5, 100]], { latencyMs: 120 }), quote("fast", [[0.52, 100]], { latencyMs: 20 })];
    expect(legs(planned(speed(10), quotes))).toEqual([["fast", 19_230_000n]]);
    expect(legs(planned(req(10), quotes))).toEqual([["cheap", 20n * S]]);
  });

  it("falls to the next fastest when the fastest cannot fill the whole order", () => {
    const quotes = [quote("fast", [[0.5, 5]], { latencyMs: 10 }), quote("next", [[0.51, 100]], { latencyMs: 40 }), quote("slow", [[0.5, 100]], { latencyMs: 90 })];
    expect(legs(planned(speed(10), quotes))).toEqual([["next", 19_600_000n]]);
  });

  it("ranks a venue with no measured latency last", () => {
    const quotes = [quote("unmeasured", [[0.5, 100]], { latencyMs: undefined }), quote("slow", [[0.5, 100]], { latencyMs: 900 })];
    expect(legs(planned(speed(10), quotes))).toEqual([["slow", 20n * S]]);
  });

  it("breaks a latency tie by price", () => {
    const quotes = [quote("a", [[0.51, 100]], { latencyMs: 30 }), quote("b", [[0.5, 100]], { latencyMs: 30 })];
    expect(legs(planned(speed(10), quotes))).toEqual([["b", 20n * S]]);
  });

  it("never splits: FOK refuses when only a split could fill, IOC takes the fastest partial", () => {
    const quotes = [quote("a", [[0.5, 10]], { latencyMs: 30 }), quote("b", [[0.5, 10]], { latencyMs: 10 })];
    expect(legs(planned(req(7.5, { maxSlippage: 100_000n }), quotes))).toHaveLength(2);
    // The two books together hold the order: the refusal says it is no one venue's, which optimize_price would split over.
    expect(refused(speed(7.5), quotes)).toMatchObject({
      code: "insufficient_liquidity",
      message: "No venue holds enough liquidity to fill the order alone, and optimize_speed does not split an order across venues (fill-or-kill).",
    });
    expect(planned(speed(7.5, { timeInForce: "IOC" }), quotes)).toMatchObject({ legs: [{ venue: "b", shares: 10n * S }], complete: false });
    expect(planned(speed(5, { timeInForce: "IOC" }), quotes)).toMatchObject({ legs: [{ venue: "b", shares: 10n * S }], complete: true });
  });

  it("refuses slippage when a venue could fill alone only beyond the limit", () => {
    const quotes = [quote("a", [[0.5, 10], [0.7, 100]], { latencyMs: 5 })];
    expect(refused(speed(20), quotes).code).toBe("slippage_exceeded");
  });
});

describe("venue queues", () => {
  const queued = MAX_QUEUE_MS + 1;

  it("spills to the next best venue rather than wait on the cheapest one's queue", () => {
    const quotes = [quote("cheap", [[0.5, 100]], { queueDelayMs: 2_000 }), quote("next", [[0.502, 100]], { queueDelayMs: 20 })];
    expect(legs(planned(req(10), quotes))).toEqual([["next", 19_920_000n]]);
    expect(legs(planned(req(10), [quotes[0]!, { ...quotes[1]!, queueDelayMs: undefined }]))).toEqual([["next", 19_920_000n]]);
    expect(legs(planned(req(10), [{ ...quotes[0]!, queueDelayMs: MAX_QUEUE_MS }, quotes[1]!]))).toEqual([["cheap", 20n * S]]);
  });

  it("keeps the slippage limit of the best price, queued venue included", () => {
    // Without the queued venue the reference would be 0.52 and its limit 0.5252; with it, 0.505.
    const quotes = [quote("cheap", [[0.5, 100]], { queueDelayMs: queued }), quote("dear", [[0.52, 100]])];
    expect(legs(planned(req(10), quotes))).toEqual([["cheap", 20n * S]]);
  });

  it("waits on the queue when the other venues cannot fill the order (FOK) or as many shares (IOC)", () => {
    const quotes = [quote("cheap", [[0.5, 100]], { queueDelayMs: queued }), quote("thin", [[0.502, 5]])];
    expect(legs(planned(req(10), quotes))).toEqual([["cheap", 20n * S]]);
    expect(legs(planned(req(10, { timeInForce: "IOC" }), quotes))).toEqual([["cheap", 20n * S]]);
  });

  it("ranks a venue for optimize_speed by its queue plus its latency", () => {
    const quotes = [quote("fast", [[0.5, 100]], { latencyMs: 10, queueDelayMs: 900 }), quote("steady", [[0.5, 100]], { latencyMs: 80 })];
    expect(legs(planned(req(10, { strategy: "optimize_speed" }), quotes))).toEqual([["steady", 20n * S]]);
  });

  it("spreads a burst over the shortest queues when every venue's queue is long", () => {
    // Full everywhere: the cheap venue's 5 s against the next one's 2 s is a wait the next venue saves.
    const quotes = [quote("cheap", [[0.5, 100]], { queueDelayMs: 5_000 }), quote("next", [[0.502, 100]], { queueDelayMs: 2_000 })];
    expect(legs(planned(req(10), quotes))).toEqual([["next", 19_920_000n]]);
    // Within MAX_QUEUE_MS of each other the queues are alike, and the price decides.
    expect(legs(planned(req(10), [{ ...quotes[0]!, queueDelayMs: 2_000 + MAX_QUEUE_MS }, quotes[1]!]))).toEqual([["cheap", 20n * S]]);
  });

  it("adds the venue with the next shortest queue when the shorter ones cannot fill the order, the longest last", () => {
    // thin (no queue) cannot fill 10 USDC; thin and next (300 ms) can, so cheap's 5 s queue is passed.
    const quotes = [quote("cheap", [[0.5, 100]], { queueDelayMs: 5_000 }), quote("thin", [[0.5, 5]]), quote("next", [[0.502, 100]], { queueDelayMs: 300 })];
    expect(legs(planned(req(10), quotes))).toEqual([
      ["thin", 5n * S],
      ["next", 14_940_000n],
    ]);
    // Once next is as queued as cheap, the price decides among all three.
    expect(legs(planned(req(10), [quotes[0]!, quotes[1]!, { ...quotes[2]!, queueDelayMs: 5_000 }]))).toEqual([["cheap", 20n * S]]);
  });

  it("still routes when every queue is long and only the longest can fill the order, and refuses by the books alone", () => {
    const quotes = [quote("cheap", [[0.5, 100]], { queueDelayMs: 5_000 }), quote("thin", [[0.502, 5]], { queueDelayMs: 2_000 })];
    expect(legs(planned(req(10), quotes))).toEqual([["cheap", 20n * S]]);
    // A refusal never comes from a queue: it is the refusal of the same books without one.
    const short = [quote("cheap", [[0.5, 10]], { queueDelayMs: 5_000 }), quote("thin", [[0.502, 5]], { queueDelayMs: 2_000 })];
    expect(refused(req(10), short)).toEqual(refused(req(10), short.map((q) => ({ ...q, queueDelayMs: undefined }))));
    expect(refused(req(10), short).code).toBe("insufficient_liquidity");
  });

  it("spreads a burst over the fastest expected fills for optimize_speed as queues grow", () => {
    // The fast venue after 40 orders planned onto it at 10 a second (4 s) against the slower venue with none ahead.
    const quotes = [quote("fast", [[0.5, 100]], { latencyMs: 10, queueDelayMs: 4_000 }), quote("slow", [[0.5, 100]], { latencyMs: 300, queueDelayMs: 0 })];
    expect(legs(planned(req(10, { strategy: "optimize_speed" }), quotes))).toEqual([["slow", 20n * S]]);
  });
});

describe("sameQuotes", () => {
  it("tells quotes a plan would differ on from quotes that are the same input, whether or not they share their books", () => {
    const quotes = () => [quote("poly", [[0.5, 100], [0.51, 40]], { queueDelayMs: 0 }), quote("kalshi", [[0.52, 100]], { feeModel: KALSHI, latencyMs: 80 })];
    const a = quotes();
    expect(sameQuotes(a, quotes())).toBe(true);
    expect(sameQuotes(a, a.map((q) => ({ ...q })))).toBe(true);
    const changed = (i: number, over: Partial<VenueQuote>) => quotes().map((q, j) => (j === i ? { ...q, ...over } : q));
    expect(sameQuotes(a, changed(0, { asks: [{ price: 500_000n, shares: 100n * S }, { price: 510_000n, shares: 39n * S }] }))).toBe(false);
    expect(sameQuotes(a, changed(0, { asks: [{ price: 500_000n, shares: 100n * S }] }))).toBe(false);
    expect(sameQuotes(a, changed(0, { queueDelayMs: 0.5 }))).toBe(false);
    expect(sameQuotes(a, changed(1, { latencyMs: 81 }))).toBe(false);
    expect(sameQuotes(a, changed(1, { feeModel: { kind: "kalshi", ratePpm: 35_000n } }))).toBe(false);
    expect(sameQuotes(a, quotes().slice(0, 1))).toBe(false);
    expect(sameQuotes(a, quotes().reverse())).toBe(false);
  });
});
