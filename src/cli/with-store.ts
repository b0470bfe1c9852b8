import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config.ts";
import { loadMasterKey, MASTER_KEY_FILE } from "../auth/secrets.ts";
import { openStore, sqliteFile } from "../store/open-store.ts";
import type { Store } from "../store/store.ts";
import { privateDir } from "../private-files.ts";

/**
 * Opens the same store the server uses (DATABASE_URL, else DATA_DIR), whether or not a server is running on it.
 * A SQLite database that is not there, or a PostgreSQL database without crossfill's tables, is refused, not made:
 * the server makes it at its first start, and a command run from another directory (or with DATABASE_URL naming
 * another database) would otherwise read a new, empty store and answer from it. `create` is for a
 * command that runs as part of the server (crossfill sim, which the server starts, or which is started before it).
 *
 * `master` reads the server's master key (MASTER_KEY, else DATA_DIR/master.key) for a command that seals a secret;
 * one that is not there is refused, not made: a secret sealed under a new key is one the server cannot open.
 */
export async function withStore<T>(fn: (store: Store, master: () => Promise<Buffer>) => Promise<T>, opts: { create?: boolean } = {}): Promise<T> {
  const config = loadConfig();
  const file = sqliteFile(config.dataDir);
  if (config.databaseUrl === undefined && !opts.create && !existsSync(file)) {
    throw new Error(`no crossfill database at ${file}: set DATA_DIR to the server's data directory (or DATABASE_URL to its PostgreSQL database); the server makes it at its first start (crossfill serve, npm start)`);
  }
  const master = async () => {
    const env = process.env.MASTER_KEY;
    const keyFile = join(config.dataDir, MASTER_KEY_FILE);
    if ((env === undefined || env.trim() === "") && !existsSync(keyFile)) {
      throw new Error(`no master key at ${keyFile}: set DATA_DIR to the server's data directory, or MASTER_KEY to the server's; the server makes the file at its first start (crossfill serve, npm start)`);
    }
    return loadMasterKey({ env, dataDir: config.dataDir });
  };
  if (config.databaseUrl === undefined) privateDir(config.dataDir);
  const store = await openStore(config);
  try {
    if (config.databaseUrl !== undefined && !opts.create && !(await store.made())) {
      // not printed whole: its password may be in it
      const url = new URL(config.databaseUrl);
      throw new Error(`no crossfill database at ${url.protocol}//${url.host}${url.pathname}: set DATABASE_URL to the server's PostgreSQL database (or unset it, and set DATA_DIR to the server's data directory); the server makes its tables at its first start (crossfill serve, npm start)`);
    }
    await store.migrate();
    return await fn(store, master);
  } finally {
    await store.close();
  }
}
