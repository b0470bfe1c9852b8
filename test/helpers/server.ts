import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import { loadConfig } from "../../src/config.ts";
import { startCrossfill, type Crossfill } from "../../src/main.ts";
import { findOrCreateAccount } from "../../src/accounts/service.ts";
import { createApiKey } from "../../src/auth/keys.ts";
import { encryptSecret, loadMasterKey } from "../../src/auth/secrets.ts";
import type { Scope } from "../../src/domain/types.ts";
import { CrossfillClient } from "../../src/sdk/client.ts";
import { createTestDatabase } from "./postgres.ts";

export interface TestServer {
  crossfill: Crossfill;
  url: string;
  dataDir: string;
  /** A read+trade key of a fresh account, and a client signing with it. */
  client: CrossfillClient;
  key: { apiKey: string; apiSecret: string; accountId: string };
  newKey(opts?: { scopes?: Scope[]; email?: string; withdrawalAllowlist?: string[] }): Promise<{ apiKey: string; apiSecret: string; accountId: string; client: CrossfillClient }>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

let accounts = 0;

/**
 * Starts the real server on its embedded defaults (SQLite, dev chain, simulators) in a fresh data directory;
 * with CROSSFILL_TEST_STORE=postgres (vitest.postgres.config.ts), on a fresh PostgreSQL database instead,
 * dropped when the server stops, so that the same integration tests run on both stores.
 */
export async function startTestServer(env: Record<string, string> = {}, opts: { logger?: Logger } = {}): Promise<TestServer> {
  const database = testStore() === "postgres" ? await createTestDatabase() : undefined;
  const dataDir = mkdtempSync(join(tmpdir(), "crossfill-it-"));
  const config = () => loadConfig({ DATA_DIR: dataDir, PORT: "0", SIM_LATENCY_SCALE: "0.05", RESOLUTION_POLL_MS: "0", ...(database && { DATABASE_URL: database.url }), ...env });
  let crossfill = await startCrossfill(config(), { logger: opts.logger ?? false });
  const master = await loadMasterKey({ env: undefined, dataDir });

  const server: TestServer = {
    crossfill,
    url: crossfill.url,
    dataDir,
    client: undefined as unknown as CrossfillClient,
    key: undefined as unknown as TestServer["key"],
    async newKey(opts = {}) {
      const email = opts.email ?? `trader${++accounts}-${Date.now()}@example.com`;
      const { account } = await findOrCreateAccount(crossfill.store, email, (k) => encryptSecret(master, k));
      const { apiKey, apiSecret } = await createApiKey(crossfill.store, master, {
        accountId: account.id,
        name: "test",
        scopes: opts.scopes ?? ["read", "trade"],
        ipAllowlist: null,
        withdrawalAllowlist: opts.withdrawalAllowlist ?? null,
      });
      return { apiKey, apiSecret, accountId: account.id, client: new CrossfillClient({ baseUrl: server.url, apiKey, apiSecret }) };
    },
    async restart() {
      await crossfill.stop();
      // Same port, so clients made before the restart keep working.
      crossfill = await startCrossfill({ ...config(), port: Number(new URL(server.url).port) }, { logger: opts.logger ?? false });
      server.crossfill = crossfill;
      server.url = crossfill.url;
    },
    async stop() {
      await crossfill.stop();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  const first = await server.newKey();
  server.key = { apiKey: first.apiKey, apiSecret: first.apiSecret, accountId: first.accountId };
  server.client = first.client;
  return server;
}

/** The store the test servers run on; a misspelt value must not quietly test SQLite twice. */
function testStore(): "sqlite" | "postgres" {
  const store = process.env.CROSSFILL_TEST_STORE || "sqlite";
  if (store !== "sqlite" && store !== "postgres") throw new Error(`CROSSFILL_TEST_STORE must be sqlite or postgres (got ${JSON.stringify(store)}).`);
  return store;
}
