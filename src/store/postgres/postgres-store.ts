import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { systemClock, type Clock } from "../../domain/types.ts";
import { KyselyStore, type KeyChanges } from "../kysely-store.ts";
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
  return new KyselyStore(new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), opts.clock ?? systemClock, new KeyNotifications(url, opts.onIdleError));
}

const CHANNEL = "crossfill_api_keys";
/** How often a notification connection that is down is tried again. */
const RELISTEN_MS = 1_000;

/**
 * API key changes told between instances by LISTEN/NOTIFY on one connection of its own, opened by the
 * first reader (a server; the CLI only announces). While that connection is not listening, the version is
 * unknown, and a notification missed meanwhile is made up for by a move of the version once it listens again.
 */
class KeyNotifications implements KeyChanges {
  private heard = 0;
  private listening: pg.Client | undefined;
  private connecting = false;
  private nextTry = 0;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly onError: ((err: Error) => void) | undefined,
  ) {}

  version(): number | undefined {
    if (this.listening) return this.heard;
    this.listen();
    return undefined;
  }

  async announce(db: Kysely<Database>): Promise<void> {
    await sql`SELECT pg_notify(${CHANNEL}, '')`.execute(db);
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.listening;
    this.listening = undefined;
    await client?.end();
  }

  private listen(): void {
    if (this.connecting || this.closed || Date.now() < this.nextTry) return;
    this.connecting = true;
    this.nextTry = Date.now() + RELISTEN_MS;
    const client = new pg.Client({ connectionString: this.url });
    const down = (err?: Error) => {
      if (this.listening === client) this.listening = undefined;
      if (err) this.onError?.(err);
      client.end().catch(() => undefined);
    };
    client.on("notification", () => this.heard++);
    client.on("error", down);
    client.on("end", () => down());
    client
      .connect()
      .then(() => client.query(`LISTEN ${CHANNEL}`))
      .then(
        () => {
          this.connecting = false;
          if (this.closed) return void client.end().catch(() => undefined);
          this.heard++;
          this.listening = client;
        },
        (err: Error) => {
          this.connecting = false;
          down(err);
        },
      );
  }
}
