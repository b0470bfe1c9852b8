// The fault suite: concurrent orders and withdrawals (most to another trader's deposit address, so deposits
// too) from several traders while the server is killed at every step boundary of the order flow, of a
// withdrawal, of a deposit credit and of their recovery, at random moments, under venue faults, with
// duplicate submissions and clock jumps; after each run, restarted and recovered, `crossfill audit`
// must find every invariant of the order path and of money in and out intact. Seeded: FAULT_SEED reproduces a run (the seed is
// printed, and named in every failure); FAULT_MINUTES bounds its length.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FUNDS_CHECKPOINTS, type FundsCheckpoint } from "../../src/funds/checkpoints.ts";
import { CHECKPOINTS, type Checkpoint } from "../../src/orders/service.ts";
import { Rng } from "../../src/venues/simulated/prng.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.ts";
import { expectAuditOk, fundsOutcomes, makeTraders, opinionMinimumFees, ServerProcess, Simulators, Traffic, type Env, type Trader } from "./harness.ts";

const SEED = Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
const MINUTES = Number(process.env.FAULT_MINUTES ?? 18);
const rng = new Rng(SEED);
console.log(`fault suite: FAULT_SEED=${SEED} FAULT_MINUTES=${MINUTES} on ${process.env.FAULT_STORE === "postgres" ? "PostgreSQL" : "SQLite"}`);

const ORDER_STEPS = CHECKPOINTS.filter((c) => c.startsWith("order."));
/** A withdrawal's steps and a deposit credit's: they pass in requests, in the deposit watcher and in recovery alike. */
const FUNDS_STEPS: readonly FundsCheckpoint[] = FUNDS_CHECKPOINTS;
const RECOVERY_STEPS = CHECKPOINTS.filter((c) => c.startsWith("reconcile."));
/** Child orders expire fast, so recovery can call a lost one never placed within seconds. */
const BASE_ENV: Env = { CHILD_ORDER_TTL_MS: "2000", EXPIRY_SKEW_MS: "1000", RECONCILE_INTERVAL_MS: "1000", SIM_LATENCY_SCALE: "0.05" };
/** Clock jumps of ±10 s need the expiry margin to cover twice the jump. */
const JUMP_ENV: Env = { CHILD_ORDER_TTL_MS: "15000", EXPIRY_SKEW_MS: "21000" };

interface Tally {
  runs: number;
  killPoints: number;
  checkpointKills: Record<string, number>;
  venueFaults: Record<string, number>;
  clockJumps: number;
  /** Traders made while the server runs, whose first request the dev faucet funds under the same faults. */
  newAccounts: number;
  audits: number;
}

const tally: Tally = { runs: 0, killPoints: 0, checkpointKills: {}, venueFaults: {}, clockJumps: 0, newAccounts: 0, audits: 0 };

let dataDir: string;
let sims: Simulators;
let traders: Trader[];
let traffic: Traffic;
let server: ServerProcess | undefined;
let serverEnv: Env = {};

/** FAULT_STORE=postgres runs the suite on a fresh PostgreSQL database of TEST_DATABASE_URL instead of SQLite. */
let database: TestDatabase | undefined;

beforeAll(async () => {
  if (process.env.FAULT_STORE === "postgres") {
    database = await createTestDatabase();
    // The servers and the suite's own store helpers inherit it.
    process.env.DATABASE_URL = database.url;
  }
  dataDir = mkdtempSync(join(tmpdir(), "crossfill-faults-"));
  sims = await Simulators.start(dataDir, SEED % 1000);
  traders = await makeTraders(dataDir, 4);
  traffic = new Traffic({ seed: SEED, rng, traders, dataDir, serverLog: () => server?.log.tail, withdrawalShare: 0.3 });
}, 120_000);

afterAll(async () => {
  await server?.kill();
  await sims?.stop();
  const funds = traffic ? await fundsOutcomes(dataDir) : {};
  const opinionChildren = traffic ? await opinionMinimumFees(dataDir) : {};
  console.log(`fault suite tally (FAULT_SEED=${SEED}): ${JSON.stringify({ ...tally, ...traffic?.counts, funds, opinionChildren })}`);
  if (process.env.FAULT_KEEP) console.log(`fault suite data directory kept: ${dataDir}`);
  else rmSync(dataDir, { recursive: true, force: true });
  if (database) {
    delete process.env.DATABASE_URL;
    await database.drop();
  }
});

async function start(extra: Env = {}): Promise<ServerProcess> {
  serverEnv = { DATA_DIR: dataDir, ...sims.env, ...BASE_ENV, ...extra };
  server = await ServerProcess.start(serverEnv);
  return server;
}

async function audited(): Promise<void> {
  await server?.stop();
  server = undefined;
  await expectAuditOk(serverEnv, (what) => traffic.fail(what));
  tally.audits++;
}

const VENUE_IDS = ["polymarket-sim", "kalshi-sim", "limitless-sim", "opinion-sim"];
/** Venue faults that bear on money: lost acks, timeouts, partial and resting fills, repeated trades, refusals, errors, and orders held on the way past their expiry. */
const VENUE_FAULTS: [string, Record<string, unknown>][] = [
  ["ackLost", { ackLost: true }],
  ["timeout", { timeout: true }],
  ["partialFills", { partialFills: true }],
  ["resting", { resting: true }],
  ["duplicateTrades", { duplicateTrades: true }],
  ["reject", { reject: true }],
  ["serverErrors", { serverErrors: 3 }],
  ["delayedPastExpiry", { latencyMs: 2_500 }],
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
  const n = rng.int(10, 40);
  const jump = kind === 9;
  const jumpEnv: Env = jump ? { ...JUMP_ENV, CLOCK_SKEW_MS: String(rng.chance(0.5) ? 10_000 : -10_000) } : {};
  if (jump) tally.clockJumps++;
  // A kill at a step of an order, or (kind 3) of a withdrawal or a deposit credit, of which a burst holds fewer.
  const checkpoint: Checkpoint | FundsCheckpoint | undefined =
    kind <= 2 ? ORDER_STEPS[rng.int(0, ORDER_STEPS.length - 1)] : kind === 3 ? FUNDS_STEPS[rng.int(0, FUNDS_STEPS.length - 1)] : undefined;
  const passes = kind === 3 ? Math.max(1, Math.floor(n / 8)) : Math.max(1, Math.floor(n / 2));
  const killAt: Env = checkpoint ? { CROSSFILL_KILL_AT: `${checkpoint}:${rng.int(1, passes)}` } : {};
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
  const sent = await traffic.burst(s.url, i, n, rng.chance(0.3));
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
    await traffic.resend(again.url, sent);
  }
  // A checkpoint that work after the burst passes (a deposit's credit in the watcher, a recovery step) kills the
  // server while recovery is waited for: it is started again, and the wait goes on.
  let live = server!;
  while (!(await traffic.quiet(jump ? 90_000 : 45_000, () => !live.alive))) {
    await live.kill();
    tally.killPoints++;
    if (checkpoint) tally.checkpointKills[checkpoint] = (tally.checkpointKills[checkpoint] ?? 0) + 1;
    live = await start(jumpEnv);
  }
}

describe(`fault suite (FAULT_SEED=${SEED})`, () => {
  it(
    "keeps every invariant of the order path, withdrawals and deposits through kills at every step, venue faults, duplicates and clock jumps",
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
