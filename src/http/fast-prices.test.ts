import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { request } from "undici";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { authenticate, authenticateCached, type AuthDeps } from "../auth/authenticate.ts";
import { KeyCache } from "../auth/key-cache.ts";
import { createApiKey } from "../auth/keys.ts";
import { storeReplayCache } from "../auth/replay-cache.ts";
import { findOrCreateAccount } from "../accounts/service.ts";
import { encryptSecret } from "../auth/secrets.ts";
import { AppError } from "../domain/errors.ts";
import { openSqliteStore } from "../store/sqlite/sqlite-store.ts";
import type { Store } from "../store/store.ts";
import { buildApp } from "./app.ts";
import type { HttpDeps } from "./deps.ts";

const EVENT = "fed-cut-2026-12";
/** Headers that differ from one answer to the next, or that the server adds to every answer over a connection. */
const VOLATILE = ["date", "x-request-id", "x-ratelimit-remaining", "x-ratelimit-reset", "keep-alive"];

let store: Store;
let app: FastifyInstance;
let url: string;
let apiKey: string;
/** The requests Fastify's pipeline answered (its first hook saw them). */
let viaFastify: string[];
/** What the request metric was told. */
let counted: [string, string, number][];
/** Replaces every price record, as a tick of the books does. */
let tick: () => void;

async function start(env: { perMinute?: number; trustProxy?: boolean } = {}): Promise<void> {
  assetsDir = mkdtempSync(join(tmpdir(), "crossfill-fast-prices-"));
  writeFileSync(join(assetsDir, "index.html"), "<!doctype html><title>crossfill</title>");
  const clock = { now: () => Date.now() };
  const master = randomBytes(32);
  store = await openSqliteStore(":memory:", { clock });
  await store.migrate();
  const { account } = await findOrCreateAccount(store, "ada@example.com", (k) => encryptSecret(master, k));
  const key = async (scopes: ("read" | "trade")[], ipAllowlist: string[] | null = null) =>
    (await createApiKey(store, master, { accountId: account.id, name: "test", scopes, ipAllowlist, withdrawalAllowlist: null })).apiKey;
  apiKey = await key(["read"]);
  keys = { tradeOnly: await key(["trade"]), elsewhere: await key(["read"], ["203.0.113.7"]) };
  const authDeps: AuthDeps = { store, keys: new KeyCache(store, master), clock, replay: storeReplayCache(store) };
  let records = new Map<string, ReturnType<HttpDeps["prices"]>>();
  tick = () => (records = new Map());
  const deps = {
    version: "test",
    trustProxy: env.trustProxy ?? false,
    requestTimeoutMs: 30_000,
    store,
    authenticate: (req, needs) => authenticate(req, needs, authDeps),
    authenticateCached: (req, needs) => authenticateCached(req, needs, authDeps),
    metrics: {
      request: (method: string, route: string, status: number) => void counted.push([method, route, status]),
    } as Partial<HttpDeps["metrics"]> as HttpDeps["metrics"],
    rateLimit: { perMinute: env.perMinute ?? 1_000, redis: undefined },
    terminal: { clock, assetsDir } as Partial<HttpDeps["terminal"]> as HttpDeps["terminal"],
    // The same object until the books tick, as PriceBoard answers.
    prices: (eventId, outcome, depth, side = "buy") => {
      if (eventId !== EVENT) throw new AppError("unknown_event", `No event has the id ${JSON.stringify(eventId)}.`);
      const id = `${outcome}/${depth}/${side}`;
      let record = records.get(id);
      if (record === undefined) {
        const asks = Array.from({ length: depth }, (_, i): [number, number, string] => [0.5 + i / 1000, 10, "polymarket-sim"]);
        records.set(id, (record = { event_id: eventId, outcome, best_execution: null, orderbook: { bids: [], asks }, spread: { best_bid: null, best_ask: 0.5, spread: null }, updated_at: null, stale_venues: [] }));
      }
      return record;
    },
  } as Partial<HttpDeps> as HttpDeps;
  viaFastify = [];
  counted = [];
  app = await buildApp(deps, false);
  app.addHook("onRequest", (req, _reply, done) => {
    viaFastify.push(req.url);
    done();
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

let keys: { tradeOnly: string; elsewhere: string };
let assetsDir: string;

afterEach(async () => {
  vi.useRealTimers();
  await app.close();
  await store.close();
  rmSync(assetsDir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

async function overTheWire(path: string, headers: Record<string, string> = { "x-api-key": apiKey }, method: "GET" | "HEAD" = "GET"): Promise<Answer> {
  const res = await request(url + path, { method, headers });
  return { status: res.statusCode, headers: comparable(res.headers), body: withoutId(await res.body.text()) };
}

async function throughFastify(path: string, headers: Record<string, string> = { "x-api-key": apiKey }): Promise<Answer> {
  const res = await app.inject({ method: "GET", url: path, headers });
  return { status: res.statusCode, headers: comparable(res.headers), body: withoutId(res.body) };
}

/** An error's body less its request id. */
function withoutId(body: string): string {
  return body.replace(/"request_id":"[^"]*"/, '"request_id":"…"');
}

/** Headers as a client compares them: those that differ from one answer to the next left out. */
function comparable(headers: Record<string, string | string[] | number | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers)
      .filter(([k]) => !VOLATILE.includes(k))
      .map(([k, v]) => [k, String(v)]),
  );
}

describe("GET /v1/prices/{event_id} outside Fastify's pipeline", () => {
  beforeEach(() => start());

  it("answers a read whose record is serialised with the route's status, headers and bytes, counting it as the route", async () => {
    for (const path of [`/v1/prices/${EVENT}`, `/v1/prices/${EVENT}?outcome=NO&depth=3&side=sell`, `/v1/prices/${EVENT}?depth=500`]) {
      const first = await throughFastify(path);
      viaFastify = [];
      counted = [];
      const fast = await overTheWire(path);
      expect(viaFastify).toEqual([]);
      expect(fast).toEqual(first);
      expect(first.status).toBe(200);
      expect(counted).toEqual([["GET", "/v1/prices/:event_id", 200]]);
    }
  });

  it("leaves a record not yet serialised to the route, which serialises it for the next read", async () => {
    const path = `/v1/prices/${EVENT}`;
    await overTheWire(path);
    tick();
    const fresh = await overTheWire(path);
    expect(viaFastify).toEqual([path, path]);
    const again = await overTheWire(path);
    expect(viaFastify).toHaveLength(2);
    expect(again).toEqual(fresh);
  });

  it("sends the id a client gives, and otherwise one of the same series as the route's", async () => {
    const path = `/v1/prices/${EVENT}`;
    await throughFastify(path);
    const own = await request(url + path, { headers: { "x-api-key": apiKey, "x-request-id": "client-id.1" } });
    await own.body.dump();
    expect(own.headers["x-request-id"]).toBe("client-id.1");
    const made = [await request(url + path, { headers: { "x-api-key": apiKey } }), await app.inject({ method: "GET", url: path, headers: { "x-api-key": apiKey } })];
    const [wire, injected] = made.map((r) => String(r.headers["x-request-id"]));
    await (made[0] as Awaited<ReturnType<typeof request>>).body.dump();
    expect(wire!.slice(0, 16)).toBe(injected!.slice(0, 16));
    expect(wire).not.toBe(injected);
  });

  it("leaves every request it would not answer the same way to the route, which answers it as before", async () => {
    const path = `/v1/prices/${EVENT}`;
    await throughFastify(path);
    const cases: { path: string; headers?: Record<string, string>; status: number }[] = [
      { path: "/v1/prices/no-such-event", status: 404 },
      { path: `${path}?depth=501`, status: 400 },
      { path: `${path}?depth=0`, status: 400 },
      { path: `${path}?depth=020`, status: 200 },
      { path: `${path}?outcome=MAYBE`, status: 400 },
      { path: `${path}?outcome=NO&outcome=YES`, status: 400 },
      { path: `${path}?extra=1`, status: 400 },
      { path: `/v1/prices/fed%2Dcut-2026-12`, status: 200 },
      { path: `/v1/prices/${"x".repeat(128)}`, status: 404 },
      { path: `/v1/prices/${"x".repeat(129)}`, status: 400 },
      { path, headers: {}, status: 401 },
      { path, headers: { "x-api-key": "ck_live_unknown" }, status: 401 },
      { path, headers: { "x-api-key": keys.tradeOnly }, status: 403 },
      { path, headers: { "x-api-key": keys.elsewhere }, status: 403 },
    ];
    for (const c of cases) {
      viaFastify = [];
      const answer = await overTheWire(c.path, c.headers);
      expect([c.path, answer.status]).toEqual([c.path, c.status]);
      expect(viaFastify).toEqual([c.path]);
      expect(answer).toEqual(await throughFastify(c.path, c.headers));
    }
    viaFastify = [];
    expect((await overTheWire(path, undefined, "HEAD")).status).toBe(200);
    expect(viaFastify).toEqual([path]);
  });

  it("leaves an HTTP/1.1 read without a Host header to the route, which refuses it", async () => {
    const path = `/v1/prices/${EVENT}`;
    await throughFastify(path);
    const socket = connect(Number(new URL(url).port), "127.0.0.1");
    let answer = "";
    socket.on("data", (d) => (answer += d));
    socket.write(`GET ${path} HTTP/1.1\r\nX-API-Key: ${apiKey}\r\nConnection: close\r\n\r\n`);
    await new Promise((resolve) => socket.on("close", resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.split("\r\n\r\n")[1]!).error.details).toEqual({ fields: { Host: "is required" } });
  });

  it("leaves a read with two Host headers to the route, which refuses it", async () => {
    const path = `/v1/prices/${EVENT}`;
    await throughFastify(path);
    const socket = connect(Number(new URL(url).port), "127.0.0.1");
    let answer = "";
    socket.on("data", (d) => (answer += d));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nX-API-Key: ${apiKey}\r\nConnection: close\r\n\r\n`);
    await new Promise((resolve) => socket.on("close", resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.split("\r\n\r\n")[1]!).error.details).toEqual({ fields: { Host: "must be given once" } });
  });

  it("refuses a key at once once it is revoked", async () => {
    const path = `/v1/prices/${EVENT}`;
    await throughFastify(path);
    expect((await overTheWire(path)).status).toBe(200);
    await store.revokeApiKey(apiKey, new Date().toISOString());
    const refused = await overTheWire(path);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error.code).toBe("key_revoked");
  });
});

describe("the budget it spends", () => {
  it("is the API-wide budget of the key: the route refuses the request past it", async () => {
    await start({ perMinute: 3 });
    // The window's seconds left read Date.now(): on the real clock, a second passing over these requests (a loaded machine) would make Retry-After 59.
    vi.useFakeTimers({ toFake: ["Date"] });
    const path = `/v1/prices/${EVENT}`;
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await request(url + path, { headers: { "x-api-key": apiKey } });
      await res.body.dump();
      expect(res.statusCode).toBe(200);
      remaining.push(String(res.headers["x-ratelimit-remaining"]));
    }
    expect(remaining).toEqual(["2", "1", "0"]);
    // The first made the record's bytes; the next two were answered outside the route.
    expect(viaFastify).toEqual([path]);
    const refused = await overTheWire(path);
    expect(refused.status).toBe(429);
    expect(refused.headers["retry-after"]).toBe("60");
    expect(JSON.parse(refused.body).error.code).toBe("rate_limited");
  });
});

describe("behind a trusted proxy", () => {
  it("reads the caller's address from X-Forwarded-For as the route does, for a key with an address allowlist", async () => {
    await start({ trustProxy: true });
    const path = `/v1/prices/${EVENT}`;
    // The key's first use reads it from the store, through the route.
    await throughFastify(path, { "x-api-key": keys.elsewhere, "x-forwarded-for": "203.0.113.7" });
    viaFastify = [];
    expect((await overTheWire(path, { "x-api-key": keys.elsewhere, "x-forwarded-for": "203.0.113.7" })).status).toBe(200);
    expect(viaFastify).toEqual([]);
    expect((await overTheWire(path, { "x-api-key": keys.elsewhere, "x-forwarded-for": "203.0.113.8" })).status).toBe(403);
    expect(viaFastify).toEqual([path]);
    // The proxy appends the address it saw: one the client wrote before it is not the client's address.
    viaFastify = [];
    expect((await overTheWire(path, { "x-api-key": keys.elsewhere, "x-forwarded-for": "203.0.113.7, 203.0.113.8" })).status).toBe(403);
    expect(viaFastify).toEqual([path]);
  });
});
