import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPublicClient, http, parseAbi } from "viem";
import { MarketCatalog } from "../../src/markets/catalog.ts";
import { ceilDiv, notional, ONE } from "../../src/domain/money.ts";
import { limitlessAuthHeaders } from "../../src/venues/limitless/signing.ts";
import { startLimitlessSim, type LimitlessSim } from "../../src/venues/limitless/sim/limitless-sim.ts";
import type { LimitlessTotals } from "../../src/venues/limitless/wire.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * A buy routed to Limitless alone, whose fee is withheld in the contracts bought: the server runs
 * against a Limitless simulator of this test's own, so the test reads the venue's side on the wire.
 */
const catalog = MarketCatalog.load();
const event = catalog.events().find((e) => e.status === "open" && e.listings.some((l) => l.venue === "limitless-sim"))!;
const slug = event.listings.find((l) => l.venue === "limitless-sim")!.venueMarketId;
const micro = (x: number) => BigInt(Math.round(x * 1e6));

let sim: LimitlessSim;
let s: TestServer;
beforeAll(async () => {
  sim = await startLimitlessSim({ catalog, seed: 71, latencyScale: 0, tickMs: 2_000 });
  const { apiKey, secret, privateKey, ownerId } = sim.credentials;
  s = await startTestServer({
    VENUES: "limitless",
    LIMITLESS_BASE_URL: sim.url,
    LIMITLESS_WS_URL: sim.wsUrl,
    LIMITLESS_API_KEY: apiKey,
    LIMITLESS_SECRET: secret,
    LIMITLESS_PRIVATE_KEY: privateKey,
    LIMITLESS_OWNER_ID: String(ownerId),
  });
}, 60_000);
afterAll(async () => {
  await s?.stop();
  await sim?.stop();
});

/** A signed read of the account straight from the simulator. */
async function read<T>(path: string): Promise<T> {
  const { apiKey, secret } = sim.credentials;
  const res = await fetch(sim.url + path, { headers: limitlessAuthHeaders(apiKey, secret, Date.now(), "GET", path, "") });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

describe("a Limitless buy pays its fee in contracts", () => {
  it("quotes the best ask at its price per share delivered: price / (1 − rate)", async () => {
    const rate = sim.exchange.market(slug)!.feeModel.ratePpm;
    expect(rate).toBeGreaterThan(0n);
    const p = await s.client.prices(event.eventId);
    expect(p.best_execution).toMatchObject({ venue: "limitless-sim" });
    const { price, fee_adjusted_price } = p.best_execution!;
    expect(micro(fee_adjusted_price)).toBe(ceilDiv(micro(price) * ONE, ONE - rate));
  });

  it("mints exactly the contracts the venue delivered and charges exactly the USDC it took", async () => {
    const k = await s.newKey();
    const before = await k.client.account();
    const o = await k.client.order({ market_id: event.eventId, outcome: "YES", side: "buy", amount_usdc: 25, max_slippage: 0.05, strategy: "optimize_price" });
    expect(o.status).toMatch(/^(partially_)?filled$/);

    // the venue's side: each order's totals, read on the wire
    const { orders } = await read<{ orders: { id: string }[] }>(`/markets/${slug}/user-orders?statuses=MATCHED&statuses=LIVE&statuses=CANCELED`);
    const totals = await Promise.all(orders.map(async (x) => (await read<{ execution: { totalsRaw: LimitlessTotals } }>(`/orders/${x.id}`)).execution.totalsRaw));
    const sum = (f: keyof LimitlessTotals) => totals.reduce((t, x) => t + BigInt(x[f]), 0n);
    expect(sum("contractsFee")).toBeGreaterThan(0n);
    expect(sum("contractsNet")).toBe(sum("contractsGross") - sum("contractsFee"));

    // crossfill's side: the shares delivered, the USDC taken, the fee the value of the contracts withheld
    expect(micro(o.filled_shares)).toBe(sum("contractsNet"));
    expect(micro(o.spent_usdc)).toBe(sum("usdGross"));
    const fillsCost = o.fills.reduce((t, f) => t + notional(micro(f.price), micro(f.shares)) + micro(f.fee_usdc), 0n);
    expect(fillsCost).toBe(sum("usdGross"));
    expect(o.fills.every((f) => f.venue === "limitless-sim" && f.fee_usdc > 0)).toBe(true);

    // the position tokens minted are the contracts delivered, not the contracts matched
    const h = await s.client.health();
    const chain = createPublicClient({ transport: http(h.chain.rpc_url) });
    const balance = await chain.readContract({
      address: h.chain.contracts.sot as `0x${string}`,
      abi: parseAbi(["function balanceOf(address account, uint256 id) view returns (uint256)"]),
      functionName: "balanceOf",
      args: [before.vault_address as `0x${string}`, BigInt(o.sot_minted!.split("/").pop()!)],
    });
    expect(balance).toBe(sum("contractsNet"));
    const after = await k.client.account();
    expect(micro(before.available_usdc) - micro(after.available_usdc)).toBe(sum("usdGross"));
    expect(after.positions).toEqual([expect.objectContaining({ event_id: event.eventId, outcome: "YES", shares: o.filled_shares })]);
  }, 60_000);
});
