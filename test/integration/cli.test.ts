import { execFile, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { startCrossfill, type Crossfill } from "../../src/main.ts";
import { openStore } from "../../src/store/open-store.ts";
import { makeDataDirStore } from "../helpers/stores.ts";
import { CrossfillClient } from "../../src/sdk/client.ts";
import type { PriceRecord } from "../../src/sdk/types.ts";

const run = promisify(execFile);
const BIN = fileURLToPath(new URL("../../bin/crossfill.mjs", import.meta.url));

let dataDir: string;
let server: Crossfill | undefined;
const env = () => ({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: "silent" });
const cli = async (...args: string[]) => (await run(process.execPath, [BIN, ...args], { env: env(), timeout: 30_000 })).stdout;
const start = async () => (server = await startCrossfill(loadConfig({ DATA_DIR: dataDir, PORT: "0", SIM_LATENCY_SCALE: "0.05" }), { logger: false }));

function withStdin(input: string, ...args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: env() });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => resolve({ code, out }));
    child.stdin.end(input);
  });
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "crossfill-cli-"));
  await makeDataDirStore(dataDir);
});
afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("crossfill keys", () => {
  it("makes a key with the server stopped that the server accepts once started, funded from the faucet", async () => {
    const made = JSON.parse(await cli("keys", "create", "--name", "bot", "--scopes", "read,trade", "--json")) as { api_key: string; api_secret: string };
    expect(Object.keys(made).sort()).toEqual(["api_key", "api_secret"]);
    expect(made.api_key).toMatch(/^ck_live_[0-9A-Za-z]{24}$/);
    expect(made.api_secret).toMatch(/^cs_live_[\w-]{43}$/);
    await start();
    const client = new CrossfillClient({ baseUrl: server!.url, apiKey: made.api_key, apiSecret: made.api_secret });
    expect(await client.account()).toMatchObject({ email: "local@localhost", available_usdc: 10_000, locked_usdc: 0 });
  });

  it("makes a key on a running server's data that works at once, lists it without its secret, and revokes it", async () => {
    const made = JSON.parse(await cli("keys", "create", "--name", "second", "--scopes", "read", "--account", "desk@example.com", "--json")) as { api_key: string; api_secret: string };
    const client = new CrossfillClient({ baseUrl: server!.url, apiKey: made.api_key });
    expect((await client.account()).email).toBe("desk@example.com");

    const listed = JSON.parse(await cli("keys", "list", "--account", "desk@example.com", "--json")) as { api_key: string; scopes: string[]; revoked_at: string | null }[];
    expect(listed).toEqual([expect.objectContaining({ api_key: made.api_key, scopes: ["read"], withdrawal_allowlist: null, revoked_at: null })]);
    expect(JSON.stringify(listed)).not.toContain(made.api_secret);
    expect(await cli("keys", "list", "--account", "desk@example.com")).toContain(made.api_key);

    expect(JSON.parse(await cli("keys", "revoke", made.api_key, "--json"))).toEqual({ api_key: made.api_key, revoked: true });
    const refused = await client.request("GET", "/v1/account");
    expect([refused.status, (refused.body as { error: { code: string } }).error.code]).toEqual([403, "key_revoked"]);
  });

  it("prints the secret once in human form too, and refuses unknown scopes in words", async () => {
    const human = await cli("keys", "create", "--name", "human");
    expect(human).toMatch(/API_SECRET\s+cs_live_/);
    expect(human).toMatch(/shown only this once/);
    // The name as stored and listed, without the spaces around it.
    expect(await cli("keys", "create", "--name", "  padded  ")).toMatch(/^Created key "padded" for local@localhost /);
    const bad = await run(process.execPath, [BIN, "keys", "create", "--name", "x", "--scopes", "read,admin"], { env: env() }).catch((e: { code: number; stderr: string }) => e);
    expect((bad as { code: number }).code).toBe(2);
    expect((bad as { stderr: string }).stderr).toMatch(/admin/);
    // The API's limit: 100 characters, an emoji one.
    expect(await cli("keys", "create", "--name", "😀".repeat(100), "--json")).toMatch(/"api_secret":"cs_live_/);
    const long = await run(process.execPath, [BIN, "keys", "create", "--name", "x".repeat(101)], { env: env() }).catch((e: { code: number; stderr: string }) => e);
    expect([(long as { code: number }).code, (long as { stderr: string }).stderr]).toEqual([2, "crossfill: The key name must be 1 to 100 characters.\n"]);
  });
});

describe("crossfill keys create --scopes ... withdraw", () => {
  it("grants the withdraw scope only when named, with the addresses its withdrawals may pay to; keys list shows them and the IP allowlist", async () => {
    const to = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
    await cli("keys", "create", "--name", "payouts", "--scopes", "read,withdraw", "--withdraw-to", to, "--ip", "10.0.0.0/8,192.0.2.1", "--account", "payouts@example.com", "--json");
    await cli("keys", "create", "--name", "default", "--account", "payouts@example.com", "--json");
    const listed = JSON.parse(await cli("keys", "list", "--account", "payouts@example.com", "--json")) as { name: string; scopes: string[]; ip_allowlist: string[] | null; withdrawal_allowlist: string[] | null }[];
    expect(listed.map((k) => [k.name, k.scopes, k.ip_allowlist, k.withdrawal_allowlist])).toEqual([
      ["payouts", ["read", "withdraw"], ["10.0.0.0/8", "192.0.2.1"], [to.toLowerCase()]],
      ["default", ["read", "trade"], null, null],
    ]);
    const [payouts, other] = (await cli("keys", "list", "--account", "payouts@example.com")).trim().split("\n");
    expect(payouts).toMatch(new RegExp(`  from 10\\.0\\.0\\.0/8,192\\.0\\.2\\.1  pays to ${to.toLowerCase()}$`));
    expect(other).not.toMatch(/from|pays to/);
  });

  it("refuses an address or IP list given empty, as a script's unset variable gives it, instead of making a key without the limit", async () => {
    for (const flag of ["--withdraw-to", "--ip"]) {
      const refused = await run(process.execPath, [BIN, "keys", "create", "--name", "unset", "--scopes", "read,withdraw", flag, " , ", "--account", "unset@example.com"], { env: env() }).catch((e: { code: number; stderr: string }) => e);
      expect([(refused as { code: number }).code, (refused as { stderr: string }).stderr]).toEqual([2, `crossfill: ${flag} names nothing; leave it out for a key without that limit\n`]);
    }
    expect(await cli("keys", "list", "--account", "unset@example.com")).toMatch(/^No keys/);
  });

  it("refuses an address or IP that is none before making the account it names, which its owner could then not sign up as", async () => {
    for (const [flag, value, message] of [
      ["--ip", "banana", 'Not an IP address or CIDR block: "banana".'],
      ["--withdraw-to", "0xabc", 'Not an address money may be paid to: "0xabc" must be a 0x address of 40 hex digits.'],
    ] as const) {
      const refused = await run(process.execPath, [BIN, "keys", "create", "--name", "typo", "--scopes", "read,withdraw", flag, value, "--account", "typo@example.com"], { env: env() }).catch((e: { code: number; stderr: string }) => e);
      expect([(refused as { code: number }).code, (refused as { stderr: string }).stderr]).toEqual([2, `crossfill: ${message}\n`]);
    }
    const db = new Database(join(dataDir, "crossfill.db"), { readonly: true });
    try {
      expect(db.prepare("SELECT email FROM accounts WHERE email = ?").all("typo@example.com")).toEqual([]);
    } finally {
      db.close();
    }
  });
});

describe("crossfill keys list --account that is no email address", () => {
  it("refuses it as keys create does, instead of answering that the account has no keys", async () => {
    for (const args of [["--account", "desk"], ["--account", "desk", "--json"]]) {
      const failed = await run(process.execPath, [BIN, "keys", "list", ...args], { env: env() }).catch((e: { code: number; stdout: string; stderr: string }) => e);
      expect([(failed as { code: number }).code, (failed as { stdout: string }).stdout, (failed as { stderr: string }).stderr]).toEqual([
        2,
        "",
        'crossfill: --account must be an email address (got "desk")\n',
      ]);
    }
  });
});

describe("crossfill --account of an account whose email, taken before such emails were refused, holds a hidden character", () => {
  it("makes and lists its keys and sets its password, printing the email escaped; refuses such an email only for an account it would make", async () => {
    const email = "ada\u202e\u200b@example.com";
    const store = await openStore({ dataDir, databaseUrl: undefined });
    await store.createAccount({ id: "acc_hidden", email, address: "0x00000000000000000000000000000000000000ab", walletKeyEnc: null, passwordHash: null, fundedAt: null });
    const made = JSON.parse(await cli("keys", "create", "--name", "old", "--account", email, "--json")) as { api_key: string };
    expect((await store.listApiKeys("acc_hidden")).map((k) => k.apiKey)).toEqual([made.api_key]);
    expect((JSON.parse(await cli("keys", "list", "--account", email, "--json")) as { api_key: string }[]).map((k) => k.api_key)).toEqual([made.api_key]);
    const set = await withStdin("correct horse battery\n", "accounts", "password", "--account", email);
    expect([set.code, set.out]).toEqual([0, "ada\\u202e\\u200b@example.com can now sign in to the web terminal with that password.\n"]);
    expect((await store.accountByEmail(email))?.passwordHash).toMatch(/^scrypt\$/);

    const hidden = "crossfill: An email address cannot hold control or invisible formatting characters (such as ESC or U+202E).\n";
    const create = await run(process.execPath, [BIN, "keys", "create", "--name", "new", "--account", "bob\u200b@example.com"], { env: env() }).catch((e: { code: number; stderr: string }) => e);
    expect([(create as { code: number }).code, (create as { stderr: string }).stderr]).toEqual([2, hidden]);
    expect(await withStdin("correct horse battery\n", "accounts", "password", "--account", "bob\u200b@example.com")).toEqual({ code: 2, out: hidden });
    expect(await store.accountByEmail("bob\u200b@example.com")).toBeUndefined();
    await store.close();
  }, 180_000);
});

describe("crossfill keys list of a name with control characters or a bidirectional override", () => {
  it("prints each as its \\u escape, so that the name cannot forge a line, clear the screen or reverse the rest of its line", async () => {
    const account = "names@example.com";
    const rtl = JSON.parse(await cli("keys", "create", "--name", "rtl", "--account", account, "--json")) as { api_key: string };
    const old = JSON.parse(await cli("keys", "create", "--name", "old", "--account", account, "--json")) as { api_key: string };
    // named before names with control characters or bidirectional controls were refused
    const db = new Database(join(dataDir, "crossfill.db"));
    db.prepare("UPDATE api_keys SET name = ? WHERE api_key = ?").run("rtl\u202eevil", rtl.api_key);
    db.prepare("UPDATE api_keys SET name = ? WHERE api_key = ?").run("a\u001b[2J\nck_live_forged", old.api_key);
    db.close();
    const lines = (await cli("keys", "list", "--account", account)).trim().split("\n");
    expect(lines.map((line) => line.slice(line.indexOf("  ") + 2, line.indexOf("  read,trade")).trimEnd())).toEqual(["rtl\\u202eevil", "a\\u001b[2J\\u000ack_live_forged"]);
  }, 180_000);
});

describe("crossfill book", () => {
  it("prints the running server's merged book, each level with its venue, and with --json the API's price record", async () => {
    const made = JSON.parse(await cli("keys", "create", "--name", "reader", "--scopes", "read", "--json")) as { api_key: string };
    const env2 = { ...env(), CROSSFILL_URL: server!.url, CROSSFILL_API_KEY: made.api_key };
    const book = async (...args: string[]) => (await run(process.execPath, [BIN, "book", "fed-cut-2026-12", ...args], { env: env2 })).stdout;
    const record = JSON.parse(await book("--json", "--outcome", "NO", "--depth", "3")) as PriceRecord;
    expect(record).toMatchObject({ event_id: "fed-cut-2026-12", outcome: "NO", best_execution: { venue: expect.any(String) } });
    const venues = new Set(record.orderbook.asks.map((e) => e[2]));
    expect(record.orderbook.asks.length).toBeGreaterThan(0);
    expect(record.orderbook.asks.length).toBeLessThanOrEqual(3 * venues.size);
    const human = await book();
    expect(human).toMatch(/^fed-cut-2026-12 YES, updated \S+\nbid venue +size +bid \| +ask +size +ask venue\n(\S+-sim +[\d.]+ +0\.\d+ \| +0\.\d+ +[\d.]+ +\S+-sim\n)+/);
    expect(human).toMatch(/\nBest execution for a buy: \S+-sim at 0\.\d+, 0\.\d+ after fees\n/);
  });

  it("shows bids beside asks, best first, the spread and the best fee-adjusted execution; asks the API for the outcome, side and depth given", async () => {
    const record = {
      event_id: "fed-cut-2026-12",
      outcome: "NO",
      best_execution: { venue: "kalshi-sim", price: 0.47, fee_adjusted_price: 0.4548 },
      orderbook: { bids: [[0.46, 1250.5, "polymarket-sim"], [0.45, 80, "kalshi-sim"]], asks: [[0.48, 300, "limitless-sim"]] },
      spread: { best_bid: 0.46, best_ask: 0.48, spread: 0.02 },
      updated_at: "2026-12-06T12:00:00.000Z",
      stale_venues: ["opinion-sim"],
    };
    const asked: string[] = [];
    const api = createServer((req, res) => {
      asked.push(req.url!);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(record));
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    try {
      const env2 = { ...env(), CROSSFILL_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, CROSSFILL_API_KEY: "ck_live_x" };
      const book = async (...args: string[]) => (await run(process.execPath, [BIN, "book", "fed-cut-2026-12", ...args], { env: env2 })).stdout;
      expect(await book("--outcome", "NO", "--side", "sell", "--depth", "2")).toBe(
        [
          "fed-cut-2026-12 NO, updated 2026-12-06T12:00:00.000Z",
          "bid venue         size   bid |  ask  size  ask venue",
          "polymarket-sim  1250.5  0.46 | 0.48   300  limitless-sim",
          "kalshi-sim          80  0.45 |",
          "Spread 0.02 (best bid 0.46, best ask 0.48)",
          "Best execution for a sell: kalshi-sim at 0.47, 0.4548 after fees",
          "Left out, no fresh book (venue down or not connected, or its book too old): opinion-sim",
          "",
        ].join("\n"),
      );
      expect(JSON.parse(await book("--json"))).toEqual(record);
      expect(asked).toEqual(["/v1/prices/fed-cut-2026-12?outcome=NO&side=sell&depth=2", "/v1/prices/fed-cut-2026-12?outcome=YES&side=buy&depth=20"]);
    } finally {
      await new Promise((resolve) => api.close(resolve));
    }
  });

  it("refuses an outcome or depth the API does not take, exiting 2 without asking the server", async () => {
    const exit = async (...args: string[]) => {
      const r = await run(process.execPath, [BIN, "book", ...args], { env: { ...env(), CROSSFILL_URL: "http://127.0.0.1:9", CROSSFILL_API_KEY: "ck_live_x" } }).catch((e: { code: number; stderr: string }) => e);
      return [(r as { code: number }).code, (r as { stderr: string }).stderr.split("\n")[0]];
    };
    expect(await exit("fed-cut-2026-12", "--outcome", "yes")).toEqual([2, "error: option '--outcome <outcome>' argument 'yes' is invalid. Allowed choices are YES, NO."]);
    expect(await exit("fed-cut-2026-12", "--depth", "2.5")).toEqual([2, 'crossfill: --depth must be an integer from 1 to 500 (got "2.5")']);
  });
});

describe("crossfill against a CROSSFILL_URL that answers a web page", () => {
  it("says what came back from where, instead of crashing on it", async () => {
    const page = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<!doctype html><title>crossfill</title>"));
    await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}/base`;
    try {
      const failed = await run(process.execPath, [BIN, "activity"], { env: { ...env(), CROSSFILL_URL: url, CROSSFILL_API_KEY: "ck_live_x" } }).catch((e: { code: number; stderr: string }) => e);
      expect([(failed as { code: number }).code, (failed as { stderr: string }).stderr]).toEqual([
        2,
        `crossfill: not_json: GET ${url}/v1/activity?limit=50 answered 200 with text/html; charset=utf-8, not JSON: is ${url} the API's address?\n`,
      ]);
    } finally {
      await new Promise((resolve) => page.close(resolve));
    }
  });
});

describe("crossfill activity with more movements than one page", () => {
  it("gives the next page's cursor (next_cursor in --json, a command to run in words), and takes it with --cursor", async () => {
    const entry = (id: string) => ({ activity_id: id, type: "deposit", amount_usdc: 1.5, tx_hash: null, status: "credited", reference: id, address: null, created_at: "2026-12-01T00:00:00.000Z" });
    const asked: string[] = [];
    const api = createServer((req, res) => {
      asked.push(req.url!);
      const page = req.url!.includes("cursor=") ? { data: [entry("a2")], next_cursor: null } : { data: [entry("a1")], next_cursor: "WyJ0IiwiYTEiXQ" };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(page));
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    try {
      const env2 = { ...env(), CROSSFILL_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, CROSSFILL_API_KEY: "ck_live_x" };
      const out = async (...args: string[]) => (await run(process.execPath, [BIN, "activity", "--limit", "1", ...args], { env: env2 })).stdout;
      expect(JSON.parse(await out("--json"))).toEqual({ data: [entry("a1")], next_cursor: "WyJ0IiwiYTEiXQ" });
      expect(JSON.parse(await out("--json", "--cursor", "WyJ0IiwiYTEiXQ"))).toEqual({ data: [entry("a2")], next_cursor: null });
      expect((await out()).split("\n").slice(1)).toEqual(["More: crossfill activity --limit 1 --cursor WyJ0IiwiYTEiXQ", ""]);
      expect((await out("--cursor", "WyJ0IiwiYTEiXQ")).split("\n").slice(1)).toEqual([""]);
      expect(asked).toEqual(["/v1/activity?limit=1", "/v1/activity?limit=1&cursor=WyJ0IiwiYTEiXQ", "/v1/activity?limit=1", "/v1/activity?limit=1&cursor=WyJ0IiwiYTEiXQ"]);
    } finally {
      await new Promise((resolve) => api.close(resolve));
    }
  });
});

describe("crossfill activity --limit", () => {
  it("refuses a limit that is not digits alone, as book --depth does, exiting 2 without asking the server", async () => {
    const exit = async (limit: string) => {
      const r = await run(process.execPath, [BIN, "activity", "--limit", limit], { env: { ...env(), CROSSFILL_URL: "http://127.0.0.1:9", CROSSFILL_API_KEY: "ck_live_x" } }).catch((e: { code: number; stderr: string }) => e);
      return [(r as { code: number }).code, (r as { stderr: string }).stderr];
    };
    for (const limit of [" 5", "1e2", "0x10", "0", "501"]) {
      expect(await exit(limit)).toEqual([2, `crossfill: --limit must be an integer from 1 to 500 (got ${JSON.stringify(limit)})\n`]);
    }
  });
});

describe("crossfill order answered 202", () => {
  it("says what is pending, not that nothing was bought", async () => {
    let status = "routing";
    const order = () => ({ order_id: "ord_pending", status, side: "buy", outcome: "YES", filled_shares: 0, shares: null, spent_usdc: 0, fees_usdc: 0, proceeds_usdc: null, executed_price: null, tx_hash: null });
    const api = createServer((_req, res) => res.writeHead(202, { "content-type": "application/json" }).end(JSON.stringify(order())));
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    try {
      const env2 = { ...env(), CROSSFILL_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, CROSSFILL_API_KEY: "ck_live_x", CROSSFILL_API_SECRET: "cs_live_x" };
      const answered = async () => (await run(process.execPath, [BIN, "order", "fed-cut-2026-12", "YES", "--amount", "5"], { env: env2 })).stdout;
      expect(await answered()).toBe("Order ord_pending routing: a venue's answer is not known yet; the order is reconciled, never guessed (GET /v1/orders/ord_pending).\n");
      // a lock whose answer was lost (left to recovery), and a retry by client_order_id of an order not routed yet
      status = "pending";
      expect(await answered()).toBe("Order ord_pending pending: its lock on the chain is not known yet; the order is reconciled, never guessed (GET /v1/orders/ord_pending).\n");
      status = "locked";
      expect(await answered()).toBe("Order ord_pending locked: it is not routed yet; the order is reconciled, never guessed (GET /v1/orders/ord_pending).\n");
    } finally {
      await new Promise((resolve) => api.close(resolve));
    }
  });
});

describe("crossfill order and withdraw refused for a field", () => {
  it("name the option or argument to fix, not the API's field", async () => {
    if (!server) await start();
    const made = JSON.parse(await cli("keys", "create", "--name", "fields", "--scopes", "read,trade,withdraw", "--json")) as { api_key: string; api_secret: string };
    const env2 = { ...env(), CROSSFILL_URL: server!.url, CROSSFILL_API_KEY: made.api_key, CROSSFILL_API_SECRET: made.api_secret };
    const refused = async (...args: string[]) => {
      const failed = (await run(process.execPath, [BIN, ...args], { env: env2 }).catch((e: unknown) => e)) as { code: number; stderr: string };
      return [failed.code, failed.stderr];
    };
    expect(await refused("order", "fed-cut-2026-12", "YES", "--shares", "5")).toEqual([
      2,
      "crossfill: invalid_request: Invalid order: --amount is required; --shares is taken only by a sell: a buy sends --amount.\n",
    ]);
    expect(await refused("order", "fed-cut-2026-12", "maybe", "--amount", "5", "--slippage", "1", "--tif", "GTC")).toEqual([
      2,
      "crossfill: invalid_request: Invalid order: <outcome> must be one of YES, NO; --tif must be one of FOK, IOC; --slippage must be a fraction between 0 and 0.5.\n",
    ]);
    // what was sent is quoted as sent, even when it spells a field's name
    expect(await refused("order", "fed-cut-2026-12", "YES", "--amount", "shares", "--slippage", "max_slippage")).toEqual([
      2,
      'crossfill: invalid_request: Invalid order: --amount must be a plain non-negative decimal (got "shares"); --slippage must be a plain non-negative decimal (got "max_slippage").\n',
    ]);
    expect(await refused("withdraw", "1.0000001", "0xabc")).toEqual([
      2,
      "crossfill: invalid_request: Invalid withdrawal: <amount> has more than 6 decimal places; <to> must be a 0x address of 40 hex digits.\n",
    ]);
  }, 180_000);
});

describe("crossfill answered an error on the server's side", () => {
  it("prints the request id to quote to support with it", async () => {
    const body = { error: { code: "internal", message: "Something went wrong on our side.", request_id: "req_7f3a" } };
    const api = createServer((_req, res) => res.writeHead(500, { "content-type": "application/json", "x-request-id": "req_7f3a" }).end(JSON.stringify(body)));
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
      const failed = await run(process.execPath, [BIN, "activity"], { env: { ...env(), CROSSFILL_URL: url, CROSSFILL_API_KEY: "ck_live_x" } }).catch((e: { code: number; stderr: string }) => e);
      expect([(failed as { code: number }).code, (failed as { stderr: string }).stderr]).toEqual([2, "crossfill: internal: Something went wrong on our side. (request_id req_7f3a)\n"]);
    } finally {
      await new Promise((resolve) => api.close(resolve));
    }
  });
});

describe("crossfill answered an error whose words hold control characters or escape sequences", () => {
  it("prints each as its \\u escape, as it prints a key's name, so that the answer cannot clear the screen, forge a line or reverse the rest of it", async () => {
    const body = { error: { code: "internal\u001b[2J", message: "Gone\u001b]0;pwned\u0007 \u202eatad\r\nnext", request_id: "req\u001b[31m" } };
    const api = createServer((_req, res) => res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify(body)));
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
      const failed = await run(process.execPath, [BIN, "activity"], { env: { ...env(), CROSSFILL_URL: url, CROSSFILL_API_KEY: "ck_live_x" } }).catch((e: { code: number; stderr: string }) => e);
      expect([(failed as { code: number }).code, (failed as { stderr: string }).stderr]).toEqual([
        2,
        "crossfill: internal\\u001b[2J: Gone\\u001b]0;pwned\\u0007 \\u202eatad next (request_id req\\u001b[31m)\n",
      ]);
    } finally {
      await new Promise((resolve) => api.close(resolve));
    }
  });
});

describe("crossfill order or withdraw whose connection drops after it was sent", () => {
  it("says the order may have been placed, with the client_order_id it was sent with to send it again, placed once", async () => {
    const bodies: string[] = [];
    // reads the order, then closes the connection without an answer: a server killed mid-request
    const api = createServer((req, _res) => {
      let body = "";
      req.on("data", (d: Buffer) => (body += d));
      req.on("end", () => {
        bodies.push(body);
        req.socket.destroy();
      });
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    try {
      const env2 = { ...env(), CROSSFILL_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, CROSSFILL_API_KEY: "ck_live_x", CROSSFILL_API_SECRET: "cs_live_x" };
      const failed = await run(process.execPath, [BIN, "order", "fed-cut-2026-12", "YES", "--amount", "5"], { env: env2 }).catch((e: { code: number; stderr: string }) => e);
      const sent = (JSON.parse(bodies[0]!) as { client_order_id: string }).client_order_id;
      expect(sent).toMatch(/^cli-[0-9a-f-]{36}$/);
      expect([(failed as { code: number }).code, (failed as { stderr: string }).stderr]).toEqual([
        2,
        `crossfill: the server did not answer (other side closed); is it running? (CROSSFILL_URL). The order may have been placed: send it again with --client-order-id ${sent} to get it, placed once\n`,
      ]);
    } finally {
      await new Promise((resolve) => api.close(resolve));
    }
  });

  it("says the same of a withdrawal, with its --client-id", async () => {
    const bodies: string[] = [];
    const api = createServer((req) => {
      let body = "";
      req.on("data", (d: Buffer) => (body += d));
      req.on("end", () => (bodies.push(body), req.socket.destroy()));
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    try {
      const env2 = { ...env(), CROSSFILL_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, CROSSFILL_API_KEY: "ck_live_x", CROSSFILL_API_SECRET: "cs_live_x" };
      const failed = await run(process.execPath, [BIN, "withdraw", "25.5", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"], { env: env2 }).catch((e: { code: number; stderr: string }) => e);
      const sent = (JSON.parse(bodies[0]!) as { client_withdrawal_id: string }).client_withdrawal_id;
      expect(sent).toMatch(/^cli-[0-9a-f-]{36}$/);
      expect([(failed as { code: number }).code, (failed as { stderr: string }).stderr]).toEqual([
        2,
        `crossfill: the server did not answer (other side closed); is it running? (CROSSFILL_URL). The withdrawal may have been paid: send it again with --client-id ${sent} to get it, paid once\n`,
      ]);
    } finally {
      await new Promise((resolve) => api.close(resolve));
    }
  });

  it("says so too when a proxy answers that the server did not answer in time (504), and not when the server refused the order", async () => {
    let answer = (res: ServerResponse) => res.writeHead(504, { "content-type": "text/plain" }).end("Gateway Timeout");
    const api = createServer((req, res) => req.resume().on("end", () => answer(res)));
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    try {
      const env2 = { ...env(), CROSSFILL_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, CROSSFILL_API_KEY: "ck_live_x", CROSSFILL_API_SECRET: "cs_live_x" };
      const stderr = async (...args: string[]) => ((await run(process.execPath, [BIN, "order", "fed-cut-2026-12", "YES", "--amount", "5", ...args], { env: env2 }).catch((e: { stderr: string }) => e)) as { stderr: string }).stderr;
      expect(await stderr("--client-order-id", "mine-1")).toBe("crossfill: http_504: Gateway Timeout. The order may have been placed: send it again with --client-order-id mine-1 to get it, placed once\n");
      answer = (res) => res.writeHead(422, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "insufficient_funds", message: "Not enough USDC.", request_id: "r" } }));
      expect(await stderr("--client-order-id", "mine-1")).toBe("crossfill: insufficient_funds: Not enough USDC.\n");
      // the server's own 502 for an order that ended failed, its lock released: nothing was placed
      const failed = { code: "all_venues_failed", message: "Every venue refused or failed the order; the funds were released.", details: { order_id: "ord_f", status: "failed" }, request_id: "r" };
      answer = (res) => res.writeHead(502, { "content-type": "application/json" }).end(JSON.stringify({ error: failed }));
      expect(await stderr("--client-order-id", "mine-1")).toBe("crossfill: all_venues_failed: Every venue refused or failed the order; the funds were released. (request_id r)\n");
    } finally {
      await new Promise((resolve) => api.close(resolve));
    }
  }, 120_000);
});

describe("crossfill against a server that takes the request and never answers", () => {
  it("gives up after CROSSFILL_TIMEOUT_MS (30 s unless set) and says so; of an order or withdrawal, that it may have been done, with the client id to send it again with", async () => {
    const api = createServer((req) => req.resume());
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    try {
      const env2 = { ...env(), CROSSFILL_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, CROSSFILL_API_KEY: "ck_live_x", CROSSFILL_API_SECRET: "cs_live_x", CROSSFILL_TIMEOUT_MS: "500" };
      const fails = async (args: string[], extra: Record<string, string> = {}) => {
        const failed = await run(process.execPath, [BIN, ...args], { env: { ...env2, ...extra }, timeout: 20_000 }).catch((e: { code: number; stderr: string }) => e);
        return [(failed as { code: number }).code, (failed as { stderr: string }).stderr];
      };
      const waited = "crossfill: the server did not answer within 0.5 s (CROSSFILL_TIMEOUT_MS sets how long to wait)";
      expect(await fails(["activity"])).toEqual([2, `${waited}\n`]);
      expect(await fails(["order", "fed-cut-2026-12", "YES", "--amount", "5", "--client-order-id", "mine-1"])).toEqual([
        2,
        `${waited}. The order may have been placed: send it again with --client-order-id mine-1 to get it, placed once\n`,
      ]);
      expect(await fails(["withdraw", "25.5", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "--client-id", "mine-2"])).toEqual([
        2,
        `${waited}. The withdrawal may have been paid: send it again with --client-id mine-2 to get it, paid once\n`,
      ]);
      for (const bad of ["0", "30s", "2147483648"]) {
        expect(await fails(["activity"], { CROSSFILL_TIMEOUT_MS: bad })).toEqual([2, `crossfill: CROSSFILL_TIMEOUT_MS must be the milliseconds to wait for the server, an integer from 1 to 2147483647 (got ${JSON.stringify(bad)})\n`]);
      }
    } finally {
      api.closeAllConnections();
      await new Promise((resolve) => api.close(resolve));
    }
  });
});

describe("crossfill behind a proxy whose server is down", () => {
  it("prints the proxy's error page on one line", async () => {
    const page = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n";
    const proxy = createServer((_req, res) => res.writeHead(502, { "content-type": "text/html" }).end(page));
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const failed = await run(process.execPath, [BIN, "activity"], { env: { ...env(), CROSSFILL_URL: url, CROSSFILL_API_KEY: "ck_live_x" } }).catch((e: { code: number; stderr: string }) => e);
      expect([(failed as { code: number }).code, (failed as { stderr: string }).stderr]).toEqual([
        2,
        "crossfill: http_502: <html> <head><title>502 Bad Gateway</title></head> <body> <center><h1>502 Bad Gateway</h1></center> </body> </html>\n",
      ]);
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});

describe("crossfill against a CROSSFILL_URL without its scheme, or that is no URL", () => {
  it("says what is wrong with the setting, instead of that the server did not answer", async () => {
    for (const url of ["127.0.0.1:8080", "localhost:8080", "ftp://127.0.0.1:8080", "http://127.0.0.1:8080 ", "http://:8080", "http://[::1:8080"]) {
      const failed = await run(process.execPath, [BIN, "activity"], { env: { ...env(), CROSSFILL_URL: url, CROSSFILL_API_KEY: "ck_live_x" } }).catch((e: { code: number; stderr: string }) => e);
      expect([(failed as { code: number }).code, (failed as { stderr: string }).stderr]).toEqual([
        2,
        `crossfill: CROSSFILL_URL must be the server's http:// or https:// address, like http://127.0.0.1:8080 (got ${JSON.stringify(url)})\n`,
      ]);
    }
  });
});

describe("crossfill against a CROSSFILL_URL with a query or fragment", () => {
  it("refuses the setting, instead of sending every request to its path with the route in the query or fragment", async () => {
    for (const url of ["http://127.0.0.1:8080/?token=x", "http://127.0.0.1:8080/api#v1", "http://127.0.0.1:8080?", "http://127.0.0.1:8080/#"]) {
      const failed = await run(process.execPath, [BIN, "activity"], { env: { ...env(), CROSSFILL_URL: url, CROSSFILL_API_KEY: "ck_live_x" } }).catch((e: { code: number; stderr: string }) => e);
      expect([(failed as { code: number }).code, (failed as { stderr: string }).stderr]).toEqual([
        2,
        `crossfill: CROSSFILL_URL must be the server's address without a query or fragment, like http://127.0.0.1:8080 (got ${JSON.stringify(url)})\n`,
      ]);
    }
  }, 180_000);
});

describe("crossfill when its request is not sent, or no server answers it", () => {
  it("says what refused the request here, and that the server did not answer only when no connection was made", async () => {
    const fails = async (extra: Record<string, string>) => {
      const failed = await run(process.execPath, [BIN, "activity"], { env: { ...env(), CROSSFILL_API_KEY: "ck_live_x", ...extra } }).catch((e: { code: number; stderr: string }) => e);
      return [(failed as { code: number }).code, (failed as { stderr: string }).stderr];
    };
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await fails({ CROSSFILL_URL: `http://127.0.0.1:${port}`, CROSSFILL_API_KEY: "ck_live_\u20ac" })).toEqual([
      2,
      "crossfill: the request could not be sent (Cannot convert argument to a ByteString because the character at index 8 has a value of 8364 which is greater than 255.)\n",
    ]);
    // a port fetch never connects to
    expect(await fails({ CROSSFILL_URL: "http://127.0.0.1:6000" })).toEqual([2, "crossfill: the request could not be sent (fetch failed: bad port)\n"]);
    expect(await fails({ CROSSFILL_URL: `http://127.0.0.1:${port}` })).toEqual([2, `crossfill: the server did not answer (connect ECONNREFUSED 127.0.0.1:${port}); is it running? (CROSSFILL_URL)\n`]);
  });
});

describe("crossfill against a CROSSFILL_URL whose TLS handshake fails", () => {
  it("names the TLS failure, instead of saying that the server did not answer", async () => {
    const hint = "is CROSSFILL_URL's scheme the server's, and its certificate trusted here (NODE_EXTRA_CA_CERTS)?";
    // a certificate no CA signed, valid from 2000 to 9999
    const fixture = (name: string) => readFileSync(fileURLToPath(new URL(`../fixtures/tls/${name}`, import.meta.url)));
    const tls = createHttpsServer({ key: fixture("self-signed.key"), cert: fixture("self-signed.crt") }, (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
    const plain = createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
    for (const s of [tls, plain]) await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
    try {
      const fails = async (port: number) => {
        const failed = await run(process.execPath, [BIN, "activity"], { env: { ...env(), CROSSFILL_URL: `https://127.0.0.1:${port}`, CROSSFILL_API_KEY: "ck_live_x" } }).catch((e: { code: number; stderr: string }) => e);
        return [(failed as { code: number }).code, (failed as { stderr: string }).stderr];
      };
      expect(await fails((tls.address() as AddressInfo).port)).toEqual([2, `crossfill: the TLS handshake with the server failed (self-signed certificate, DEPTH_ZERO_SELF_SIGNED_CERT): ${hint}\n`]);
      // https:// to a server that speaks plain HTTP
      expect(await fails((plain.address() as AddressInfo).port)).toEqual([2, `crossfill: the TLS handshake with the server failed (wrong version number, ERR_SSL_WRONG_VERSION_NUMBER): ${hint}\n`]);
    } finally {
      for (const s of [tls, plain]) await new Promise((resolve) => s.close(resolve));
    }
  });
});

describe("crossfill against a CROSSFILL_URL that carries a password", () => {
  it("refuses the setting without printing the password", async () => {
    const failed = await run(process.execPath, [BIN, "activity"], { env: { ...env(), CROSSFILL_URL: "http://me:s3cret@127.0.0.1:8080", CROSSFILL_API_KEY: "ck_live_x" } }).catch((e: { code: number; stderr: string }) => e);
    expect([(failed as { code: number }).code, (failed as { stderr: string }).stderr]).toEqual([
      2,
      "crossfill: CROSSFILL_URL must not carry a user name or password (the API takes its key in CROSSFILL_API_KEY); it is not printed here\n",
    ]);
  });
});

describe("crossfill run on a store that is not there (another directory, a DATA_DIR misspelt)", () => {
  it("says where it looked and which settings name the store, exits 2 (audit: could not audit), and makes nothing there", async () => {
    const elsewhere = join(dataDir, "elsewhere", "data");
    for (const args of [["keys", "list"], ["audit"]]) {
      const failed = await run(process.execPath, [BIN, ...args], { env: { ...env(), DATA_DIR: elsewhere } }).catch((e: { code: number; stdout: string; stderr: string }) => e);
      expect([(failed as { code: number }).code, (failed as { stdout: string }).stdout, (failed as { stderr: string }).stderr]).toEqual([
        2,
        "",
        `crossfill: no crossfill database at ${join(elsewhere, "crossfill.db")}: set DATA_DIR to the server's data directory (or DATABASE_URL to its PostgreSQL database); the server makes it at its first start (crossfill serve, npm start)\n`,
      ]);
    }
    expect(existsSync(join(dataDir, "elsewhere"))).toBe(false);
  });
});

describe("crossfill keys revoke and events reject of something that is not there", () => {
  it("says so on stderr, not as an answer on stdout, and exits 1", async () => {
    for (const args of [["keys", "revoke", "ck_live_none"], ["events", "reject", "prop_none"]]) {
      const failed = await run(process.execPath, [BIN, ...args], { env: env() }).catch((e: { code: number; stdout: string; stderr: string }) => e);
      expect([(failed as { code: number }).code, (failed as { stdout: string }).stdout, (failed as { stderr: string }).stderr]).toEqual([
        1,
        "",
        args[0] === "keys" ? "crossfill: no active key ck_live_none\n" : "crossfill: no undecided proposal prop_none\n",
      ]);
    }
  });
});

describe("crossfill chain --port that is no port", () => {
  it("refuses it, instead of taking an empty or blank value as port 0 and running the chain on a port nobody asked for", async () => {
    for (const port of ["", " "]) {
      const failed = await run(process.execPath, [BIN, "chain", "--port", port], { env: env(), timeout: 20_000 }).catch((e: { code: number; stdout: string; stderr: string }) => e);
      expect([(failed as { code: number }).code, (failed as { stdout: string }).stdout, (failed as { stderr: string }).stderr]).toEqual([
        2,
        "",
        `crossfill: --port must be an integer from 0 to 65535 (got ${JSON.stringify(port)})\n`,
      ]);
    }
  });
});

describe("crossfill sim --port-base that is not digits alone", () => {
  it("refuses it, as chain --port does, instead of reading 0x2000 or \" 9000\" as JavaScript's Number() does and listening on ports nobody typed", async () => {
    for (const portBase of ["0x2000", " 9000"]) {
      const failed = await run(process.execPath, [BIN, "sim", "--port-base", portBase], { env: env(), timeout: 20_000 }).catch((e: { code: number; stdout: string; stderr: string }) => e);
      expect([(failed as { code: number }).code, (failed as { stdout: string }).stdout, (failed as { stderr: string }).stderr]).toEqual([
        2,
        "",
        `crossfill: --port-base must be an integer from 1 to 65532 (got ${JSON.stringify(portBase)})\n`,
      ]);
    }
  });
});

describe("crossfill piped into a reader that stops reading (| head -1)", () => {
  it("stops quietly, not with an EPIPE stack trace", async () => {
    const child = spawn(process.execPath, [BIN, "events", "list"], { env: env() });
    // closed before the command writes its first line
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect([code, stderr]).toEqual([0, ""]);
  });
});

describe("crossfill called wrongly (an unknown option, a missing argument)", () => {
  it("exits 2 as its other refusals do, not 1, which crossfill audit gives for violated invariants", async () => {
    const exit = async (...args: string[]) => {
      const r = await run(process.execPath, [BIN, ...args], { env: env() }).then(() => ({ code: 0, stderr: "" }), (e: { code: number; stderr: string }) => e);
      return [r.code, r.stderr.split("\n")[0]];
    };
    expect(await exit("audit", "--jsonn")).toEqual([2, "error: unknown option '--jsonn'"]);
    expect(await exit("order", "fed-cut-2026-12")).toEqual([2, "error: missing required argument 'outcome'"]);
    expect(await exit("keys")).toEqual([2, "Usage: crossfill keys [options] [command]"]);
    expect(await exit("--help")).toEqual([0, ""]);
    expect(await exit("--version")).toEqual([0, ""]);
  });
});

describe("crossfill where dist/ was not built", () => {
  it("says to build it, instead of a stack trace", async () => {
    const tree = mkdtempSync(join(tmpdir(), "crossfill-unbuilt-"));
    try {
      mkdirSync(join(tree, "bin"));
      copyFileSync(BIN, join(tree, "bin", "crossfill.mjs"));
      const unbuilt: NodeJS.ProcessEnv = env();
      delete unbuilt.CROSSFILL_FROM_SOURCE;
      const failed = await run(process.execPath, [join(tree, "bin", "crossfill.mjs"), "keys", "list"], { env: unbuilt }).catch((e: { code: number; stdout: string; stderr: string }) => e);
      expect([(failed as { code: number }).code, (failed as { stdout: string }).stdout, (failed as { stderr: string }).stderr]).toEqual([
        2,
        "",
        "crossfill: dist/ is not built: run npm run build (npm ci runs it)\n",
      ]);
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });
});

describe("crossfill accounts password", () => {
  it("lets the CLI's account sign in to the web terminal", async () => {
    const set = await withStdin("correct horse battery\n", "accounts", "password");
    expect(set).toMatchObject({ code: 0 });
    const signin = await fetch(`${server!.url}/v1/session/signin`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "local@localhost", password: "correct horse battery" }),
    });
    expect(signin.status).toBe(200);
    expect(((await signin.json()) as { email: string }).email).toBe("local@localhost");
  });

  it("refuses a password that is too short, and changes nothing", async () => {
    const set = await withStdin("short\n", "accounts", "password");
    expect(set.code).toBe(2);
    expect(set.out).toMatch(/8 to 256 characters/);
  });

  it("counts a password's characters as the terminal's sign-in does, an emoji one: 4 emoji are too short to sign in with, 200 are not too long", async () => {
    const short = await withStdin(`${"😀".repeat(4)}\n`, "accounts", "password", "--account", "emoji@example.com");
    expect([short.code, short.out]).toEqual([2, "crossfill: the password must be 8 to 256 characters\n"]);
    const long = await withStdin(`${"😀".repeat(200)}\n`, "accounts", "password", "--account", "emoji@example.com");
    expect([long.code, long.out]).toEqual([0, "emoji@example.com can now sign in to the web terminal with that password.\n"]);
  });
});
