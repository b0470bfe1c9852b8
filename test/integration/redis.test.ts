import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findOrCreateAccount } from "../../src/accounts/service.ts";
import { encryptSecret, loadMasterKey } from "../../src/auth/secrets.ts";
import { CrossfillClient } from "../../src/sdk/client.ts";
import { redisEnv, testRedisPrefix } from "../helpers/redis.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * Two instances on one Redis (TEST_REDIS_URL). Each has a store of its own here, holding the same API
 * key, so that what they share can only be Redis: the rate limit's budget, the replay cache and the
 * sign-in limiter.
 */
describe("two instances on one Redis", () => {
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    const env = { ...redisEnv(testRedisPrefix()), RATE_LIMIT_PER_MINUTE: "6" };
    [a, b] = await Promise.all([startTestServer(env), startTestServer(env)]);
    // b holds a's first key too, under an account of its own.
    const master = await loadMasterKey({ env: undefined, dataDir: b.dataDir });
    const { account } = await findOrCreateAccount(b.crossfill.store, "shared@example.com", (k) => encryptSecret(master, k));
    await b.crossfill.store.insertApiKey({
      apiKey: a.key.apiKey,
      accountId: account.id,
      name: "shared",
      scopes: ["read", "trade"],
      secretEnc: encryptSecret(master, a.key.apiSecret),
      ipAllowlist: null,
    });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  const on = (s: TestServer, clock?: () => number) => new CrossfillClient({ baseUrl: s.url, apiKey: a.key.apiKey, apiSecret: a.key.apiSecret, ...(clock ? { clock } : {}) });

  it("refuses on one instance a signature the other accepted", async () => {
    // Refused after authentication (the amount is over the cap), so nothing is placed; the signature is spent all the same.
    const body = JSON.stringify({ market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 1e9 });
    // One instant for both: the same bytes signed at the same second are the same signature.
    const now = Date.now();
    const first = await on(a, () => now).request("POST", "/v1/order", { body, signed: true });
    expect((first.body as { error: { code: string } }).error.code).toBe("invalid_request");
    const again = await on(b, () => now).request("POST", "/v1/order", { body, signed: true });
    expect(again.status).toBe(401);
    expect((again.body as { error: { code: string } }).error.code).toBe("replayed_request");
  });

  it("spends one rate-limit budget per key across both", async () => {
    // The test before spent 2 of the 6.
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await on(i % 2 === 0 ? b : a).request("GET", "/v1/markets")).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    expect((await on(a).request("GET", "/v1/markets")).status).toBe(429);
  });

  it("limits sign-in attempts from one address across both", async () => {
    const attempt = (s: TestServer) =>
      fetch(`${s.url}/v1/session/signin`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "nobody@example.com", password: "wrong password" }) });
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await attempt(i % 2 === 0 ? a : b)).status);
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses[10]).toBe(429);
  });
});

describe("GET /v1/health with REDIS_URL", () => {
  it("says redis down and degraded when Redis stops answering, with 200; null without REDIS_URL", async () => {
    // A TCP relay in front of TEST_REDIS_URL, which the test closes to make Redis unreachable.
    const target = new URL(redisEnv("").REDIS_URL!);
    const sockets = new Set<Socket>();
    const relay = createServer((client) => {
      const upstream = connect(Number(target.port || 6379), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on("error", () => undefined);
        s.on("close", () => sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
    const url = `redis://127.0.0.1:${(relay.address() as AddressInfo).port}`;
    const s = await startTestServer({ REDIS_URL: url, REDIS_PREFIX: testRedisPrefix() });
    const read = async () => {
      const r = await fetch(`${s.url}/v1/health`);
      expect(r.status).toBe(200);
      return (await r.json()) as { status: string; redis: { state: string } | null };
    };
    try {
      expect(await read()).toMatchObject({ status: "ok", redis: { state: "up" } });
      relay.close();
      for (const socket of sockets) socket.destroy();
      expect(await read()).toMatchObject({ status: "degraded", redis: { state: "down" } });
    } finally {
      await s.stop();
    }
    const plain = await startTestServer();
    try {
      expect(((await (await fetch(`${plain.url}/v1/health`)).json()) as { redis: unknown }).redis).toBeNull();
    } finally {
      await plain.stop();
    }
  });
});
