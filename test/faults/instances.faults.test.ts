// Several instances (issue 8): three server processes on one PostgreSQL database, one Redis, one dev
// chain (`crossfill chain`) and one set of venue simulators (`crossfill sim`), each with its own port
// and data directory and one shared MASTER_KEY. Orders go to every instance while one is killed with
// SIGKILL (sells and withdrawals among them, the withdrawals to other traders' deposit addresses
// making deposits too); an idempotent retry goes to another instance and must return the same order; a signed
// request replayed to another instance is refused; the dead instance's orders are finished by
// itself when it comes back or, left dead, by another once its leases run out. Then `crossfill audit`
// must find every invariant of the order path intact. Seeded by FAULT_SEED; FAULT_MINUTES bounds it.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
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

const tally = { runs: 0, orders: 0, kills: 0, interrupted: 0, leftDead: 0, retriesElsewhere: 0, replaysRefused: 0, revocationsRefused: 0, audits: 0 };
/** How soon every instance refuses a revoked key's reads: the moment PostgreSQL takes to deliver the revocation's NOTIFY (docs/instances.md). */
const REVOCATION_HEARD_MS = 2_000;
const BIN = fileURLToPath(new URL("../../bin/crossfill.mjs", import.meta.url));

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

/** `crossfill keys revoke` on the shared database, as an operator would, while the instances serve. */
function revokeByCli(apiKey: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, "keys", "revoke", apiKey], { env: { ...process.env, LOG_LEVEL: "silent", ...envOf(0) } });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`crossfill keys revoke exited with ${code}: ${out}`))));
  });
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

  it("refuses a key revoked while an instance is dead at every instance: its signed requests at once, its reads within the notification's moment", async () => {
    const [t] = (await makeTraders(join(root, "instance-0"), 1, 100)) as [Trader];
    // Each instance verifies the key and caches it; one is then killed, and comes back after the revocation.
    for (const { s } of live()) await t.client(s.url).account();
    const victim = live()[rng.int(0, live().length - 1)]!;
    await victim.s.kill();
    await revokeByCli(t.apiKey);
    await start(victim.i);
    const codeOf = (p: Promise<unknown>) => p.then(
      () => "accepted",
      (e: unknown) => (e instanceof CrossfillError ? e.code : String(e)),
    );
    for (const { s } of live()) {
      const order = { market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: "2", time_in_force: "IOC" } as const;
      expect(await codeOf(t.client(s.url).order(order)), s.url).toBe("key_revoked");
      expect(await codeOf(t.client(s.url).withdraw({ amount_usdc: "1", to_address: traders[0]!.address })), s.url).toBe("key_revoked");
      const until = Date.now() + REVOCATION_HEARD_MS;
      let read = await codeOf(t.client(s.url).account());
      while (read !== "key_revoked" && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
        read = await codeOf(t.client(s.url).account());
      }
      expect(read, `${s.url} still answered a read ${REVOCATION_HEARD_MS} ms after the revocation`).toBe("key_revoked");
    }
    tally.revocationsRefused++;
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
