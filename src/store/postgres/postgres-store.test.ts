import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/helpers/postgres.ts";
import { systemClock } from "../../domain/types.ts";
import { KyselyStore } from "../kysely-store.ts";
import { MIGRATIONS } from "../migrations/migrate.ts";
import type { Database } from "../rows.ts";
import type { Store } from "../store.ts";
import { openPostgresStore } from "./postgres-store.ts";

// What only PostgreSQL has to show; the Store port's behaviour is tested on every backend in ../store.test.ts.

let db: TestDatabase;
const open: Store[] = [];

beforeEach(async () => {
  db = await createTestDatabase();
});

afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
  await db.drop();
});

async function query<R extends pg.QueryResultRow>(text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

describe("PostgreSQL store", () => {
  it("migrates a fresh database once when several instances start together", async () => {
    const instances = await Promise.all(Array.from({ length: 8 }, () => openPostgresStore(db.url)));
    open.push(...instances);
    await Promise.all(instances.map((s) => s.migrate()));

    const applied = await query<{ name: string }>("SELECT name FROM kysely_migration ORDER BY name");
    expect(applied.map((r) => r.name)).toEqual(Object.keys(MIGRATIONS).sort());
    // Every instance sees the one schema: what one writes, another reads.
    await instances[0]!.createAccount({ id: "acc_1", email: "a@example.com", address: "0x1", walletKeyEnc: null, passwordHash: null, fundedAt: null });
    expect((await instances[7]!.accountById("acc_1"))?.email).toBe("a@example.com");
  });

  it("stores every number as int8, the 64-bit integer that comes back as a bigint", async () => {
    const store = await openPostgresStore(db.url);
    open.push(store);
    await store.migrate();
    const columns = await query<{ column: string; data_type: string }>(
      "SELECT table_name || '.' || column_name AS column, data_type FROM information_schema.columns WHERE table_schema = 'public' AND table_name NOT LIKE 'kysely%' AND data_type <> 'text'",
    );
    expect(columns.map((c) => c.column)).toContain("orders.amount");
    expect(columns.filter((c) => c.data_type !== "bigint")).toEqual([]);
  });

  it("revokes a key in the transaction that tells the other instances: a notification the server refuses leaves the key as it was", async () => {
    // The notification of a revocation, refused by the server (its payload too long) as a lost connection would fail it.
    const refused = { version: () => 0, announce: (db: Kysely<Database>) => sql`SELECT pg_notify('crossfill_api_keys', ${"x".repeat(8_000)})`.execute(db).then(() => undefined), close: async () => undefined };
    const store = new KyselyStore(new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: db.url }) }) }), systemClock, refused);
    open.push(store);
    await store.migrate();
    await store.createAccount({ id: "acc_1", email: "a@example.com", address: "0x1", walletKeyEnc: null, passwordHash: null, fundedAt: null });
    await store.insertApiKey({ apiKey: "ck_1", accountId: "acc_1", name: "bot", scopes: ["read"], secretEnc: "enc", ipAllowlist: null });
    await expect(store.revokeApiKey("ck_1", "2025-03-02T00:00:00.000Z")).rejects.toThrow(/payload string too long/);
    // The client is told it failed and may send it again; no instance was told of a revocation, and none was made.
    expect((await store.apiKey("ck_1"))?.revokedAt).toBeNull();
  });

  it("says why when the server cannot be reached", async () => {
    const store = await openPostgresStore("postgres://postgres@127.0.0.1:1/none");
    open.push(store);
    await expect(store.migrate()).rejects.toThrow(/database migrations could not run: .*ECONNREFUSED/);
  });
});
