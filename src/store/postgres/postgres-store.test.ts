import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/helpers/postgres.ts";
import { MIGRATIONS } from "../migrations/migrate.ts";
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

  it("says why when the server cannot be reached", async () => {
    const store = await openPostgresStore("postgres://postgres@127.0.0.1:1/none");
    open.push(store);
    await expect(store.migrate()).rejects.toThrow(/database migrations could not run: .*ECONNREFUSED/);
  });
});
