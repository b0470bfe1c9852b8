import { closeSync } from "node:fs";
import BetterSqlite3 from "better-sqlite3";
import { Kysely, SqliteDialect, type SqliteDatabase } from "kysely";
import { systemClock, type Clock } from "../../domain/types.ts";
import { KyselyStore } from "../kysely-store.ts";
import type { Database } from "../rows.ts";
import type { Store } from "../store.ts";
import { narrowFile, openPrivate } from "../../private-files.ts";
import { startCheckpointer, WAL_SIZE_LIMIT, type Checkpointer } from "./checkpointer.ts";
import { BoundedMap } from "../../domain/bounded-map.ts";

/** How long a writer waits for another connection's write lock before failing with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5_000;

/** Prepared statements kept, by SQL text: the store's queries are a few dozen texts; IN lists of varying length add more. */
const KEPT_STATEMENTS = 500;

/**
 * The database as Kysely's dialect sees it, each SQL text prepared once: Kysely prepares every query it
 * runs, which was ~1 ms of an order's own work (docs/bench.md). Kysely runs each statement to completion
 * at once (`all` or `run`; the store streams no query), so one statement serves every query of its text.
 */
function preparedOnce(sqlite: BetterSqlite3.Database): SqliteDatabase {
  const kept = new BoundedMap<string, BetterSqlite3.Statement>(KEPT_STATEMENTS);
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = kept.get(sql);
      if (statement === undefined) {
        statement = sqlite.prepare(sql);
        kept.set(sql, statement);
      }
      return statement;
    },
  };
}

export interface SqliteStoreOptions {
  clock?: Clock;
  /**
   * The WAL is checkpointed by a worker thread (checkpointer.ts) instead of inside this connection's
   * commits: for the server, whose event loop a checkpoint would stop. A short-lived command would spend
   * longer starting the worker (~50 ms) than its commits take. `onFailure` is told when the worker fails;
   * the connection then checkpoints inside its commits again, as SQLite does by default.
   */
  checkpointer?: { onFailure(err: Error): void };
}

/**
 * Opens (creating if needed) the SQLite database at `file`, or an in-memory one for ":memory:".
 * The schema is brought up to date by `migrate()`, which the caller runs before first use.
 */
export async function openSqliteStore(file: string, opts: SqliteStoreOptions = {}): Promise<Store> {
  if (file !== ":memory:") {
    // SQLite would create the database 0644, and it gives the -wal and -shm files the database's mode:
    // creating the database owner-only first keeps all three private. Ones made earlier are narrowed.
    closeSync(openPrivate(file, "a"));
    for (const suffix of ["-wal", "-shm"]) narrowFile(file + suffix);
  }
  const sqlite = new BetterSqlite3(file);
  // Every INTEGER comes back as a bigint: amounts beyond 2^53 must never pass through a double.
  sqlite.defaultSafeIntegers(true);
  try {
    // WAL lets readers run beside the single writer; NORMAL is durable under WAL except for the last
    // transactions before a power loss, never corrupting.
    sqlite.pragma("journal_mode = WAL");
    sqlite.pragma("synchronous = NORMAL");
    sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    sqlite.pragma("foreign_keys = ON");
  } catch (err) {
    sqlite.close();
    throw err;
  }
  let checkpointer: Checkpointer | undefined;
  if (opts.checkpointer && file !== ":memory:") {
    const { onFailure } = opts.checkpointer;
    sqlite.pragma("wal_autocheckpoint = 0");
    sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
    checkpointer = startCheckpointer(file, {
      busyTimeoutMs: BUSY_TIMEOUT_MS,
      onFailure(err) {
        if (sqlite.open) sqlite.pragma("wal_autocheckpoint = 1000");
        onFailure(err);
      },
    });
  }
  // Changes when another connection (the CLI's `keys revoke`, another process) commits. Read once per turn
  // of the event loop: the requests handled in one turn all arrived before it began.
  const dataVersion = sqlite.prepare("PRAGMA data_version").pluck();
  let seen: number | undefined;
  const version = () => {
    if (seen === undefined) {
      seen = Number(dataVersion.get());
      setImmediate(() => (seen = undefined));
    }
    return seen;
  };
  const keyChanges = { version, announce: async () => undefined, close: async () => undefined };
  return new KyselyStore(new Kysely<Database>({ dialect: new SqliteDialect({ database: preparedOnce(sqlite) }) }), opts.clock ?? systemClock, keyChanges, checkpointer);
}
