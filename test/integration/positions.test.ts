import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
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
    // (Not below the cost of necessity: the simulators walk each venue's mid on its own, and with four
    // venues one's bid sometimes meets or passes another's ask after fees.)
    expect(p!.mark_price! >= Math.min(...bids) - 0.02 && p!.mark_price! <= Math.max(...bids) + 0.02).toBe(true);
    // The shares' value at the mark, rounded down to the micro-USDC as a sale's proceeds are, less their cost: exact.
    const value = (BigInt(micro(p!.mark_price!)) * BigInt(micro(shares))) / 1_000_000n;
    expect(micro(p!.unrealized_pnl_usdc!)).toBe(Number(value) - micro(cost));
  });

  it("realizes a sell against the average cost and keeps the rest of the position at it; a position sold whole stays listed (what is under a lot stays held)", async () => {
    const k = await s.newKey();
    const bought = await k.client.order({ ...buy, amount_usdc: 30 });
    const before = (await k.client.account()).positions[0]!;
    const half = Math.floor(bought.filled_shares * 50) / 100;
    const sold = await k.client.order({ ...buy, side: "sell", shares: half, max_slippage: 0.1, client_order_id: "sell-half" });
    expect(sold.status).toBe("filled");

    const after = (await k.client.account()).positions[0]!;
    expect(after.shares).toBeCloseTo(bought.filled_shares - sold.filled_shares, 6);
    // The shares kept cost what they did: the sale moves no cost onto them.
    expect(after.avg_cost!).toBeCloseTo(before.avg_cost!, 5);
    // The sale's proceeds less the average cost of the shares it removed, to the micro-USDC.
    expect(Math.abs(after.realized_pnl_usdc - (sold.proceeds_usdc! - (bought.spent_usdc * sold.filled_shares) / bought.filled_shares))).toBeLessThanOrEqual(2e-6);
    expect(after.realized_pnl_usdc).toBeLessThan(0);

    const rest = await k.client.order({ ...buy, side: "sell", shares: after.shares, max_slippage: 0.1, client_order_id: "sell-rest" });
    const closed = (await k.client.account()).positions[0]!;
    // A part bought on Limitless delivered shares off the 0.01 lot (its fee withheld in contracts): what
    // is under a lot cannot be sold on its own and stays held (docs/positions.md).
    const under = (Math.round(after.shares * 1e6) % 10_000) / 1e6;
    expect(closed).toMatchObject(under === 0 ? { shares: 0, avg_cost: null } : { shares: under });
    // What the two sales paid less the cost of every share they removed: all of it when sold whole.
    const removed = bought.spent_usdc * ((bought.filled_shares - closed.shares) / bought.filled_shares);
    expect(Math.abs(closed.realized_pnl_usdc - (sold.proceeds_usdc! + rest.proceeds_usdc! - removed))).toBeLessThanOrEqual(2e-6);
  });
});

describe("GET /v1/account when the chain cannot be read", () => {
  it("answers chain_unavailable (503) when the position tokens' balances cannot be read, and the account once they can", async () => {
    const k = await s.newKey();
    await k.client.order({ ...buy, amount_usdc: 5 });
    const read = vi.spyOn(s.crossfill.vault, "sotBalances").mockRejectedValueOnce(new Error("connect ECONNREFUSED"));
    try {
      expect(await k.client.account().catch((e: unknown) => e)).toMatchObject({ code: "chain_unavailable", status: 503 });
      expect((await k.client.account()).positions).toHaveLength(1);
    } finally {
      read.mockRestore();
    }
  });
});

describe("Get test USDC", () => {
  it("drips the faucet's amount into the signed-in account's vault, at most once a minute", async () => {
    const signup = await fetch(`${s.url}/v1/session/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: `faucet-${Date.now()}@example.com`, password: "a long enough password" }),
    });
    const { csrf_token } = (await signup.json()) as { csrf_token: string };
    const headers = { cookie: signup.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": csrf_token };
    const balance = async () => ((await (await fetch(`${s.url}/v1/account`, { headers })).json()) as { available_usdc: number }).available_usdc;
    expect(await balance()).toBe(10_000);
    const first = await fetch(`${s.url}/v1/faucet`, { method: "POST", headers });
    expect(first.status).toBe(200);
    const drip = (await first.json()) as { amount_usdc: number; tx_hash: string };
    expect(drip.amount_usdc).toBe(10_000);
    expect(await balance()).toBe(20_000);
    const again = await Promise.all([1, 2].map(async () => ((await (await fetch(`${s.url}/v1/faucet`, { method: "POST", headers })).json()) as { tx_hash: string }).tx_hash));
    // Within a minute of the drip the same drip answers and nothing more is minted.
    expect(again).toEqual([drip.tx_hash, drip.tx_hash]);
    expect(await balance()).toBe(20_000);
  });
});
