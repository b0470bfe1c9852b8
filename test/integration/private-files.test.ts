import { execFile } from "node:child_process";
import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { startCrossfill, type Crossfill } from "../../src/main.ts";
import { CrossfillClient } from "../../src/sdk/client.ts";

const BIN = fileURLToPath(new URL("../../bin/crossfill.mjs", import.meta.url));

let root: string;
let umask: number;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "crossfill-modes-"));
  // The widest umask there is, for this process and the anvil and CLI it starts: every mode seen
  // below is crossfill's own, not the umask's.
  umask = process.umask(0);
});
afterAll(() => {
  process.umask(umask);
  rmSync(root, { recursive: true, force: true });
});

/** Every path under `dir` (itself included) with its permission bits, as "0700 chain" lines. */
function modes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (path: string, rel: string) => {
    const st = lstatSync(path);
    out[rel] = (st.mode & 0o777).toString(8).padStart(4, "0") + (st.isDirectory() ? " dir" : " file");
    if (st.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name), rel === "." ? name : `${rel}/${name}`);
  };
  walk(dir, ".");
  return out;
}

function expectOwnerOnly(dir: string, mustHave: string[]): void {
  const seen = modes(dir);
  for (const path of mustHave) expect(seen, path).toHaveProperty([path]);
  for (const [path, m] of Object.entries(seen)) expect(`${path}: ${m}`).toBe(`${path}: ${m.endsWith("dir") ? "0700 dir" : "0600 file"}`);
}

async function start(dataDir: string): Promise<Crossfill> {
  return startCrossfill(loadConfig({ DATA_DIR: dataDir, PORT: "0", SIM_LATENCY_SCALE: "0.05" }), { logger: false });
}

describe("the data directory is owner-only", () => {
  it("a server started on a fresh directory makes it, the database and the chain's files owner-only, and narrows them at the next start", async () => {
    const dataDir = join(root, "server", "data");
    let server = await start(dataDir);
    try {
      const cli = promisify(execFile);
      const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: "silent" };
      const made = JSON.parse((await cli(process.execPath, [BIN, "keys", "create", "--name", "bot", "--scopes", "read,trade", "--json"], { env })).stdout);
      const client = new CrossfillClient({ baseUrl: server.url, apiKey: made.api_key, apiSecret: made.api_secret });
      const order = await client.order({ market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 1, max_slippage: 0.05 });
      expect(order.status).toMatch(/^(partially_)?filled$/);
      // While it runs: the write-ahead files and the chain's journal are there too.
      expectOwnerOnly(dataDir, ["master.key", "crossfill.db", "crossfill.db-wal", "crossfill.db-shm", "chain", "chain/journal.jsonl", "chain/operator.key", "chain/home"]);
    } finally {
      await server.stop();
    }
    expectOwnerOnly(dataDir, ["chain/state.json.gz"]);

    // What a version that left everything world-readable would have left.
    for (const [path, m] of Object.entries(modes(dataDir))) chmodSync(join(dataDir, path), m.endsWith("dir") ? 0o755 : 0o644);
    server = await start(dataDir);
    try {
      expectOwnerOnly(dataDir, ["master.key", "crossfill.db", "chain/state.json.gz"]);
    } finally {
      await server.stop();
    }
  });
});
