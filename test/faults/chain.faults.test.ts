// The chain fault suite: concurrent orders and withdrawals (most to another trader's deposit address, so
// deposits too, which the deposit watcher finds and credits) from several traders while the chain's JSON-RPC misbehaves
// (errors, refused connections, answers lost after the node acted, requests held past the client's
// timeout and then done, slow requests), the server sometimes killed mid-burst and started again under
// the same faults; once the faults stop and recovery is done, `crossfill audit`, reading the chain
// directly, must find every invariant intact. Payments and credits count once DEPOSIT_CONFIRMATIONS blocks
// deep, blocks come every BLOCK_MS, and some runs end with withdrawals-only traffic whose payments, and then
// the credits of the deposits they make, are reorganised away while still shallower than that: each must be
// paid or credited again, once. Seeded: FAULT_SEED reproduces a run's draws (the seed is printed and named in
// every failure); FAULT_MINUTES bounds its length.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeFunctionData, type Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vaultAbi } from "../../src/contracts/artifacts.ts";
import { startDevChain, type DevChain } from "../../src/vault/devnode/index.ts";
import { startRpcFront } from "../../src/vault/devnode/rpc-front.ts";
import { JsonRpc } from "../../src/vault/rpc.ts";
import { Rng } from "../../src/venues/simulated/prng.ts";
import { startRpcProxy, type RpcProxy } from "../helpers/rpc-proxy.ts";
import { expectAuditOk, fundsOutcomes, makeTraders, outcomes, ServerProcess, Simulators, Traffic, type Env, type Sent, type Trader } from "./harness.ts";

const SEED = Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
const MINUTES = Number(process.env.FAULT_MINUTES ?? 3);
const rng = new Rng(SEED);
console.log(`chain fault suite: FAULT_SEED=${SEED} FAULT_MINUTES=${MINUTES}`);

/** The server's JSON-RPC timeout: a held request times out in seconds, not the default 15. */
const RPC_TIMEOUT_MS = 2_000;
/** How deep a payment or a credit must be to count: a reorganisation no deeper than this must change nothing counted. */
const CONFIRMATIONS = 2;
/** A block every half second besides those the operator's transactions make, as a chain makes them whether or not the service sends anything. */
const BLOCK_MS = 500;
/** Child orders expire fast, so recovery can call a lost one never placed within seconds. */
const BASE_ENV: Env = {
  CHILD_ORDER_TTL_MS: "3000",
  EXPIRY_SKEW_MS: "2000",
  RECONCILE_INTERVAL_MS: "1000",
  SIM_LATENCY_SCALE: "0.05",
  CHAIN_RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS),
  DEPOSIT_CONFIRMATIONS: String(CONFIRMATIONS),
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
  /** Reorganisations that removed withdrawals' payments, and deposits' credits, still under the confirmations; and those not made, a block above the chosen height holding another transaction. */
  reorgs: { payments: number; credits: number; skipped: number };
  /** The transactions they removed. */
  removed: { payments: number; credits: number };
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
  reorgs: { payments: 0, credits: 0, skipped: 0 },
  removed: { payments: 0, credits: 0 },
  audits: 0,
};

let dataDir: string;
let chainDir: string;
let chain: DevChain;
/** anvil itself, under the front and the proxy: the suite's own blocks and reorganisations. */
let anvil: JsonRpc;
let miner: NodeJS.Timeout | undefined;
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
  anvil = new JsonRpc(chain.rpcUrl);
  mining(true);
  // As `crossfill chain` serves it: the operator's transactions journaled and mined a batch at a time.
  front = await startRpcFront(chain);
  proxy = await startRpcProxy(front.url);
  sims = await Simulators.start(dataDir, SEED % 1000);
  traders = await makeTraders(dataDir, 4);
  traffic = new Traffic({ seed: SEED, rng, traders, dataDir, serverLog: () => server?.log.tail, withdrawalShare: 0.3 });
  serverEnv = { DATA_DIR: dataDir, ...sims.env, ...BASE_ENV, CHAIN_RPC_URL: proxy.url, OPERATOR_PRIVATE_KEY: chain.operatorKey };
}, 120_000);

afterAll(async () => {
  mining(false);
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

/** The suite's own blocks, every BLOCK_MS, on or off. */
function mining(on: boolean): void {
  clearInterval(miner);
  miner = on ? setInterval(() => void anvil.call("evm_mine").catch(() => undefined), BLOCK_MS) : undefined;
}

const blockNumber = async () => BigInt(await anvil.call<Hex>("eth_blockNumber"));

/** Snapshots of the chain, each at the height read before it was taken: a reorganisation back to one removes the blocks above. */
const rungs: { id: Hex; height: bigint }[] = [];

async function mark(): Promise<void> {
  // The height first: a block mined in between makes the rung lower than it says, so a reorganisation removes less than was looked at, never more.
  const height = await blockNumber();
  if (rungs.at(-1)?.height === height) return;
  rungs.push({ id: await anvil.call<Hex>("evm_snapshot"), height });
}

type FundsCall = "withdrawTo" | "creditDeposit";

/** The Vault call each transaction of the blocks above `height` makes, undefined for any other transaction. */
async function callsAbove(height: bigint, head: bigint): Promise<(FundsCall | undefined)[]> {
  const calls: (FundsCall | undefined)[] = [];
  for (let n = height + 1n; n <= head; n++) {
    const block = await anvil.call<{ transactions: { input: Hex }[] }>("eth_getBlockByNumber", [`0x${n.toString(16)}`, true]);
    for (const tx of block.transactions) {
      let name: string | undefined;
      try {
        name = decodeFunctionData({ abi: vaultAbi, data: tx.input }).functionName;
      } catch {
        name = undefined;
      }
      calls.push(name === "withdrawTo" || name === "creditDeposit" ? name : undefined);
    }
  }
  return calls;
}

/**
 * The rung a reorganisation no deeper than the confirmations goes back to, to remove at least one `wanted` call:
 * the lowest whose blocks above hold one and nothing but payments and credits (an order's lock or settlement, or a
 * faucet drip, waits for no confirmation: no reorganisation of it is promised to be survived). None when no rung will do.
 */
async function rungFor(wanted: FundsCall): Promise<{ rung: (typeof rungs)[number]; head: bigint; calls: FundsCall[] } | undefined> {
  const head = await blockNumber();
  for (const rung of rungs) {
    if (rung.height >= head || head - rung.height > CONFIRMATIONS) continue;
    const calls = await callsAbove(rung.height, head);
    if (calls.includes(wanted) && !calls.includes(undefined)) return { rung, head, calls: calls as FundsCall[] };
  }
  return undefined;
}

/**
 * Removes the `wanted` calls a rung is found for, whether or not the server has read their receipts yet: back to
 * the rung, then a longer chain of empty blocks; the suite's blocks held meanwhile, so none comes in unlooked at.
 * False when no rung will do.
 */
async function reorg(wanted: FundsCall): Promise<boolean> {
  if (!(await rungFor(wanted))) return false;
  mining(false);
  const found = await rungFor(wanted);
  if (found) {
    await anvil.call("evm_revert", [found.rung.id]);
    for (let n = found.rung.height; n <= found.head; n++) await anvil.call("evm_mine");
    // The reverted rung and those above it are gone; those below are not worth keeping.
    rungs.length = 0;
    tally.reorgs[wanted === "withdrawTo" ? "payments" : "credits"]++;
    tally.removed.payments += found.calls.filter((c) => c === "withdrawTo").length;
    tally.removed.credits += found.calls.filter((c) => c === "creditDeposit").length;
  }
  mining(true);
  return found !== undefined;
}

/**
 * Withdrawals alone, on a quiet service, under the run's RPC faults: a reorganisation removes the last payments
 * while they are under the confirmations (sent), and once the transfers they made to other traders are deep enough
 * to be credited, another removes the credits while they are (crediting). Recovery must pay and credit each again,
 * once; a trader re-sends what got no answer.
 */
async function reorganised(url: string, faults: RpcProxy["decide"]): Promise<Sent[]> {
  const run = bursts++;
  const from = Array.from({ length: rng.int(1, 4) }, () => traders[rng.int(0, traders.length - 1)]!);
  // A trader's first request has the faucet fund it, a transaction no reorganisation here may remove: done before.
  for (const t of new Set(from)) await t.client(url).account();
  await proxy.settled();
  mining(false);
  proxy.decide = faults;
  const sent: Sent[] = [];
  await mark();
  for (const [i, t] of from.entries()) {
    const s: Sent = { kind: "withdrawal", trader: t, body: traffic.randomWithdrawal(run, i, t), interrupted: false };
    await traffic.send(t.client(url), s);
    sent.push(s);
    await mark();
  }
  if (!(await reorg("withdrawTo"))) tally.reorgs.skipped++;
  mining(true);
  const deadline = Date.now() + 20_000;
  for (;;) {
    await mark();
    if (await reorg("creditDeposit")) break;
    if (Date.now() > deadline) {
      tally.reorgs.skipped++;
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  rungs.length = 0;
  faultsOff();
  return sent;
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
  if (tally.runs > 1 && !rng.chance(0.3)) return;
  const withdrawals = await reorganised(server!.url, faults);
  await traffic.resend(server!.url, withdrawals);
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
      expect(tally.reorgs.payments + tally.reorgs.credits).toBeGreaterThan(0);
    },
    (MINUTES + 20) * 60_000,
  );
});
