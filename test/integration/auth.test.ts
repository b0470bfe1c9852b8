import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sign } from "../../src/auth/hmac.ts";
import { CrossfillClient } from "../../src/sdk/client.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.stop());

const BODY = JSON.stringify({ market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 2, max_slippage: 0.05 });
const now = () => String(Math.floor(Date.now() / 1000));

/** Sends a raw request so that every header can be wrong on purpose. */
async function send(method: string, path: string, headers: Record<string, string>, body?: string) {
  const res = await fetch(s.url + path, { method, headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers }, body });
  return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } };
}

function signed(key: { apiKey: string; apiSecret: string }, over: { ts?: string; method?: string; path?: string; body?: string; sig?: string } = {}) {
  const ts = over.ts ?? now();
  const sig = over.sig ?? sign(key.apiSecret, ts, over.method ?? "POST", over.path ?? "/v1/order", over.body ?? BODY);
  return { "x-api-key": key.apiKey, "x-timestamp": ts, "x-signature": sig };
}

describe("read requests", () => {
  it("missing_api_key without X-API-Key", async () => {
    const r = await send("GET", "/v1/markets", {});
    expect([r.status, r.body.error?.code]).toEqual([401, "missing_api_key"]);
  });
  it("invalid_api_key for a key the server never issued", async () => {
    const r = await send("GET", "/v1/markets", { "x-api-key": "ck_live_000000000000000000000000" });
    expect([r.status, r.body.error?.code]).toEqual([401, "invalid_api_key"]);
  });
  it("a valid key reads", async () => {
    const r = await send("GET", "/v1/markets?limit=1", { "x-api-key": s.key.apiKey });
    expect(r.status).toBe(200);
  });
});

describe("signed requests", () => {
  it("missing_signature when a fund-moving request carries only the key", async () => {
    const r = await send("POST", "/v1/order", { "x-api-key": s.key.apiKey }, BODY);
    expect([r.status, r.body.error?.code]).toEqual([401, "missing_signature"]);
  });
  it("missing_signature without X-Timestamp", async () => {
    const h: Record<string, string> = signed(s.key);
    delete h["x-timestamp"];
    const r = await send("POST", "/v1/order", h, BODY);
    expect([r.status, r.body.error?.code]).toEqual([401, "missing_signature"]);
  });
  it("invalid_signature when the body was changed after signing", async () => {
    const r = await send("POST", "/v1/order", signed(s.key), BODY.replace('"amount_usdc":2', '"amount_usdc":200'));
    expect([r.status, r.body.error?.code]).toEqual([401, "invalid_signature"]);
  });
  it("invalid_signature when signed with another secret", async () => {
    const other = await s.newKey();
    const r = await send("POST", "/v1/order", signed({ apiKey: s.key.apiKey, apiSecret: other.apiSecret }), BODY);
    expect([r.status, r.body.error?.code]).toEqual([401, "invalid_signature"]);
  });
  it("invalid_signature when the query string was added after signing", async () => {
    const r = await send("POST", "/v1/order?x=1", signed(s.key), BODY);
    expect([r.status, r.body.error?.code]).toEqual([401, "invalid_signature"]);
  });
  it("stale_timestamp more than 30 seconds in the past and in the future", async () => {
    // Whole seconds rounded away from the server's clock, with room for a slow request on a busy machine:
    // a future stamp of floor(now) + 31 is only 30.0x s ahead once the server reads its clock a little later.
    for (const ts of [Math.floor(Date.now() / 1000) - 31, Math.ceil(Date.now() / 1000) + 33].map(String)) {
      const r = await send("POST", "/v1/order", signed(s.key, { ts }), BODY);
      expect([r.status, r.body.error?.code]).toEqual([401, "stale_timestamp"]);
    }
  });
  it("invalid_timestamp for milliseconds, saying seconds are expected", async () => {
    const ts = String(Date.now());
    const r = await send("POST", "/v1/order", signed(s.key, { ts }), BODY);
    expect([r.status, r.body.error?.code]).toEqual([401, "invalid_timestamp"]);
    expect(r.body.error?.message).toMatch(/seconds/);
  });
  it("invalid_timestamp for a value that is not a number", async () => {
    const r = await send("POST", "/v1/order", signed(s.key, { ts: "yesterday" }), BODY);
    expect([r.status, r.body.error?.code]).toEqual([401, "invalid_timestamp"]);
  });
  it("replayed_request for the same signature sent twice, even re-encoded as base64", async () => {
    const body = JSON.stringify({ market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 1, max_slippage: 0.05 });
    const h = signed(s.key, { body });
    const first = await send("POST", "/v1/order", h, body);
    expect(first.status).toBe(200);
    const again = await send("POST", "/v1/order", h, body);
    expect([again.status, again.body.error?.code]).toEqual([401, "replayed_request"]);
    const b64 = Buffer.from(h["x-signature"], "hex").toString("base64");
    const asBase64 = await send("POST", "/v1/order", { ...h, "x-signature": b64 }, body);
    expect([asBase64.status, asBase64.body.error?.code]).toEqual([401, "replayed_request"]);
  });
  it("answers a replay that names its client_order_id as the idempotent retry, sent again or at once", async () => {
    const k = await s.newKey();
    const before = await k.client.account();
    for (const [n, at] of [["sequence", false], ["parallel", true]] as const) {
      const body = JSON.stringify({ market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 1, max_slippage: 0.05, client_order_id: `retry-${n}` });
      const h = signed(k, { body });
      const answers = at ? await Promise.all([send("POST", "/v1/order", h, body), send("POST", "/v1/order", h, body)]) : [await send("POST", "/v1/order", h, body), await send("POST", "/v1/order", h, body)];
      for (const a of answers) expect([200, 202]).toContain(a.status);
      const ids = answers.map((a) => (a.body as { order_id?: string }).order_id);
      expect(ids[0]).toMatch(/^ord_/);
      expect(ids[1]).toBe(ids[0]);
    }
    expect((await k.client.orders()).data).toHaveLength(2);
    expect((await k.client.account()).available_usdc).toBeGreaterThanOrEqual(before.available_usdc - 2);
  });
  it("refuses a copy of a signed sell refused insufficient_position once the shares are there: the refusal spent its signature", async () => {
    const k = await s.newKey();
    const body = JSON.stringify({ market_id: "fed-cut-2026-12", outcome: "YES", side: "sell", shares: 2, max_slippage: 0.05, client_order_id: "sell-refused" });
    const h = signed(k, { body });
    const refused = await send("POST", "/v1/order", h, body);
    expect([refused.status, refused.body.error?.code]).toEqual([422, "insufficient_position"]);
    const bought = await k.client.order({ market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 10, max_slippage: 0.05 });
    expect(bought.filled_shares).toBeGreaterThan(2);
    const copy = await send("POST", "/v1/order", h, body);
    expect([copy.status, copy.body.error?.code]).toEqual([401, "replayed_request"]);
    expect(copy.body.error?.message).toMatch(/X-Timestamp/);
    expect((await k.client.orders()).data.map((o) => o.order_id)).toEqual([bought.order_id]);
  });
  it("refuses a copy of a signed withdrawal refused insufficient_funds once the USDC is there", async () => {
    const k = await s.newKey({ scopes: ["read", "trade", "withdraw"] });
    const bought = await k.client.order({ market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 40, max_slippage: 0.05 });
    const available = (await k.client.account()).available_usdc;
    const body = JSON.stringify({ amount_usdc: available + 1, to_address: "0x000000000000000000000000000000000000dEaD", client_withdrawal_id: "w-refused" });
    const h = signed(k, { path: "/v1/withdrawals", body });
    const refused = await send("POST", "/v1/withdrawals", h, body);
    expect([refused.status, refused.body.error?.code]).toEqual([422, "insufficient_funds"]);
    const sold = await k.client.order({ market_id: "fed-cut-2026-12", outcome: "YES", side: "sell", shares: bought.filled_shares, max_slippage: 0.5 });
    expect(sold.proceeds_usdc).toBeGreaterThan(1);
    const copy = await send("POST", "/v1/withdrawals", h, body);
    expect([copy.status, copy.body.error?.code]).toEqual([401, "replayed_request"]);
    expect((await k.client.withdrawals()).data).toEqual([]);
  });
  it("still refuses a replay whose client_order_id is only in the unsigned Idempotency-Key header", async () => {
    const body = JSON.stringify({ market_id: "fed-cut-2026-12", outcome: "NO", side: "buy", amount_usdc: 3, max_slippage: 0.05 });
    const h = signed(s.key, { body });
    expect((await send("POST", "/v1/order", h, body)).status).toBe(200);
    const again = await send("POST", "/v1/order", { ...h, "idempotency-key": "added-by-whoever-replays" }, body);
    expect([again.status, again.body.error?.code]).toEqual([401, "replayed_request"]);
  });
  it("accepts base64url signatures", async () => {
    const body = JSON.stringify({ market_id: "fed-cut-2026-12", outcome: "NO", side: "buy", amount_usdc: 1, max_slippage: 0.05 });
    const h = signed(s.key, { body });
    const r = await send("POST", "/v1/order", { ...h, "x-signature": Buffer.from(h["x-signature"], "hex").toString("base64url") }, body);
    expect(r.status).toBe(200);
  });
  it("insufficient_scope for a read-only key on a fund-moving request", async () => {
    const ro = await s.newKey({ scopes: ["read"] });
    const r = await send("POST", "/v1/order", signed(ro), BODY);
    expect([r.status, r.body.error?.code]).toEqual([403, "insufficient_scope"]);
  });
  it("key_revoked from the request after revocation on", async () => {
    const k = await s.newKey();
    expect((await send("GET", "/v1/account", { "x-api-key": k.apiKey })).status).toBe(200);
    await s.crossfill.store.revokeApiKey(k.apiKey, new Date().toISOString());
    const r = await send("GET", "/v1/account", { "x-api-key": k.apiKey });
    expect([r.status, r.body.error?.code]).toEqual([403, "key_revoked"]);
    const o = await send("POST", "/v1/order", signed(k), BODY);
    expect([o.status, o.body.error?.code]).toEqual([403, "key_revoked"]);
  });
  it("a body that is not JSON is invalid_json, but only once the signature is valid", async () => {
    const junk = "{not json";
    const unsigned = await send("POST", "/v1/order", { "x-api-key": s.key.apiKey }, junk);
    expect(unsigned.body.error?.code).toBe("missing_signature");
    const r = await send("POST", "/v1/order", signed(s.key, { body: junk }), junk);
    expect([r.status, r.body.error?.code]).toEqual([400, "invalid_json"]);
  });
});

/** Sends a request whose request line has the absolute form (`GET http://host/v1/... HTTP/1.1`), as a client set to use a proxy sends it. */
async function sendAbsolute(method: string, path: string, headers: Record<string, string>, body?: string) {
  const { hostname, port } = new URL(s.url);
  return new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
    const req = request({ host: hostname, port, method, path: s.url + path, headers: body === undefined ? headers : { ...headers, "content-type": "application/json" } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, type: String(res.headers["content-type"]), body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("a request line in absolute form (RFC 9112 §3.2.2) is the same request as in origin form", () => {
  it("an API path no route takes is the API's JSON 404, not the terminal's page", async () => {
    const r = await sendAbsolute("GET", "/v1/prices", { "x-api-key": s.key.apiKey });
    expect([r.status, r.type]).toEqual([404, "application/json; charset=utf-8"]);
    expect((JSON.parse(r.body) as { error: { code: string } }).error.code).toBe("not_found");
  });
  it("a method its path does not take is 405 naming the methods it takes", async () => {
    const r = await sendAbsolute("DELETE", "/v1/markets", { "x-api-key": s.key.apiKey });
    expect(r.status).toBe(405);
  });
  it("a signed request is verified against its path, as the client signs it", async () => {
    const body = "{}";
    const r = await sendAbsolute("POST", "/v1/order", signed(s.key, { body }), body);
    expect(r.status).toBe(400);
    expect((JSON.parse(r.body) as { error: { code: string } }).error.code).toBe("invalid_request");
  });
});

describe("the SDK", () => {
  it("follows no redirect: a signed order is not re-sent elsewhere with its key, nor turned into a GET", async () => {
    const k = await s.newKey();
    const seen: string[] = [];
    const moved = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(301, { location: `${s.url}${req.url}` }).end();
    });
    await new Promise<void>((resolve) => moved.listen(0, "127.0.0.1", resolve));
    try {
      const client = new CrossfillClient({ baseUrl: `http://127.0.0.1:${(moved.address() as AddressInfo).port}`, apiKey: k.apiKey, apiSecret: k.apiSecret });
      const err = await client.order(JSON.parse(BODY)).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: "CrossfillError", code: "http_301", status: 301, message: expect.stringContaining(`${s.url}/v1/order`) });
      expect(seen).toEqual(["POST /v1/order"]);
      expect((await k.client.orders()).data).toEqual([]);
    } finally {
      await new Promise((resolve) => moved.close(resolve));
    }
  });
});
