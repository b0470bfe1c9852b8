import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sign } from "../../src/auth/hmac.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

// Unusual client input, on each store: a clear 4xx in the API's error body, never a 5xx, and nothing changed.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.stop());

type ErrorAnswer = { error: { code: string; details?: { fields?: Record<string, string> } } };

/** A cursor as the stores make theirs (base64url JSON), holding what the client chose. */
const cursor = (v: unknown) => Buffer.from(JSON.stringify(v), "utf8").toString("base64url");

async function terminalSession(email: string) {
  const res = await fetch(`${s.url}/v1/session/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password: "long enough pw" }) });
  const { csrf_token } = (await res.json()) as { csrf_token: string };
  return { cookie: res.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": csrf_token };
}

describe("a NUL character (which PostgreSQL's text cannot hold) is invalid_request, not a 5xx", () => {
  it.each([
    ["an order id", "/v1/orders/a%00b", "order_id"],
    ["a withdrawal id", "/v1/withdrawals/a%00b", "withdrawal_id"],
    ["the orders' cursor", `/v1/orders?cursor=${cursor(["2026-01-01T00:00:00.000Z", "a\u0000b"])}`, "cursor"],
    ["the withdrawals' cursor", `/v1/withdrawals?cursor=${cursor(["2026-01-01T00:00:00.000Z\u0000", "x"])}`, "cursor"],
    ["the activity's cursor", `/v1/activity?cursor=${cursor(["2026-01-01T00:00:00.000Z", "a\u0000b"])}`, "cursor"],
  ])("in %s", async (_name, path, field) => {
    const r = await s.client.request("GET", path);
    expect(r.status).toBe(400);
    expect((r.body as ErrorAnswer).error).toMatchObject({ code: "invalid_request", details: { fields: { [field]: expect.any(String) } } });
  });

  it("in the web terminal's sign-up, sign-in, new key and key revocation, and nothing is made", async () => {
    const json = { "content-type": "application/json" };
    const credentials = JSON.stringify({ email: "nul\u0000@example.com", password: "long enough pw" });
    for (const path of ["/v1/session/signup", "/v1/session/signin"]) {
      const r = await fetch(`${s.url}${path}`, { method: "POST", headers: json, body: credentials });
      expect(r.status).toBe(400);
      expect(((await r.json()) as ErrorAnswer).error).toMatchObject({ code: "invalid_request", details: { fields: { email: expect.any(String) } } });
    }
    const session = await terminalSession("nul-keys@example.com");
    const created = await fetch(`${s.url}/v1/keys`, { method: "POST", headers: { ...json, ...session }, body: JSON.stringify({ name: "bot\u0000", scopes: ["read"] }) });
    expect(created.status).toBe(400);
    expect(((await created.json()) as ErrorAnswer).error).toMatchObject({ code: "invalid_request", details: { fields: { name: expect.any(String) } } });
    const revoked = await fetch(`${s.url}/v1/keys/ck%00`, { method: "DELETE", headers: session });
    expect(revoked.status).toBe(400);
    const keys = await fetch(`${s.url}/v1/keys`, { headers: session });
    expect(((await keys.json()) as { data: unknown[] }).data).toEqual([]);
  });
});

describe("a client id holding a lone surrogate (no character: stores keep it as U+FFFD) is invalid_request", () => {
  const order = { market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 1, max_slippage: 0.05 };

  it("as a client_order_id, and nothing is ordered", async () => {
    for (const id of ["\\ud800", "a\\udc00"]) {
      const body = JSON.stringify({ ...order, client_order_id: "X" }).replace('"X"', `"${id}"`);
      const r = await s.client.request("POST", "/v1/order", { body, signed: true });
      expect(r.status).toBe(400);
      expect((r.body as ErrorAnswer).error).toMatchObject({ code: "invalid_request", details: { fields: { client_order_id: expect.any(String) } } });
    }
    expect((await s.client.orders()).data).toEqual([]);
  });

  it("as a client_withdrawal_id: two different ones are not taken for one (an idempotency_conflict, or the first's answer)", async () => {
    const k = await s.newKey({ scopes: ["read", "withdraw"] });
    const to = "0x" + "12".repeat(20);
    for (const [id, amount] of [["\\udc00", "0.1"], ["\\udbff", "0.2"]]) {
      const body = `{"amount_usdc":"${amount}","to_address":"${to}","client_withdrawal_id":"${id}"}`;
      const r = await k.client.request("POST", "/v1/withdrawals", { body, signed: true });
      expect(r.status).toBe(400);
      expect((r.body as ErrorAnswer).error).toMatchObject({ code: "invalid_request", details: { fields: { client_withdrawal_id: expect.any(String) } } });
    }
    expect((await k.client.request("GET", "/v1/withdrawals")).body).toMatchObject({ data: [] });
  });
});

describe("a client id holding a hidden character (it reads on a screen as another id) is invalid_request", () => {
  it("as a client_order_id or a client_withdrawal_id, and nothing is ordered or paid", async () => {
    const k = await s.newKey({ scopes: ["read", "trade", "withdraw"] });
    const order = { market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 1, max_slippage: 0.05 };
    const withdrawal = { amount_usdc: "0.1", to_address: "0x" + "56".repeat(20) };
    for (const id of ["a\u200bb", "\u202eyub", "\ufeffa"]) {
      for (const [path, body, field] of [["/v1/order", { ...order, client_order_id: id }, "client_order_id"], ["/v1/withdrawals", { ...withdrawal, client_withdrawal_id: id }, "client_withdrawal_id"]] as const) {
        const r = await k.client.request("POST", path, { body: JSON.stringify(body), signed: true });
        expect([r.status, (r.body as ErrorAnswer).error]).toEqual([400, expect.objectContaining({ code: "invalid_request", details: { fields: { [field]: "must be 1-64 printable characters" } } })]);
      }
    }
    expect((await k.client.orders()).data).toEqual([]);
    expect((await k.client.request("GET", "/v1/withdrawals")).body).toMatchObject({ data: [] });
  });
});

describe("a client id holding a space of any kind (a no-break space reads as a space) is invalid_request", () => {
  it("as a client_order_id or a client_withdrawal_id, and nothing is ordered or paid", async () => {
    const k = await s.newKey({ scopes: ["read", "trade", "withdraw"] });
    const order = { market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 1, max_slippage: 0.05 };
    const withdrawal = { amount_usdc: "0.1", to_address: "0x" + "56".repeat(20) };
    for (const id of ["a\u00a0b", "a\u2009b", "a\u3000b"]) {
      for (const [path, body, field] of [["/v1/order", { ...order, client_order_id: id }, "client_order_id"], ["/v1/withdrawals", { ...withdrawal, client_withdrawal_id: id }, "client_withdrawal_id"]] as const) {
        const r = await k.client.request("POST", path, { body: JSON.stringify(body), signed: true });
        expect([id, r.status, (r.body as ErrorAnswer).error]).toEqual([id, 400, expect.objectContaining({ code: "invalid_request", details: { fields: { [field]: "must be 1-64 printable characters" } } })]);
      }
    }
    expect((await k.client.orders()).data).toEqual([]);
    expect((await k.client.request("GET", "/v1/withdrawals")).body).toMatchObject({ data: [] });
  });
});

describe("a body that is not UTF-8 (RFC 8259 §8.1) is invalid_json, not read with U+FFFD in place of its bytes", () => {
  it("for an order, whose client_order_id would otherwise be another's", async () => {
    const before = (await s.client.orders()).data.length;
    for (const byte of [0xff, 0xfe]) {
      const body = Buffer.concat([Buffer.from('{"market_id":"fed-cut-2026-12","outcome":"YES","side":"buy","amount_usdc":1,"client_order_id":"utf8-', "utf8"), Buffer.from([byte]), Buffer.from('"}', "utf8")]);
      const timestamp = String(Math.floor(Date.now() / 1000));
      const r = await fetch(`${s.url}/v1/order`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": s.key.apiKey, "x-timestamp": timestamp, "x-signature": sign(s.key.apiSecret, timestamp, "POST", "/v1/order", body) },
        body,
      });
      expect(r.status).toBe(400);
      expect(((await r.json()) as ErrorAnswer).error.code).toBe("invalid_json");
    }
    expect((await s.client.orders()).data).toHaveLength(before);
  });
});

describe("the Idempotency-Key header on POST /v1/withdrawals works as client_withdrawal_id, as on POST /v1/order", () => {
  it("a retry under the header pays once and answers the same withdrawal; another body under it is idempotency_conflict", async () => {
    const k = await s.newKey({ scopes: ["read", "withdraw"] });
    const body = JSON.stringify({ amount_usdc: "0.25", to_address: "0x" + "34".repeat(20) });
    const send = (b: string, key: string) => k.client.request("POST", "/v1/withdrawals", { body: b, signed: true, headers: { "Idempotency-Key": key } });
    const first = await send(body, "wd-retry-1");
    expect(first.status).toBe(200);
    // A second later: another signature, as a client's retry would be.
    await new Promise((r) => setTimeout(r, 1_100));
    const retry = await send(body, "wd-retry-1");
    expect(retry.status).toBe(200);
    expect((retry.body as { withdrawal_id: string }).withdrawal_id).toBe((first.body as { withdrawal_id: string }).withdrawal_id);
    expect(first.body).toMatchObject({ client_withdrawal_id: "wd-retry-1" });
    const other = await send(JSON.stringify({ amount_usdc: "0.5", to_address: "0x" + "34".repeat(20) }), "wd-retry-1");
    expect([other.status, (other.body as ErrorAnswer).error?.code]).toEqual([409, "idempotency_conflict"]);
    const mismatch = await send(JSON.stringify({ amount_usdc: "0.25", to_address: "0x" + "34".repeat(20), client_withdrawal_id: "other" }), "wd-retry-1");
    expect([mismatch.status, (mismatch.body as ErrorAnswer).error?.code]).toEqual([400, "invalid_request"]);
    expect(((await k.client.request("GET", "/v1/withdrawals")).body as { data: unknown[] }).data).toHaveLength(1);
  });
});

describe("a JSON number in exponent form that neither overflows nor holds more than 6 decimals is read exactly (DESIGN §3)", () => {
  it("as Python's json.dumps writes 0.00005 and Jackson a stripped BigDecimal 100: an order for 1E+0 USDC within 5e-2 is placed", async () => {
    const body = '{"market_id":"fed-cut-2026-12","outcome":"YES","side":"buy","amount_usdc":1E+0,"max_slippage":5e-2}';
    const r = await s.client.request("POST", "/v1/order", { body, signed: true });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ amount_usdc: 1, max_slippage: 0.05 });
  });

  it.each([
    ["1e-7 (7 decimals)", "1e-7"],
    ["1.5e-6 (7 decimals)", "1.5e-6"],
    ["1e400 (overflows)", "1e400"],
    ["1e-400", "1e-400"],
  ])("refuses %s with invalid_request naming amount_usdc", async (_name, amount) => {
    const body = `{"market_id":"fed-cut-2026-12","outcome":"YES","side":"buy","amount_usdc":${amount}}`;
    const r = await s.client.request("POST", "/v1/order", { body, signed: true });
    expect(r.status).toBe(400);
    expect((r.body as ErrorAnswer).error).toMatchObject({ code: "invalid_request", details: { fields: { amount_usdc: expect.any(String) } } });
  });
});

describe("an id longer than its route takes is invalid_request naming it, not 'No route' for a route that exists", () => {
  it.each([
    ["/v1/orders/", "order_id"],
    ["/v1/withdrawals/", "withdrawal_id"],
    ["/v1/prices/", "event_id"],
  ])("%s with 200 characters", async (prefix, field) => {
    const r = await s.client.request("GET", prefix + "a".repeat(200));
    expect(r.status).toBe(400);
    expect((r.body as ErrorAnswer).error).toMatchObject({ code: "invalid_request", details: { fields: { [field]: expect.any(String) } } });
  });
});

describe("a cursor the server did not make is refused in the same words on every list", () => {
  it.each(["/v1/markets", "/v1/orders", "/v1/withdrawals", "/v1/activity"].flatMap((path) => [[path, "of 3 characters", "abc"], [path, "longer than any the server makes", "a".repeat(600)]]))("on %s, naming the cursor parameter, for one %s", async (path, _name, given) => {
    const r = await s.client.request("GET", `${path}?cursor=${given}`);
    expect(r.status).toBe(400);
    expect((r.body as ErrorAnswer & { error: { message: string } }).error).toMatchObject({
      code: "invalid_request",
      message: "Invalid querystring: cursor is not one this server returned.",
      details: { fields: { cursor: "is not one this server returned" } },
    });
  });
});

describe("a venue no event lists is refused as any other query parameter is", () => {
  it("in the sentence every query refusal has, naming venue", async () => {
    const r = await s.client.request("GET", "/v1/markets?venue=polymarket");
    expect(r.status).toBe(400);
    expect((r.body as { error: { message: string } }).error.message).toMatch(/^Invalid querystring: venue must be one of .*polymarket-sim/);
  });
});

describe("invalid_json says what is wrong with the body", () => {
  it.each([
    ["a key given twice with different values", Buffer.from('{"market_id":"fed-cut-2026-12","amount_usdc":1,"amount_usdc":1000}'), /Duplicate key 'amount_usdc'/],
    ["a syntax error", Buffer.from('{"market_id":"fed-cut-2026-12",}'), /position 31/],
    ["bytes that are not UTF-8", Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), /not UTF-8/],
    ["arrays nested deeper than a parser's stack", Buffer.from(`{"market_id":${"[".repeat(30_000)}${"]".repeat(30_000)}}`), /nests too deep/],
  ])("for %s", async (_name, body, why) => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const res = await fetch(`${s.url}/v1/order`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": s.key.apiKey, "x-timestamp": timestamp, "x-signature": sign(s.key.apiSecret, timestamp, "POST", "/v1/order", body) },
      body,
    });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("invalid_json");
    expect(error.message).toMatch(why);
  });
});

describe("a body in a content coding the server does not decode (RFC 9110 §15.5.16) is unsupported_media_type", () => {
  it("for a gzipped order, saying to send it uncompressed, and nothing is ordered", async () => {
    const before = (await s.client.orders()).data.length;
    const body = gzipSync(JSON.stringify({ market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 1, max_slippage: 0.05 }));
    const timestamp = String(Math.floor(Date.now() / 1000));
    const res = await fetch(`${s.url}/v1/order`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "gzip", "x-api-key": s.key.apiKey, "x-timestamp": timestamp, "x-signature": sign(s.key.apiSecret, timestamp, "POST", "/v1/order", body) },
      body,
    });
    expect(res.status).toBe(415);
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    expect(error).toMatchObject({ code: "unsupported_media_type", message: expect.stringMatching(/gzip.*uncompressed|uncompressed.*gzip/) });
    expect((await s.client.orders()).data).toHaveLength(before);
  });
});
