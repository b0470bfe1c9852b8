import { describe, expect, it } from "vitest";
import type { OrderIntent } from "../../domain/types.ts";
import type { Plan, SellPlan } from "../../router/index.ts";
import { quoteView } from "./quote.ts";

const intent: OrderIntent = {
  eventId: "evt_test",
  outcome: "YES",
  side: "buy",
  amount: 10_000_000n,
  shares: 0n,
  maxSlippage: 20_000n,
  strategy: "optimize_price",
  timeInForce: "FOK",
};

// 3 shares for 1.000000 USDC: 0.333333⅓ a share before fees.
const leg = { venue: "polymarket", venueMarketId: "m", limitPrice: 340_000n, shares: 3_000_000n, levels: [] };

describe("quoteView", () => {
  it("shows a buy's price a share rounded up: never less than the client pays for it", () => {
    const buy: Plan = {
      kind: "plan",
      legs: [{ ...leg, notional: 1_000_000n, fee: 4n, worstCost: 1_020_004n }],
      shares: 3_000_000n,
      notional: 1_000_000n,
      fees: 4n,
      cost: 1_000_004n,
      worstCost: 1_020_004n,
      referencePrice: 333_334n,
      limitPrice: 340_000n,
      complete: true,
    };
    const q = quoteView(intent, buy, 0);
    expect(q.average_price).toBe(0.333334);
    expect(q.fee_adjusted_price).toBe(0.333335);
    expect(q.legs[0]!.average_price).toBe(0.333334);
  });

  it("shows a sell's price a share rounded down: never more than it pays the client", () => {
    const sell: SellPlan = {
      kind: "plan",
      legs: [{ ...leg, notional: 1_000_000n, fee: 2n, proceeds: 999_998n }],
      shares: 3_000_000n,
      notional: 1_000_000n,
      fees: 2n,
      proceeds: 999_998n,
      referencePrice: 333_333n,
      limitPrice: 320_000n,
      complete: true,
    };
    const q = quoteView({ ...intent, side: "sell", amount: 0n, shares: 3_000_000n }, sell, 0);
    expect(q.average_price).toBe(0.333333);
    expect(q.fee_adjusted_price).toBe(0.333332);
    expect(q.legs[0]!.average_price).toBe(0.333333);
  });
});
