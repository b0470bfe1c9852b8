import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { authenticate, checkHeaders } from "../../auth/authenticate.ts";
import { KeyCache } from "../../auth/key-cache.ts";
import { storeReplayCache } from "../../auth/replay-cache.ts";
import { Metrics } from "../../metrics/metrics.ts";
import { AppError } from "../../domain/errors.ts";
import { createApiKey } from "../../auth/keys.ts";
import { hashPassword } from "../../accounts/password.ts";
import { sign } from "../../auth/hmac.ts";
import { encryptSecret } from "../../auth/secrets.ts";
import type { UnifiedEvent } from "../../markets/catalog.ts";
import { OrderService, type OrderDeps } from "../../orders/service.ts";
import { plan } from "../../router/index.ts";
import { openSqliteStore } from "../../store/sqlite/sqlite-store.ts";
import type { Store } from "../../store/store.ts";
import { buildApp } from "../app.ts";
import type { HttpDeps } from "../deps.ts";
import { SESSION_COOKIE } from "./session.ts";

const EVENT: UnifiedEvent = {
  eventId: "evt_test",
  title: "Test",
  description: "",
  outcomes: ["YES", "NO"],
  status: "open",
  closeTime: "2030-01-01T00:00:00.000Z",
  resolution: null,
  listings: [{ venue: "a", venueMarketId: "m" }],
};

let store: Store;
let app: FastifyInstance;
let deps: HttpDeps;
let ticks = 0;
/** The sides the price reads were ranked for, in order. */
const rankedFor: ("buy" | "sell" | undefined)[] = [];
let assets: string;

beforeEach(async () => {
  const clock = { now: () => Date.now() };
  const master = randomBytes(32);
  store = await openSqliteStore(":memory:", { clock });
  await store.migrate();
  assets = mkdtempSync(join(tmpdir(), "crossfill-terminal-"));
  writeFileSync(join(assets, "index.html"), "<!doctype html><title>crossfill</title>");
  const authDeps = { store, keys: new KeyCache(store, master), clock, replay: storeReplayCache(store) };
  deps = {
    version: "test",
    trustProxy: false,
    requestTimeoutMs: 30_000,
    store,
    authenticate: (req, needs) => authenticate(req, needs, authDeps),
    checkHeaders: (req, needs) => checkHeaders(req, needs, authDeps),
    metrics: new Metrics({ venues: () => [], openOrders: async () => 0, inFlight: () => 0 }),
    rateLimit: { perMinute: 0, redis: undefined },
    account: async (id) => (await store.accountById(id))!,
    // Only the quote path of the order service is used here.
    orders: new OrderService({
      event: (id) => (id === EVENT.eventId ? EVENT : undefined),
      quotes: () => [
        {
          venue: "a",
          venueMarketId: "m",
          asks: [{ price: 500_000n, shares: 100_000_000n }],
          feeModel: { kind: "polymarket", ratePpm: 0n, exponent: 1 },
          tickSize: 10_000n,
          minOrderShares: 1_000_000n,
          lotShares: 10_000n,
          latencyMs: 10,
        },
      ],
      plan,
      sellQuotes: () => [
        {
          venue: "a",
          venueMarketId: "m",
          bids: [{ price: 400_000n, shares: 100_000_000n }],
          feeModel: { kind: "polymarket", ratePpm: 0n, exponent: 1 },
          tickSize: 10_000n,
          minOrderShares: 1_000_000n,
          lotShares: 10_000n,
          latencyMs: 10,
          inventory: 50_000_000n,
        },
      ],
      planSell: plan,
      store,
      limits: { maxOrder: 1_000_000_000n },
    } as Partial<OrderDeps> as OrderDeps),
    prices: (eventId, outcome, _depth, side) => {
      if (eventId !== EVENT.eventId) throw new AppError("unknown_event");
      ticks++;
      rankedFor.push(side);
      return {
        event_id: eventId,
        outcome,
        best_execution: null,
        orderbook: { bids: [], asks: [[0.5, ticks, "a"]] },
        spread: { best_bid: null, best_ask: 0.5, spread: null },
        updated_at: null,
        stale_venues: [],
      };
    },
    terminal: {
      clock,
      encryptWalletKey: (k) => encryptSecret(master, k),
      createApiKey: (input) => createApiKey(store, master, input),
      topUp: async (account) => ({ amount: 10_000_000_000n, txHash: `0x${account.id.length.toString(16).padStart(64, "0")}` }),
      assetsDir: assets,
      streamIntervalMs: 20,
    },
  } as Partial<HttpDeps> as HttpDeps;
  app = await buildApp(deps, false);
});

afterEach(async () => {
  await app.close();
  await store.close();
  rmSync(assets, { recursive: true, force: true });
});

const json = { "content-type": "application/json" };

async function signUp(email = "ada@example.com", password = "correct horse battery") {
  const res = await app.inject({ method: "POST", url: "/v1/session/signup", headers: json, payload: { email, password } });
  expect(res.statusCode).toBe(201);
  const cookie = res.cookies.find((c) => c.name === SESSION_COOKIE)!;
  return { res, cookie: `${SESSION_COOKIE}=${cookie.value}`, csrf: res.json().csrf_token as string };
}

describe("sessions", () => {
  it("signs up with a hashed password and an HttpOnly, SameSite=Strict cookie whose id is stored only hashed", async () => {
    const { res } = await signUp();
    const setCookie = String(res.headers["set-cookie"]);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).not.toMatch(/Secure/); // plain HTTP here
    const account = await store.accountByEmail("ada@example.com");
    expect(account?.passwordHash).toMatch(/^scrypt\$32768\$8\$1\$/);
    const id = res.cookies[0]!.value;
    expect(await store.session(id, new Date().toISOString())).toBeUndefined();
  });

  it("sets Secure on the cookie when served over TLS, and believes a proxy's word for it only with TRUST_PROXY", async () => {
    const signup = (a: FastifyInstance, email: string) =>
      a.inject({ method: "POST", url: "/v1/session/signup", headers: { ...json, "x-forwarded-proto": "https" }, payload: { email, password: "long enough pw" } });
    expect(String((await signup(app, "direct@example.com")).headers["set-cookie"])).not.toMatch(/Secure/);
    const proxied = await buildApp({ ...deps, trustProxy: true }, false);
    try {
      expect(String((await signup(proxied, "proxied@example.com")).headers["set-cookie"])).toMatch(/; Secure/);
    } finally {
      await proxied.close();
    }
  });

  it("behind the proxy TRUST_PROXY names, counts sign-ins by the address the proxy saw, not one the client wrote before it", async () => {
    const proxied = await buildApp({ ...deps, trustProxy: true }, false);
    try {
      let last;
      for (let i = 0; i < 11; i++) {
        // The proxy appends the address it saw to what the client sent: the forged one comes first.
        const headers = { ...json, "x-forwarded-for": `198.51.100.${i}, 203.0.113.9` };
        last = await proxied.inject({ method: "POST", url: "/v1/session/signin", headers, payload: { email: "x@example.com", password: "whatever123" } });
      }
      expect([last!.statusCode, last!.json().error.code]).toEqual([429, "rate_limited"]);
    } finally {
      await proxied.close();
    }
  });

  it("refuses a second sign-up of the same email, whatever its case", async () => {
    await signUp();
    const res = await app.inject({ method: "POST", url: "/v1/session/signup", headers: json, payload: { email: "ADA@example.com", password: "another password" } });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe("email_taken");
  });

  it("signs in with the right password only, and reads the session back", async () => {
    await signUp();
    const bad = await app.inject({ method: "POST", url: "/v1/session/signin", headers: json, payload: { email: "ada@example.com", password: "wrong password" } });
    expect(bad.statusCode).toBe(401);
    expect(bad.json().error.code).toBe("invalid_credentials");
    const unknown = await app.inject({ method: "POST", url: "/v1/session/signin", headers: json, payload: { email: "nobody@example.com", password: "wrong password" } });
    expect(unknown.json().error.code).toBe("invalid_credentials");

    const ok = await app.inject({ method: "POST", url: "/v1/session/signin", headers: json, payload: { email: "ada@example.com", password: "correct horse battery" } });
    expect(ok.statusCode).toBe(200);
    const cookie = `${SESSION_COOKIE}=${ok.cookies[0]!.value}`;
    const me = await app.inject({ method: "GET", url: "/v1/session", headers: { cookie } });
    expect(me.json()).toMatchObject({ email: "ada@example.com", csrf_token: ok.json().csrf_token });
    expect(me.headers["cache-control"]).toBe("no-store");
    // Among the other cookies a browser keeps for the host.
    const among = await app.inject({ method: "GET", url: "/v1/session", headers: { cookie: `theme=dark;${cookie} ; lang=en` } });
    expect(among.json()).toMatchObject({ email: "ada@example.com" });
  });

  it.each([
    ["an escape (ESC)", "ada\u001b[31m@example.com"],
    ["a right-to-left override (U+202E)", "\u202emoc.elpmaxe@ada"],
    ["a zero-width space (U+200B)", "ada\u200b@example.com"],
    ["a Hangul filler (U+3164), which shows as a blank", "ada\u3164@example.com"],
    ["a variation selector (U+FE0F)", "ada\ufe0f@example.com"],
    ["a DEL", "ada@exam\u007fple.com"],
  ])("refuses an email holding %s with 400 invalid_request saying so, and makes no account", async (_name, email) => {
    const res = await app.inject({ method: "POST", url: "/v1/session/signup", headers: json, payload: { email, password: "correct horse battery" } });
    expect([res.statusCode, res.json().error.code, res.json().error.details?.fields]).toEqual([400, "invalid_request", { email: "must not hold control or invisible formatting characters" }]);
    expect(await store.accountByEmail(email.toLowerCase())).toBeUndefined();
    // Signing in, it is an email no account has, answered as any other: whether one has it is not told.
    const signin = await app.inject({ method: "POST", url: "/v1/session/signin", headers: json, payload: { email, password: "correct horse battery" } });
    expect([signin.statusCode, signin.json().error.code]).toEqual([401, "invalid_credentials"]);
  });

  it("signs in an account whose email, taken before such emails were refused, holds an invisible character, with its password only", async () => {
    const email = "ada\u200b@example.com";
    await store.createAccount({ id: "acc_old", email, address: "0x00000000000000000000000000000000000000aa", walletKeyEnc: null, passwordHash: await hashPassword("correct horse battery"), fundedAt: null });
    const signin = (password: string) => app.inject({ method: "POST", url: "/v1/session/signin", headers: json, payload: { email, password } });
    const wrong = await signin("wrong password");
    expect([wrong.statusCode, wrong.json().error.code]).toEqual([401, "invalid_credentials"]);
    const ok = await signin("correct horse battery");
    expect([ok.statusCode, ok.json().account_id, ok.json().email]).toEqual([200, "acc_old", email]);
    // Signing up under it is still refused for its character, and makes no account.
    const signup = await app.inject({ method: "POST", url: "/v1/session/signup", headers: json, payload: { email: "bob\u200b@example.com", password: "correct horse battery" } });
    expect([signup.statusCode, signup.json().error.details?.fields]).toEqual([400, { email: "must not hold control or invisible formatting characters" }]);
  });

  it("answers not_signed_in without a live session", async () => {
    for (const cookie of [undefined, `${SESSION_COOKIE}=${"x".repeat(43)}`, `${SESSION_COOKIE}=garbage`]) {
      const res = await app.inject({ method: "GET", url: "/v1/session", headers: cookie ? { cookie } : {} });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe("not_signed_in");
    }
  });

  it("rate-limits sign-in with rate_limited and Retry-After", async () => {
    let last;
    for (let i = 0; i < 11; i++) {
      last = await app.inject({ method: "POST", url: "/v1/session/signin", headers: json, payload: { email: "x@example.com", password: "whatever123" } });
    }
    expect(last!.statusCode).toBe(429);
    expect(last!.json().error.code).toBe("rate_limited");
    expect(Number(last!.headers["retry-after"])).toBeGreaterThan(0);
  });

  it("signs out only with the CSRF token, and the session is gone after", async () => {
    const { cookie, csrf } = await signUp();
    const forged = await app.inject({ method: "DELETE", url: "/v1/session", headers: { cookie } });
    expect(forged.statusCode).toBe(403);
    expect(forged.json().error.code).toBe("csrf_failed");
    const out = await app.inject({ method: "DELETE", url: "/v1/session", headers: { cookie, "x-csrf-token": csrf } });
    expect(out.statusCode).toBe(204);
    // The browser is told to drop the cookie.
    expect(out.cookies).toEqual([expect.objectContaining({ name: SESSION_COOKIE, value: "", maxAge: 0, path: "/", httpOnly: true, sameSite: "Strict" })]);
    expect((await app.inject({ method: "GET", url: "/v1/session", headers: { cookie } })).statusCode).toBe(401);
  });
});

describe("API keys from the terminal", () => {
  it("generates a key whose secret is returned once, lists it without the secret, and revokes it", async () => {
    const { cookie, csrf } = await signUp();
    const noCsrf = await app.inject({ method: "POST", url: "/v1/keys", headers: { ...json, cookie }, payload: { name: "bot", scopes: ["read"] } });
    expect(noCsrf.json().error.code).toBe("csrf_failed");

    const made = await app.inject({ method: "POST", url: "/v1/keys", headers: { ...json, cookie, "x-csrf-token": csrf }, payload: { name: "bot", scopes: ["read", "trade"] } });
    expect(made.statusCode).toBe(201);
    expect(made.headers["cache-control"]).toBe("no-store");
    const { api_key, api_secret } = made.json();
    expect(api_secret).toMatch(/^cs_live_/);

    const list = await app.inject({ method: "GET", url: "/v1/keys", headers: { cookie } });
    expect(list.json().data).toEqual([expect.objectContaining({ api_key, name: "bot", scopes: ["read", "trade"], revoked_at: null })]);
    expect(list.body).not.toContain(api_secret);

    const quote = (key: string) => app.inject({ method: "GET", url: "/v1/quote?market_id=evt_test&outcome=YES&amount_usdc=10", headers: { "x-api-key": key } });
    expect((await quote(api_key)).statusCode).toBe(200);
    const revoked = await app.inject({ method: "DELETE", url: `/v1/keys/${api_key}`, headers: { cookie, "x-csrf-token": csrf } });
    expect(revoked.json().revoked_at).not.toBeNull();
    const refused = await quote(api_key);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe("key_revoked");
  });

  it("takes a name of 60 emoji (60 characters of the 100 allowed) and refuses one of 101", async () => {
    const { cookie, csrf } = await signUp();
    const make = (name: string) => app.inject({ method: "POST", url: "/v1/keys", headers: { ...json, cookie, "x-csrf-token": csrf }, payload: { name, scopes: ["read"] } });
    const made = await make("😀".repeat(60));
    expect([made.statusCode, made.json().name]).toEqual([201, "😀".repeat(60)]);
    const long = await make("😀".repeat(101));
    expect([long.statusCode, long.json().error.details.fields]).toEqual([400, { name: "must be at most 100 characters" }]);
  });

  it("refuses a name with a control character (a line break, a tab, an escape) or a bidirectional control and makes no key: the list shows names as they are", async () => {
    const { cookie, csrf } = await signUp();
    for (const name of ["bot\nck_live_forged  admin", "bot\tx", "\u001b[2Kbot", "bot\u009b", "rtl\u202etob", "bot\u2066x"]) {
      const res = await app.inject({ method: "POST", url: "/v1/keys", headers: { ...json, cookie, "x-csrf-token": csrf }, payload: { name, scopes: ["read"] } });
      expect([res.statusCode, res.json().error.code, res.json().error.details.fields], JSON.stringify(name)).toEqual([400, "invalid_request", { name: expect.stringMatching(/^must have no (control characters|bidirectional controls) \(/) }]);
    }
    expect((await app.inject({ method: "GET", url: "/v1/keys", headers: { cookie } })).json().data).toEqual([]);
  });

  it("refuses a name holding a zero-width character, which reads as the name without it, and takes an emoji joined by U+200D", async () => {
    const { cookie, csrf } = await signUp();
    const make = (name: string) => app.inject({ method: "POST", url: "/v1/keys", headers: { ...json, cookie, "x-csrf-token": csrf }, payload: { name, scopes: ["read"] } });
    for (const name of ["a\u200bb", "bot\u200d", "bo\u2060t", "bo\ufefft"]) {
      const res = await make(name);
      expect([res.statusCode, res.json().error.code, res.json().error.details.fields], JSON.stringify(name)).toEqual([400, "invalid_request", { name: expect.stringMatching(/^must have no zero-width characters \(/) }]);
    }
    expect((await app.inject({ method: "GET", url: "/v1/keys", headers: { cookie } })).json().data).toEqual([]);
    const made = await make("\u{1F469}\u200d\u{1F4BB} desk");
    expect([made.statusCode, made.json().name]).toEqual([201, "\u{1F469}\u200d\u{1F4BB} desk"]);
  });

  it("makes a key that can withdraw only with the account's password again: a session alone pays nothing out through a key", async () => {
    const { cookie, csrf } = await signUp();
    const make = (extra: object) =>
      app.inject({ method: "POST", url: "/v1/keys", headers: { ...json, cookie, "x-csrf-token": csrf }, payload: { name: "payout", scopes: ["read", "withdraw"], ...extra } });
    const bare = await make({});
    expect([bare.statusCode, bare.json().error.code, bare.json().error.details.fields]).toEqual([400, "invalid_request", { password: expect.any(String) }]);
    const wrong = await make({ password: "not the password" });
    expect([wrong.statusCode, wrong.json().error.code]).toEqual([401, "invalid_credentials"]);
    expect((await app.inject({ method: "GET", url: "/v1/keys", headers: { cookie } })).json().data).toEqual([]);
    const right = await make({ password: "correct horse battery" });
    expect([right.statusCode, right.json().scopes]).toEqual([201, ["read", "withdraw"]]);
    // Its tries are the withdrawal's: a stolen cookie guesses no faster by making keys.
    for (let i = 0; i < 9; i++) await make({ password: "not the password" });
    const limited = await app.inject({
      method: "POST",
      url: "/v1/withdrawals",
      headers: { ...json, cookie, "x-csrf-token": csrf },
      payload: { amount_usdc: "1", to_address: `0x${"11".repeat(20)}`, password: "correct horse battery" },
    });
    expect([limited.statusCode, limited.json().error.code]).toEqual([429, "rate_limited"]);
  });

  it("does not let one account revoke another's key", async () => {
    const ada = await signUp();
    const bob = await signUp("bob@example.com");
    const made = await app.inject({ method: "POST", url: "/v1/keys", headers: { ...json, cookie: ada.cookie, "x-csrf-token": ada.csrf }, payload: { name: "k", scopes: ["read"] } });
    const res = await app.inject({ method: "DELETE", url: `/v1/keys/${made.json().api_key}`, headers: { cookie: bob.cookie, "x-csrf-token": bob.csrf } });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe("key_not_found");
  });
});

describe("the API from the terminal's session", () => {
  it("reads /v1 with the session cookie, and moves funds only with the session's CSRF token", async () => {
    const { cookie } = await signUp();
    expect((await app.inject({ method: "GET", url: `/v1/prices/${EVENT.eventId}`, headers: { cookie } })).statusCode).toBe(200);
    const order = { market_id: "evt_test", outcome: "YES", side: "buy", amount_usdc: 1 };
    const forged = await app.inject({ method: "POST", url: "/v1/order", headers: { ...json, cookie }, payload: order });
    expect([forged.statusCode, forged.json().error.code]).toEqual([403, "csrf_failed"]);
  });

  it("reads the ticket's amounts from the JSON text, so a number past 6 decimals is refused rather than rounded", async () => {
    const { cookie, csrf } = await signUp();
    for (const amounts of ['"amount_usdc":1.0000000000000001', '"amount_usdc":1,"max_slippage":0.0100000000000000001']) {
      const payload = `{"market_id":"evt_test","outcome":"YES","side":"buy",${amounts}}`;
      const res = await app.inject({ method: "POST", url: "/v1/order", headers: { ...json, cookie, "x-csrf-token": csrf }, payload });
      expect([res.statusCode, res.json().error.code]).toEqual([400, "invalid_request"]);
      expect(res.json().error.details.fields).toHaveProperty(amounts.includes("slippage") ? "max_slippage" : "amount_usdc");
    }
  });

  it("lets a key decide when one is sent, even beside a session cookie", async () => {
    const { cookie } = await signUp();
    const res = await app.inject({ method: "GET", url: `/v1/prices/${EVENT.eventId}`, headers: { cookie, "x-api-key": "ck_live_000000000000000000000000" } });
    expect(res.json().error.code).toBe("invalid_api_key");
  });
});

describe("Get test USDC", () => {
  it("drips into the signed-in account's vault, only with the session's CSRF token", async () => {
    const { cookie, csrf } = await signUp();
    const forged = await app.inject({ method: "POST", url: "/v1/faucet", headers: { cookie } });
    expect([forged.statusCode, forged.json().error.code]).toEqual([403, "csrf_failed"]);
    const res = await app.inject({ method: "POST", url: "/v1/faucet", headers: { cookie, "x-csrf-token": csrf } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ amount_usdc: 10_000, tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect((await app.inject({ method: "POST", url: "/v1/faucet" })).json().error.code).toBe("not_signed_in");
  });
});

describe("quote", () => {
  it("plans on the current books without locking: legs, average price, fees", async () => {
    const { cookie } = await signUp();
    const res = await app.inject({ method: "GET", url: "/v1/quote?market_id=evt_test&outcome=YES&amount_usdc=10&max_slippage=0.02", headers: { cookie } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ shares: 20, average_price: 0.5, fees_usdc: 0, cost_usdc: 10, legs: [{ venue: "a", shares: 20 }] });
    // An amount as an order's body may write it, in exponent form, is the same amount.
    const exponent = await app.inject({ method: "GET", url: "/v1/quote?market_id=evt_test&outcome=YES&amount_usdc=1E%2B1&max_slippage=2e-2", headers: { cookie } });
    expect({ ...exponent.json(), quoted_at: null }).toEqual({ ...res.json(), quoted_at: null });
  });

  it("plans a sell on the bids within the operator's inventory: what it pays after fees, no cost", async () => {
    const { cookie } = await signUp();
    const res = await app.inject({ method: "GET", url: "/v1/quote?market_id=evt_test&outcome=YES&side=sell&shares=20", headers: { cookie } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ side: "sell", amount_usdc: null, shares: 20, average_price: 0.4, cost_usdc: null, proceeds_usdc: 8, legs: [{ venue: "a", shares: 20 }] });
    const tooMany = await app.inject({ method: "GET", url: "/v1/quote?market_id=evt_test&outcome=YES&side=sell&shares=60&time_in_force=FOK", headers: { cookie } });
    expect([tooMany.statusCode, tooMany.json().error.code]).toEqual([422, "insufficient_liquidity"]);
    const both = await app.inject({ method: "GET", url: "/v1/quote?market_id=evt_test&outcome=YES&side=sell&shares=5&amount_usdc=5", headers: { cookie } });
    expect([both.statusCode, both.json().error.code]).toEqual([400, "invalid_request"]);
  });

  it("answers a bad or unroutable request with its code in words", async () => {
    const { cookie } = await signUp();
    const bad = await app.inject({ method: "GET", url: "/v1/quote?market_id=evt_test&outcome=YES&amount_usdc=0", headers: { cookie } });
    expect(bad.json().error.code).toBe("invalid_request");
    const unknown = await app.inject({ method: "GET", url: "/v1/quote?market_id=nope&outcome=YES&amount_usdc=1", headers: { cookie } });
    expect(unknown.json().error.code).toBe("unknown_event");
    const tooBig = await app.inject({ method: "GET", url: "/v1/quote?market_id=evt_test&outcome=YES&amount_usdc=1000", headers: { cookie } });
    expect(tooBig.statusCode).toBe(422);
  });
  it.each([
    ["abc", 'must be a plain non-negative decimal (got "abc")'],
    ["-1", 'must be a plain non-negative decimal (got "-1")'],
    ["0x10", 'must be a plain non-negative decimal (got "0x10")'],
    ["1".repeat(40), "is too large"],
  ])("refuses an amount of %s in the words POST /v1/order has for it, not a regular expression's", async (amount, why) => {
    const { cookie } = await signUp();
    const res = await app.inject({ method: "GET", url: `/v1/quote?market_id=evt_test&outcome=YES&amount_usdc=${amount}`, headers: { cookie } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: "invalid_request", details: { fields: { amount_usdc: why } } });
  });

  it("names the query it refuses, as its other refusals do, not an order that was never sent", async () => {
    const { cookie } = await signUp();
    const res = await app.inject({ method: "GET", url: "/v1/quote?market_id=evt_test&outcome=YES&amount_usdc=0&max_slippage=0.9", headers: { cookie } });
    expect(res.json().error.message).toBe("Invalid querystring: amount_usdc must be greater than 0; max_slippage must be a fraction between 0 and 0.5.");
  });
});

describe("price stream", () => {
  it("streams the merged book as server-sent events to a session, and again as it changes", async () => {
    const { cookie } = await signUp();
    const url = await app.listen({ port: 0, host: "127.0.0.1" });
    const res = await fetch(`${url}/v1/stream/prices/${EVENT.eventId}?depth=5`, { headers: { cookie } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    let text = "";
    while ((text.match(/event: price/g) ?? []).length < 2) text += new TextDecoder().decode((await reader.read()).value);
    const first = JSON.parse(text.split("data: ")[1]!.split("\n")[0]!);
    expect(first).toMatchObject({ event_id: EVENT.eventId, outcome: "YES" });
    // app.close() in afterEach must end the open stream rather than wait for it.
  });

  it("ends a stream whose key is revoked or whose session signs out, with an error event saying why", async () => {
    const { cookie, csrf } = await signUp();
    const made = await app.inject({ method: "POST", url: "/v1/keys", headers: { ...json, cookie, "x-csrf-token": csrf }, payload: { name: "bot", scopes: ["read"] } });
    const apiKey = made.json().api_key as string;
    const url = await app.listen({ port: 0, host: "127.0.0.1" });
    const byKey = await fetch(`${url}/v1/stream/prices/${EVENT.eventId}`, { headers: { "x-api-key": apiKey }, signal: AbortSignal.timeout(10_000) });
    const bySession = await fetch(`${url}/v1/stream/prices/${EVENT.eventId}`, { headers: { cookie }, signal: AbortSignal.timeout(10_000) });
    expect([byKey.status, bySession.status]).toEqual([200, 200]);
    expect((await app.inject({ method: "DELETE", url: `/v1/keys/${apiKey}`, headers: { cookie, "x-csrf-token": csrf } })).statusCode).toBe(200);
    expect((await app.inject({ method: "DELETE", url: "/v1/session", headers: { cookie, "x-csrf-token": csrf } })).statusCode).toBe(204);
    const lastEvent = async (res: Response) => {
      const text = await res.text(); // resolves only once the server ends the stream
      const events = text.split("\n\n").filter((e) => e.startsWith("event: "));
      return JSON.parse(events.at(-1)!.split("data: ")[1]!) as { error: { code: string } };
    };
    expect((await lastEvent(byKey)).error.code).toBe("key_revoked");
    expect((await lastEvent(bySession)).error.code).toBe("not_signed_in");
  });

  it("answers HEAD with the stream's headers at once, and no stream", async () => {
    const { cookie } = await signUp();
    const url = await app.listen({ port: 0, host: "127.0.0.1" });
    const res = await fetch(`${url}/v1/stream/prices/${EVENT.eventId}`, { method: "HEAD", headers: { cookie }, signal: AbortSignal.timeout(5_000) });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(await res.text()).toBe("");
  });

  it("carries the rate limit's headers, as every counted answer does: the stream spends the budget too", async () => {
    const limited = await buildApp({ ...deps, rateLimit: { perMinute: 100, redis: undefined } }, false);
    try {
      const { cookie } = await signUp();
      const res = await limited.inject({ method: "HEAD", url: `/v1/stream/prices/${EVENT.eventId}`, headers: { cookie } });
      expect([res.statusCode, res.headers["x-ratelimit-limit"], res.headers["x-ratelimit-remaining"]]).toEqual([200, "100", "99"]);
    } finally {
      await limited.close();
    }
  });

  it("ranks the streamed book for the side asked, as GET /v1/prices does", async () => {
    const { cookie } = await signUp();
    const url = await app.listen({ port: 0, host: "127.0.0.1" });
    for (const side of ["sell", "buy"] as const) {
      rankedFor.length = 0;
      const res = await fetch(`${url}/v1/stream/prices/${EVENT.eventId}?side=${side}`, { headers: { cookie } });
      const reader = res.body!.getReader();
      await reader.read();
      // Its first record was read for this side (the stream opened before it may have read again meanwhile).
      expect(rankedFor).toContain(side);
      await reader.cancel();
    }
    const bad = await app.inject({ method: "GET", url: `/v1/stream/prices/${EVENT.eventId}?side=short`, headers: { cookie } });
    expect(bad.json().error.code).toBe("invalid_request");
  });

  it("refuses a stream without a session or key, and an unknown event, as plain JSON errors", async () => {
    const anonymous = await app.inject({ method: "GET", url: `/v1/stream/prices/${EVENT.eventId}` });
    expect(anonymous.json().error.code).toBe("missing_api_key");
    const badKey = await app.inject({ method: "GET", url: `/v1/stream/prices/${EVENT.eventId}`, headers: { "x-api-key": "ck_live_nope" } });
    expect(badKey.json().error.code).toBe("invalid_api_key");
    const { cookie } = await signUp();
    const unknown = await app.inject({ method: "GET", url: "/v1/stream/prices/nope", headers: { cookie } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe("unknown_event");
  });
});

describe("request schemas refuse what they do not describe, and coerce only text", () => {
  const refusal = (res: { statusCode: number; json: () => { error: { code: string; details?: { fields?: Record<string, string> } } } }) => [
    res.statusCode,
    res.json().error.code,
    res.json().error.details?.fields,
  ];

  it.each([
    ["an extra field", { admin: true }, { admin: "is not a known field" }],
    ["__proto__", JSON.parse('{"__proto__":{"admin":true}}') as object, Object.fromEntries([["__proto__", "is not a known field"]])],
    ["a password sent as a number", { password: 1234567890 }, { password: "must be a string" }],
  ])("sign-up with %s is 400 invalid_request and makes no account", async (_name, extra, fields) => {
    const payload = JSON.stringify({ email: "eve@example.com", password: "correct horse battery", ...extra });
    const res = await app.inject({ method: "POST", url: "/v1/session/signup", headers: json, payload });
    expect(refusal(res)).toEqual([400, "invalid_request", fields]);
    expect(await store.accountByEmail("eve@example.com")).toBeUndefined();
  });

  it("a query parameter it does not know is 400 invalid_request naming it, not dropped", async () => {
    const { cookie } = await signUp();
    const res = await app.inject({ method: "GET", url: `/v1/stream/prices/${EVENT.eventId}?dpeth=5`, headers: { cookie } });
    expect(refusal(res)).toEqual([400, "invalid_request", { dpeth: "is not a known field" }]);
  });

  it.each(["/v1/account", "/v1/orders/ord_x", "/v1/withdrawals/wd_x", "/v1/keys", "/v1/session", "/v1/health"])(
    "%s, which takes no query, refuses one as not a known field",
    async (path) => {
      const { cookie } = await signUp();
      const res = await app.inject({ method: "GET", url: `${path}?x=1&limit=1`, headers: { cookie } });
      expect(refusal(res)).toEqual([400, "invalid_request", { x: "is not a known field", limit: "is not a known field" }]);
      expect(res.json().error.message).toBe("Invalid querystring: x is not a known field; limit is not a known field.");
    },
  );

  it("a parameter or field with an empty name (?=1, {\"\":1}) is named as such, not as the whole querystring or body", async () => {
    const { cookie } = await signUp();
    for (const path of ["/v1/account?=1", "/v1/orders?=1", `/v1/prices/${EVENT.eventId}?=1`]) {
      const res = await app.inject({ method: "GET", url: path, headers: { cookie } });
      expect([path, ...refusal(res), res.json().error.message]).toEqual([path, 400, "invalid_request", { "": "is not a known field" }, 'Invalid querystring: "" is not a known field.']);
    }
    const body = await app.inject({ method: "POST", url: "/v1/session/signup", headers: json, payload: { email: "eve@example.com", password: "correct horse battery", "": 1 } });
    expect([...refusal(body), body.json().error.message]).toEqual([400, "invalid_request", { "": "is not a known field" }, 'Invalid body: "" is not a known field.']);
  });

  it("a missing field or parameter is refused as \"is required\", as an order's is, not in Ajv's words", async () => {
    const body = await app.inject({ method: "POST", url: "/v1/session/signup", headers: json, payload: { email: "eve@example.com" } });
    expect([...refusal(body), body.json().error.message]).toEqual([400, "invalid_request", { password: "is required" }, "Invalid body: password is required."]);
    const { cookie } = await signUp();
    const query = await app.inject({ method: "GET", url: "/v1/quote?outcome=YES&amount_usdc=1&max_slippage=0.05", headers: { cookie } });
    expect([...refusal(query), query.json().error.message]).toEqual([400, "invalid_request", { market_id: "is required" }, "Invalid querystring: market_id is required."]);
  });

  it("a value outside a parameter's list is refused naming the values it takes", async () => {
    const { cookie, csrf } = await signUp();
    for (const [url, name, values] of [
      ["/v1/markets?status=opne", "status", "open, closed, resolved, disputed"],
      [`/v1/prices/${EVENT.eventId}?outcome=yes`, "outcome", "YES, NO"],
      [`/v1/stream/prices/${EVENT.eventId}?side=bid`, "side", "buy, sell"],
    ] as const) {
      const res = await app.inject({ method: "GET", url, headers: { cookie } });
      expect([url, ...refusal(res)]).toEqual([url, 400, "invalid_request", { [name]: `must be one of ${values}` }]);
    }
    const body = await app.inject({ method: "POST", url: "/v1/keys", headers: { ...json, cookie, "x-csrf-token": csrf }, payload: { name: "bot", scopes: ["admin"] } });
    expect(refusal(body)).toEqual([400, "invalid_request", { "scopes.0": "must be one of read, trade, withdraw" }]);
  });

  it("a signed order refuses a query, once its signature over the path with the query is checked", async () => {
    const { res: signup } = await signUp();
    const { apiKey, apiSecret } = await deps.terminal.createApiKey({ accountId: signup.json().account_id, name: "bot", scopes: "read,trade" });
    const payload = JSON.stringify({ market_id: "evt_test", outcome: "YES", side: "buy", amount_usdc: 1 });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signed = (url: string) => ({ ...json, "x-api-key": apiKey, "x-timestamp": timestamp, "x-signature": sign(apiSecret, timestamp, "POST", url, payload) });
    const res = await app.inject({ method: "POST", url: "/v1/order?x=1", headers: signed("/v1/order?x=1"), payload });
    expect(refusal(res)).toEqual([400, "invalid_request", { x: "is not a known field" }]);
    const unsigned = await app.inject({ method: "POST", url: "/v1/order?x=1", headers: signed("/v1/order"), payload });
    expect(unsigned.json().error.code).toBe("invalid_signature");
  });

  it("the faucet refuses a body field, and takes no body or an empty one", async () => {
    const { cookie, csrf } = await signUp();
    const headers = { cookie, "x-csrf-token": csrf };
    const res = await app.inject({ method: "POST", url: "/v1/faucet", headers: { ...headers, ...json }, payload: { amount: 1_000_000 } });
    expect(refusal(res)).toEqual([400, "invalid_request", { amount: "is not a known field" }]);
    expect((await app.inject({ method: "POST", url: "/v1/faucet", headers: { ...headers, ...json }, payload: "[]" })).statusCode).toBe(400);
    expect((await app.inject({ method: "POST", url: "/v1/faucet", headers: { ...headers, ...json }, payload: {} })).statusCode).toBe(200);
    expect((await app.inject({ method: "POST", url: "/v1/faucet", headers })).statusCode).toBe(200);
  });

  it.each(["7", "-1.5", "[]", "null"])("sign-up with the body %s is 400: the body must be an object", async (payload) => {
    const res = await app.inject({ method: "POST", url: "/v1/session/signup", headers: json, payload });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: "invalid_request", message: "Invalid body: body must be a JSON object." });
  });

  it.each([
    ["scopes as a string", { name: "bot", scopes: "read" }, { scopes: "must be an array" }],
    ["an extra field", { name: "bot", scopes: ["read"], account_id: "acc_other" }, { account_id: "is not a known field" }],
    ["a name sent as a number", { name: 7, scopes: ["read"] }, { name: "must be a string" }],
    ["a name of spaces only", { name: "   ", scopes: ["read"] }, { name: "must be 1 to 100 characters" }],
    ["an IP allowlist entry that is no address", { name: "bot", scopes: ["read"], ip_allowlist: ["10.0.0.0/99"] }, { ip_allowlist: "each entry must be an IPv4 or IPv6 address, optionally with a /prefix" }],
    ["a withdrawal allowlist entry that is no address", { name: "bot", scopes: ["read"], withdrawal_allowlist: ["0xzz"] }, { withdrawal_allowlist: "must list 0x addresses, checksummed or lower case" }],
    // Taken as no list, each made a key without the limit asked for: one that pays to any address, or is used from any IP.
    ["an empty withdrawal allowlist", { name: "bot", scopes: ["read", "trade"], withdrawal_allowlist: [] }, { withdrawal_allowlist: "must not be empty" }],
    ["an empty IP allowlist", { name: "bot", scopes: ["read"], ip_allowlist: [] }, { ip_allowlist: "must not be empty" }],
  ])("key creation with %s is 400 invalid_request and makes no key", async (_name, payload, fields) => {
    const { cookie, csrf, res: signup } = await signUp();
    const res = await app.inject({ method: "POST", url: "/v1/keys", headers: { ...json, cookie, "x-csrf-token": csrf }, payload });
    expect(refusal(res)).toEqual([400, "invalid_request", fields]);
    expect(await store.listApiKeys(signup.json().account_id)).toEqual([]);
  });

  it.each([
    [`/v1/prices/${EVENT.eventId}?depth=0`, { depth: "must be at least 1" }],
    [`/v1/prices/${EVENT.eventId}?depth=501`, { depth: "must be at most 500" }],
    [`/v1/prices/${"e".repeat(129)}`, { event_id: "must be at most 128 characters" }],
    ["/v1/markets?limit=0", { limit: "must be at least 1" }],
    [`/v1/markets?q=${"q".repeat(201)}`, { q: "must be at most 200 characters" }],
    ["/v1/markets?venue=", { venue: "must not be empty" }],
    [`/v1/orders/${"o".repeat(65)}`, { order_id: "must be at most 64 characters" }],
  ])("%s is refused in words, not in Ajv's symbols", async (url, fields) => {
    const { cookie } = await signUp();
    expect(refusal(await app.inject({ method: "GET", url, headers: { cookie } }))).toEqual([400, "invalid_request", fields]);
  });

  it("a key's scopes given twice are refused in words", async () => {
    const { cookie, csrf } = await signUp();
    const res = await app.inject({ method: "POST", url: "/v1/keys", headers: { ...json, cookie, "x-csrf-token": csrf }, payload: { name: "bot", scopes: ["read", "read"] } });
    expect(refusal(res)).toEqual([400, "invalid_request", { scopes: "must not hold the same entry twice" }]);
  });

  it("still reads a query string's numbers from their text, and refuses one that is not a number", async () => {
    const { cookie } = await signUp();
    expect((await app.inject({ method: "GET", url: "/v1/orders?limit=2", headers: { cookie } })).json()).toEqual({ data: [], next_cursor: null });
    expect(refusal(await app.inject({ method: "GET", url: "/v1/orders?limit=two", headers: { cookie } }))).toEqual([400, "invalid_request", { limit: "must be an integer" }]);
  });
});

describe("a body that is not JSON, or is compressed", () => {
  const order = JSON.stringify({ market_id: "evt_test", outcome: "YES", side: "buy", amount_usdc: 1 });
  const bodies: [string, Record<string, string>][] = [
    ["text/plain", { "content-type": "text/plain" }],
    ["no Content-Type", {}],
    ["gzip", { ...json, "content-encoding": "gzip" }],
  ];

  it.each(bodies)("(%s) without a key is 401 missing_api_key, as any request without one: the route's media types are told to its callers only", async (_name, headers) => {
    const res = await app.inject({ method: "POST", url: "/v1/order", headers, payload: order });
    expect([res.statusCode, res.json().error.code]).toEqual([401, "missing_api_key"]);
  });

  it.each(bodies)("(%s) with a key of the read scope is 403 insufficient_scope", async (_name, headers) => {
    const { res: signup } = await signUp();
    const { apiKey } = await deps.terminal.createApiKey({ accountId: signup.json().account_id, name: "reader", scopes: "read" });
    const res = await app.inject({ method: "POST", url: "/v1/order", headers: { ...headers, "x-api-key": apiKey }, payload: order });
    expect([res.statusCode, res.json().error.code]).toEqual([403, "insufficient_scope"]);
  });

  it.each(bodies)("(%s) signed with a key of the trade scope is 415 unsupported_media_type once its signature is checked", async (_name, headers) => {
    const { res: signup } = await signUp();
    const { apiKey, apiSecret } = await deps.terminal.createApiKey({ accountId: signup.json().account_id, name: "bot", scopes: "read,trade" });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signed = (body: string) => ({ ...headers, "x-api-key": apiKey, "x-timestamp": timestamp, "x-signature": sign(apiSecret, timestamp, "POST", "/v1/order", body) });
    const res = await app.inject({ method: "POST", url: "/v1/order", headers: signed(order), payload: order });
    expect([res.statusCode, res.json().error.code]).toEqual([415, "unsupported_media_type"]);
    const wrong = await app.inject({ method: "POST", url: "/v1/order", headers: signed("{}"), payload: order });
    expect([wrong.statusCode, wrong.json().error.code]).toEqual([401, "invalid_signature"]);
  });
});

describe("a GET, HEAD or DELETE with a body", () => {
  it("is 400 invalid_request saying the method takes none, and nothing is done: a body the server would ignore is a client's mistake", async () => {
    const { cookie, csrf } = await signUp();
    const created = await app.inject({ method: "POST", url: "/v1/keys", headers: { ...json, cookie, "x-csrf-token": csrf }, payload: { name: "bot", scopes: ["read"] } });
    const apiKey = created.json().api_key as string;
    for (const [method, url] of [
      ["GET", "/v1/orders"],
      ["HEAD", `/v1/prices/${EVENT.eventId}`],
      ["DELETE", `/v1/keys/${apiKey}`],
      ["DELETE", "/v1/session"],
    ] as const) {
      const res = await app.inject({ method, url, headers: { ...json, cookie, "x-csrf-token": csrf, "x-request-id": "req-body" }, payload: "{}" });
      expect([method, url, res.statusCode]).toEqual([method, url, 400]);
      if (method !== "HEAD") {
        expect(res.json()).toEqual({ error: { code: "invalid_request", message: `A ${method} request takes no body.`, details: { fields: { body: `must be empty for ${method}` } }, request_id: "req-body" } });
      }
    }
    const keys = await app.inject({ method: "GET", url: "/v1/keys", headers: { cookie } });
    expect(keys.json().data.map((k: { api_key: string; revoked_at: string | null }) => [k.api_key, k.revoked_at])).toEqual([[apiKey, null]]);
    const empty = await app.inject({ method: "GET", url: "/v1/orders", headers: { cookie, "content-length": "0" } });
    expect(empty.statusCode).toBe(200);
  });
});

describe("slow requests", () => {
  it("answers 408 and closes a connection whose body does not arrive whole within the request timeout", async () => {
    const slow = await buildApp({ ...deps, requestTimeoutMs: 300 }, false);
    try {
      await slow.listen({ port: 0, host: "127.0.0.1" });
      const socket = connect((slow.server.address() as AddressInfo).port, "127.0.0.1");
      let answer = "";
      socket.on("data", (d) => (answer += d));
      const started = performance.now();
      socket.write("POST /v1/session/signin HTTP/1.1\r\nHost: x\r\nX-Request-Id: req-slow-1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"email\"");
      await new Promise((resolve) => socket.on("close", resolve));
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      // Its headers arrived whole, so the answer carries the client's request id, to quote.
      expect(answer).toContain("\r\nX-Request-Id: req-slow-1\r\n");
      expect(JSON.parse(answer.split("\r\n\r\n")[1]!)).toMatchObject({ error: { code: "request_timeout", request_id: "req-slow-1" } });
      expect(performance.now() - started).toBeLessThan(2_500);
    } finally {
      await slow.close();
    }
  });

  it("answers 408 with an id of the server's making when the request's headers did not arrive, not the id of the connection's request before", async () => {
    const slow = await buildApp({ ...deps, requestTimeoutMs: 300 }, false);
    try {
      await slow.listen({ port: 0, host: "127.0.0.1" });
      const socket = connect((slow.server.address() as AddressInfo).port, "127.0.0.1");
      let answer = "";
      socket.on("data", (d) => (answer += d));
      socket.write("GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Request-Id: req-first\r\n\r\n");
      await vi.waitFor(() => expect(answer).toContain("X-Request-Id: req-first".toLowerCase()));
      socket.write("GET /v1/health HTTP/1.1\r\nHost: x\r\n");
      await new Promise((resolve) => socket.on("close", resolve));
      const timedOut = answer.slice(answer.indexOf("HTTP/1.1 408 "));
      expect(JSON.parse(timedOut.split("\r\n\r\n")[1]!).error).toMatchObject({ code: "request_timeout", request_id: expect.stringMatching(/^req_/) });
    } finally {
      await slow.close();
    }
  });
});

describe("a request arriving while the server stops", () => {
  it("is answered 503 shutting_down in the API's error body with its request id, and its connection closed", async () => {
    const stopping = await buildApp(deps, false);
    await stopping.listen({ port: 0, host: "127.0.0.1" });
    const socket = connect((stopping.server.address() as AddressInfo).port, "127.0.0.1");
    let answer = "";
    socket.on("data", (d) => (answer += d));
    await new Promise((resolve) => socket.on("connect", resolve));
    // Headers begun before the stop keep the connection open (an idle one is closed); they end after it began.
    socket.write("GET /v1/health HTTP/1.1\r\nHost: x\r\n");
    await new Promise((resolve) => setTimeout(resolve, 500));
    const closed = stopping.close();
    socket.write("X-Request-Id: req-closing\r\n\r\n");
    await new Promise((resolve) => socket.on("close", resolve));
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 503 /);
    expect(answer.toLowerCase()).toContain("\r\nx-request-id: req-closing\r\n");
    expect(answer.toLowerCase()).toContain("\r\nconnection: close\r\n");
    expect(JSON.parse(answer.split("\r\n\r\n")[1]!)).toEqual({
      error: { code: "shutting_down", message: "The server is stopping: send the request again, to another instance or to this one once it is back.", request_id: "req-closing" },
    });
  });
});

describe("requests that are not HTTP", () => {
  it("answers them 400 invalid_request in the API's error body and closes the connection", async () => {
    const url = new URL(await app.listen({ port: 0, host: "127.0.0.1" }));
    const socket = connect(Number(url.port), "127.0.0.1");
    let answer = "";
    socket.on("data", (d) => (answer += d));
    socket.write("POST /v1/order HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
    await new Promise((resolve) => socket.on("close", resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const body = JSON.parse(answer.split("\r\n\r\n")[1]!);
    expect(body).toEqual({ error: { code: "invalid_request", message: expect.any(String), request_id: expect.stringMatching(/^req_/) } });
    expect(answer).toContain(`\r\nX-Request-Id: ${body.error.request_id}\r\n`);
  });
});

describe("an HTTP/1.1 request without a Host header", () => {
  it("is 400 invalid_request naming Host, in the API's error body with the client's request id, not Node's bare 400", async () => {
    const url = new URL(await app.listen({ port: 0, host: "127.0.0.1" }));
    const socket = connect(Number(url.port), "127.0.0.1");
    let answer = "";
    socket.on("data", (d) => (answer += d));
    socket.write("GET /v1/session HTTP/1.1\r\nX-Request-Id: req-no-host\r\nConnection: close\r\n\r\n");
    await new Promise((resolve) => socket.on("close", resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.split("\r\n\r\n")[1]!)).toEqual({
      error: { code: "invalid_request", message: "An HTTP/1.1 request must send a Host header.", details: { fields: { Host: "is required" } }, request_id: "req-no-host" },
    });
  });
});

describe("a request with more than one Host header (RFC 9112 §3.2)", () => {
  it.each(["1.1", "1.0"])("over HTTP/%s is 400 invalid_request naming Host, in the API's error body with the client's request id", async (version) => {
    const url = new URL(await app.listen({ port: 0, host: "127.0.0.1" }));
    const socket = connect(Number(url.port), "127.0.0.1");
    let answer = "";
    socket.on("data", (d) => (answer += d));
    socket.write(`GET /v1/session HTTP/${version}\r\nHost: a.example\r\nHost: b.example\r\nX-Request-Id: req-two-hosts\r\nConnection: close\r\n\r\n`);
    await new Promise((resolve) => socket.on("close", resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.split("\r\n\r\n")[1]!)).toEqual({
      error: { code: "invalid_request", message: "Send one Host header, naming one host.", details: { fields: { Host: "must be given once" } }, request_id: "req-two-hosts" },
    });
  });
});

describe("a CONNECT request", () => {
  it("is 405 method_not_allowed in the API's error body with the client's request id, and its connection closed: the server is no proxy", async () => {
    const url = new URL(await app.listen({ port: 0, host: "127.0.0.1" }));
    const socket = connect(Number(url.port), "127.0.0.1");
    let answer = "";
    socket.on("data", (d) => (answer += d));
    socket.write("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nX-Request-Id: req-connect\r\n\r\n");
    await new Promise((resolve) => socket.on("close", resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 405 /);
    expect(answer.toLowerCase()).toContain("\r\nallow: \r\n");
    expect(JSON.parse(answer.split("\r\n\r\n")[1]!)).toEqual({
      error: { code: "method_not_allowed", message: "CONNECT is not allowed: this server is not a proxy.", request_id: "req-connect" },
    });
  });
});

describe("Expect: 100-continue", () => {
  /** The request's headers, then whatever the server answers before the body is sent (none of it is, unless `body`: then it is, after that answer, and what follows is read too). */
  const headersOnly = async (head: string, body?: string) => {
    const url = new URL(await app.listen({ port: 0, host: "127.0.0.1" }));
    const socket = connect(Number(url.port), "127.0.0.1");
    let answer = "";
    socket.on("data", (d) => (answer += d));
    socket.write(head);
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (body !== undefined) {
      socket.write(body);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    socket.destroy();
    return answer;
  };
  const order = (headers: string, length = 100) =>
    `POST /v1/order HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n${headers}\r\n`;

  it.each([
    ["an unknown key", "X-API-Key: ck_live_nope\r\nX-Timestamp: 1\r\nX-Signature: ab\r\n", 100, "401", "invalid_api_key"],
    ["no key", "", 100, "401", "missing_api_key"],
    ["a body over the limit", "X-API-Key: ck_live_nope\r\n", 64 * 1024 + 1, "413", "payload_too_large"],
  ])("with %s is refused before the body is sent, not told to send it (100) and then refused", async (_name, headers, length, status, code) => {
    const answer = await headersOnly(order(headers, length));
    expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(answer.toLowerCase()).toContain("\r\nconnection: close\r\n");
    expect(JSON.parse(answer.split("\r\n\r\n")[1]!).error.code).toBe(code);
  });

  it("with a key of the trade scope is told to send its body (100), whose signature is then checked", async () => {
    const { cookie, csrf } = await signUp();
    const made = await app.inject({ method: "POST", url: "/v1/keys", headers: { ...json, cookie, "x-csrf-token": csrf }, payload: { name: "bot", scopes: ["read", "trade"] } });
    const answer = await headersOnly(order(`X-API-Key: ${made.json().api_key}\r\nX-Timestamp: ${Math.floor(Date.now() / 1000)}\r\nX-Signature: ${"ab".repeat(32)}\r\n`));
    expect(answer).toBe("HTTP/1.1 100 Continue\r\n\r\n");
  });

  it("with a key of the trade scope and a wrong signature is refused once the body is sent, and the key reads as never used", async () => {
    const { cookie, csrf } = await signUp();
    const made = await app.inject({ method: "POST", url: "/v1/keys", headers: { ...json, cookie, "x-csrf-token": csrf }, payload: { name: "bot", scopes: ["read", "trade"] } });
    const body = JSON.stringify({ market_id: "evt_test", outcome: "YES", side: "buy", amount_usdc: 1 });
    const answer = await headersOnly(order(`X-API-Key: ${made.json().api_key}\r\nX-Timestamp: ${Math.floor(Date.now() / 1000)}\r\nX-Signature: ${"ab".repeat(32)}\r\n`, body.length), body);
    expect(answer).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 401 /);
    expect(JSON.parse(answer.split("\r\n\r\n")[2]!).error.code).toBe("invalid_signature");
    const keys = await app.inject({ method: "GET", url: "/v1/keys", headers: { cookie } });
    expect(keys.json().data).toEqual([expect.objectContaining({ api_key: made.json().api_key, last_used_at: null })]);
  });

  it.each([
    ["no signature", () => "", "missing_signature"],
    ["a timestamp a minute old", (now: number) => `X-Timestamp: ${now - 60}\r\nX-Signature: ${"ab".repeat(32)}\r\n`, "stale_timestamp"],
    ["a timestamp in milliseconds", (now: number) => `X-Timestamp: ${now * 1000}\r\nX-Signature: ${"ab".repeat(32)}\r\n`, "invalid_timestamp"],
    ["a signature that is no HMAC", (now: number) => `X-Timestamp: ${now}\r\nX-Signature: not-an-hmac\r\n`, "invalid_signature"],
  ])("with a key of the trade scope but %s is refused before the body is sent", async (_name, headers, code) => {
    const { cookie, csrf } = await signUp();
    const made = await app.inject({ method: "POST", url: "/v1/keys", headers: { ...json, cookie, "x-csrf-token": csrf }, payload: { name: "bot", scopes: ["read", "trade"] } });
    const answer = await headersOnly(order(`X-API-Key: ${made.json().api_key}\r\n${headers(Math.floor(Date.now() / 1000))}`));
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(JSON.parse(answer.split("\r\n\r\n")[1]!).error.code).toBe(code);
  });

  it("with a key without the trade scope is refused before the body is sent", async () => {
    const { cookie, csrf } = await signUp();
    const made = await app.inject({ method: "POST", url: "/v1/keys", headers: { ...json, cookie, "x-csrf-token": csrf }, payload: { name: "reader", scopes: ["read"] } });
    const answer = await headersOnly(order(`X-API-Key: ${made.json().api_key}\r\n`));
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(JSON.parse(answer.split("\r\n\r\n")[1]!).error.code).toBe("insufficient_scope");
  });
});

describe("an Expect header other than 100-continue", () => {
  it("is ignored, as RFC 9110 lets a server do: the request is answered as any, not Node's bare 417 without the API's body or a request id", async () => {
    const url = new URL(await app.listen({ port: 0, host: "127.0.0.1" }));
    const socket = connect(Number(url.port), "127.0.0.1");
    let answer = "";
    socket.on("data", (d) => (answer += d));
    socket.write("GET /v1/nope HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nX-Request-Id: req-expect\r\nConnection: close\r\n\r\n");
    await new Promise((resolve) => socket.on("close", resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    expect(JSON.parse(answer.split("\r\n\r\n")[1]!)).toEqual({ error: { code: "not_found", message: "No route GET /v1/nope.", request_id: "req-expect" } });
  });
});

describe("the target * (RFC 9110 §9.3.7)", () => {
  const ask = async (method: string) => {
    const url = new URL(await app.listen({ port: 0, host: "127.0.0.1" }));
    const socket = connect(Number(url.port), "127.0.0.1");
    let answer = "";
    socket.on("data", (d) => (answer += d));
    socket.write(`${method} * HTTP/1.1\r\nHost: x\r\nX-Request-Id: req-star\r\nConnection: close\r\n\r\n`);
    await new Promise((resolve) => socket.on("close", resolve));
    return answer;
  };

  it("OPTIONS * is 204 naming in Allow the methods the server takes, not a 404 for a route named *", async () => {
    const answer = await ask("OPTIONS");
    expect(answer).toMatch(/^HTTP\/1\.1 204 /);
    expect(answer.toLowerCase()).toContain("\r\nallow: get, head, post, delete\r\n");
  });

  it("another method on * is 400 invalid_request saying * is for OPTIONS only", async () => {
    const answer = await ask("GET");
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.split("\r\n\r\n")[1]!).error).toMatchObject({ code: "invalid_request", message: "The target * is asked with OPTIONS only, not GET: send a path.", request_id: "req-star" });
  });
});

describe("a request line and headers beyond Node's 16 KiB", () => {
  it("answers a long URL 431 headers_too_large saying the URL counts, so a client with a short header but a long query knows what to shorten", async () => {
    const url = new URL(await app.listen({ port: 0, host: "127.0.0.1" }));
    const socket = connect(Number(url.port), "127.0.0.1");
    let answer = "";
    socket.on("data", (d) => (answer += d));
    socket.write(`GET /v1/markets?q=${"x".repeat(17 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    await new Promise((resolve) => socket.on("close", resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(answer.split("\r\n\r\n")[1]!).error).toMatchObject({ code: "headers_too_large", message: "The request's URL and headers are too large." });
  });
});

describe("malformed URLs", () => {
  it.each(["/v1/prices/%", "/v1/orders/%E0%A4%A", "/v1/keys/%ZZ"])("answers %s with our error body, its request id and X-Request-Id", async (url) => {
    const res = await app.inject({ method: "GET", url, headers: { "x-request-id": "req-bad-url" } });
    expect(res.statusCode).toBe(400);
    expect(res.headers["x-request-id"]).toBe("req-bad-url");
    expect(res.json()).toEqual({ error: { code: "invalid_request", message: expect.any(String), details: { fields: { path: expect.any(String) } }, request_id: "req-bad-url" } });
  });
});

describe("a query parameter given more than once", () => {
  it("is invalid_request saying so, not that it must be one string or integer", async () => {
    const { cookie } = await signUp();
    for (const [url, name] of [
      [`/v1/prices/${EVENT.eventId}?side=buy&side=sell`, "side"],
      [`/v1/prices/${EVENT.eventId}?depth=5&depth=5`, "depth"],
      ["/v1/markets?status=open&status=closed", "status"],
      ["/v1/orders?limit=1&limit=2", "limit"],
    ] as const) {
      const res = await app.inject({ method: "GET", url, headers: { cookie } });
      expect([url, res.statusCode, res.json().error.code, res.json().error.details.fields]).toEqual([url, 400, "invalid_request", { [name]: "is given more than once" }]);
    }
  });
});

describe("a number in a query beyond a double's range (1e400, Infinity)", () => {
  it("is invalid_request naming it, not a 5xx from a page of Infinity rows or a book of Infinity levels", async () => {
    const { cookie } = await signUp();
    for (const [url, name] of [
      ["/v1/orders?limit=1e400", "limit"],
      ["/v1/activity?limit=Infinity", "limit"],
      ["/v1/withdrawals?limit=-1e400", "limit"],
      [`/v1/prices/${EVENT.eventId}?depth=1e400`, "depth"],
    ] as const) {
      const res = await app.inject({ method: "GET", url, headers: { cookie } });
      expect([url, res.statusCode, res.json().error.code, Object.keys(res.json().error.details?.fields ?? {})]).toEqual([url, 400, "invalid_request", [name]]);
    }
  });
});

describe("a number in a query written other than in decimal digits (0x10, +5, 1e1)", () => {
  it("is invalid_request naming it, as Stripe answers, not read as JavaScript's Number() reads it", async () => {
    const { cookie } = await signUp();
    for (const [url, name] of [
      ["/v1/orders?limit=0x10", "limit"],
      ["/v1/orders?limit=%2B5", "limit"],
      ["/v1/orders?limit=%205", "limit"],
      ["/v1/orders?limit=5%20", "limit"],
      ["/v1/activity?limit=0b11", "limit"],
      ["/v1/withdrawals?limit=5.0", "limit"],
      ["/v1/markets?limit=1e1", "limit"],
      [`/v1/prices/${EVENT.eventId}?depth=1e1`, "depth"],
      [`/v1/prices/${EVENT.eventId}?depth=0o7`, "depth"],
      [`/v1/stream/prices/${EVENT.eventId}?depth=%2010`, "depth"],
      [`/v1/prices/${EVENT.eventId}?depth=${"9".repeat(400)}`, "depth"],
    ] as const) {
      const res = await app.inject({ method: "GET", url, headers: { cookie } });
      expect([url, res.statusCode, res.json().error?.code, Object.keys(res.json().error?.details?.fields ?? {})]).toEqual([url, 400, "invalid_request", [name]]);
    }
    expect((await app.inject({ method: "GET", url: "/v1/orders?limit=05", headers: { cookie } })).statusCode).toBe(200);
    expect((await app.inject({ method: "GET", url: `/v1/prices/${EVENT.eventId}?depth=3`, headers: { cookie } })).statusCode).toBe(200);
  });
});

describe("static terminal", () => {
  it("serves index.html for client routes with a strict CSP, but never for /v1", async () => {
    const page = await app.inject({ method: "GET", url: "/settings/keys" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toMatch(/text\/html/);
    expect(page.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    const api = await app.inject({ method: "GET", url: "/v1/nope" });
    expect(api.statusCode).toBe(404);
    expect(api.json().error).toMatchObject({ code: "not_found", message: "No route GET /v1/nope." });
    // A long path is quoted in part only.
    const long = await app.inject({ method: "GET", url: `/v1/${"x".repeat(5_000)}` });
    expect([long.statusCode, long.json().error.message]).toEqual([404, `No route GET /v1/${"x".repeat(196)}….`]);
    expect((await app.inject({ method: "GET", url: "/assets/missing.js" })).statusCode).toBe(404);
    expect((await app.inject({ method: "POST", url: "/v1/nope" })).statusCode).toBe(404);
    expect((await app.inject({ method: "GET", url: "/../../etc/passwd.txt" })).statusCode).toBe(404);
    // A base URL ending in a slash, joined to /v1/..., or written in capitals: an API path, answered as one, never the terminal's page with 200.
    for (const url of ["//v1/markets", "///v1/account?x=1", "//v1", "/V1/markets", "/V1"]) {
      const res = await app.inject({ method: "GET", url });
      expect([url, res.statusCode, res.json().error]).toEqual([url, 404, expect.objectContaining({ code: "not_found", message: `No route GET ${url.split("?")[0]}.` })]);
    }
  });

  it("answers a method a known API path does not take 405 method_not_allowed, with Allow naming those it takes", async () => {
    for (const [method, url, allow] of [
      ["DELETE", "/v1/prices/fed-cut-2026-12", "GET, HEAD"],
      ["POST", "/v1/markets?limit=1", "GET, HEAD"],
      ["GET", "/v1/order", "POST"],
      ["PUT", "/v1/order", "POST"],
    ] as const) {
      const res = await app.inject({ method, url, headers: { "x-request-id": "req-405" } });
      expect([method, url, res.statusCode, res.headers["allow"]]).toEqual([method, url, 405, allow]);
      expect(res.json()).toEqual({ error: { code: "method_not_allowed", message: `${method} is not allowed on ${url.split("?")[0]}: use ${allow}.`, request_id: "req-405" } });
    }
  });

  it("answers a method a page of the terminal does not take (OPTIONS, POST) 405 with Allow: GET, HEAD, as an API path, not a 404 saying the page does not exist", async () => {
    writeFileSync(join(assets, "app.js"), "export {};");
    for (const [method, url] of [
      ["OPTIONS", "/settings/keys"],
      ["OPTIONS", "/"],
      ["OPTIONS", "/app.js?v=2"],
      ["POST", "/signin"],
      ["DELETE", "/orders"],
      ["OPTIONS", "/metrics"],
      ["OPTIONS", "/v1/markets"],
    ] as const) {
      const res = await app.inject({ method, url, headers: { "x-request-id": "req-405" } });
      expect([method, url, res.statusCode, res.headers["allow"]]).toEqual([method, url, 405, "GET, HEAD"]);
      expect(res.json()).toEqual({ error: { code: "method_not_allowed", message: `${method} is not allowed on ${url.split("?")[0]}: use GET, HEAD.`, request_id: "req-405" } });
    }
    // An API path no route takes is still no page of the terminal's, however it is written.
    for (const url of ["/v1/nope", "//v1/markets", "/V1/markets", "/%76%31/nope"]) {
      const res = await app.inject({ method: "OPTIONS", url });
      expect([url, res.statusCode, res.headers["allow"], res.json().error.code]).toEqual([url, 404, undefined, "not_found"]);
    }
  });

  it("answers a file missing from the terminal's build or the docs' 404 whatever the method, as GET does, and a file they serve 405 for a method it does not take", async () => {
    mkdirSync(join(assets, "assets"));
    writeFileSync(join(assets, "assets", "app-1a2b.js"), "export {};");
    writeFileSync(join(assets, ".secret.js"), "export {};");
    for (const url of ["/assets/missing.js", "/missing.js?v=2", "/assets/app-1a2b.js/x.js", "/.secret.js"]) {
      expect([url, (await app.inject({ method: "GET", url })).statusCode]).toEqual([url, 404]);
      for (const method of ["OPTIONS", "POST", "DELETE"] as const) {
        const res = await app.inject({ method, url });
        expect([method, url, res.statusCode, res.headers["allow"], res.json().error]).toEqual([method, url, 404, undefined, { code: "not_found", message: `No route ${method} ${url.split("?")[0]}.`, request_id: expect.any(String) }]);
      }
    }
    // Nor is a file missing from the docs' there, whatever the method, as one missing from the build.
    for (const url of ["/docs/static/missing", "/docs/static/missing.css", "/docs/static/swagger-ui.css/x.js"]) {
      expect([url, (await app.inject({ method: "GET", url })).statusCode]).toEqual([url, 404]);
      for (const method of ["OPTIONS", "POST", "DELETE"] as const) {
        const res = await app.inject({ method, url });
        expect([method, url, res.statusCode, res.headers["allow"], res.json().error]).toEqual([method, url, 404, undefined, { code: "not_found", message: `No route ${method} ${url}.`, request_id: expect.any(String) }]);
      }
    }
    // The docs' files are not the terminal's: one the docs serve is 405 for OPTIONS, as one of the build is.
    for (const url of ["/assets/app-1a2b.js", "/index.html", "/%61ssets/app-1a2b.js", "/docs/static/swagger-ui.css", "/docs/static/"]) {
      expect([url, (await app.inject({ method: "GET", url })).statusCode]).toEqual([url, 200]);
      const res = await app.inject({ method: "OPTIONS", url });
      expect([url, res.statusCode, res.headers["allow"]]).toEqual([url, 405, "GET, HEAD"]);
    }
  });

  it("answers a path whose id is empty (a trailing slash) 404 not_found naming the path, as /v1/markets/, not a complaint about an id the client did not send", async () => {
    const { cookie } = await signUp();
    for (const [method, url] of [
      ["GET", "/v1/markets/"],
      ["GET", "/v1/orders/"],
      ["GET", "/v1/withdrawals/"],
      ["GET", "/v1/prices/?depth=3"],
      ["GET", "/v1/stream/prices/"],
      ["GET", "/v1/keys/"],
      ["DELETE", "/v1/keys/"],
    ] as const) {
      const res = await app.inject({ method, url, headers: { cookie, "x-request-id": "req-empty" } });
      expect([method, url, res.statusCode, res.json()]).toEqual([
        method,
        url,
        404,
        { error: { code: "not_found", message: `No route ${method} ${url.split("?")[0]}.`, request_id: "req-empty" } },
      ]);
    }
  });

  it("serves index.html asked for by name with the same CSP, so no site can frame the terminal there either", async () => {
    const page = await app.inject({ method: "GET", url: "/index.html" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toMatch(/text\/html/);
    expect(page.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
  });

  it("takes a query on the terminal's pages and files, the docs and /metrics: a browser's or scraper's, not the API's", async () => {
    writeFileSync(join(assets, "app.js"), "export {};");
    for (const url of ["/settings/keys?tab=api", "/app.js?v=2", "/docs/?x=1", "/metrics?x=1"]) {
      expect([url, (await app.inject({ method: "GET", url })).statusCode]).toEqual([url, 200]);
    }
  });

  it("documents every /v1 operation's errors in the OpenAPI document as the API's error body, the SPEC's reads included", async () => {
    const doc = (await app.inject({ method: "GET", url: "/v1/openapi.json" })).json() as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    const undocumented: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const range of ["4XX", "5XX"]) {
          const body = (operation.responses[range] as { content?: Record<string, { schema: unknown }> } | undefined)?.content?.["application/json"]?.schema;
          if (JSON.stringify(body) !== JSON.stringify({ $ref: "#/components/schemas/Error" })) undocumented.push(`${method.toUpperCase()} ${path} ${range}`);
        }
      }
    }
    expect(undocumented).toEqual([]);
  });

  it("documents a 429 with Retry-After and the x-ratelimit headers on every operation that spends a budget, and on no other", async () => {
    await app.close();
    app = await buildApp({ ...deps, rateLimit: { perMinute: 100, redis: undefined } }, false);
    const doc = (await app.inject({ method: "GET", url: "/v1/openapi.json" })).json() as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }> }>>;
    };
    const limited = Object.entries(doc.paths).flatMap(([path, operations]) => Object.entries(operations).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op.responses["429"]] as const));
    for (const [operation, answer] of limited) {
      if (operation === "GET /v1/health") expect(answer, operation).toBeUndefined();
      else {
        expect(Object.keys(answer?.headers ?? {}), operation).toEqual(["retry-after", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]);
        expect(answer!.content!["application/json"]!.schema, operation).toEqual({ $ref: "#/components/schemas/Error" });
      }
    }
    for (let i = 0; i < 10; i++) await app.inject({ method: "POST", url: "/v1/session/signin", headers: json, payload: { email: "a@example.com", password: "wrong password!" } });
    const refused = await app.inject({ method: "POST", url: "/v1/session/signin", headers: json, payload: { email: "a@example.com", password: "wrong password!" } });
    expect([refused.statusCode, refused.headers["retry-after"], refused.json().error.code]).toEqual([429, expect.any(String), "rate_limited"]);
  });

  it("documents that an order's and a withdrawal's body take no other fields, as the routes refuse them", async () => {
    const doc = (await app.inject({ method: "GET", url: "/v1/openapi.json" })).json() as { components: { schemas: Record<string, { additionalProperties?: boolean }> } };
    expect(doc.components.schemas.OrderRequest!.additionalProperties).toBe(false);
    expect(doc.components.schemas.WithdrawalRequest!.additionalProperties).toBe(false);
    const { res: signup } = await signUp();
    const { apiKey, apiSecret } = await deps.terminal.createApiKey({ accountId: signup.json().account_id, name: "bot", scopes: "read,trade" });
    const payload = JSON.stringify({ market_id: "evt_test", outcome: "YES", side: "buy", amount_usdc: 1, memo: "x" });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const res = await app.inject({ method: "POST", url: "/v1/order", headers: { ...json, "x-api-key": apiKey, "x-timestamp": timestamp, "x-signature": sign(apiSecret, timestamp, "POST", "/v1/order", payload) }, payload });
    expect([res.statusCode, res.json().error.details.fields]).toEqual([400, { memo: "is not a known field" }]);
  });

  it("documents the terminal's endpoints in the OpenAPI document", async () => {
    const doc = (await app.inject({ method: "GET", url: "/v1/openapi.json" })).json();
    for (const path of ["/v1/session/signin", "/v1/keys", "/v1/quote", "/v1/stream/prices/{event_id}", "/v1/order"]) expect(doc.paths[path]).toBeDefined();
    expect(doc.components.securitySchemes.session).toBeDefined();
  });
});
