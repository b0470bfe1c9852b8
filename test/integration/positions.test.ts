import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.stop());

const buy = { market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", max_slippage: 0.05, strategy: "optimize_price" } as const;

describe("where a trader stands: GET /v1/account's P&L", () => {
  it("states each position's average cost with fees, its mark at the best fee-adjusted bid, and its unrealized P&L at that mark", async () => {
    const k = await s.newKey();
    const first = await k.client.order({ ...buy, amount_usdc: 40 });
    const second = await k.client.order({ ...buy, amount_usdc: 25 });
    const before = await k.client.prices("fed-cut-2026-12", { side: "sell" });
    const account = await k.client.account();
    const after = await k.client.prices("fed-cut-2026-12", { side: "sell" });

    // Summed in micro units: the decimals of two orders added as doubles are not the decimal of their sum.
    const micro = (n: number) => Math.round(n * 1e6);
    const shares = (micro(first.filled_shares) + micro(second.filled_shares)) / 1e6;
    const cost = (micro(first.spent_usdc) + micro(second.spent_usdc)) / 1e6;
    const [p] = account.positions;
    expect(account.positions).toHaveLength(1);
    expect(p).toMatchObject({ event_id: "fed-cut-2026-12", outcome: "YES", shares, realized_pnl_usdc: 0 });
    // Fees are in the cost: the average cost is the USDC spent over the shares bought, rounded up to the micro-USDC.
    expect(p!.avg_cost! - cost / shares).toBeGreaterThanOrEqual(-1e-12);
    expect(p!.avg_cost! - cost / shares).toBeLessThan(1e-6);
    // The books move: the mark is the sell side's best fee-adjusted bid read just before or just after.
    const bids = [before, after].map((r) => r.best_execution!.fee_adjusted_price);
    expect(p!.mark_price! >= Math.min(...bids) - 0.02 && p!.mark_price! <= Math.max(...bids) + 0.02).toBe(true);
    expect(p!.mark_price!).toBeLessThan(p!.avg_cost!);
    // The shares' value at the mark, rounded down to the micro-USDC as a sale's proceeds are, less their cost: exact.
    const value = (BigInt(micro(p!.mark_price!)) * BigInt(micro(shares))) / 1_000_000n;
    expect(micro(p!.unrealized_pnl_usdc!)).toBe(Number(value) - micro(cost));
    expect(p!.unrealized_pnl_usdc!).toBeLessThan(0);
  });
});
