import { existsSync } from "node:fs";
import { loadConfig } from "../config.ts";
import { loadMasterKey } from "../auth/secrets.ts";
import { openStore, sqliteFile } from "../store/open-store.ts";
import type { Store } from "../store/store.ts";
import { privateDir } from "../private-files.ts";

/**
 * Opens the same store the server uses (DATABASE_URL, else DATA_DIR), whether or not a server is running on it.
 * A SQLite database that is not there is refused, not made: the server makes it at its first start, and a command
 * run from another directory would otherwise read a new, empty ./data and answer from it. `create` is for a
 * command that runs as part of the server (crossfill sim, which the server starts, or which is started before it).
 */
export async function withStore<T>(fn: (store: Store, master: Buffer) => Promise<T>, opts: { create?: boolean } = {}): Promise<T> {
  const config = loadConfig();
  const file = sqliteFile(config.dataDir);
  if (config.databaseUrl === undefined && !opts.create && !existsSync(file)) {
    throw new Error(`no crossfill database at ${file}: set DATA_DIR to the server's data directory (or DATABASE_URL to its PostgreSQL database); the server makes it at its first start (crossfill serve, npm start)`);
  }
  privateDir(config.dataDir);
  const master = await loadMasterKey({ env: process.env.MASTER_KEY, dataDir: config.dataDir });
  const store = await openStore(config);
  try {
    await store.migrate();
    return await fn(store, master);
  } finally {
    await store.close();
  }
}
