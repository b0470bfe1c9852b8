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
