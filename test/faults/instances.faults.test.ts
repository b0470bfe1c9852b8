// Several instances (issue 8): three server processes on one PostgreSQL database, one Redis, one dev
// chain (`crossfill chain`) and one set of venue simulators (`crossfill sim`), each with its own port
// and data directory and one shared MASTER_KEY. Orders go to every instance while one is killed with
// SIGKILL (sells and withdrawals among them, the withdrawals to other traders' deposit addresses
// making deposits too); an idempotent retry goes to another instance and must return the same order; a signed
// request replayed to another instance is refused; the dead instance's orders are finished by
// itself when it comes back or, left dead, by another once its leases run out. Then `crossfill audit`
// must find every invariant of the order path intact. Seeded by FAULT_SEED; FAULT_MINUTES bounds it.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CrossfillError } from "../../src/sdk/client.ts";
import { Rng } from "../../src/venues/simulated/prng.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.ts";
import { Chain, clientIdOf, expectAuditOk, fundsOutcomes, makeTraders, outcomes, ServerProcess, Simulators, Traffic, type Env, type Sent, type Trader } from "./harness.ts";

const SEED = Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
const MINUTES = Number(process.env.FAULT_MINUTES_INSTANCES ?? 3);
const INSTANCES = 3;
const rng = new Rng(SEED);
console.log(`instances fault suite: FAULT_SEED=${SEED} FAULT_MINUTES_INSTANCES=${MINUTES}`);

const tally = { runs: 0, orders: 0, kills: 0, interrupted: 0, leftDead: 0, retriesElsewhere: 0, replaysRefused: 0, audits: 0 };

let root: string;
let db: TestDatabase;
let chain: Chain;
let sims: Simulators;
let traders: Trader[];
let traffic: Traffic;
const servers: (ServerProcess | undefined)[] = [];
let shared: Env;

function redisUrl(): string {
  const url = process.env.TEST_REDIS_URL;
  if (!url) throw new Error("TEST_REDIS_URL is not set: the several-instances test needs a Redis server (e.g. redis://127.0.0.1:6379).");
  return url;
}

const envOf = (i: number): Env => ({ ...shared, DATA_DIR: join(root, `instance-${i}`) });

async function start(i: number): Promise<ServerProcess> {
  servers[i] = await ServerProcess.start(envOf(i));
  return servers[i]!;
}

const live = () => servers.flatMap((s, i) => (s?.alive ? [{ s, i }] : []));

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "crossfill-instances-"));
  db = await createTestDatabase();
  // The suite's own store helpers open the same database as the servers.
  process.env.DATABASE_URL = db.url;
  process.env.MASTER_KEY = randomBytes(32).toString("hex");
  chain = await Chain.start(join(root, "chain"));
  sims = await Simulators.start(join(root, "sim"), SEED % 1000);
  shared = {
    ...chain.env,
    ...sims.env,
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl(),
    MASTER_KEY: process.env.MASTER_KEY,
    CHILD_ORDER_TTL_MS: "2000",
    EXPIRY_SKEW_MS: "1000",
    RECONCILE_INTERVAL_MS: "1000",
  };
  traders = await makeTraders(join(root, "instance-0"), 4);
  traffic = new Traffic({ seed: SEED, rng, traders, dataDir: join(root, "instance-0"), serverLog: () => live()[0]?.s.log.tail, withdrawalShare: 0.3 });
  // One instance first: on the fresh chain it deploys the contracts and records them in the database; the others read them there.
  await start(0);
  for (let i = 1; i < INSTANCES; i++) await start(i);
}, 300_000);

afterAll(async () => {
  const ended = traffic ? { ...traffic.counts, outcomes: await outcomes(join(root, "instance-0")), funds: await fundsOutcomes(join(root, "instance-0")) } : {};
  for (const s of servers) await s?.kill();
  await sims?.stop();
  await chain?.stop();
  delete process.env.DATABASE_URL;
  delete process.env.MASTER_KEY;
  await db?.drop();
  console.log(`instances fault suite tally (FAULT_SEED=${SEED}): ${JSON.stringify({ ...tally, ...ended })}`);
  rmSync(root, { recursive: true, force: true });
});

/** A burst spread over every live instance, one instance killed in the middle of it. */
async function run(r: number): Promise<void> {
  tally.runs++;
  const n = rng.int(12, 36);
  const victim = live()[rng.int(0, live().length - 1)]!;
  const killing = new Promise<void>((resolve) => setTimeout(() => void victim.s.kill().then(resolve), rng.int(20, 700)));
  const bursts = await Promise.all(
    live().map(({ s }) => traffic.burst(s.url, r * 10 + live().findIndex((x) => x.s === s), Math.ceil(n / INSTANCES), rng.chance(0.3))),
  );
  await killing;
  tally.kills++;
  tally.orders += bursts.reduce((sum, b) => sum + b.length, 0);
  // Half the time the killed instance stays dead for this run: another one must finish its orders once its leases run out.
  const leftDead = rng.chance(0.5);
  if (leftDead) tally.leftDead++;
  else await start(victim.i);
  const other = live().find((x) => x.i !== victim.i)!;
  const unanswered: Sent[] = bursts.flat();
  tally.interrupted += unanswered.filter((x) => x.interrupted).length;
  tally.retriesElsewhere += unanswered.filter((x) => clientIdOf(x) !== undefined).length;
  await traffic.resend(other.s.url, unanswered);
  await traffic.quiet(leftDead ? 120_000 : 45_000);
  if (leftDead) await start(victim.i);
}

describe(`several instances (FAULT_SEED=${SEED})`, () => {
  it("refuses a signed request replayed to another instance, and answers a retry with a client_order_id with the same order there", async () => {
    const [a, b] = [servers[0]!, servers[1]!];
    // Two clients with one clock sign the same request identically: the second instance sees a replay.
    const at = Date.now();
    const body = { market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: "3", time_in_force: "IOC" } as const;
    await traders[0]!.client(a.url, () => at).order(body).catch(() => undefined);
    const replay = await traders[0]!.client(b.url, () => at).order(body).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(replay).toBeInstanceOf(CrossfillError);
    expect((replay as CrossfillError).code).toBe("replayed_request");
    tally.replaysRefused++;
    // Whatever the books make of it (filled, or refused with the order in the error), the retry names the same order.
    const orderIdOf = (p: Promise<{ order_id: string }>) =>
      p.then(
        (o) => o.order_id,
        (e: unknown) => (e instanceof CrossfillError ? e.details?.order_id : undefined),
      );
    const withId = { ...body, client_order_id: `inst-${SEED}` };
    const first = await orderIdOf(traders[1]!.client(a.url).order(withId));
    expect(first).toMatch(/^ord_/);
    expect(await orderIdOf(traders[1]!.client(b.url).order(withId))).toBe(first);
  });

  it(
    "keeps every invariant of the order path with orders through every instance while they are killed",
    async () => {
      const deadline = Date.now() + MINUTES * 60_000;
      for (let r = 0; Date.now() < deadline || r < 2; r++) await run(r);
      for (const s of servers) await s?.stop();
      await expectAuditOk({ ...envOf(0) }, (what) => new Error(`${what} (FAULT_SEED=${SEED})`));
      tally.audits++;
    },
    (MINUTES + 15) * 60_000,
  );
});
