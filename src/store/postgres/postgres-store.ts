import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { systemClock, type Clock } from "../../domain/types.ts";
import { KyselyStore } from "../kysely-store.ts";
import type { Database } from "../rows.ts";
import type { Store } from "../store.ts";

export interface PostgresStoreOptions {
  clock?: Clock;
  /**
   * Told of a pooled connection that fails while idle (the server restarted, a proxy closed it). The pool
   * drops that connection and opens another for the next query; without a listener the error would end
   * the process.
   */
  onIdleError?: (err: Error) => void;
}

/**
 * The same KyselyStore as SQLite's, on the PostgreSQL database at `url` (postgres://user:pass@host:port/db).
 * Nothing connects until the first query; `migrate()` brings the schema up to date and is safe to run from
 * several instances at once (Kysely's migrator holds a PostgreSQL advisory lock while it migrates).
 */
export async function openPostgresStore(url: string, opts: PostgresStoreOptions = {}): Promise<Store> {
  // pg hands int8 (every money and amount column) back as a decimal string by default; a bigint keeps
  // amounts beyond 2^53 exact and matches SQLite's safe integers, so rows.ts reads both the same way.
  // Set on this pool's own parsers, not pg's global ones, so other pg users in the process are unaffected.
  const types = new pg.TypeOverrides();
  types.setTypeParser(pg.types.builtins.INT8, BigInt);
  const pool = new pg.Pool({ connectionString: url, types });
  pool.on("error", (err) => opts.onIdleError?.(err));
  return new KyselyStore(new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), opts.clock ?? systemClock);
}
