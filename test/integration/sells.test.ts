import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPublicClient, http, parseAbi, parseEventLogs, zeroAddress } from "viem";
import { formatMicro } from "../../src/domain/money.ts";
import { chainOrderId } from "../../src/orders/service.ts";
import type { Order } from "../../src/sdk/types.ts";
import { standing } from "../helpers/account.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { orderRecord } from "../helpers/stores.ts";

// Sells end to end (DESIGN §12) against the real server, its dev chain and the venue simulators: a trader
// buys, then sells part of what it holds; the settlement burns the shares sold and credits the proceeds.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.stop());

const buy = { market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 40, max_slippage: 0.05, time_in_force: "IOC" } as const;
const sell = { market_id: "fed-cut-2026-12", outcome: "YES", side: "sell", max_slippage: 0.05, time_in_force: "IOC" } as const;
const micro = (n: number) => BigInt(Math.round(n * 1e6));
const abi = parseAbi([
  "event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)",
  "event SellSettled(bytes32 indexed orderId, address indexed client, uint256 tokenId, uint256 sold, uint256 returned, uint256 proceeds)",
  "function balanceOf(address account, uint256 id) view returns (uint256)",
]);

async function chain() {
  const h = await s.client.health();
  return { rpc: createPublicClient({ transport: http(h.chain.rpc_url) }), sot: h.chain.contracts.sot as `0x${string}`, vault: h.chain.contracts.vault as `0x${string}` };
}

/** A fresh trader holding the shares of one filled buy. */
async function holder() {
  const k = await s.newKey();
  const bought = await k.client.order(buy);
  expect(bought.status).toMatch(/filled/);
  expect(bought.filled_shares).toBeGreaterThan(2);
  return { ...k, bought, account: await k.client.account() };
}

/** What a sell's fills paid after fees, each fill's price × shares rounded down to the micro-USDC. */
function netOf(o: Order): bigint {
  return o.fills.reduce((n, f) => n + (micro(f.price) * micro(f.shares)) / 1_000_000n - micro(f.fee_usdc), 0n);
}

describe("a sell of part of a position", () => {
  it("burns the shares sold and credits the proceeds in its one settlement transaction, and returns the rest", async () => {
    const k = await holder();
    const { rpc, sot, vault } = await chain();
    const tokenId = BigInt(k.bought.sot_minted!.split("/").pop()!);
    const address = k.account.vault_address as `0x${string}`;
    const held = await rpc.readContract({ address: sot, abi, functionName: "balanceOf", args: [address, tokenId] });
    expect(held).toBe(micro(k.bought.filled_shares));

    const asked = Math.floor(k.bought.filled_shares / 2);
    const o = await k.client.order({ ...sell, shares: asked });
    expect(o).toMatchObject({ side: "sell", shares: asked, amount_usdc: null, spent_usdc: 0, sot_minted: null, sot_burned: k.bought.sot_minted });
    expect(["filled", "partially_filled"]).toContain(o.status);
    expect(o.filled_shares).toBeGreaterThan(0);
    expect(o.filled_shares).toBeLessThanOrEqual(asked);
    expect(micro(o.proceeds_usdc!)).toBe(netOf(o));

    const receipt = await rpc.getTransactionReceipt({ hash: o.tx_hash as `0x${string}` });
    expect(receipt.status).toBe("success");
    const logs = parseEventLogs({ abi, logs: receipt.logs });
    const burns = logs.filter((l) => l.eventName === "TransferSingle" && l.address.toLowerCase() === sot.toLowerCase() && l.args.to === zeroAddress && l.args.id === tokenId);
    expect(burns.map((b) => (b.args as { value: bigint }).value)).toContain(micro(o.filled_shares));
    const settled = logs.find((l) => l.eventName === "SellSettled" && l.address.toLowerCase() === vault.toLowerCase() && l.args.client.toLowerCase() === address.toLowerCase());
    expect(settled?.args).toMatchObject({ tokenId, sold: micro(o.filled_shares), returned: micro(asked) - micro(o.filled_shares), proceeds: micro(o.proceeds_usdc!) });

    expect(await rpc.readContract({ address: sot, abi, functionName: "balanceOf", args: [address, tokenId] })).toBe(held - micro(o.filled_shares));
    const after = await k.client.account();
    expect(micro(after.available_usdc)).toBe(micro(k.account.available_usdc) + micro(o.proceeds_usdc!));
    expect(after.locked_usdc).toBe(0);
    expect(after.positions).toEqual([
      expect.objectContaining({ event_id: "fed-cut-2026-12", outcome: "YES", sot: k.bought.sot_minted, shares: Number(held - micro(o.filled_shares)) / 1e6 }),
    ]);

    expect(await k.client.getOrder(o.order_id)).toMatchObject({ order_id: o.order_id, side: "sell", status: o.status, proceeds_usdc: o.proceeds_usdc, tx_hash: o.tx_hash });
    const activity = (await k.client.activity()).data;
    expect(activity[0]).toMatchObject({ type: "sell", reference: o.order_id, amount_usdc: o.proceeds_usdc, tx_hash: o.tx_hash });
    expect(activity.filter((a) => a.reference === o.order_id)).toHaveLength(1);
    expect((await k.client.orders()).data.map((x) => [x.side, x.order_id])).toEqual([
      ["sell", o.order_id],
      ["buy", k.bought.order_id],
    ]);
  });

  it("`crossfill order --side sell --shares` sells through the API with the key in CROSSFILL_API_KEY and CROSSFILL_API_SECRET", async () => {
    const k = await holder();
    const bin = fileURLToPath(new URL("../../bin/crossfill.mjs", import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, [bin, "order", "fed-cut-2026-12", "YES", "--side", "sell", "--shares", "5", "--tif", "IOC", "--slippage", "0.05", "--json"], {
      env: { ...process.env, CROSSFILL_API_KEY: k.apiKey, CROSSFILL_API_SECRET: k.apiSecret, CROSSFILL_URL: s.url, LOG_LEVEL: "silent" },
      timeout: 30_000,
    });
    const o = JSON.parse(stdout) as Order;
    expect(o).toMatchObject({ side: "sell", shares: 5, sot_burned: k.bought.sot_minted });
    expect(o.filled_shares).toBeGreaterThan(0);
    expect((await k.client.account()).available_usdc).toBeCloseTo(k.account.available_usdc + o.proceeds_usdc!, 6);
  });
});

describe("sells that cannot be placed change nothing", () => {
  it("a sell of more than the position holds is 422 insufficient_position: no order, no escrow, the same balances", async () => {
    const k = await holder();
    const { rpc, sot } = await chain();
    const tokenId = BigInt(k.bought.sot_minted!.split("/").pop()!);
    const r = await k.client.request("POST", "/v1/order", { body: JSON.stringify({ ...sell, shares: formatMicro(micro(k.bought.filled_shares) + 1n) }), signed: true });
    expect(r.status).toBe(422);
    expect((r.body as { error: { code: string; details: Record<string, unknown> } }).error).toMatchObject({
      code: "insufficient_position",
      details: { held_shares: k.bought.filled_shares },
    });
    expect(standing(await k.client.account())).toEqual(standing(k.account));
    expect(await rpc.readContract({ address: sot, abi, functionName: "balanceOf", args: [k.account.vault_address as `0x${string}`, tokenId] })).toBe(micro(k.bought.filled_shares));
    expect((await k.client.orders()).data.map((o) => o.order_id)).toEqual([k.bought.order_id]);
  });

  it("a sell of an outcome never bought is insufficient_position too", async () => {
    const k = await s.newKey();
    const r = await k.client.request("POST", "/v1/order", { body: JSON.stringify({ ...sell, outcome: "NO", shares: 1 }), signed: true });
    expect([r.status, (r.body as { error: { code: string } }).error.code]).toEqual([422, "insufficient_position"]);
    expect((await k.client.orders()).data).toEqual([]);
  });

  it.each([
    ["a sell with amount_usdc", { ...sell, shares: 1, amount_usdc: 5 }, ["amount_usdc"]],
    ["a sell without shares", { ...sell }, ["shares"]],
    ["a buy with shares", { ...buy, shares: 1 }, ["shares"]],
    ["shares with 7 decimals", { ...sell, shares: "1.0000001" }, ["shares"]],
  ])("%s is 400 invalid_request naming the field", async (_name, body, named) => {
    const k = await s.newKey();
    const r = await k.client.request("POST", "/v1/order", { body: JSON.stringify(body), signed: true });
    const err = (r.body as { error: { code: string; details: { fields: Record<string, string> } } }).error;
    expect([r.status, err.code]).toEqual([400, "invalid_request"]);
    expect(Object.keys(err.details.fields)).toEqual(named);
  });

  it("a retried sell by client_order_id answers the first order, sold once", async () => {
    const k = await holder();
    // The whole position: a venue's minimum size is met where the buy filled, as a share or two may not be.
    const body = { ...sell, shares: k.bought.filled_shares, client_order_id: "sell-retry" };
    const first = await k.client.order(body);
    const again = await k.client.order(body);
    expect(again.order_id).toBe(first.order_id);
    expect((await k.client.orders()).data.filter((o) => o.side === "sell")).toHaveLength(1);
  });
});

describe("recovery", () => {
  it("returns the shares of a sell the server left after its escrow, and records it failed", async () => {
    const k = await holder();
    const { rpc, sot } = await chain();
    const tokenId = BigInt(k.bought.sot_minted!.split("/").pop()!);
    const address = k.account.vault_address as `0x${string}`;
    const balance = () => rpc.readContract({ address: sot, abi, functionName: "balanceOf", args: [address, tokenId] });
    const held = await balance();
    const now = new Date().toISOString();
    const order = orderRecord({
      id: `ord_sellcrash${Date.now()}`,
      accountId: k.accountId,
      eventId: "fed-cut-2026-12",
      side: "sell",
      amount: 0n,
      shares: 2_000_000n,
      status: "locked",
      escrowed: 2_000_000n,
      sotTokenId: tokenId.toString(),
      createdAt: now,
      updatedAt: now,
    });
    await s.crossfill.store.insertOrder(order);
    await s.crossfill.vault.escrow(chainOrderId(order.id), address, { tokenId, shares: 2_000_000n });
    expect(await balance()).toBe(held - 2_000_000n);
    await s.crossfill.reconciler.pass(0);
    expect(await k.client.getOrder(order.id)).toMatchObject({ side: "sell", status: "failed", filled_shares: 0, proceeds_usdc: 0, error: { code: "order_interrupted" } });
    expect(await balance()).toBe(held);
    expect(standing(await k.client.account())).toEqual(standing(k.account));
  });
});
