import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Clock } from "../../src/domain/types.ts";
import { openPostgresStore } from "../../src/store/postgres/postgres-store.ts";
import { openSqliteStore } from "../../src/store/sqlite/sqlite-store.ts";
import type { Store } from "../../src/store/store.ts";
import { createTestDatabase } from "./postgres.ts";

/** A fresh, empty database of one backend. */
export interface TestStoreDatabase {
  /** A new store on this database: call it twice for two connections, again after a close for a restart. Not migrated. */
  open(clock?: Clock): Promise<Store>;
  /** Removes the database. Close its stores first. */
  drop(): Promise<void>;
}

/** Every backend of the Store port, for store tests written once and run on each (`describe.each`). */
export const STORE_BACKENDS: { name: string; create(): Promise<TestStoreDatabase> }[] = [
  {
    name: "SQLite",
    async create() {
      const dataDir = mkdtempSync(join(tmpdir(), "crossfill-store-"));
      return {
        open: (clock) => openSqliteStore(join(dataDir, "crossfill.db"), clock),
        drop: async () => rmSync(dataDir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: "PostgreSQL",
    async create() {
      const db = await createTestDatabase();
      return { open: (clock) => openPostgresStore(db.url, { clock }), drop: db.drop };
    },
  },
];
