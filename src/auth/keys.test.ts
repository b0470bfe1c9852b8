import { randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqliteStore } from "../store/sqlite/sqlite-store.ts";
import type { Store } from "../store/store.ts";
import { API_KEY_PATTERN, API_SECRET_PATTERN, createApiKey, generateKeyPair, parseScopes } from "./keys.ts";
import { decryptSecret } from "./secrets.ts";

describe("generateKeyPair", () => {
  it("makes keys of the documented shapes, all different", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const { apiKey, apiSecret } = generateKeyPair();
      expect(apiKey).toMatch(API_KEY_PATTERN);
      expect(apiSecret).toMatch(API_SECRET_PATTERN);
      expect(Buffer.from(apiSecret.slice(8), "base64url").length).toBe(32);
      seen.add(apiKey).add(apiSecret);
    }
    expect(seen.size).toBe(400);
  });

  it("drops the bytes that would bias base62 towards its first characters", () => {
    // 248, 249 and 255 would map to "0", "1" and "7" under a plain `% 62`; dropped, only the 61s ("z") remain.
    let calls = 0;
    const random = (n: number): Buffer => (calls++ === 0 ? Buffer.from([248, 249, 255, ...Array(n - 3).fill(61)]) : Buffer.alloc(n, 61));
    expect(generateKeyPair(random).apiKey).toBe("ck_live_" + "z".repeat(24));
  });

  it("spreads characters evenly", () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 2_000; i++) for (const ch of generateKeyPair().apiKey.slice(8)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    const expected = (2_000 * 24) / 62;
    // A biased `% 62` would put "0".."7" about 3% above the rest; 20% bounds pure noise comfortably.
    for (const n of counts.values()) expect(Math.abs(n - expected) / expected).toBeLessThan(0.2);
  });
});

describe("parseScopes", () => {
  it.each([
    ["read,trade", ["read", "trade"]],
    ["trade, read", ["read", "trade"]],
    ["read,read,", ["read"]],
    [["trade"], ["trade"]],
    ["withdraw,read", ["read", "withdraw"]],
  ] as const)("parses %j", (input, scopes) => {
    expect(parseScopes(input)).toEqual(scopes);
  });

  it.each(["", " , ", "read,admin", "READ", "read;trade"])("refuses %j with invalid_request", (input) => {
    expect(() => parseScopes(input)).toThrow(
      expect.objectContaining({ code: "invalid_request", details: { fields: { scopes: expect.any(String) } } }),
    );
  });
});

describe("createApiKey", () => {
  const master = randomBytes(32);
  let store: Store;
  beforeEach(async () => {
    store = await openSqliteStore(":memory:");
    await store.migrate();
    await store.createAccount({ id: "acc_1", email: "a@example.com", address: "0x" + "11".repeat(20), walletKeyEnc: null, passwordHash: null, fundedAt: null });
  });
  afterEach(async () => {
    await store.close();
  });

  it("stores the key with its secret encrypted and returns the secret once", async () => {
    const { apiKey, apiSecret, record } = await createApiKey(store, master, {
      accountId: "acc_1",
      name: " bot ",
      scopes: "trade,read",
      ipAllowlist: ["10.0.0.0/8", "::ffff:192.0.2.1", "10.0.0.0/8"],
    });
    expect(apiKey).toMatch(API_KEY_PATTERN);
    expect(apiSecret).toMatch(API_SECRET_PATTERN);
    const stored = await store.apiKey(apiKey);
    expect(stored).toEqual(record);
    expect(record).toMatchObject({ accountId: "acc_1", name: "bot", scopes: ["read", "trade"], ipAllowlist: ["10.0.0.0/8", "192.0.2.1"], revokedAt: null });
    expect(record.secretEnc).not.toContain(apiSecret.slice(8));
    expect(decryptSecret(master, record.secretEnc)).toBe(apiSecret);
  });

  it("stores no allowlist when none is given", async () => {
    const { record } = await createApiKey(store, master, { accountId: "acc_1", name: "reader", scopes: ["read"], ipAllowlist: [] });
    expect(record.ipAllowlist).toBeNull();
    expect(record.withdrawalAllowlist).toBeNull();
  });

  it("grants withdraw only when asked, with the withdrawal addresses in lower case, once each", async () => {
    const { record } = await createApiKey(store, master, {
      accountId: "acc_1",
      name: "payouts",
      scopes: "read,withdraw",
      withdrawalAllowlist: ["0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"],
    });
    expect(record).toMatchObject({ scopes: ["read", "withdraw"], withdrawalAllowlist: ["0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"] });
    expect((await store.apiKey(record.apiKey))?.withdrawalAllowlist).toEqual(record.withdrawalAllowlist);
  });

  it("takes an emoji sequence (joined by U+200D, a format character) and a right-to-left script in a name", async () => {
    const { record } = await createApiKey(store, master, { accountId: "acc_1", name: "👩‍💻 مكتب", scopes: "read" });
    expect(record.name).toBe("👩‍💻 مكتب");
  });

  it("counts a name's characters, not its UTF-16 units: 100 emoji are a name of 100", async () => {
    const { record } = await createApiKey(store, master, { accountId: "acc_1", name: "😀".repeat(100), scopes: "read" });
    expect(record.name).toBe("😀".repeat(100));
  });

  it.each([
    [{ name: "" }, "name"],
    [{ name: "x".repeat(101) }, "name"],
    [{ name: "😀".repeat(101) }, "name"],
    [{ name: "bot\nck_live_forged" }, "name"],
    [{ name: "rtl\u202etob" }, "name"],
    [{ name: "bot\u2067x\u2069" }, "name"],
    [{ scopes: "read,admin" }, "scopes"],
    [{ withdrawalAllowlist: ["0x1234"] }, "withdrawal_allowlist"],
    [{ withdrawalAllowlist: ["0x5aaeB6053F3E94C9b9A09f33669435E7Ef1BeAed"] }, "withdrawal_allowlist"],
    [{ ipAllowlist: ["10.0.0.0/33"] }, "ip_allowlist"],
    [{ ipAllowlist: ["example.com"] }, "ip_allowlist"],
    [{ ipAllowlist: ["10.0.0.1/8/1"] }, "ip_allowlist"],
    [{ accountId: "acc_missing" }, "account_id"],
  ])("refuses %j with invalid_request and stores nothing", async (override, field) => {
    const input = { accountId: "acc_1", name: "bot", scopes: "read", ...override };
    await expect(createApiKey(store, master, input)).rejects.toMatchObject({ code: "invalid_request", details: { fields: { [field]: expect.any(String) } } });
    expect(await store.listApiKeys("acc_1")).toEqual([]);
  });
});
