import { join } from "node:path";
import { openPostgresStore, type PostgresStoreOptions } from "./postgres/postgres-store.ts";
import { openSqliteStore, type SqliteStoreOptions } from "./sqlite/sqlite-store.ts";
import type { Store } from "./store.ts";

/** Where the configuration keeps the data: PostgreSQL when DATABASE_URL is set, SQLite in DATA_DIR otherwise. */
export interface StoreLocation {
  dataDir: string;
  databaseUrl: string | undefined;
}

/** The SQLite database of a data directory. */
export function sqliteFile(dataDir: string): string {
  return join(dataDir, "crossfill.db");
}

/**
 * Opens the store the configuration names. The server, every CLI command and the test helpers open it
 * here, so that they all read and write the same database. The caller runs `migrate()` before first use.
 */
export function openStore(at: StoreLocation, opts: PostgresStoreOptions & SqliteStoreOptions = {}): Promise<Store> {
  return at.databaseUrl !== undefined ? openPostgresStore(at.databaseUrl, opts) : openSqliteStore(sqliteFile(at.dataDir), opts);
}
