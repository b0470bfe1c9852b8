import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPublicClient, http, parseAbi } from "viem";
import { CrossfillClient } from "../../src/sdk/client.ts";
import { standing } from "../helpers/account.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.stop());

const valid = { market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 10, max_slippage: 0.05, strategy: "optimize_price" };

/** A client for the same key whose clock runs `seconds` ahead, so its signatures differ from the original's. */
function later(k: { apiKey: string; apiSecret: string }, seconds: number) {
  return new CrossfillClient({ baseUrl: s.url, apiKey: k.apiKey, apiSecret: k.apiSecret, clock: () => Date.now() + seconds * 1000 });
}

async function post(body: string, client = s.client, headers: Record<string, string> = {}) {
  return client.request("POST", "/v1/order", { body, signed: true, headers });
}

function chain() {
  return s.client.health().then((h) => ({
    client: createPublicClient({ transport: http(h.chain.rpc_url) }),
    sot: h.chain.contracts.sot as `0x${string}`,
  }));
}

describe("invalid orders are refused with a code and change nothing", () => {
  const cases: [string, string][] = [
    ["missing market_id", JSON.stringify({ ...valid, market_id: undefined })],
    ["market_id not a string", JSON.stringify({ ...valid, market_id: 42 })],
    ["empty market_id", JSON.stringify({ ...valid, market_id: "" })],
    ["missing outcome", JSON.stringify({ ...valid, outcome: undefined })],
    ["unknown outcome", JSON.stringify({ ...valid, outcome: "MAYBE" })],
    ["lower-case outcome", JSON.stringify({ ...valid, outcome: "yes" })],
    ["missing side", JSON.stringify({ ...valid, side: undefined })],
    ["unknown side", JSON.stringify({ ...valid, side: "short" })],
    ["missing amount", JSON.stringify({ ...valid, amount_usdc: undefined })],
    ["zero amount", JSON.stringify({ ...valid, amount_usdc: 0 })],
    ["negative amount", JSON.stringify({ ...valid, amount_usdc: -5 })],
    ["amount with 7 decimals", JSON.stringify({ ...valid, amount_usdc: "1.0000001" })],
    ["amount in exponent form with 7 decimals", JSON.stringify({ ...valid, amount_usdc: "1.5e-6" })],
    ["amount not a number", JSON.stringify({ ...valid, amount_usdc: "ten" })],
    ["amount as a boolean", JSON.stringify({ ...valid, amount_usdc: true })],
    ["amount above the per-order cap", JSON.stringify({ ...valid, amount_usdc: 100_000_000 })],
    ["amount that overflows", '{"market_id":"fed-cut-2026-12","outcome":"YES","side":"buy","amount_usdc":1e400}'],
    ["amount as a number with 16 decimals (a double rounds it to 1)", '{"market_id":"fed-cut-2026-12","outcome":"YES","side":"buy","amount_usdc":1.0000000000000001}'],
    ["amount as a number with 7 decimals, all zero", '{"market_id":"fed-cut-2026-12","outcome":"YES","side":"buy","amount_usdc":1.0000000}'],
    ["amount as a number in exponent form with 7 decimals", '{"market_id":"fed-cut-2026-12","outcome":"YES","side":"buy","amount_usdc":1e-7}'],
    ["amount given twice", '{"market_id":"fed-cut-2026-12","outcome":"YES","side":"buy","amount_usdc":1,"amount_usdc":1000}'],
    ["negative slippage", JSON.stringify({ ...valid, max_slippage: -0.01 })],
    ["slippage above 0.5", JSON.stringify({ ...valid, max_slippage: 0.6 })],
    ["slippage not a number", JSON.stringify({ ...valid, max_slippage: "lots" })],
    ["slippage as a number with 19 decimals (a double rounds it to 0.01)", '{"market_id":"fed-cut-2026-12","outcome":"YES","side":"buy","amount_usdc":1,"max_slippage":0.0100000000000000001}'],
    ["unknown strategy", JSON.stringify({ ...valid, strategy: "yolo" })],
    ["unknown time_in_force", JSON.stringify({ ...valid, time_in_force: "GTC" })],
    ["unknown field", JSON.stringify({ ...valid, leverage: 10 })],
    ["client_order_id too long", JSON.stringify({ ...valid, client_order_id: "x".repeat(65) })],
    ["body is an array", JSON.stringify([valid])],
    ["body is a string", JSON.stringify("buy")],
    ["empty body", ""],
  ];

  it.each(cases)("%s → 400 invalid_request / invalid_json", async (_name, body) => {
    const before = await s.client.account();
    const r = await post(body);
    expect(r.status).toBe(400);
    const err = (r.body as { error: { code: string; message: string; details?: { fields?: object } } }).error;
    expect(["invalid_request", "invalid_json"]).toContain(err.code);
    expect(err.message.length).toBeGreaterThan(10);
    const after = await s.client.account();
    expect(after.available_usdc).toBe(before.available_usdc);
    expect(after.locked_usdc).toBe(0);
    // The account's only orders are the ones other cases bought (filled, or in part on the moving books).
    expect((await s.client.orders()).data.filter((o) => !/^(partially_)?filled$/.test(o.status))).toHaveLength(0);
  });

  it("names every offending field in details", async () => {
    const r = await post(JSON.stringify({ market_id: "fed-cut-2026-12", outcome: "MAYBE", side: "short", amount_usdc: -1 }));
    const fields = (r.body as { error: { details: { fields: Record<string, string> } } }).error.details.fields;
    expect(Object.keys(fields).sort()).toEqual(["amount_usdc", "outcome", "side"]);
  });

  it.each(["__proto__", "constructor", "prototype"])("names %s as an unknown field", async (key) => {
    const r = await post(JSON.stringify(valid).replace("{", `{"${key}":{"amount_usdc":1},`));
    const err = (r.body as { error: { code: string; details: { fields: Record<string, string> } } }).error;
    expect([r.status, err.code]).toEqual([400, "invalid_request"]);
    expect(Object.entries(err.details.fields)).toEqual([[key, "is not a known field"]]);
  });

  it("an unknown event is 404 unknown_event; a non-JSON content type is 415", async () => {
    const r = await post(JSON.stringify({ ...valid, market_id: "no-such-event" }));
    expect([r.status, (r.body as { error: { code: string } }).error.code]).toEqual([404, "unknown_event"]);
    const t = await post(JSON.stringify(valid), s.client, { "Content-Type": "text/plain" });
    expect([t.status, (t.body as { error: { code: string } }).error.code]).toEqual([415, "unsupported_media_type"]);
  });

  it("a body over the limit is 413 payload_too_large", async () => {
    const r = await post(JSON.stringify({ ...valid, market_id: "x".repeat(70_000) }));
    expect([r.status, (r.body as { error: { code: string } }).error.code]).toEqual([413, "payload_too_large"]);
  });
});

describe("a filled order", () => {
  it("reads a number in the body exactly as written", async () => {
    const r = await post('{"market_id":"fed-cut-2026-12","outcome":"YES","side":"buy","amount_usdc":2.500000,"max_slippage":0.050}');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ amount_usdc: 2.5, status: expect.stringMatching(/^(partially_)?filled$/) });
  });

  it("settles on chain: the tx_hash has a successful receipt and the SOT sits at the client's address", async () => {
    const k = await s.newKey();
    const before = await k.client.account();
    expect(before.available_usdc).toBe(10_000);
    const o = await k.client.order({ ...valid, amount_usdc: 50 } as never);
    // Settled either way: the simulators' moving books may fill a part of it.
    expect(o.status).toMatch(/^(partially_)?filled$/);

    const { client, sot } = await chain();
    const receipt = await client.getTransactionReceipt({ hash: o.tx_hash as `0x${string}` });
    expect(receipt.status).toBe("success");
    const tokenId = BigInt(o.sot_minted!.split("/").pop()!);
    expect(o.sot_minted!.toLowerCase()).toContain(sot.toLowerCase());
    const balance = await client.readContract({
      address: sot,
      abi: parseAbi(["function balanceOf(address account, uint256 id) view returns (uint256)"]),
      functionName: "balanceOf",
      args: [before.vault_address as `0x${string}`, tokenId],
    });
    expect(balance).toBe(BigInt(Math.round(o.filled_shares * 1e6)));

    const after = await k.client.account();
    expect(after.locked_usdc).toBe(0);
    expect(after.available_usdc).toBeCloseTo(10_000 - o.spent_usdc, 6);
    expect(after.positions).toEqual([
      expect.objectContaining({ event_id: "fed-cut-2026-12", outcome: "YES", sot: o.sot_minted, shares: o.filled_shares, realized_pnl_usdc: 0 }),
    ]);
    expect(await k.client.getOrder(o.order_id)).toMatchObject({ order_id: o.order_id, status: o.status, tx_hash: o.tx_hash });

    // The activity adds up: the order's lock is what its settlement spent plus what it gave back, in that transaction.
    const moved = (await k.client.activity()).data.filter((a) => a.reference === o.order_id);
    const sum = (type: string) => moved.filter((a) => a.type === type).reduce((n, a) => n + Math.round(a.amount_usdc * 1e6), 0);
    expect(sum("lock")).toBe(50_000_000);
    expect(sum("settle")).toBe(Math.round(o.spent_usdc * 1e6));
    expect(sum("settle") + sum("release")).toBe(sum("lock"));
    expect(moved.filter((a) => a.type !== "lock").every((a) => a.tx_hash === o.tx_hash)).toBe(true);
  });
});

describe("idempotency", () => {
  it("a retried client_order_id returns the same order and spends once", async () => {
    const k = await s.newKey();
    const body = { ...valid, amount_usdc: 5, client_order_id: "retry-1" };
    const first = await k.client.order(body as never);
    // A retry is a new request: a signature identical to the first one's would be refused as a replay.
    const second = await later(k, 1).order(body as never);
    expect(second.order_id).toBe(first.order_id);
    expect(second.tx_hash).toBe(first.tx_hash);
    const viaHeader = await later(k, 2).request("POST", "/v1/order", { body: JSON.stringify({ ...valid, amount_usdc: 5 }), signed: true, headers: { "Idempotency-Key": "retry-1" } });
    expect((viaHeader.body as { order_id: string }).order_id).toBe(first.order_id);
    expect((await k.client.orders()).data).toHaveLength(1);
    expect((await k.client.account()).available_usdc).toBeCloseTo(10_000 - first.spent_usdc, 6);
  });

  it("the SDK's order() retried within the same second with its idempotency key answers the first order", async () => {
    const k = await s.newKey();
    const at = Date.now();
    const sameSecond = new CrossfillClient({ baseUrl: s.url, apiKey: k.apiKey, apiSecret: k.apiSecret, clock: () => at });
    const first = await sameSecond.order({ ...valid, amount_usdc: 5 } as never, { idempotencyKey: "quick-retry" });
    const retry = await sameSecond.order({ ...valid, amount_usdc: 5 } as never, { idempotencyKey: "quick-retry" });
    expect(retry.order_id).toBe(first.order_id);
    expect(first.client_order_id).toBe("quick-retry");
    await expect(sameSecond.order({ ...valid, amount_usdc: 5, client_order_id: "other" } as never, { idempotencyKey: "quick-retry" })).rejects.toMatchObject({
      code: "invalid_request",
      details: { fields: { client_order_id: expect.stringMatching(/Idempotency-Key/) } },
    });
    expect((await k.client.orders()).data).toHaveLength(1);
  });

  it("the same key with a different order is 409 idempotency_conflict", async () => {
    const k = await s.newKey();
    await k.client.order({ ...valid, amount_usdc: 5, client_order_id: "c-1" } as never);
    const r = await k.client.request("POST", "/v1/order", { body: JSON.stringify({ ...valid, amount_usdc: 6, client_order_id: "c-1" }), signed: true });
    expect([r.status, (r.body as { error: { code: string } }).error.code]).toEqual([409, "idempotency_conflict"]);
  });

  it("concurrent retries of one client_order_id create one order", async () => {
    const k = await s.newKey();
    const body = JSON.stringify({ ...valid, amount_usdc: 3, client_order_id: "burst" });
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => later(k, i).request("POST", "/v1/order", { body, signed: true })));
    expect(answers.map((a) => a.status).every((st) => st === 200 || st === 202)).toBe(true);
    const ids = new Set(answers.map((a) => (a.body as { order_id?: string }).order_id));
    expect(ids.size).toBe(1);
    expect((await k.client.orders()).data).toHaveLength(1);
  });
});

describe("orders that cannot be filled", () => {
  it("a rejected order leaves nothing locked and nothing spent", async () => {
    const k = await s.newKey();
    const r = await k.client.request("POST", "/v1/order", {
      body: JSON.stringify({ ...valid, amount_usdc: 9_000, max_slippage: 0, time_in_force: "FOK" }),
      signed: true,
    });
    expect(r.status).toBe(422);
    const err = (r.body as { error: { code: string; message: string; details: { order_id: string; status: string; limit_price: number; reference_price: number } } }).error;
    expect(["slippage_exceeded", "insufficient_liquidity"]).toContain(err.code);
    expect(err.details.status).toBe("rejected");
    // The refusal names the limit it was judged by and the reference it came from, and the order keeps them.
    expect(err.details).toMatchObject({ reference_price: expect.any(Number), limit_price: err.details.reference_price });
    const account = await k.client.account();
    expect(account).toMatchObject({ available_usdc: 10_000, locked_usdc: 0, positions: [] });
    const { order_id, status, order, ...named } = err.details as typeof err.details & { order: unknown };
    expect(await k.client.getOrder(order_id)).toMatchObject({ status: "rejected", tx_hash: null, error: { code: err.code, message: err.message, details: named } });
  });

  it("insufficient_funds when the vault holds less than the amount", async () => {
    const k = await s.newKey();
    const r = await k.client.request("POST", "/v1/order", { body: JSON.stringify({ ...valid, amount_usdc: 20_000, time_in_force: "IOC" }), signed: true });
    const err = (r.body as { error: { code: string; details: { order_id: string } } }).error;
    expect([r.status, err.code]).toEqual([422, "insufficient_funds"]);
    // What the vault holds against what the order needs, as a withdrawal's refusal names it: in the answer and on the order.
    expect(err.details).toMatchObject({ available_usdc: 10_000, amount_usdc: 20_000 });
    expect((await k.client.getOrder(err.details.order_id)).error).toMatchObject({ code: "insufficient_funds", details: { available_usdc: 10_000, amount_usdc: 20_000 } });
    expect(await k.client.account()).toMatchObject({ available_usdc: 10_000, locked_usdc: 0 });
  });

  it("an order no venue filled answers 502 all_venues_failed for good under its client_order_id, and says to send a new one", async () => {
    const k = await s.newKey();
    const faults = (reject: boolean) =>
      s.client.health().then(async (h) => {
        for (const v of h.venues) expect((await fetch(new URL("/_sim/faults", v.base_url!), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ reject }) })).status).toBe(200);
      });
    const body = JSON.stringify({ ...valid, amount_usdc: 4, client_order_id: "refused-1" });
    await faults(true);
    let first: Awaited<ReturnType<typeof k.client.request>>;
    try {
      first = await k.client.request("POST", "/v1/order", { body, signed: true });
    } finally {
      await faults(false);
    }
    const err = (first.body as { error: { code: string; message: string; details: { order_id: string; status: string } } }).error;
    expect([first.status, err.code, err.details.status]).toEqual([502, "all_venues_failed", "failed"]);
    expect(err.message).toBe("No venue filled any part of the order; the locked USDC was released. Sent again under the same client_order_id (or Idempotency-Key), the order answers as it is: to try again, send it under a new client_order_id.");
    // The venues take orders again: the same client_order_id answers the same order, the new one runs.
    const again = await later(k, 1).request("POST", "/v1/order", { body, signed: true });
    expect([again.status, (again.body as { error: typeof err }).error]).toEqual([502, { ...err, request_id: expect.any(String) }]);
    expect((await k.client.getOrder(err.details.order_id)).error).toMatchObject({ code: "all_venues_failed", message: err.message });
    const renewed = await k.client.request("POST", "/v1/order", { body: JSON.stringify({ ...valid, amount_usdc: 4, client_order_id: "refused-2" }), signed: true });
    expect(renewed.status).toBe(200);
    expect(await k.client.account()).toMatchObject({ locked_usdc: 0 });
  });

  it("another account's order is order_not_found", async () => {
    const a = await s.newKey();
    const o = await a.client.order({ ...valid, amount_usdc: 2 } as never);
    const r = await s.client.request("GET", `/v1/orders/${o.order_id}`);
    expect([r.status, (r.body as { error: { code: string } }).error.code]).toEqual([404, "order_not_found"]);
  });
});

describe("restart", () => {
  it("orders, balances, receipts and positions survive a restart of the server and its chain", async () => {
    const k = await s.newKey();
    const o = await k.client.order({ ...valid, amount_usdc: 7 } as never);
    const before = await k.client.account();
    await s.restart();
    expect(await k.client.getOrder(o.order_id)).toMatchObject({ status: o.status, tx_hash: o.tx_hash });
    expect(standing(await k.client.account())).toEqual(standing(before));
    const { client: rpc } = await chain();
    expect((await rpc.getTransactionReceipt({ hash: o.tx_hash as `0x${string}` })).status).toBe("success");
  });
});
