// The fault suite's moving parts, each a real process: the venue simulators (`crossfill sim`), the
// server (`src/main.ts`, killed with SIGKILL and started again on the same data directory), and the
// audit (`crossfill audit --json`). Clients are the SDK, signing as a trader's bot would.
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { findOrCreateAccount } from "../../src/accounts/service.ts";
import type { AuditReport } from "../../src/audit/run.ts";
import { createApiKey } from "../../src/auth/keys.ts";
import { encryptSecret, loadMasterKey } from "../../src/auth/secrets.ts";
import { OPEN_DEPOSIT_STATUSES, OPEN_WITHDRAWAL_STATUSES } from "../../src/domain/funds-status.ts";
import { OPEN_STATUSES, ORDER_STATUSES, type OrderStatus } from "../../src/domain/order-status.ts";
import { CrossfillClient, CrossfillError } from "../../src/sdk/client.ts";
import type { Account, OrderRequest, WithdrawalRequest } from "../../src/sdk/types.ts";

type Position = Account["positions"][number];
import { loadConfig } from "../../src/config.ts";
import { openStore } from "../../src/store/open-store.ts";
import type { OrderRecord } from "../../src/store/store.ts";
import type { Rng } from "../../src/venues/simulated/prng.ts";
import { OPINION_MIN_FEE } from "../../src/venues/opinion/wire.ts";
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

/**
 * A CLI command that runs until stopped and prints, on stdout, the KEY=value settings that point a
 * server at what it runs (`crossfill sim`, `crossfill chain`); ready once it says it runs until a signal.
 */
async function startSettingsProcess(command: string, env: Env): Promise<{ child: ChildProcess; env: Env }> {
  const child = spawn(process.execPath, [BIN, command], { env: { ...process.env, LOG_LEVEL: "warn", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const settings: Env = {};
  let stderr = "";
  lines(child.stdout!, (l) => {
    const eq = l.indexOf("=");
    if (eq > 0) settings[l.slice(0, eq)] = l.slice(eq + 1);
  });
  await new Promise<void>((resolve, reject) => {
    lines(child.stderr!, (l) => {
      stderr += l + "\n";
      if (l.includes("running until")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`crossfill ${command} exited with ${code}: ${stderr}`)));
  });
  return { child, env: settings };
}

async function stopProcess(child: ChildProcess): Promise<void> {
  child.kill("SIGTERM");
  await exitOf(child);
}

/** `crossfill chain`: the dev chain in a process of its own, which several servers share and which outlives their kills. */
export class Chain {
  private constructor(
    private readonly child: ChildProcess,
    /** CHAIN_RPC_URL and OPERATOR_PRIVATE_KEY. */
    readonly env: Env,
  ) {}

  static async start(dataDir: string): Promise<Chain> {
    const { child, env } = await startSettingsProcess("chain", { DATA_DIR: dataDir });
    return new Chain(child, env);
  }

  stop(): Promise<void> {
    return stopProcess(this.child);
  }
}

/** `crossfill sim`: the venue simulators in a process of their own, which outlives every kill of the server. */
export class Simulators {
  private constructor(
    private readonly child: ChildProcess,
    /** The KEY=value settings that point a server (and the audit) at them. */
    readonly env: Env,
  ) {}

  static async start(dataDir: string, seed: number): Promise<Simulators> {
    const { child, env } = await startSettingsProcess("sim", { DATA_DIR: dataDir, SIM_SEED: String(seed), SIM_LATENCY_SCALE: "0.05" });
    return new Simulators(child, env);
  }

  /** The base URL of each simulator, by venue id. */
  urls(): Record<string, string> {
    return {
      "polymarket-sim": this.env.POLYMARKET_BASE_URL!,
      "kalshi-sim": this.env.KALSHI_BASE_URL!,
      "limitless-sim": this.env.LIMITLESS_BASE_URL!,
      "opinion-sim": this.env.OPINION_BASE_URL!,
    };
  }

  /** Flips fault switches of one simulator over its admin route. */
  async faults(venue: string, switches: Record<string, unknown>): Promise<void> {
    const res = await fetch(new URL("/_sim/faults", this.urls()[venue]), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(switches) });
    if (!res.ok) throw new Error(`${venue} refused faults ${JSON.stringify(switches)}: ${res.status} ${await res.text()}`);
  }

  async resetFaults(): Promise<void> {
    for (const url of Object.values(this.urls())) await fetch(new URL("/_sim/faults/reset", url), { method: "POST" });
  }

  stop(): Promise<void> {
    return stopProcess(this.child);
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
    // FAULT_KEEP keeps the data directory of a run; the servers' whole logs are kept in it, to read a failure from.
    const keep = process.env.FAULT_KEEP && env.DATA_DIR ? join(env.DATA_DIR, "server.log") : undefined;
    const url = await new Promise<string>((resolve, reject) => {
      const take = (l: string) => {
        log.tail = (log.tail + l + "\n").slice(-50_000);
        if (keep) appendFileSync(keep, l + "\n");
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
  /** The account's address: its vault balance, and its deposit address. */
  address: string;
  /** The trader's public key (ck_live_...), for `crossfill keys revoke`. */
  apiKey: string;
  /** A client signing with the trader's key; with `clock`, at the time it says. */
  client: (url: string, clock?: () => number) => CrossfillClient;
}

/** The store the suite's servers open on this data directory: they inherit this environment, DATABASE_URL included. */
const storeOf = (dataDir: string) => openStore(loadConfig({ ...process.env, DATA_DIR: dataDir }));

/**
 * Accounts and keys made straight in the store, as `crossfill keys create` would, numbered from `first`, with the
 * withdraw scope. The dev faucet funds each on its first request, so a trader made while the server runs puts the
 * faucet under the same kills.
 */
export async function makeTraders(dataDir: string, n: number, first = 0): Promise<Trader[]> {
  const store = await storeOf(dataDir);
  try {
    await store.migrate();
    const master = await loadMasterKey({ env: process.env.MASTER_KEY, dataDir });
    const traders: Trader[] = [];
    for (let i = first; i < first + n; i++) {
      const email = `trader${i}@faults.example`;
      const { account } = await findOrCreateAccount(store, email, (k) => encryptSecret(master, k));
      const { apiKey, apiSecret } = await createApiKey(store, master, { accountId: account.id, name: "fault-suite", scopes: ["read", "trade", "withdraw"], ipAllowlist: null });
      traders.push({ email, address: account.address, apiKey, client: (url, clock) => new CrossfillClient({ baseUrl: url, apiKey, apiSecret, ...(clock ? { clock } : {}) }) });
    }
    return traders;
  } finally {
    await store.close();
  }
}

/** The store's orders in these states. */
async function ordersIn(dataDir: string, statuses: readonly OrderStatus[]): Promise<OrderRecord[]> {
  const store = await storeOf(dataDir);
  try {
    return await store.ordersInStatus(statuses);
  } finally {
    await store.close();
  }
}

/**
 * What keeps money in or out from being done: withdrawals and deposits still open, and confirmed withdrawals to a
 * trader's deposit address whose transfer the deposit watcher has not stored and credited yet. Empty when done.
 */
async function fundsOpen(dataDir: string): Promise<string[]> {
  const store = await storeOf(dataDir);
  try {
    const [withdrawals, deposits, accounts] = await Promise.all([store.withdrawalsInStatus(["pending", "sent", "confirmed", "failed"]), store.depositsInStatus(["detected", "crediting", "credited", "dropped"]), store.accounts()]);
    const addresses = new Set(accounts.map((a) => a.address.toLowerCase()));
    const credited = new Set(deposits.filter((d) => d.status === "credited").map((d) => d.txHash.toLowerCase()));
    return [
      ...withdrawals.filter((w) => OPEN_WITHDRAWAL_STATUSES.includes(w.status)).map((w) => `withdrawal ${w.id} is ${w.status}`),
      ...deposits.filter((d) => OPEN_DEPOSIT_STATUSES.includes(d.status)).map((d) => `deposit ${d.id} is ${d.status}`),
      ...withdrawals
        .filter((w) => w.status === "confirmed" && addresses.has(w.toAddress) && !credited.has(w.txHash!.toLowerCase()))
        .map((w) => `withdrawal ${w.id} paid ${w.toAddress} in ${w.txHash}, not credited yet`),
    ];
  } finally {
    await store.close();
  }
}

/** How the stored withdrawals and deposits ended, counted by status (and error code): a run's figures. */
export async function fundsOutcomes(dataDir: string): Promise<Record<string, number>> {
  const store = await storeOf(dataDir);
  try {
    const out: Record<string, number> = {};
    const count = (key: string) => (out[key] = (out[key] ?? 0) + 1);
    for (const w of await store.withdrawalsInStatus(["pending", "sent", "confirmed", "failed"])) count(`withdrawal/${w.errorCode ? `${w.status}/${w.errorCode}` : w.status}`);
    for (const d of await store.depositsInStatus(["detected", "crediting", "credited", "dropped"])) count(`deposit/${d.status}`);
    return out;
  } finally {
    await store.close();
  }
}

/**
 * Opinion's child orders that filled, and those of them charged its minimum fee (fewer shares filled than
 * planned, whose curve fee fell under it): the audits' charge_equals_fills and fills_match_venues cover them.
 */
export async function opinionMinimumFees(dataDir: string): Promise<{ filled: number; minimumFee: number }> {
  const store = await storeOf(dataDir);
  try {
    const fees = new Map<string, bigint>();
    for (const o of await store.ordersInStatus(ORDER_STATUSES)) {
      for (const f of await store.fills(o.id)) if (f.venue === "opinion-sim") fees.set(f.venueOrderId, (fees.get(f.venueOrderId) ?? 0n) + f.fee);
    }
    return { filled: fees.size, minimumFee: [...fees.values()].filter((fee) => fee === OPINION_MIN_FEE).length };
  } finally {
    await store.close();
  }
}

/** How the stored orders ended, counted by status and error code: a run's figures. */
export async function outcomes(dataDir: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const o of await ordersIn(dataDir, ORDER_STATUSES)) {
    const key = o.errorCode ? `${o.status}/${o.errorCode}` : o.status;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/** `crossfill audit --json` on the data directory, with the same settings the server ran with. */
function runAudit(env: Env): Promise<{ code: number | null; report: AuditReport | undefined; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "audit", "--json", "--examples", "1000000"], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: "silent", ...env } });
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

/**
 * `crossfill audit --json` must find every invariant intact, the stored fills compared with the venues' own trades;
 * but for trades on the venues `carried` names (venue ids) that no stored fill matches: the child orders of an order
 * ended at its deadline on a venue that never answered, which the operator carries (docs/decisions.md).
 */
export async function expectAuditOk(env: Env, fail: (what: string) => Error, carried: readonly string[] = []): Promise<void> {
  const { code, report, output } = await runAudit(env);
  const carriedOnly = (i: AuditReport["invariants"][number]) =>
    i.name === "fills_match_venues" && i.violations === i.examples.length && i.examples.every((e) => carried.some((v) => e.startsWith(`${v} trade `) && e.endsWith(" is not a stored fill")));
  if (!report || (code !== 0 && code !== 1) || report.invariants.some((i) => i.violations !== 0 && i.violations !== null && !carriedOnly(i))) {
    throw fail(`crossfill audit found violations:\n${output}`);
  }
  const venues = report.invariants.find((i) => i.name === "fills_match_venues");
  if (venues === undefined || venues.violations === null) throw fail(`crossfill audit did not compare the fills with the venues' trades:\n${output}`);
}

const EVENTS = ["fed-cut-2026-12", "spx-above-7500-2026-12-31", "btc-above-150k-2026-12-31"];

/** One order or withdrawal a trader sent, and what became of it as the trader saw it. */
export type Sent = {
  trader: Trader;
  /** The order or withdrawal id the trader learnt, if any answer came back. */
  id?: string;
  /** No answer: the server died under it. */
  interrupted: boolean;
} & ({ kind: "order"; body: OrderRequest } | { kind: "withdrawal"; body: WithdrawalRequest });

export const clientIdOf = (s: Sent): string | undefined => (s.kind === "order" ? s.body.client_order_id : s.body.client_withdrawal_id);

/**
 * The traders of a seeded run and what they send: random orders (and, with `withdrawalShare`, withdrawals, to
 * another trader's deposit address or out of the service) in concurrent bursts, the check that no answer is
 * ever a 500 and that a client id names one order or withdrawal, re-sends after a restart, and the wait for
 * recovery to finish every order, withdrawal and deposit.
 */
export class Traffic {
  /** Orders (sells among them) and withdrawals sent in bursts, and copies sent at once with the same client id. */
  readonly counts = { orders: 0, sells: 0, withdrawals: 0, duplicateSubmissions: 0 };

  constructor(
    private readonly o: {
      seed: number;
      rng: Rng;
      traders: readonly Trader[];
      dataDir: string;
      /** The running server's last log lines, for a failure's message. */
      serverLog: () => string | undefined;
      /** The share of a burst's requests that are withdrawals (default none). */
      withdrawalShare?: number;
    },
  ) {}

  /** A failure that names the seed that reproduces it. */
  fail(what: string): Error {
    return new Error(`${what} (FAULT_SEED=${this.o.seed})`);
  }

  /** An order as a bot would send it: amounts with up to 6 decimals (as strings), both strategies and times in force, half with a client id. */
  randomOrder(run: number, i: number): OrderRequest {
    const { rng } = this.o;
    const amount = (rng.int(1, 400) + rng.int(0, 999_999) / 1e6).toFixed(6);
    return {
      market_id: EVENTS[rng.int(0, EVENTS.length - 1)]!,
      outcome: rng.chance(0.5) ? "YES" : "NO",
      side: "buy",
      amount_usdc: amount,
      max_slippage: (rng.int(5, 60) / 1000).toFixed(3),
      strategy: rng.chance(0.7) ? "optimize_price" : "optimize_speed",
      time_in_force: rng.chance(0.5) ? "IOC" : "FOK",
      ...(rng.chance(0.5) ? { client_order_id: `f${this.o.seed}-${run}-${i}` } : {}),
    };
  }

  /**
   * A withdrawal as a bot would send it: up to 50 USDC with up to 6 decimals, most often to another trader's
   * deposit address (so it is a deposit too), else out of the service; half with a client id.
   */
  randomWithdrawal(run: number, i: number, from: Trader): WithdrawalRequest {
    const { rng, traders } = this.o;
    const others = traders.filter((t) => t !== from);
    const to = others.length > 0 && rng.chance(0.7) ? others[rng.int(0, others.length - 1)]!.address : `0x${Array.from({ length: 40 }, () => "0123456789abcdef"[rng.int(0, 15)]).join("")}`;
    return {
      amount_usdc: (rng.int(1, 50) + rng.int(0, 999_999) / 1e6).toFixed(6),
      to_address: to,
      ...(rng.chance(0.5) ? { client_withdrawal_id: `w${this.o.seed}-${run}-${i}` } : {}),
    };
  }

  /**
   * A sell of one of the trader's positions, as a bot holding it would send it: most of the time at most
   * what it holds, sometimes more (insufficient_position), both times in force, half with a client id.
   */
  randomSell(run: number, i: number, position: Position): OrderRequest {
    const { rng } = this.o;
    const held = Math.floor(position.shares * 100);
    const shares = rng.chance(0.85) ? rng.int(1, Math.max(1, held)) : held + rng.int(1, 500);
    return {
      market_id: position.event_id,
      outcome: position.outcome,
      side: "sell",
      shares: (shares / 100).toFixed(2),
      max_slippage: (rng.int(5, 60) / 1000).toFixed(3),
      strategy: rng.chance(0.7) ? "optimize_price" : "optimize_speed",
      time_in_force: rng.chance(0.5) ? "IOC" : "FOK",
      ...(rng.chance(0.5) ? { client_order_id: `f${this.o.seed}-${run}-${i}` } : {}),
    };
  }

  /** What each trader holds now (none for one the server could not answer): the positions its sells sell (not those sold or redeemed whole). */
  private async positions(url: string): Promise<Map<Trader, Position[]>> {
    const held = await Promise.all(this.o.traders.map(async (t) => [t, await t.client(url).account().then((a) => a.positions.filter((p) => p.shares > 0), () => [])] as const));
    return new Map(held);
  }

  /** Sends one order or withdrawal; a server that dies under it leaves the trader without an answer. No answer may ever be a 500. */
  async send(client: CrossfillClient, s: Sent): Promise<void> {
    try {
      s.id = s.kind === "order" ? (await client.order(s.body)).order_id : (await client.withdraw(s.body)).withdrawal_id;
    } catch (e) {
      if (e instanceof CrossfillError) {
        if (e.code === "internal" || e.status === 500) {
          throw this.fail(`a 500 answered ${s.kind} ${JSON.stringify(s.body)}: ${e.message}\nserver log:\n${this.o.serverLog()?.slice(-8_000)}`);
        }
        const id = e.details?.order_id ?? e.details?.withdrawal_id;
        if (typeof id === "string") s.id = id;
        return;
      }
      s.interrupted = true;
    }
  }

  /**
   * A burst of concurrent orders (and withdrawals) from every trader; with `duplicates`, each one with a client
   * id is also sent again at once. `n` counts the orders; withdrawals come on top, in the share the traffic was given.
   */
  async burst(url: string, run: number, n: number, duplicates: boolean): Promise<Sent[]> {
    const { rng, traders } = this.o;
    const trader = () => traders[rng.int(0, traders.length - 1)]!;
    const positions = await this.positions(url);
    const sent: Sent[] = Array.from({ length: n }, (_, i) => {
      const by = trader();
      const held = positions.get(by) ?? [];
      const body = held.length > 0 && rng.chance(0.35) ? this.randomSell(run, i, held[rng.int(0, held.length - 1)]!) : this.randomOrder(run, i);
      if (body.side === "sell") this.counts.sells++;
      return { kind: "order" as const, trader: by, body, interrupted: false };
    });
    const withdrawals = Math.round(n * (this.o.withdrawalShare ?? 0));
    for (let i = 0; i < withdrawals; i++) {
      const from = trader();
      sent.push({ kind: "withdrawal", trader: from, body: this.randomWithdrawal(run, i, from), interrupted: false });
    }
    const copies = duplicates ? sent.filter((s) => clientIdOf(s) !== undefined).map((s) => ({ ...s, interrupted: false })) : [];
    this.counts.duplicateSubmissions += copies.length;
    await Promise.all([...sent, ...copies].map((s) => this.send(s.trader.client(url), s)));
    for (const c of copies) {
      const first = sent.find((s) => s.kind === c.kind && clientIdOf(s) === clientIdOf(c))!;
      if (first.id && c.id && first.id !== c.id) throw this.fail(`${c.kind} client id ${clientIdOf(c)} gave two: ${first.id} and ${c.id}`);
    }
    this.counts.orders += n;
    this.counts.withdrawals += withdrawals;
    return sent;
  }

  /** After a restart a trader re-sends everything it got no answer for and has a client id for: it must get that one back, never a second. */
  async resend(url: string, sent: readonly Sent[]): Promise<void> {
    for (const s of sent.filter((x) => clientIdOf(x) !== undefined)) {
      const before = s.id;
      const again: Sent = { ...s, interrupted: false };
      delete again.id;
      await this.send(s.trader.client(url), again);
      if (again.interrupted) throw this.fail(`the restarted server gave no answer to ${s.kind} ${clientIdOf(s)}`);
      if (before && again.id && before !== again.id) throw this.fail(`${s.kind} client id ${clientIdOf(s)} answered ${before} then ${again.id}`);
    }
  }

  /**
   * Waits until recovery has finished every order, withdrawal and deposit (the store holds none open, and every
   * transfer to a trader is credited): true then; false as soon as `gone` says the server it waits on died.
   */
  async quiet(timeoutMs: number, gone: () => boolean = () => false): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const open = await ordersIn(this.o.dataDir, OPEN_STATUSES);
      const funds = await fundsOpen(this.o.dataDir);
      if (open.length === 0 && funds.length === 0) return true;
      if (gone()) return false;
      if (Date.now() > deadline) {
        const shown = JSON.stringify(open.slice(0, 3), (_k, v) => (typeof v === "bigint" ? v.toString() : v), 1);
        throw this.fail(
          `${open.length} orders still open ${timeoutMs} ms after recovery started: ${shown}\n${funds.slice(0, 5).join("\n")}\nserver log:\n${this.o.serverLog()?.slice(-8_000)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
