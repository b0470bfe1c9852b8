import { randomBytes } from "node:crypto";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Static } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import vectors from "../../test/fixtures/hmac-signing.json" with { type: "json" };
import { authenticate } from "../auth/authenticate.ts";
import { KeyCache } from "../auth/key-cache.ts";
import { storeReplayCache } from "../auth/replay-cache.ts";
import { canonicalString, verifySignature } from "../auth/hmac.ts";
import { createApiKey } from "../auth/keys.ts";
import { AppError } from "../domain/errors.ts";
import type * as Wire from "../http/schemas.ts";
import { openSqliteStore } from "../store/sqlite/sqlite-store.ts";
import type { Store } from "../store/store.ts";
import { CrossfillClient, CrossfillError, withQuery } from "./client.ts";
import type { Account, Activity, ErrorBody, Health, Market, Order, OrderRequest, PriceRecord, Withdrawal, WithdrawalRequest } from "./types.ts";

interface Sent {
  url: URL;
  method: string;
  headers: Headers;
  body: string | undefined;
}

/** An answer each typed helper takes: the fields that tell its answer from other JSON, all together. */
const ANY_ANSWER = { data: [], next_cursor: null, event_id: "e", orderbook: { bids: [], asks: [] }, order_id: "o", withdrawal_id: "w", account_id: "a", available_usdc: 0, status: "ok", chain: {} };

/** A fetch that records what it was asked to send and answers with `reply`. */
function recordingFetch(reply: () => Response = () => Response.json(ANY_ANSWER)): { fetch: typeof fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  const fake = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    sent.push({
      url: new URL(String(input)),
      method: init?.method ?? "GET",
      headers: new Headers(init?.headers),
      body: typeof init?.body === "string" ? init.body : undefined,
    });
    return reply();
  };
  return { fetch: fake as typeof fetch, sent };
}

const ORDER: OrderRequest = { market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 100.5, max_slippage: 0.01, strategy: "optimize_price" };

describe("CrossfillClient signing", () => {
  it.each(vectors.cases)("reproduces the $name vector", async (c) => {
    const { fetch, sent } = recordingFetch();
    // Any millisecond within the vector's second signs with that second.
    const client = new CrossfillClient({ baseUrl: "http://api.test/", apiKey: "ck_k", apiSecret: vectors.secret, fetch, clock: () => Number(c.timestamp) * 1000 + 999 });
    await client.request(c.method, c.path, { body: c.body === "" ? undefined : c.body, signed: true });
    const req = sent[0]!;
    expect(req.url.pathname + req.url.search).toBe(c.path);
    expect(req.method).toBe(c.method);
    expect(req.headers.get("x-timestamp")).toBe(c.timestamp);
    expect(req.headers.get("x-signature")).toBe(c.signature_hex);
    expect(req.body ?? "").toBe(c.body);
  });

  it("order() signs exactly the bytes it sends, the idempotency key among them", async () => {
    const { fetch, sent } = recordingFetch();
    const client = new CrossfillClient({ baseUrl: "http://api.test", apiKey: "ck_k", apiSecret: "cs_s", fetch, clock: () => 1_767_225_600_000 });
    await client.order({ ...ORDER, market_id: "élection-2027" }, { idempotencyKey: "retry-1" });
    const req = sent[0]!;
    expect(req.method).toBe("POST");
    expect(req.body).toBe(JSON.stringify({ ...ORDER, market_id: "élection-2027", client_order_id: "retry-1" }));
    expect(req.headers.get("content-type")).toBe("application/json");
    expect(req.headers.get("idempotency-key")).toBe("retry-1");
    expect(req.headers.get("x-api-key")).toBe("ck_k");
    const canonical = canonicalString(req.headers.get("x-timestamp")!, "POST", req.url.pathname + req.url.search, req.body);
    expect(verifySignature("cs_s", canonical, req.headers.get("x-signature")!)).toBe(true);
  });

  it("order() sends an idempotency key beyond ASCII in the body alone: a header would not carry it as it is", async () => {
    const { fetch, sent } = recordingFetch();
    const client = new CrossfillClient({ baseUrl: "http://api.test", apiKey: "ck_k", apiSecret: "cs_s", fetch, clock: () => 1_767_225_600_000 });
    for (const key of ["ké", "retry-🚀"]) await client.order(ORDER, { idempotencyKey: key });
    expect(sent.map((req) => [JSON.parse(req.body!).client_order_id, req.headers.get("idempotency-key")])).toEqual([
      ["ké", null],
      ["retry-🚀", null],
    ]);
  });

  it("signs the path as it goes on the wire, percent-encoding included", async () => {
    const { fetch, sent } = recordingFetch();
    const client = new CrossfillClient({ baseUrl: "http://api.test", apiKey: "ck_k", apiSecret: "cs_s", fetch });
    await client.request("GET", "/v1/prices/é vent?q=a b", { signed: true });
    const req = sent[0]!;
    const target = req.url.pathname + req.url.search;
    expect(target).toBe("/v1/prices/%C3%A9%20vent?q=a%20b");
    const canonical = canonicalString(req.headers.get("x-timestamp")!, "GET", target, undefined);
    expect(verifySignature("cs_s", canonical, req.headers.get("x-signature")!)).toBe(true);
  });

  it("refuses to sign without a secret, and sends no signature on reads", async () => {
    const { fetch, sent } = recordingFetch();
    const client = new CrossfillClient({ baseUrl: "http://api.test", apiKey: "ck_k", fetch });
    await expect(client.order(ORDER)).rejects.toThrow(/apiSecret/);
    await client.markets();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers.has("x-signature")).toBe(false);
  });

  it("refuses a base URL with a query or fragment, naming it, instead of sending every request into it", () => {
    const { fetch, sent } = recordingFetch();
    for (const baseUrl of ["http://api.test/?token=x", "http://api.test/api#v1", "http://api.test/?", "http://api.test#"]) {
      expect(() => new CrossfillClient({ baseUrl, apiKey: "ck_k", fetch }), baseUrl).toThrow(
        `baseUrl must be the API's address without a query or fragment, like http://127.0.0.1:8080 (got ${JSON.stringify(baseUrl)})`,
      );
    }
    expect(sent).toHaveLength(0);
  });

  it("refuses a base URL without its http:// or https:// scheme, naming it, instead of failing each request as if no server answered", () => {
    const { fetch, sent } = recordingFetch();
    for (const baseUrl of ["localhost:8080", "api.test", "ftp://api.test", ""]) {
      expect(() => new CrossfillClient({ baseUrl, apiKey: "ck_k", fetch }), baseUrl).toThrow(
        `baseUrl must be the API's http:// or https:// address, like http://127.0.0.1:8080 (got ${JSON.stringify(baseUrl)})`,
      );
    }
    expect(sent).toHaveLength(0);
  });

  it("refuses a base URL carrying a user name or password, without quoting it, instead of failing each request with fetch's error that prints the password", () => {
    const { fetch, sent } = recordingFetch();
    for (const baseUrl of ["http://user:s3cret@api.test", "https://:s3cret@api.test/api", "http://user@api.test"]) {
      let refused: unknown;
      try {
        new CrossfillClient({ baseUrl, apiKey: "ck_k", fetch });
      } catch (e) {
        refused = e;
      }
      expect(refused, baseUrl).toEqual(new TypeError("baseUrl must not carry a user name or password (the API takes its key in apiKey); it is not quoted here"));
    }
    expect(sent).toHaveLength(0);
  });
});

describe("CrossfillClient types", () => {
  // Checked by tsc (npm run typecheck): an answer's type that lacks a field the server's schema sends, or types one differently, fails it.
  it("name every field of the server's answers and requests, typed as the server's schemas", () => {
    expectTypeOf<Order>().toExtend<Static<typeof Wire.Order>>();
    expectTypeOf<PriceRecord>().toExtend<Static<typeof Wire.PriceRecord>>();
    expectTypeOf<Market>().toExtend<Static<typeof Wire.Market>>();
    expectTypeOf<Account>().toExtend<Static<typeof Wire.Account>>();
    expectTypeOf<Withdrawal>().toExtend<Static<typeof Wire.Withdrawal>>();
    expectTypeOf<Activity>().toExtend<Static<typeof Wire.Activity>>();
    expectTypeOf<Health>().toExtend<Static<typeof Wire.Health>>();
    expectTypeOf<ErrorBody>().toExtend<Static<typeof Wire.ErrorBody>>();
    expectTypeOf<OrderRequest>().toExtend<Static<typeof Wire.OrderRequest>>();
    expectTypeOf<WithdrawalRequest>().toExtend<Static<typeof Wire.WithdrawalRequest>>();
  });
});

describe("CrossfillClient requests and errors", () => {
  it("builds query strings from the defined fields only", async () => {
    const { fetch, sent } = recordingFetch();
    const client = new CrossfillClient({ baseUrl: "http://api.test/base/", apiKey: "ck_k", fetch });
    await client.markets({ status: "open", q: "fed cut", limit: 2, cursor: undefined });
    await client.prices("a/b", { outcome: "NO", depth: 5 });
    await client.orders({ limit: 10 });
    await client.getOrder("ord 1");
    await client.account();
    await client.health();
    expect(sent.map((s) => s.url.pathname + s.url.search)).toEqual([
      "/base/v1/markets?status=open&q=fed+cut&limit=2",
      "/base/v1/prices/a%2Fb?outcome=NO&depth=5",
      "/base/v1/orders?limit=10",
      "/base/v1/orders/ord%201",
      "/base/v1/account",
      "/base/v1/health",
    ]);
    expect(withQuery("/v1/orders", {})).toBe("/v1/orders");
  });

  it("refuses an id of \"\", \".\" or \"..\", naming it, instead of asking another endpoint: /v1/orders/.. is /v1/", async () => {
    const { fetch, sent } = recordingFetch();
    const client = new CrossfillClient({ baseUrl: "http://api.test/base", apiKey: "ck_k", fetch });
    for (const id of ["", ".", ".."]) {
      await expect(client.prices(id), `prices ${id}`).rejects.toThrow(new TypeError(`eventId must name one (got ${JSON.stringify(id)}, which the URL would resolve into another endpoint's path)`));
      await expect(client.getOrder(id), `getOrder ${id}`).rejects.toThrow(/^orderId must name one/);
      await expect(client.getWithdrawal(id), `getWithdrawal ${id}`).rejects.toThrow(/^withdrawalId must name one/);
    }
    expect(sent).toHaveLength(0);
    await client.getOrder("..a");
    await client.getWithdrawal("%2e%2e");
    expect(sent.map((s) => s.url.pathname)).toEqual(["/base/v1/orders/..a", "/base/v1/withdrawals/%252e%252e"]);
  });

  it("request() returns error responses; typed helpers throw CrossfillError", async () => {
    const body = { error: { code: "stale_timestamp", message: "too old", details: { server_time: 5 }, request_id: "req_1" } };
    const { fetch } = recordingFetch(() => Response.json(body, { status: 401, headers: { "x-request-id": "req_1" } }));
    const client = new CrossfillClient({ baseUrl: "http://api.test", apiKey: "ck_k", apiSecret: "cs_s", fetch });
    const raw = await client.request("POST", "/v1/order", { body: "{}", signed: true });
    expect(raw).toMatchObject({ status: 401, body, headers: { "x-request-id": "req_1" } });

    const err = await client.order(ORDER).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrossfillError);
    expect(err).toMatchObject({ code: "stale_timestamp", status: 401, message: "too old", details: { server_time: 5 }, requestId: "req_1" });
  });

  it("gives a code to errors that are not the API's", async () => {
    const { fetch } = recordingFetch(() => new Response("<html>Bad Gateway</html>", { status: 502, headers: { "x-request-id": "lb_9" } }));
    const client = new CrossfillClient({ baseUrl: "http://api.test", apiKey: "ck_k", fetch });
    expect(await client.request("GET", "/v1/health")).toMatchObject({ status: 502, body: "<html>Bad Gateway</html>" });
    await expect(client.health()).rejects.toMatchObject({ code: "http_502", status: 502, requestId: "lb_9", message: "<html>Bad Gateway</html>" });
  });

  it("gives an error in JSON that is not the API's (a gateway's) its text, not only its status", async () => {
    const { fetch } = recordingFetch(() => Response.json({ message: "Missing Authentication Token" }, { status: 403 }));
    const client = new CrossfillClient({ baseUrl: "http://api.test", apiKey: "ck_k", fetch });
    await expect(client.account()).rejects.toMatchObject({ code: "http_403", status: 403, message: '{"message":"Missing Authentication Token"}' });
  });

  it("refuses a 2xx answer that is not JSON, naming the URL and its content type", async () => {
    const { fetch } = recordingFetch(() => new Response("<!doctype html><title>crossfill</title>", { headers: { "content-type": "text/html; charset=utf-8" } }));
    const client = new CrossfillClient({ baseUrl: "http://api.test/base", apiKey: "ck_k", fetch });
    await expect(client.activity({ limit: 5 })).rejects.toMatchObject({
      name: "CrossfillError",
      code: "not_json",
      status: 200,
      message: "GET http://api.test/base/v1/activity?limit=5 answered 200 with text/html; charset=utf-8, not JSON: is http://api.test/base the API's address?",
    });
  });

  it("abandons a request not answered within timeoutMs with a TimeoutError, not a CrossfillError", async () => {
    // Accepts the request and never answers it.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const client = new CrossfillClient({ baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, apiKey: "ck_k", timeoutMs: 200 });
      const started = Date.now();
      const err = await client.account().catch((e: unknown) => e);
      expect(err).toMatchObject({ name: "TimeoutError" });
      expect(err).not.toBeInstanceOf(CrossfillError);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("refuses a timeoutMs that is no wait fetch can keep, naming it, instead of abandoning every request at once or failing each with a RangeError", () => {
    const { fetch, sent } = recordingFetch();
    for (const timeoutMs of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31]) {
      expect(() => new CrossfillClient({ baseUrl: "http://api.test", apiKey: "ck_k", fetch, timeoutMs }), String(timeoutMs)).toThrow(
        new TypeError(`timeoutMs must be the milliseconds to wait for an answer, an integer from 1 to 2147483647 (got ${timeoutMs})`),
      );
    }
    expect(sent).toHaveLength(0);
  });

  it("refuses a 2xx answer labelled JSON whose body does not parse (cut off), instead of returning its text as the answer", async () => {
    const { fetch } = recordingFetch(() => new Response('{"order_id":"ord_1","sta', { headers: { "content-type": "application/json; charset=utf-8" } }));
    const client = new CrossfillClient({ baseUrl: "http://api.test", apiKey: "ck_k", apiSecret: "cs_s", fetch });
    await expect(client.order({ market_id: "m", outcome: "YES", side: "buy", amount_usdc: 1 })).rejects.toMatchObject({
      name: "CrossfillError",
      code: "not_json",
      status: 200,
      message: "POST http://api.test/v1/order answered 200 with application/json; charset=utf-8 that does not parse as JSON: is http://api.test the API's address?",
    });
  });

  it("refuses a 2xx JSON answer that is not what the method returns, instead of handing it back as that", async () => {
    const answering = (reply: () => Response) => new CrossfillClient({ baseUrl: "http://api.test", apiKey: "ck_k", apiSecret: "cs_s", fetch: recordingFetch(reply).fetch });
    // another service's JSON at the address, a proxy's empty 200, a 204
    await expect(answering(() => Response.json({})).order(ORDER)).rejects.toMatchObject({
      name: "CrossfillError",
      code: "unexpected_body",
      status: 200,
      message: "POST http://api.test/v1/order answered 200 with a JSON object without order_id, status, not an order: is http://api.test the API's address?",
    });
    await expect(answering(() => Response.json([])).activity()).rejects.toMatchObject({
      code: "unexpected_body",
      message: "GET http://api.test/v1/activity answered 200 with a JSON array, not a page of results: is http://api.test the API's address?",
    });
    await expect(answering(() => Response.json({ status: "ok" })).account()).rejects.toMatchObject({
      code: "unexpected_body",
      message: "GET http://api.test/v1/account answered 200 with a JSON object without account_id, available_usdc, not an account: is http://api.test the API's address?",
    });
    await expect(answering(() => new Response(null, { status: 204 })).getWithdrawal("wd_1")).rejects.toMatchObject({
      code: "unexpected_body",
      status: 204,
      message: "GET http://api.test/v1/withdrawals/wd_1 answered 204 with no body, not a withdrawal: is http://api.test the API's address?",
    });
  });

  it("reads an empty body as null", async () => {
    const { fetch } = recordingFetch(() => new Response(null, { status: 204 }));
    const client = new CrossfillClient({ baseUrl: "http://api.test", apiKey: "ck_k", fetch });
    expect((await client.request("GET", "/v1/health")).body).toBeNull();
  });
});

describe("CrossfillClient against the real authenticate over HTTP", () => {
  const master = randomBytes(32);
  let store: Store;
  let server: Server;
  let baseUrl: string;
  let apiKey: string;
  let apiSecret: string;

  beforeAll(async () => {
    store = await openSqliteStore(":memory:");
    await store.migrate();
    await store.createAccount({ id: "acc_1", email: "a@example.com", address: "0x" + "11".repeat(20), walletKeyEnc: null, passwordHash: null, fundedAt: null });
    ({ apiKey, apiSecret } = await createApiKey(store, master, { accountId: "acc_1", name: "sdk", scopes: "read,trade" }));
    // Every request is treated as signed, so that reads with query strings exercise the path rules too.
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const rawBody = chunks.length === 0 ? undefined : Buffer.concat(chunks);
        const needs = { scope: req.method === "POST" ? "trade" : "read", signed: true } as const;
        Promise.resolve()
          .then(() => authenticate({ method: req.method!, url: req.url!, headers: req.headers, rawBody, ip: req.socket.remoteAddress! }, needs, { store, keys: new KeyCache(store, master), clock: { now: Date.now }, replay: storeReplayCache(store) }))
          .then(
          (principal) => {
            res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ principal, url: req.url, body: rawBody?.toString("utf8") ?? null }));
          },
          (err: unknown) => {
            const e = err instanceof AppError ? err : new AppError("internal");
            res.writeHead(e.status, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: e.code, message: e.message, details: e.details, request_id: "t" } }));
          },
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await store.close();
  });

  it("is accepted for an order with a unicode body", async () => {
    const client = new CrossfillClient({ baseUrl, apiKey, apiSecret });
    const order = { ...ORDER, market_id: "élection-2027", client_order_id: "naïve-ü-" + randomBytes(4).toString("hex") };
    const res = await client.request("POST", "/v1/order", { body: JSON.stringify(order), signed: true });
    expect(res).toMatchObject({ status: 200, body: { principal: { apiKey, accountId: "acc_1" }, body: JSON.stringify(order) } });
  });

  it("is accepted for a read whose query string needs encoding", async () => {
    const client = new CrossfillClient({ baseUrl, apiKey, apiSecret });
    const res = await client.request("GET", withQuery("/v1/markets", { q: "fed cut é/?&", limit: 2 }), { signed: true });
    expect(res).toMatchObject({ status: 200, body: { url: "/v1/markets?q=fed+cut+%C3%A9%2F%3F%26&limit=2" } });
  });

  it("is refused with the server's codes", async () => {
    const wrongSecret = new CrossfillClient({ baseUrl, apiKey, apiSecret: apiSecret + "x" });
    await expect(wrongSecret.order(ORDER)).rejects.toMatchObject({ code: "invalid_signature", status: 401 });
    const slow = new CrossfillClient({ baseUrl, apiKey, apiSecret, clock: () => Date.now() - 31_000 });
    await expect(slow.order(ORDER)).rejects.toMatchObject({ code: "stale_timestamp", status: 401, details: { server_time: expect.any(Number) } });
    const unknown = new CrossfillClient({ baseUrl, apiKey: "ck_live_unknown", apiSecret });
    await expect(unknown.order(ORDER)).rejects.toMatchObject({ code: "invalid_api_key", status: 401 });
  });

  it("is accepted behind a proxy that serves the API under a path of its own and strips it: what is signed is the path the server receives", async () => {
    const proxy = createServer((req, res) => {
      const forwarded = request(`${baseUrl}${req.url!.replace(/^\/api(?=\/)/, "")}`, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      req.pipe(forwarded);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    try {
      const client = new CrossfillClient({ baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/api/`, apiKey, apiSecret });
      const order = { ...ORDER, client_order_id: "proxied-" + randomBytes(4).toString("hex") };
      const res = await client.request("POST", withQuery("/v1/order", { note: "a b" }), { body: JSON.stringify(order), signed: true });
      expect(res).toMatchObject({ status: 200, body: { url: "/v1/order?note=a+b", body: JSON.stringify(order) } });
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it("sends the same order twice in one second as a replay: client_order_id tells them apart", async () => {
    const at = Date.now();
    const fixed = new CrossfillClient({ baseUrl, apiKey, apiSecret, clock: () => at });
    const body = JSON.stringify(ORDER);
    const first = await fixed.request("POST", "/v1/order", { body, signed: true });
    const again = await fixed.request("POST", "/v1/order", { body, signed: true });
    expect(first.status).toBe(200);
    expect(again).toMatchObject({ status: 401, body: { error: { code: "replayed_request" } } });
    const distinct = await fixed.request("POST", "/v1/order", { body: JSON.stringify({ ...ORDER, client_order_id: "second" }), signed: true });
    expect(distinct.status).toBe(200);
  });
});
