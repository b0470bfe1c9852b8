import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import vectors from "../../test/fixtures/hmac-signing.json" with { type: "json" };
import type { ErrorCode } from "../domain/errors.ts";
import type { Clock, Scope } from "../domain/types.ts";
import { openSqliteStore } from "../store/sqlite/sqlite-store.ts";
import type { Store } from "../store/store.ts";
import { authenticate, type AuthDeps, type AuthRequest, type Principal } from "./authenticate.ts";
import { KeyCache } from "./key-cache.ts";
import { storeReplayCache } from "./replay-cache.ts";
import { sign } from "./hmac.ts";
import { encryptSecret } from "./secrets.ts";

const master = randomBytes(32);
const KEY = "ck_live_" + "A".repeat(24);
const ACCOUNT = "acc_1";
const post = vectors.cases.find((c) => c.name === "post-order")!;

let now = 0;
const clock: Clock = { now: () => now };
let store: Store;
let deps: AuthDeps;

async function addKey(opts: { apiKey?: string; scopes?: Scope[]; ipAllowlist?: string[] | null; secret?: string } = {}): Promise<string> {
  const apiKey = opts.apiKey ?? KEY;
  await store.insertApiKey({
    apiKey,
    accountId: ACCOUNT,
    name: "test",
    scopes: opts.scopes ?? ["read", "trade"],
    secretEnc: encryptSecret(master, opts.secret ?? vectors.secret),
    ipAllowlist: opts.ipAllowlist ?? null,
  });
  return apiKey;
}

beforeEach(async () => {
  store = await openSqliteStore(":memory:", { clock });
  await store.migrate();
  await store.createAccount({ id: ACCOUNT, email: "a@example.com", address: "0x" + "11".repeat(20), walletKeyEnc: null, passwordHash: null, fundedAt: null });
  now = Number(post.timestamp) * 1000;
  deps = { store, keys: new KeyCache(store, master), clock, replay: storeReplayCache(store) };
});
afterEach(async () => {
  await store.close();
});

/** authenticate's answer as a promise: a cached key's read is answered at once, the rest by a promise, either may throw. */
async function admitted(...args: Parameters<typeof authenticate>): Promise<Principal> {
  return authenticate(...args);
}

/** The post-order vector as a request, with any part overridden. */
function vectorRequest(over: { body?: string; url?: string; method?: string; headers?: AuthRequest["headers"]; ip?: string } = {}): AuthRequest {
  return {
    method: over.method ?? post.method,
    url: over.url ?? post.path,
    rawBody: Buffer.from(over.body ?? post.body, "utf8"),
    ip: over.ip ?? "127.0.0.1",
    headers: { "x-api-key": KEY, "x-timestamp": post.timestamp, "x-signature": post.signature_hex, ...over.headers },
  };
}

const TRADE = { scope: "trade", signed: true } as const;
const READ = { scope: "read", signed: false } as const;

async function expectCode(p: Promise<unknown>, code: ErrorCode): Promise<Record<string, unknown>> {
  const err = await p.then(
    () => expect.fail(`expected ${code}, got success`),
    (e: unknown) => e,
  );
  expect(err).toMatchObject({ name: "AppError", code });
  return err as Record<string, unknown>;
}

describe("authenticate: the test vectors", () => {
  for (const c of vectors.cases) {
    const bytes = Buffer.from(c.signature_hex, "hex");
    const encodings = {
      hex: c.signature_hex,
      HEX: c.signature_hex.toUpperCase(),
      base64: c.signature_base64,
      "base64 unpadded": c.signature_base64.replace(/=$/, ""),
      base64url: c.signature_base64url,
      "base64url padded": bytes.toString("base64url") + "=",
    };
    it.each(Object.entries(encodings))(`accepts ${c.name} signed in %s`, async (_, signature) => {
      await addKey();
      now = Number(c.timestamp) * 1000;
      const req: AuthRequest = {
        method: c.method,
        url: c.path,
        rawBody: c.body === "" ? undefined : Buffer.from(c.body, "utf8"),
        ip: "203.0.113.9",
        headers: { "X-API-Key": KEY, "X-Timestamp": c.timestamp, "X-Signature": signature },
      };
      expect(await admitted(req, TRADE, deps)).toEqual({ apiKey: KEY, accountId: ACCOUNT, scopes: ["read", "trade"] });
    });
  }
});

describe("authenticate: key checks", () => {
  it("missing X-API-Key → missing_api_key", async () => {
    await addKey();
    await expectCode(admitted(vectorRequest({ headers: { "x-api-key": undefined } }), READ, deps), "missing_api_key");
    await expectCode(admitted(vectorRequest({ headers: { "x-api-key": "" } }), READ, deps), "missing_api_key");
  });

  it("unknown or repeated X-API-Key → invalid_api_key", async () => {
    await addKey();
    await expectCode(admitted(vectorRequest({ headers: { "x-api-key": "ck_live_nope" } }), READ, deps), "invalid_api_key");
    await expectCode(admitted(vectorRequest({ headers: { "x-api-key": [KEY, KEY] } }), READ, deps), "invalid_api_key");
    // As Node hands a repeated header it does not know to the server: the copies joined.
    expect(await expectCode(admitted(vectorRequest({ headers: { "x-api-key": `${KEY}, ${KEY}` } }), READ, deps), "invalid_api_key")).toMatchObject({
      message: "Send exactly one X-API-Key header.",
    });
  });

  it("revocation takes effect on the next request, though the key was cached", async () => {
    await addKey();
    await admitted(vectorRequest(), TRADE, deps);
    await store.revokeApiKey(KEY, new Date(now).toISOString());
    const req = vectorRequest({ headers: { "x-signature": post.signature_base64 } });
    await expectCode(admitted(req, TRADE, deps), "key_revoked");
  });

  it("address outside the allowlist → ip_not_allowed", async () => {
    await addKey({ ipAllowlist: ["10.0.0.0/8", "2001:db8::1"] });
    await expectCode(admitted(vectorRequest({ ip: "11.0.0.1" }), READ, deps), "ip_not_allowed");
    await expectCode(admitted(vectorRequest({ ip: "2001:db8::2" }), READ, deps), "ip_not_allowed");
    await expectCode(admitted(vectorRequest({ ip: "not-an-ip" }), READ, deps), "ip_not_allowed");
    for (const ip of ["10.9.8.7", "::ffff:10.9.8.7", "2001:db8::1"]) {
      await expect(admitted(vectorRequest({ ip }), READ, deps)).resolves.toMatchObject({ apiKey: KEY });
    }
  });

  it("read-only key on a trade request → insufficient_scope naming the scope", async () => {
    await addKey({ scopes: ["read"] });
    const err = await expectCode(admitted(vectorRequest(), TRADE, deps), "insufficient_scope");
    expect(err.details).toEqual({ required: "trade" });
    expect(err.status).toBe(403);
  });

  it("checks the key before the signature", async () => {
    await addKey({ scopes: ["read"] });
    await expectCode(admitted(vectorRequest({ headers: { "x-signature": undefined } }), TRADE, deps), "insufficient_scope");
  });

  it("a read needs no signature, and records last use at most once a minute", async () => {
    await addKey();
    const req = vectorRequest({ headers: { "x-timestamp": undefined, "x-signature": undefined } });
    await admitted(req, READ, deps);
    await new Promise((r) => setTimeout(r, 20));
    expect((await store.apiKey(KEY))!.lastUsedAt).toBe(new Date(now).toISOString());
    now += 30_000;
    await admitted(req, READ, deps);
    await new Promise((r) => setTimeout(r, 20));
    expect((await store.apiKey(KEY))!.lastUsedAt).toBe(new Date(now - 30_000).toISOString());
  });

  it("a failure to record last use does not fail the request", async () => {
    await addKey();
    const seen: unknown[] = [];
    const failing: Store = Object.assign(Object.create(store) as Store, {
      touchApiKey: () => Promise.reject(new Error("disk full")),
    });
    const principal = await admitted(vectorRequest(), READ, { ...deps, store: failing, onBackgroundError: (e) => seen.push(e) });
    expect(principal.apiKey).toBe(KEY);
    await new Promise((r) => setTimeout(r, 0));
    expect(seen).toEqual([new Error("disk full")]);
  });
});

describe("authenticate: signature checks", () => {
  beforeEach(async () => {
    await addKey();
  });

  it.each([
    ["no X-Timestamp", { "x-timestamp": undefined }],
    ["no X-Signature", { "x-signature": undefined }],
    ["an empty X-Signature", { "x-signature": "" }],
  ])("%s → missing_signature", async (_, headers) => {
    await expectCode(admitted(vectorRequest({ headers }), TRADE, deps), "missing_signature");
  });

  it.each(["-1767225600", "+1767225600", "1767225600.5", " 1767225600", "176722560000", "1e9", "abc"])(
    "X-Timestamp %j → invalid_timestamp",
    async (ts) => {
      await expectCode(admitted(vectorRequest({ headers: { "x-timestamp": ts } }), TRADE, deps), "invalid_timestamp");
    },
  );

  it("a repeated X-Timestamp → invalid_timestamp", async () => {
    await expectCode(admitted(vectorRequest({ headers: { "x-timestamp": [post.timestamp, post.timestamp] } }), TRADE, deps), "invalid_timestamp");
    expect(await expectCode(admitted(vectorRequest({ headers: { "x-timestamp": `${post.timestamp}, ${post.timestamp}` } }), TRADE, deps), "invalid_timestamp")).toMatchObject({
      message: "Send exactly one X-Timestamp header.",
    });
  });

  it("milliseconds → invalid_timestamp saying seconds are expected", async () => {
    const err = await expectCode(admitted(vectorRequest({ headers: { "x-timestamp": post.timestamp + "000" } }), TRADE, deps), "invalid_timestamp");
    expect(err.message).toMatch(/milliseconds.*seconds/);
  });

  it.each([-31, 31])("%i s away → stale_timestamp with the server time", async (offset) => {
    now += offset * 1000;
    const err = await expectCode(admitted(vectorRequest(), TRADE, deps), "stale_timestamp");
    expect(err.details).toEqual({ server_time: Number(post.timestamp) + offset });
  });

  it.each([-30, 30])("%i s away is still fresh", async (offset) => {
    now += offset * 1000;
    await expect(admitted(vectorRequest(), TRADE, deps)).resolves.toMatchObject({ apiKey: KEY });
  });

  it("honours a configured skew", async () => {
    now += 11_000;
    await expectCode(admitted(vectorRequest(), TRADE, { ...deps, maxSkewSec: 10 }), "stale_timestamp");
  });

  it.each([
    ["the body", { body: post.body.replace("100.5", "100.6") }],
    ["the body's trailing whitespace", { body: post.body + "\n" }],
    ["the query string", { url: post.path + "?dry_run=true" }],
    ["the method", { method: "PUT" }],
    ["the path", { url: "/v1/orders" }],
    ["the version prefix", { url: "/order" }],
    ["the timestamp", { headers: { "x-timestamp": String(Number(post.timestamp) + 1) } }],
    ["the signature", { headers: { "x-signature": post.signature_hex.replace(/^5/, "6") } }],
    ["an undecodable signature", { headers: { "x-signature": "not a signature" } }],
    ["a truncated signature", { headers: { "x-signature": post.signature_hex.slice(0, 62) } }],
    ["a repeated signature header", { headers: { "x-signature": [post.signature_hex, post.signature_hex] } }],
  ])("tampering with %s → invalid_signature", async (_, over) => {
    await expectCode(admitted(vectorRequest(over), TRADE, deps), "invalid_signature");
  });

  it("a signature that does not match says what the server signed: timestamp, method and path as received, and the body's length and SHA-256", async () => {
    const body = post.body + "\n";
    const err = await expectCode(admitted(vectorRequest({ body, url: "/v1/order?x=1" }), TRADE, deps), "invalid_signature");
    const signed = `${post.timestamp}POST/v1/order?x=1`;
    expect(err.message).toBe(
      `The signature does not match the request: send the lowercase hex HMAC-SHA256, keyed with the API secret, of X-Timestamp + METHOD + path with query + raw body, here "${signed}" followed by the body's ${Buffer.byteLength(body)} bytes (SHA-256 in details).`,
    );
    expect(err.details).toEqual({ signed, body_bytes: Buffer.byteLength(body), body_sha256: createHash("sha256").update(body).digest("hex") });
  });

  it("a signature made with another key's secret → invalid_signature", async () => {
    const other = await addKey({ apiKey: "ck_live_" + "B".repeat(24), secret: "cs_live_other" });
    await expectCode(admitted(vectorRequest({ headers: { "x-api-key": other } }), TRADE, deps), "invalid_signature");
  });

  it("the same signature again, in any encoding → replayed_request", async () => {
    await admitted(vectorRequest(), TRADE, deps);
    for (const sig of [post.signature_hex, post.signature_hex.toUpperCase(), post.signature_base64, post.signature_base64url]) {
      await expectCode(admitted(vectorRequest({ headers: { "x-signature": sig } }), TRADE, deps), "replayed_request");
    }
  });

  it("a repeated signature reaches the route only when the route's idempotentReplay says so, given the signed body", async () => {
    const seen: (string | undefined)[] = [];
    const needs = (answer: boolean) => ({ ...TRADE, idempotentReplay: (raw: Buffer | undefined) => (seen.push(raw?.toString("utf8")), answer) });
    await admitted(vectorRequest(), needs(true), deps);
    await expect(admitted(vectorRequest(), needs(true), deps)).resolves.toMatchObject({ apiKey: KEY });
    await admitted(vectorRequest(), needs(false), deps);
    await expectCode(admitted(vectorRequest(), needs(false), deps), "replayed_request");
    expect(seen).toEqual([post.body, post.body, post.body, post.body]);
  });

  it("an idempotent retry's signature is recorded only once spent (an error answered it): every copy reaches the route until then", async () => {
    const idempotent = { ...TRADE, idempotentReplay: () => true };
    const remembered: string[] = [];
    const watched = { ...deps, replay: { ...deps.replay, remember: async (key: string, sig: string, until: number) => (remembered.push(sig), deps.replay.remember(key, sig, until)) } };
    const copies = [];
    for (let i = 0; i < 3; i++) copies.push(await admitted(vectorRequest(), idempotent, watched));
    expect(remembered).toEqual([]);
    expect(await copies[0]!.spendSignature!()).toBe(true);
    expect(remembered).toEqual([post.signature_hex]);
    await expectCode(admitted(vectorRequest(), idempotent, watched), "replayed_request");
    await expectCode(admitted(vectorRequest(), TRADE, watched), "replayed_request");
  });

  it("replay protection is per key and per signature", async () => {
    const other = await addKey({ apiKey: "ck_live_" + "B".repeat(24) });
    await admitted(vectorRequest(), TRADE, deps);
    await admitted(vectorRequest({ headers: { "x-api-key": other } }), TRADE, deps);
    const ts = String(Number(post.timestamp) + 1);
    const fresh = sign(vectors.secret, ts, post.method, post.path, post.body);
    await admitted(vectorRequest({ headers: { "x-timestamp": ts, "x-signature": fresh } }), TRADE, deps);
  });

  it("a rejected signature is not remembered, so the genuine request still goes through", async () => {
    await expectCode(admitted(vectorRequest({ body: post.body + " " }), TRADE, deps), "invalid_signature");
    await expect(admitted(vectorRequest(), TRADE, deps)).resolves.toMatchObject({ apiKey: KEY });
  });

  it("signs the raw bytes, even ones that are not valid UTF-8", async () => {
    const raw = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    const signature = sign(vectors.secret, post.timestamp, "POST", "/v1/order", raw);
    const req = { ...vectorRequest({ headers: { "x-signature": signature } }), rawBody: raw };
    await expect(admitted(req, TRADE, deps)).resolves.toMatchObject({ apiKey: KEY });
    // What a server that decoded and re-encoded the body would verify against instead.
    const reencoded = { ...req, rawBody: Buffer.from(raw.toString("utf8"), "utf8") };
    await expectCode(admitted(reencoded, TRADE, deps), "invalid_signature");
  });
});

describe("KeyCache", () => {
  it("reads a key from the store once, and refuses it at once when another connection (the CLI) revokes it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "crossfill-keycache-"));
    const [server, cli] = [await openSqliteStore(join(dir, "db"), { clock }), await openSqliteStore(join(dir, "db"), { clock })];
    try {
      await server.migrate();
      await server.createAccount({ id: ACCOUNT, email: "a@example.com", address: "0x" + "11".repeat(20), walletKeyEnc: null, passwordHash: null, fundedAt: null });
      await server.insertApiKey({ apiKey: KEY, accountId: ACCOUNT, name: "test", scopes: ["read"], secretEnc: encryptSecret(master, vectors.secret), ipAllowlist: null });
      let reads = 0;
      const counted = { apiKey: (k: string) => (reads++, server.apiKey(k)), apiKeysVersion: () => server.apiKeysVersion() };
      const cached = { ...deps, store: server, keys: new KeyCache(counted, master) };
      for (let i = 0; i < 3; i++) await admitted(vectorRequest(), READ, cached);
      expect(reads).toBe(1);

      await cli.revokeApiKey(KEY, new Date(now).toISOString());
      // The next request arrives in a later turn of the event loop.
      await new Promise(setImmediate);
      await expectCode(admitted(vectorRequest(), READ, cached), "key_revoked");
    } finally {
      await server.close();
      await cli.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("finds a key made after an unknown one was asked for, and stays bounded", async () => {
    const keys = new KeyCache(store, master, 2);
    expect(await keys.record(KEY)).toBeUndefined();
    await addKey();
    expect(await keys.record(KEY)).toMatchObject({ apiKey: KEY });
    for (const k of ["k1", "k2", "k3"]) await keys.record(await addKey({ apiKey: "ck_live_" + k.repeat(12) }));
    expect(keys.size).toBe(2);
  });
});
