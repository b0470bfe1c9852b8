import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditReport } from "../../src/audit/run.ts";
import { loadConfig } from "../../src/config.ts";
import { startCrossfill } from "../../src/main.ts";
import { CrossfillClient } from "../../src/sdk/client.ts";
import { openPostgresStore } from "../../src/store/postgres/postgres-store.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.ts";

// The server's run on PostgreSQL is the integration suite's second run (vitest.postgres.config.ts); this
// file is the CLI's: its commands open the store DATABASE_URL names, not the SQLite file in DATA_DIR.

const run = promisify(execFile);
const BIN = fileURLToPath(new URL("../../bin/crossfill.mjs", import.meta.url));

let dataDir: string;
let db: TestDatabase;
const settings = () => ({ DATA_DIR: dataDir, DATABASE_URL: db.url, SIM_LATENCY_SCALE: "0.05" });
const cli = async (...args: string[]) => (await run(process.execPath, [BIN, ...args], { env: { ...process.env, ...settings(), LOG_LEVEL: "silent" }, timeout: 60_000 })).stdout;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "crossfill-database-url-"));
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("DATABASE_URL", () => {
  it("crossfill keys create writes to PostgreSQL, the server on it accepts the key, and crossfill audit reads its orders there", async () => {
    const server = await startCrossfill(loadConfig({ ...settings(), PORT: "0" }), { logger: false });
    try {
      const made = JSON.parse(await cli("keys", "create", "--name", "bot", "--scopes", "read,trade", "--json")) as { api_key: string; api_secret: string };
      const client = new CrossfillClient({ baseUrl: server.url, apiKey: made.api_key, apiSecret: made.api_secret });
      expect(await client.account()).toMatchObject({ email: "local@localhost", available_usdc: 10_000 });
      const order = await client.order({ market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 25, max_slippage: 0.05, strategy: "optimize_price" });
      // Routed, filled and settled on PostgreSQL (the simulators' books may fill a part of it).
      expect(order.status).toMatch(/^(partially_)?filled$/);

      const listed = JSON.parse(await cli("keys", "list", "--json")) as { api_key: string }[];
      expect(listed.map((k) => k.api_key)).toEqual([made.api_key]);
      const report = JSON.parse(await cli("audit", "--json")) as AuditReport;
      expect(report.ok).toBe(true);
    } finally {
      await server.stop();
    }
    expect(existsSync(join(dataDir, "crossfill.db"))).toBe(false);
  }, 240_000);
});

describe("DATABASE_URL with a DATA_DIR that holds no master key (the CLI run from another directory)", () => {
  it("crossfill keys create and accounts password refuse, naming where they looked, instead of sealing secrets under a new key the server cannot open", async () => {
    const elsewhere = join(dataDir, "elsewhere");
    const withoutKey = { ...process.env, ...settings(), DATA_DIR: elsewhere, LOG_LEVEL: "silent" };
    const before = await cli("keys", "list", "--account", "desk@example.com", "--json");
    for (const args of [["keys", "create", "--name", "bot", "--account", "desk@example.com"], ["accounts", "password", "--account", "desk@example.com"]]) {
      const running = run(process.execPath, [BIN, ...args], { env: withoutKey, timeout: 60_000 });
      // accounts password reads the password first
      running.child.stdin!.end("correct horse battery\n");
      const failed = await running.catch((e: { code: number; stdout: string; stderr: string }) => e);
      expect([(failed as { code: number }).code, (failed as { stdout: string }).stdout, (failed as { stderr: string }).stderr]).toEqual([
        2,
        "",
        `crossfill: no master key at ${join(elsewhere, "master.key")}: set DATA_DIR to the server's data directory, or MASTER_KEY to the server's; the server makes the file at its first start (crossfill serve, npm start)\n`,
      ]);
    }
    expect(existsSync(elsewhere)).toBe(false);
    expect(await cli("keys", "list", "--account", "desk@example.com", "--json")).toBe(before);
  }, 240_000);
});

describe("DATABASE_URL naming a database without crossfill's tables (another database, a name misspelt)", () => {
  it("the CLI's store commands say where they looked and exit 2, and make no table there", async () => {
    const empty = await createTestDatabase();
    try {
      const env = { ...process.env, ...settings(), DATABASE_URL: empty.url, LOG_LEVEL: "silent" };
      const url = new URL(empty.url);
      for (const args of [["keys", "list"], ["keys", "create", "--name", "bot"], ["events", "list"], ["audit"]]) {
        const failed = await run(process.execPath, [BIN, ...args], { env, timeout: 60_000 }).catch((e: { code: number; stdout: string; stderr: string }) => e);
        expect([(failed as { code: number }).code, (failed as { stdout: string }).stdout, (failed as { stderr: string }).stderr]).toEqual([
          2,
          "",
          `crossfill: no crossfill database at postgres://${url.host}${url.pathname}: set DATABASE_URL to the server's PostgreSQL database (or unset it, and set DATA_DIR to the server's data directory); the server makes its tables at its first start (crossfill serve, npm start)\n`,
        ]);
      }
      const store = await openPostgresStore(empty.url);
      try {
        expect(await store.made()).toBe(false);
      } finally {
        await store.close();
      }
    } finally {
      await empty.drop();
    }
  }, 240_000);
});

describe("DATABASE_URL naming another application's database that Kysely migrates too", () => {
  it("the CLI's store commands refuse it as a database without crossfill's tables, and make none there", async () => {
    const other = await createTestDatabase();
    try {
      const sqlOn = async (statement: string) => {
        const client = new pg.Client({ connectionString: other.url });
        await client.connect();
        try {
          return (await client.query(statement)).rows as Record<string, unknown>[];
        } finally {
          await client.end();
        }
      };
      const env = { ...process.env, ...settings(), DATABASE_URL: other.url, LOG_LEVEL: "silent" };
      const url = new URL(other.url);
      const refusal = `crossfill: no crossfill database at postgres://${url.host}${url.pathname}: set DATABASE_URL to the server's PostgreSQL database (or unset it, and set DATA_DIR to the server's data directory); the server makes its tables at its first start (crossfill serve, npm start)\n`;
      // its migrations in a schema of its own, then in the public schema crossfill's tables go to
      for (const schema of ["billing", "public"]) {
        await sqlOn(`CREATE SCHEMA IF NOT EXISTS ${schema}; CREATE TABLE ${schema}.kysely_migration (name varchar(255) PRIMARY KEY, timestamp varchar(255) NOT NULL); INSERT INTO ${schema}.kysely_migration VALUES ('2024_01_invoices', '2024-01-01T00:00:00.000Z')`);
        const failed = await run(process.execPath, [BIN, "keys", "list"], { env, timeout: 60_000 }).catch((e: { code: number; stdout: string; stderr: string }) => e);
        expect([(failed as { code: number }).code, (failed as { stdout: string }).stdout, (failed as { stderr: string }).stderr], schema).toEqual([2, "", refusal]);
        expect(await sqlOn("SELECT table_schema || '.' || table_name AS t FROM information_schema.tables WHERE table_name IN ('accounts', 'orders', 'kysely_migration') ORDER BY 1")).toEqual(
          schema === "billing" ? [{ t: "billing.kysely_migration" }] : [{ t: "billing.kysely_migration" }, { t: "public.kysely_migration" }],
        );
      }
    } finally {
      await other.drop();
    }
  }, 240_000);
});

describe("crossfill audit with DATABASE_URL and a DATA_DIR that holds no chain (run from another directory)", () => {
  it("refuses, naming where it looked, instead of starting a new, empty dev chain and auditing the store against it", async () => {
    const migrated = await createTestDatabase();
    try {
      const store = await openPostgresStore(migrated.url);
      await store.migrate();
      await store.close();
      const elsewhere = join(dataDir, "no-chain-here");
      const env = { ...process.env, ...settings(), DATABASE_URL: migrated.url, DATA_DIR: elsewhere, LOG_LEVEL: "silent" };
      const failed = await run(process.execPath, [BIN, "audit", "--json"], { env, timeout: 120_000 }).then(
        (done) => ({ code: 0, stdout: done.stdout, stderr: done.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
      expect([failed.code, failed.stdout, failed.stderr]).toEqual([
        2,
        "",
        `crossfill: no dev chain at ${join(elsewhere, "chain")}: set DATA_DIR to the server's data directory, or CHAIN_RPC_URL and OPERATOR_PRIVATE_KEY to the chain it uses; the server makes its dev chain at its first start (crossfill serve, npm start)\n`,
      ]);
      expect(existsSync(elsewhere)).toBe(false);
    } finally {
      await migrated.drop();
    }
  }, 240_000);
});
