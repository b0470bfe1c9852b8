// The fault suite's moving parts, each a real process: the venue simulators (`crossfill sim`), the
// server (`src/main.ts`, killed with SIGKILL and started again on the same data directory), and the
// audit (`crossfill audit --json`). Clients are the SDK, signing as a trader's bot would.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { findOrCreateAccount } from "../../src/accounts/service.ts";
import type { AuditReport } from "../../src/audit/run.ts";
import { createApiKey } from "../../src/auth/keys.ts";
import { encryptSecret, loadMasterKey } from "../../src/auth/secrets.ts";
import { OPEN_STATUSES } from "../../src/domain/order-status.ts";
import { CrossfillClient } from "../../src/sdk/client.ts";
import { openSqliteStore } from "../../src/store/sqlite/sqlite-store.ts";
import type { OrderRecord } from "../../src/store/store.ts";
import { join } from "node:path";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = join(ROOT, "bin/crossfill.mjs");
const MAIN = join(ROOT, "src/main.ts");

export type Env = Record<string, string>;

/** Lines of a child's output, as they come. */
function lines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let buf = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    buf += chunk;
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      onLine(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once("exit", (code) => resolve(code))));
}

/** `crossfill sim`: the three venue simulators in a process of their own, which outlives every kill of the server. */
export class Simulators {
  private constructor(
    private readonly child: ChildProcess,
    /** The KEY=value settings that point a server (and the audit) at them. */
    readonly env: Env,
  ) {}

  static async start(dataDir: string, seed: number): Promise<Simulators> {
    const child = spawn(process.execPath, [BIN, "sim"], {
      env: { ...process.env, DATA_DIR: dataDir, SIM_SEED: String(seed), SIM_LATENCY_SCALE: "0.05", LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const env: Env = {};
    let stderr = "";
    lines(child.stdout!, (l) => {
      const eq = l.indexOf("=");
      if (eq > 0) env[l.slice(0, eq)] = l.slice(eq + 1);
    });
    await new Promise<void>((resolve, reject) => {
      lines(child.stderr!, (l) => {
        stderr += l + "\n";
        if (l.includes("running until")) resolve();
      });
      child.once("exit", (code) => reject(new Error(`crossfill sim exited with ${code}: ${stderr}`)));
    });
    return new Simulators(child, env);
  }

  /** The base URL of each simulator, by venue id. */
  urls(): Record<string, string> {
    return { "polymarket-sim": this.env.POLYMARKET_BASE_URL!, "kalshi-sim": this.env.KALSHI_BASE_URL!, "limitless-sim": this.env.LIMITLESS_BASE_URL! };
  }

  /** Flips fault switches of one simulator over its admin route. */
  async faults(venue: string, switches: Record<string, unknown>): Promise<void> {
    const res = await fetch(new URL("/_sim/faults", this.urls()[venue]), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(switches) });
    if (!res.ok) throw new Error(`${venue} refused faults ${JSON.stringify(switches)}: ${res.status} ${await res.text()}`);
  }

  async resetFaults(): Promise<void> {
    for (const url of Object.values(this.urls())) await fetch(new URL("/_sim/faults/reset", url), { method: "POST" });
  }

  async stop(): Promise<void> {
    this.child.kill("SIGTERM");
    await exitOf(this.child);
  }
}

/** The server as a process of its own, in its own process group: a kill takes its embedded chain with it, as a crash would. */
export class ServerProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    readonly exited: Promise<number | null>,
    /** The last of what it logged, to show when something goes wrong. */
    readonly log: { tail: string },
  ) {}

  static async start(env: Env): Promise<ServerProcess> {
    const child = spawn(process.execPath, ["--import", "tsx", MAIN], {
      cwd: ROOT,
      env: { ...process.env, PORT: "0", LOG_LEVEL: "debug", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const exited = exitOf(child);
    const log = { tail: "" };
    const url = await new Promise<string>((resolve, reject) => {
      const take = (l: string) => {
        log.tail = (log.tail + l + "\n").slice(-50_000);
        if (!l.includes("crossfill is serving")) return;
        try {
          resolve((JSON.parse(l) as { url: string }).url);
        } catch {
          reject(new Error(`unreadable start line: ${l}`));
        }
      };
      lines(child.stdout!, take);
      lines(child.stderr!, take);
      void exited.then((code) => reject(new Error(`the server exited with ${code} before serving:\n${log.tail}`)));
    });
    return new ServerProcess(child, url, exited, log);
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGKILL to the whole process group: the server and the anvil it runs, nothing flushed, nothing cleaned up. */
  async kill(): Promise<void> {
    try {
      process.kill(-this.child.pid!, "SIGKILL");
    } catch {
      // Already gone: it killed itself at a checkpoint.
    }
    await this.exited;
  }

  /** A clean stop (SIGTERM), as an operator's restart would. */
  async stop(): Promise<void> {
    if (this.alive) this.child.kill("SIGTERM");
    await this.exited;
  }
}

export interface Trader {
  email: string;
  client: (url: string) => CrossfillClient;
}

/**
 * Accounts and keys made straight in the store, as `crossfill keys create` would, numbered from `first`.
 * The dev faucet funds each on its first request, so a trader made while the server runs puts the faucet under the same kills.
 */
export async function makeTraders(dataDir: string, n: number, first = 0): Promise<Trader[]> {
  const store = await openSqliteStore(join(dataDir, "crossfill.db"));
  try {
    await store.migrate();
    const master = await loadMasterKey({ env: undefined, dataDir });
    const traders: Trader[] = [];
    for (let i = first; i < first + n; i++) {
      const email = `trader${i}@faults.example`;
      const { account } = await findOrCreateAccount(store, email, (k) => encryptSecret(master, k));
      const { apiKey, apiSecret } = await createApiKey(store, master, { accountId: account.id, name: "fault-suite", scopes: ["read", "trade"], ipAllowlist: null });
      traders.push({ email, client: (url) => new CrossfillClient({ baseUrl: url, apiKey, apiSecret }) });
    }
    return traders;
  } finally {
    await store.close();
  }
}

/** Open orders in the store: recovery is done when there are none. */
export async function openOrders(dataDir: string): Promise<OrderRecord[]> {
  const store = await openSqliteStore(join(dataDir, "crossfill.db"));
  try {
    return await store.ordersInStatus(OPEN_STATUSES);
  } finally {
    await store.close();
  }
}

/** `crossfill audit --json` on the data directory, with the same settings the server ran with. */
export function runAudit(env: Env): Promise<{ code: number | null; report: AuditReport | undefined; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "audit", "--json"], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: "silent", ...env } });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) => {
      let report: AuditReport | undefined;
      try {
        report = JSON.parse(out) as AuditReport;
      } catch {
        report = undefined;
      }
      resolve({ code, report, output: out + err });
    });
  });
}
