// The chain fault suite: concurrent orders and withdrawals (most to another trader's deposit address, so
// deposits too, which the deposit watcher finds and credits) from several traders while the chain's JSON-RPC misbehaves
// (errors, refused connections, answers lost after the node acted, requests held past the client's
// timeout and then done, slow requests), the server sometimes killed mid-burst and started again under
// the same faults; once the faults stop and recovery is done, `crossfill audit`, reading the chain
// directly, must find every invariant intact. Seeded: FAULT_SEED reproduces a run's draws (the seed is
// printed and named in every failure); FAULT_MINUTES bounds its length.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevChain, type DevChain } from "../../src/vault/devnode/index.ts";
import { startRpcFront } from "../../src/vault/devnode/rpc-front.ts";
import { Rng } from "../../src/venues/simulated/prng.ts";
import { startRpcProxy, type RpcProxy } from "../helpers/rpc-proxy.ts";
import { expectAuditOk, fundsOutcomes, makeTraders, outcomes, ServerProcess, Simulators, Traffic, type Env, type Sent, type Trader } from "./harness.ts";

const SEED = Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
const MINUTES = Number(process.env.FAULT_MINUTES ?? 3);
const rng = new Rng(SEED);
console.log(`chain fault suite: FAULT_SEED=${SEED} FAULT_MINUTES=${MINUTES}`);

/** The server's JSON-RPC timeout: a held request times out in seconds, not the default 15. */
const RPC_TIMEOUT_MS = 2_000;
/** Child orders expire fast, so recovery can call a lost one never placed within seconds. */
const BASE_ENV: Env = {
  CHILD_ORDER_TTL_MS: "3000",
  EXPIRY_SKEW_MS: "2000",
  RECONCILE_INTERVAL_MS: "1000",
  SIM_LATENCY_SCALE: "0.05",
  CHAIN_RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS),
};
const FAULT_KINDS = ["error500", "refused", "dropped", "held", "delayed"] as const;
type FaultKind = (typeof FAULT_KINDS)[number];

interface Tally {
  runs: number;
  rpcRequests: number;
  faults: Record<FaultKind, number>;
  kills: number;
  /** Transactions held past the timeout of a server killed before the proxy let them through: the next process must count them as pending. */
  sendsOutlivingTheirServer: number;
  /** Starts of the server while the faults were on (its start-up recovery meets them), and how many of those failed. */
  startsUnderFaults: number;
  failedStarts: number;
  /** Traders made while the server runs, whose first order the dev faucet funds under the faults. */
  newAccounts: number;
  audits: number;
}

const tally: Tally = {
  runs: 0,
  rpcRequests: 0,
  faults: { error500: 0, refused: 0, dropped: 0, held: 0, delayed: 0 },
  kills: 0,
  sendsOutlivingTheirServer: 0,
  startsUnderFaults: 0,
  failedStarts: 0,
  newAccounts: 0,
  audits: 0,
};

let dataDir: string;
let chainDir: string;
let chain: DevChain;
let front: { url: string; close(): Promise<void> };
let proxy: RpcProxy;
let sims: Simulators;
let traders: Trader[];
let traffic: Traffic;
let server: ServerProcess | undefined;
let serverEnv: Env;
/** Bursts so far: each numbers its orders' client ids. */
let bursts = 0;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "crossfill-chain-faults-"));
  chainDir = mkdtempSync(join(tmpdir(), "crossfill-chain-faults-node-"));
  chain = await startDevChain({ dataDir: chainDir });
  // As `crossfill chain` serves it: the operator's transactions journaled and mined a batch at a time.
  front = await startRpcFront(chain);
  proxy = await startRpcProxy(front.url);
  sims = await Simulators.start(dataDir, SEED % 1000);
  traders = await makeTraders(dataDir, 4);
  traffic = new Traffic({ seed: SEED, rng, traders, dataDir, serverLog: () => server?.log.tail, withdrawalShare: 0.3 });
  serverEnv = { DATA_DIR: dataDir, ...sims.env, ...BASE_ENV, CHAIN_RPC_URL: proxy.url, OPERATOR_PRIVATE_KEY: chain.operatorKey };
}, 120_000);

afterAll(async () => {
  await server?.kill();
  await proxy?.stop();
  await sims?.stop();
  await front?.close();
  await chain?.stop();
  const ended = traffic ? { ...traffic.counts, outcomes: await outcomes(dataDir), funds: await fundsOutcomes(dataDir) } : {};
  console.log(`chain fault suite tally (FAULT_SEED=${SEED}): ${JSON.stringify({ ...tally, ...ended })}`);
  if (process.env.FAULT_KEEP) console.log(`chain fault suite directories kept: ${dataDir} ${chainDir}`);
  else for (const dir of [dataDir, chainDir]) rmSync(dir, { recursive: true, force: true });
});

/** When each held request carrying transactions reaches the node. */
const heldSends: number[] = [];
/** Called when the proxy holds a request carrying transactions: a run may kill its server right then. */
let onHeldSend: (() => void) | undefined;

/** Each request's fate under a run's odds, counted by kind. */
function faulty(odds: Record<FaultKind, number>): RpcProxy["decide"] {
  return (calls) => {
    tally.rpcRequests++;
    let draw = rng.next();
    for (const kind of FAULT_KINDS) {
      draw -= odds[kind];
      if (draw >= 0) continue;
      tally.faults[kind]++;
      switch (kind) {
        case "error500":
          return { kind: "error" };
        case "refused":
          return { kind: "refuse" };
        case "dropped":
          return { kind: "drop" };
        case "held": {
          const ms = RPC_TIMEOUT_MS + rng.int(200, 8_000);
          if (calls.some((c) => c.method === "eth_sendRawTransaction")) {
            heldSends.push(Date.now() + ms);
            onHeldSend?.();
          }
          return { kind: "delay", ms };
        }
        case "delayed":
          return { kind: "delay", ms: rng.int(20, 600) };
      }
    }
    return { kind: "pass" };
  };
}

/** A run's odds: 3–25 % of requests fault, split at random among the kinds, so some runs lean on one kind. */
function drawOdds(): Record<FaultKind, number> {
  const total = [0.03, 0.08, 0.15, 0.25][rng.int(0, 3)]!;
  const weights = FAULT_KINDS.map(() => rng.next() ** 2);
  const sum = weights.reduce((a, b) => a + b, 0);
  return Object.fromEntries(FAULT_KINDS.map((k, i) => [k, (total * weights[i]!) / sum])) as Record<FaultKind, number>;
}

function faultsOff(): void {
  proxy.decide = () => ({ kind: "pass" });
}

/**
 * Starts the server. Under faults its start may fail: it reads the chain without retrying and exits at
 * the first failure, having done nothing. After a few such failures it is started on a clean chain, and
 * the faults come back for the burst.
 */
async function start(underFaults: boolean): Promise<ServerProcess> {
  if (underFaults) tally.startsUnderFaults++;
  for (let attempt = 1; ; attempt++) {
    try {
      server = await ServerProcess.start(serverEnv);
      return server;
    } catch (e) {
      if (!underFaults) throw traffic.fail(`the server did not start: ${(e as Error).message.slice(-4_000)}`);
      tally.failedStarts++;
      if (attempt < 4) continue;
      const faults = proxy.decide;
      faultsOff();
      try {
        return await start(false);
      } finally {
        proxy.decide = faults;
      }
    }
  }
}

async function audited(): Promise<void> {
  await server?.stop();
  server = undefined;
  // A request the proxy still holds may yet act on the chain: the audit reads it once none can.
  await proxy.settled();
  await expectAuditOk({ ...serverEnv, CHAIN_RPC_URL: front.url }, (what) => traffic.fail(what));
  tally.audits++;
}

/** Every order sent to a server nobody killed gets an answer, whatever the chain does. */
function answered(s: ServerProcess, sent: Sent[]): Sent[] {
  const lost = sent.filter((x) => x.interrupted).length;
  if (lost > 0) throw traffic.fail(`${lost} orders got no answer from a server nobody killed:\n${s.log.tail.slice(-8_000)}`);
  return sent;
}

/**
 * One run: faults on, a burst of orders (sometimes from a trader the faucet has not funded yet), the
 * server sometimes killed mid-burst and started again under the faults; then faults off, a restart if
 * needed, re-sends of what got no answer, and recovery until no order is open.
 */
async function run(): Promise<void> {
  tally.runs++;
  const n = rng.int(8, 24);
  const kill = rng.chance(0.3);
  // Half the kills come as the proxy holds the server's transactions, which reach the chain once it is gone.
  const killOnHold = kill && rng.chance(0.5);
  const odds = drawOdds();
  if (killOnHold) odds.held = Math.max(odds.held, 0.1);
  const faults = faulty(odds);
  if (!server || rng.chance(0.2)) {
    await server?.stop();
    // The first start deploys the contracts on a clean chain, as an operator would; later ones meet the faults.
    const first = tally.runs === 1;
    if (!first) proxy.decide = faults;
    await start(!first);
  }
  proxy.decide = faults;
  const s = server!;
  if (rng.chance(0.25)) {
    traders.push(...(await makeTraders(dataDir, 1, traders.length)));
    tally.newAccounts++;
  }
  const killNow = async () => {
    await s.kill();
    tally.sendsOutlivingTheirServer += heldSends.filter((at) => at > Date.now()).length;
  };
  const killer = kill
    ? new Promise<void>((resolve) => {
        const now = () => {
          clearTimeout(timer);
          onHeldSend = undefined;
          void killNow().then(resolve);
        };
        const timer = setTimeout(now, rng.int(15, 4_000));
        if (killOnHold) onHeldSend = now;
      })
    : Promise.resolve();
  const sent: Sent[] = await traffic.burst(s.url, bursts++, n, rng.chance(0.2));
  await killer;
  if (kill) {
    tally.kills++;
    if (rng.chance(0.5)) {
      const again = await start(true);
      sent.push(...answered(again, await traffic.burst(again.url, bursts++, rng.int(4, 12), false)));
    }
  } else answered(s, sent);
  faultsOff();
  if (!server?.alive) await start(false);
  await traffic.resend(server!.url, sent);
  await traffic.quiet(60_000);
}

describe(`chain fault suite (FAULT_SEED=${SEED})`, () => {
  it(
    "keeps every invariant of the order path, withdrawals and deposits while the chain's JSON-RPC errs, refuses, loses answers and times out",
    async () => {
      const deadline = Date.now() + MINUTES * 60_000;
      while (Date.now() < deadline) {
        await run();
        if (tally.runs % 5 === 0) await audited();
      }
      await audited();
      expect(Object.values(tally.faults).every((n) => n > 0)).toBe(true);
    },
    (MINUTES + 20) * 60_000,
  );
});
