import { loadConfig } from "../config.ts";
import { loadMasterKey } from "../auth/secrets.ts";
import { openStore } from "../store/open-store.ts";
import type { Store } from "../store/store.ts";
import { privateDir } from "../private-files.ts";

/** Opens the same store the server uses (DATABASE_URL, else DATA_DIR), whether or not a server is running on it. */
export async function withStore<T>(fn: (store: Store, master: Buffer) => Promise<T>): Promise<T> {
  const config = loadConfig();
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
