// The fault suite: concurrent orders from several traders while the server is killed at every step
// boundary of the order flow and of its recovery, at random moments, under venue faults, with
// duplicate submissions and clock jumps; after each run, restarted and recovered, `crossfill audit`
// must find every invariant of the order path intact. Seeded: FAULT_SEED reproduces a run (the seed is
// printed, and named in every failure); FAULT_MINUTES bounds its length.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHECKPOINTS, type Checkpoint } from "../../src/orders/service.ts";
import { CrossfillError, type CrossfillClient } from "../../src/sdk/client.ts";
import type { Order, OrderRequest } from "../../src/sdk/types.ts";
import { Rng } from "../../src/venues/simulated/prng.ts";
import { makeTraders, openOrders, runAudit, ServerProcess, Simulators, type Env, type Trader } from "./harness.ts";

const SEED = Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
const MINUTES = Number(process.env.FAULT_MINUTES ?? 12);
const rng = new Rng(SEED);
console.log(`fault suite: FAULT_SEED=${SEED} FAULT_MINUTES=${MINUTES}`);

const ORDER_STEPS = CHECKPOINTS.filter((c) => c.startsWith("order."));
const RECOVERY_STEPS = CHECKPOINTS.filter((c) => c.startsWith("reconcile."));
const EVENTS = ["fed-cut-2026-12", "spx-above-7500-2026-12-31", "btc-above-150k-2026-12-31"];
/** Child orders expire fast, so recovery can call a lost one never placed within seconds. */
const BASE_ENV: Env = { CHILD_ORDER_TTL_MS: "3000", EXPIRY_SKEW_MS: "2000", SIM_LATENCY_SCALE: "0.05" };
/** Clock jumps of ±10 s need the expiry margin to cover twice the jump. */
const JUMP_ENV: Env = { CHILD_ORDER_TTL_MS: "15000", EXPIRY_SKEW_MS: "21000" };

/** One order a trader sent, and what became of it as the trader saw it. */
interface Sent {
  trader: Trader;
  body: OrderRequest;
  /** The order id the trader learnt, if any answer came back. */
  orderId?: string;
  /** No answer: the server died under it. */
  interrupted: boolean;
}

interface Tally {
  runs: number;
  orders: number;
  killPoints: number;
  checkpointKills: Record<string, number>;
  venueFaults: Record<string, number>;
  clockJumps: number;
  duplicateSubmissions: number;
  /** Traders made while the server runs, whose first request the dev faucet funds under the same faults. */
  newAccounts: number;
  audits: number;
}

const tally: Tally = { runs: 0, orders: 0, killPoints: 0, checkpointKills: {}, venueFaults: {}, clockJumps: 0, duplicateSubmissions: 0, newAccounts: 0, audits: 0 };
const fail = (what: string) => new Error(`${what} (FAULT_SEED=${SEED})`);

let dataDir: string;
let sims: Simulators;
let traders: Trader[];
let server: ServerProcess | undefined;
let serverEnv: Env = {};

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "crossfill-faults-"));
  sims = await Simulators.start(dataDir, SEED % 1000);
  traders = await makeTraders(dataDir, 4);
}, 120_000);

afterAll(async () => {
  await server?.kill();
  await sims?.stop();
  console.log(`fault suite tally (FAULT_SEED=${SEED}): ${JSON.stringify(tally)}`);
  if (process.env.FAULT_KEEP) console.log(`fault suite data directory kept: ${dataDir}`);
  else rmSync(dataDir, { recursive: true, force: true });
});

async function start(extra: Env = {}): Promise<ServerProcess> {
  serverEnv = { DATA_DIR: dataDir, ...sims.env, ...BASE_ENV, ...extra };
  server = await ServerProcess.start(serverEnv);
  return server;
}

/** An order as a bot would send it: amounts with up to 6 decimals (as strings), both strategies and times in force, half with a client id. */
function randomOrder(run: number, i: number): OrderRequest {
  const amount = (rng.int(1, 400) + rng.int(0, 999_999) / 1e6).toFixed(6);
  return {
    market_id: EVENTS[rng.int(0, EVENTS.length - 1)]!,
    outcome: rng.chance(0.5) ? "YES" : "NO",
    side: "buy",
    amount_usdc: amount,
    max_slippage: (rng.int(5, 60) / 1000).toFixed(3),
    strategy: rng.chance(0.7) ? "optimize_price" : "optimize_speed",
    time_in_force: rng.chance(0.5) ? "IOC" : "FOK",
    ...(rng.chance(0.5) ? { client_order_id: `f${SEED}-${run}-${i}` } : {}),
  };
}

/** Sends one order; a server that dies under it leaves the trader without an answer. No answer may ever be a 500. */
async function send(client: CrossfillClient, s: Sent): Promise<void> {
  try {
    s.orderId = (await client.order(s.body)).order_id;
  } catch (e) {
    if (e instanceof CrossfillError) {
      if (e.code === "internal" || e.status === 500) throw fail(`a 500 answered ${JSON.stringify(s.body)}: ${e.message}`);
      const id = e.details?.order_id;
      if (typeof id === "string") s.orderId = id;
      return;
    }
    s.interrupted = true;
  }
}

/** A burst of concurrent orders from every trader; with `duplicates`, each order with a client id is also sent again at once. */
async function burst(url: string, run: number, n: number, duplicates: boolean): Promise<Sent[]> {
  const sent: Sent[] = Array.from({ length: n }, (_, i) => ({ trader: traders[rng.int(0, traders.length - 1)]!, body: randomOrder(run, i), interrupted: false }));
  const copies = duplicates ? sent.filter((s) => s.body.client_order_id).map((s) => ({ ...s, interrupted: false })) : [];
  tally.duplicateSubmissions += copies.length;
  await Promise.all([...sent, ...copies].map((s) => send(s.trader.client(url), s)));
  for (const c of copies) {
    const first = sent.find((s) => s.body.client_order_id === c.body.client_order_id)!;
    if (first.orderId && c.orderId && first.orderId !== c.orderId) throw fail(`client_order_id ${c.body.client_order_id} gave two orders`);
  }
  tally.orders += n;
  return sent;
}

/** After a restart a trader re-sends every order it got no answer for and has a client id for: it must get that one order back, never a second. */
async function resend(url: string, sent: readonly Sent[]): Promise<void> {
  for (const s of sent.filter((x) => x.body.client_order_id !== undefined)) {
    const before = s.orderId;
    const again: Sent = { ...s, interrupted: false };
    delete again.orderId;
    await send(s.trader.client(url), again);
    if (again.interrupted) throw fail(`the restarted server gave no answer to ${s.body.client_order_id}`);
    if (before && again.orderId && before !== again.orderId) throw fail(`client_order_id ${s.body.client_order_id} answered ${before} then ${again.orderId}`);
  }
}

/** Waits until recovery has finished every order (the store holds no open order). */
async function quiet(timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await openOrders(dataDir);
    if (open.length === 0) return;
    if (Date.now() > deadline) {
      const shown = JSON.stringify(open.slice(0, 3), (_k, v) => (typeof v === "bigint" ? v.toString() : v), 1);
      throw fail(`${open.length} orders still open ${timeoutMs} ms after recovery started: ${shown}\nserver log:\n${server?.log.tail.slice(-8_000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function audited(): Promise<void> {
  await server?.stop();
  server = undefined;
  const { code, report, output } = await runAudit(serverEnv);
  tally.audits++;
  if (code !== 0 || !report?.ok) throw fail(`crossfill audit found violations:\n${output}`);
  expect(report.invariants.find((i) => i.name === "fills_match_venues")?.violations).toBe(0);
}

const VENUE_IDS = ["polymarket-sim", "kalshi-sim", "limitless-sim"];
/** Venue faults that bear on money: lost acks, timeouts, partial and resting fills, repeated trades, refusals, errors, and orders held on the way past their expiry. */
const VENUE_FAULTS: [string, Record<string, unknown>][] = [
  ["ackLost", { ackLost: true }],
  ["timeout", { timeout: true }],
  ["partialFills", { partialFills: true }],
  ["resting", { resting: true }],
  ["duplicateTrades", { duplicateTrades: true }],
  ["reject", { reject: true }],
  ["serverErrors", { serverErrors: 3 }],
  ["delayedPastExpiry", { latencyMs: 3_500 }],
  ["slow", { latencyMs: 800 }],
];

async function withVenueFaults(): Promise<void> {
  for (const venue of VENUE_IDS) {
    if (!rng.chance(0.6)) continue;
    const [name, switches] = VENUE_FAULTS[rng.int(0, VENUE_FAULTS.length - 1)]!;
    tally.venueFaults[name] = (tally.venueFaults[name] ?? 0) + 1;
    await sims.faults(venue, switches);
  }
}

/** One run: orders from every trader, a kill (at a checkpoint, or after a random delay, or none), venue faults, then restart, re-sends and recovery. */
async function run(i: number): Promise<void> {
  tally.runs++;
  const kind = rng.int(0, 9);
  const n = rng.int(8, 24);
  const jump = kind === 9;
  const jumpEnv: Env = jump ? { ...JUMP_ENV, CLOCK_SKEW_MS: String(rng.chance(0.5) ? 10_000 : -10_000) } : {};
  if (jump) tally.clockJumps++;
  const checkpoint: Checkpoint | undefined = kind <= 3 ? ORDER_STEPS[rng.int(0, ORDER_STEPS.length - 1)] : undefined;
  const killAt: Env = checkpoint ? { CROSSFILL_KILL_AT: `${checkpoint}:${rng.int(1, Math.max(1, Math.floor(n / 2)))}` } : {};
  if (server) await server.stop();
  const s = await start({ ...killAt, ...jumpEnv });
  if (rng.chance(0.25)) {
    traders.push(...(await makeTraders(dataDir, 1, traders.length)));
    tally.newAccounts++;
  }
  if (kind >= 6) await withVenueFaults();
  const randomKill = kind === 4 || kind === 5 || (kind >= 6 && rng.chance(0.3));
  const killer = randomKill
    ? new Promise<void>((resolve) => setTimeout(() => void s.kill().then(resolve), rng.int(15, 2_900)))
    : Promise.resolve();
  const sent = await burst(s.url, i, n, rng.chance(0.3));
  await killer;
  // A server that killed itself at its checkpoint may not have been reaped yet: an unanswered order says it died.
  if (sent.some((x) => x.interrupted)) await s.exited;
  const killed = !s.alive;
  await sims.resetFaults();
  if (killed) {
    await s.kill();
    const lost = sent.filter((x) => x.interrupted).length;
    tally.killPoints += Math.max(1, lost);
    if (checkpoint) tally.checkpointKills[checkpoint] = (tally.checkpointKills[checkpoint] ?? 0) + 1;
    // Sometimes recovery itself is killed at one of its own step boundaries, then started again.
    if (rng.chance(0.3)) {
      const step = RECOVERY_STEPS[rng.int(0, RECOVERY_STEPS.length - 1)]!;
      const r = await start({ CROSSFILL_KILL_AT: `${step}:1`, ...jumpEnv }).catch(() => undefined);
      if (r) {
        await Promise.race([r.exited, new Promise((res) => setTimeout(res, 4_000))]);
        if (!r.alive) tally.checkpointKills[step] = (tally.checkpointKills[step] ?? 0) + 1;
        await r.kill();
      } else tally.checkpointKills[step] = (tally.checkpointKills[step] ?? 0) + 1;
    }
    const again = await start(jumpEnv);
    await resend(again.url, sent);
  }
  await quiet(jump ? 90_000 : 45_000);
}

describe(`fault suite (FAULT_SEED=${SEED})`, () => {
  it(
    "keeps every invariant of the order path through kills at every step, venue faults, duplicates and clock jumps",
    async () => {
      const deadline = Date.now() + MINUTES * 60_000;
      let i = 0;
      // Every step boundary is killed at least once before the rest are drawn at random.
      while (Date.now() < deadline || i < ORDER_STEPS.length) {
        await run(i++);
        if (i % 8 === 0) await audited();
      }
      await audited();
      expect(tally.killPoints).toBeGreaterThan(0);
    },
    (MINUTES + 20) * 60_000,
  );
});
