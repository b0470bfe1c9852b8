// An order whose venue never answers, ended at its lock's or escrow's deadline: a buy (or a sell of shares
// bought first) sent through two venues while the server is killed at a step of it (or after a random
// delay), started again without those venues, so that recovery cannot learn what a child order did; the
// lock or escrow must stay until its deadline. Then the chain's clock (and the server's) moves a day past
// it, sometimes the client expires it on chain first, and the server is started again, sometimes killed
// once more during that recovery: the order must end final (settled on the fills stored, or failed with
// every cent or share back), its lock or escrow ended exactly once, the client's balance and positions as
// the order says, and `crossfill audit` must find every invariant intact. Each case on a chain of its own,
// whose clock it moves. Seeded: FAULT_SEED reproduces a run; FAULT_MINUTES bounds it.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeFunctionData, type Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vaultAbi } from "../../src/contracts/artifacts.ts";
import { CHECKPOINTS, chainOrderId } from "../../src/orders/service.ts";
import type { Account, Order, OrderRequest } from "../../src/sdk/types.ts";
import { JsonRpc } from "../../src/vault/rpc.ts";
import { Rng } from "../../src/venues/simulated/prng.ts";
import { Chain, expectAuditOk, makeTraders, ServerProcess, Simulators, type Env, type Trader } from "./harness.ts";

const SEED = Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
const MINUTES = Number(process.env.FAULT_MINUTES ?? 1);
const rng = new Rng(SEED);
console.log(`deadline fault suite: FAULT_SEED=${SEED} FAULT_MINUTES=${MINUTES}`);

/** The Vault's lockTtl, a day, and what the clocks move past it. */
const PAST_DEADLINE_S = 86_400 + 120;
/**
 * The venues the order routes through, and the one the server started again keeps: neither of them. A venue kept
 * would be asked by a server whose clock is a day ahead of the simulators', whose signed requests they refuse.
 */
const ROUTED = ["polymarket", "kalshi"];
const KEPT = "limitless";
const ORDER_STEPS = CHECKPOINTS.filter((c) => c.startsWith("order."));
/** The steps a kill at leaves the order routing, its child orders sent: most kills come there. */
const ROUTING_STEPS = ["order.routing", "order.placed", "order.fills.stored"] as const;
const BASE_ENV: Env = { CHILD_ORDER_TTL_MS: "2000", EXPIRY_SKEW_MS: "1000", RECONCILE_INTERVAL_MS: "500", SIM_LATENCY_SCALE: "0.05" };

const tally = { cases: 0, sells: 0, kills: {} as Record<string, number>, waitedForDeadline: 0, expiredOnChain: 0, recoveryKills: 0, outcomes: {} as Record<string, number> };

let root: string;
let sims: Simulators;
let server: ServerProcess | undefined;
let chain: Chain | undefined;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "crossfill-deadline-faults-"));
  sims = await Simulators.start(join(root, "sim"), SEED % 1000);
}, 120_000);

afterAll(async () => {
  await server?.kill();
  await chain?.stop();
  await sims?.stop();
  console.log(`deadline fault suite tally (FAULT_SEED=${SEED}): ${JSON.stringify(tally)}`);
  if (process.env.FAULT_KEEP) console.log(`deadline fault suite directory kept: ${root}`);
  else rmSync(root, { recursive: true, force: true });
});

const fail = (what: string) => new Error(`${what} (FAULT_SEED=${SEED})\nserver log:\n${server?.log.tail.slice(-8_000)}`);
const micro = (n: number) => BigInt(Math.round(n * 1e6));
const FINAL = ["filled", "partially_filled", "failed", "rejected"];

/** A transaction from `from` (unlocked, or impersonated) to the Vault, mined at once; false when it reverted. */
async function sendToVault(rpc: JsonRpc, from: string, vault: string, data: Hex): Promise<boolean> {
  const hash = await rpc.call<Hex>("eth_sendTransaction", [{ from, to: vault, data, gas: "0x100000" }]);
  await rpc.call("evm_mine");
  const receipt = await rpc.call<{ status: Hex } | null>("eth_getTransactionReceipt", [hash]);
  return receipt?.status === "0x1";
}

/** The client ends its lock (anyone may) or its escrow (its client alone) on chain, past the deadline. */
async function expireOnChain(rpc: JsonRpc, vault: string, order: Order, client: string): Promise<boolean> {
  const id = chainOrderId(order.order_id);
  if (order.side === "buy") {
    const [anyone] = await rpc.call<string[]>("eth_accounts");
    return sendToVault(rpc, anyone!, vault, encodeFunctionData({ abi: vaultAbi, functionName: "expire", args: [id] }));
  }
  await rpc.call("anvil_impersonateAccount", [client]);
  await rpc.call("anvil_setBalance", [client, "0xde0b6b3a7640000"]);
  try {
    return await sendToVault(rpc, client, vault, encodeFunctionData({ abi: vaultAbi, functionName: "expireEscrow", args: [id] }));
  } finally {
    await rpc.call("anvil_stopImpersonatingAccount", [client]);
  }
}

/** Waits for the order to be final, the server started (and restarted) with `env` meanwhile. */
async function finalOrder(trader: Trader, orderId: string, env: Env, clock: () => number): Promise<Order> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!server?.alive) server = await ServerProcess.start(env);
    const o = await trader.client(server.url, clock).getOrder(orderId).catch(() => undefined);
    if (o && FINAL.includes(o.status)) return o;
    if (Date.now() > deadline) throw fail(`order ${orderId} is still ${o?.status} a minute after its deadline passed`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const sharesOf = (a: Account, event: string, outcome: string) => micro(a.positions.find((p) => p.event_id === event && p.outcome === outcome)?.shares ?? 0);

async function deadlineCase(n: number): Promise<void> {
  tally.cases++;
  const dir = join(root, `case-${n}`);
  mkdirSync(dir);
  chain = await Chain.start(join(dir, "chain"));
  const rpc = new JsonRpc(chain.env.CHAIN_RPC_URL!);
  const env: Env = { DATA_DIR: join(dir, "server"), ...chain.env, ...sims.env, ...BASE_ENV, VENUES: ROUTED.join(",") };
  mkdirSync(env.DATA_DIR!);
  const [trader] = (await makeTraders(env.DATA_DIR!, 1)) as [Trader];
  // The first case is a buy killed once its child orders are out: it waits for its deadline.
  const first = n === 0;
  const sell = !first && rng.chance(0.5);
  const event = "fed-cut-2026-12";
  const outcome = rng.chance(0.5) ? "YES" : "NO";

  server = await ServerProcess.start(env);
  const vault = (await trader.client(server.url).health()).chain.contracts.vault;
  if (sell) {
    tally.sells++;
    const bought = await trader.client(server.url).order({ market_id: event, outcome, side: "buy", amount_usdc: "200", max_slippage: "0.05", time_in_force: "IOC" });
    if (bought.filled_shares === 0) throw fail(`the buy before the sell filled nothing: ${JSON.stringify(bought)}`);
  }
  const before = await trader.client(server.url).account();
  await server.stop();

  // Killed at a step of the order, or after a random delay; an order the kill missed finishes as usual.
  const draw = rng.next();
  const step = first ? "order.placed" : draw < 0.6 ? ROUTING_STEPS[rng.int(0, ROUTING_STEPS.length - 1)]! : draw < 0.85 ? ORDER_STEPS[rng.int(0, ORDER_STEPS.length - 1)]! : undefined;
  server = await ServerProcess.start({ ...env, ...(step ? { CROSSFILL_KILL_AT: `${step}:1` } : {}) });
  const s = server;
  const killer = step ? undefined : setTimeout(() => void s.kill(), rng.int(20, 1_500));
  const held = sharesOf(before, event, outcome);
  const body: OrderRequest = sell
    ? { market_id: event, outcome, side: "sell", shares: (Number(held) / 1e6).toFixed(6), max_slippage: "0.05", time_in_force: "IOC", client_order_id: `deadline-${n}` }
    : { market_id: event, outcome, side: "buy", amount_usdc: (rng.int(50, 400) + rng.int(0, 999_999) / 1e6).toFixed(6), max_slippage: "0.05", time_in_force: "IOC", client_order_id: `deadline-${n}` };
  await trader.client(s.url).order(body).catch(() => undefined);
  clearTimeout(killer);
  await Promise.race([s.exited, new Promise((r) => setTimeout(r, 3_000))]);
  const killedAt = s.alive ? "none" : (step ?? "random");
  tally.kills[killedAt] = (tally.kills[killedAt] ?? 0) + 1;
  await s.kill();

  // Without the venues it went to: a routing order waits, its lock or escrow held, however often recovery passes.
  const gone: Env = { ...env, VENUES: KEPT };
  server = await ServerProcess.start(gone);
  const order = await trader.client(server.url).order(body).catch((e: { details?: { order_id?: string } }) => e.details?.order_id);
  const orderId = typeof order === "string" ? order : order?.order_id;
  if (!orderId) throw fail(`the client id deadline-${n} names no order after the restart`);
  await new Promise((r) => setTimeout(r, 2_000));
  const waiting = await trader.client(server.url).getOrder(orderId);
  if (waiting.status === "routing") {
    tally.waitedForDeadline++;
    if (!sell) expect(micro((await trader.client(server.url).account()).locked_usdc), "the lock was ended before its deadline").toBeGreaterThan(0n);
  }
  await server.stop();

  // A day on: the chain's clock and the server's past the deadline, the client sometimes ending it on chain first.
  await rpc.call("evm_increaseTime", [PAST_DEADLINE_S]);
  await rpc.call("evm_mine");
  if (waiting.status === "routing" && rng.chance(0.5)) {
    if (!(await expireOnChain(rpc, vault, waiting, trader.address))) throw fail(`the client could not expire ${orderId} past its deadline`);
    tally.expiredOnChain++;
  }
  const later: Env = { ...gone, CLOCK_SKEW_MS: String(PAST_DEADLINE_S * 1000) };
  const clock = () => Date.now() + PAST_DEADLINE_S * 1000;
  server = await ServerProcess.start(later);
  if (rng.chance(0.4)) {
    // Killed once more while recovery ends the order; started again by the wait.
    await new Promise((r) => setTimeout(r, rng.int(0, 1_000)));
    await server.kill();
    tally.recoveryKills++;
  }
  const ended = await finalOrder(trader, orderId, later, clock);
  const key = ended.error ? `${ended.status}/${ended.error.code}` : ended.status;
  tally.outcomes[key] = (tally.outcomes[key] ?? 0) + 1;

  const after = await trader.client(server!.url, clock).account();
  expect(micro(after.locked_usdc), `${orderId} left USDC locked: ${JSON.stringify(ended)}`).toBe(0n);
  if (sell) {
    expect(sharesOf(after, event, outcome), `${orderId}: ${JSON.stringify(ended)}`).toBe(held - micro(ended.filled_shares));
    expect(micro(after.available_usdc), `${orderId}: ${JSON.stringify(ended)}`).toBe(micro(before.available_usdc) + micro(ended.proceeds_usdc ?? 0));
  } else {
    expect(micro(after.available_usdc), `${orderId}: ${JSON.stringify(ended)}`).toBe(micro(before.available_usdc) - micro(ended.spent_usdc));
    expect(sharesOf(after, event, outcome), `${orderId}: ${JSON.stringify(ended)}`).toBe(sharesOf(before, event, outcome) + micro(ended.filled_shares));
  }
  await server!.stop();
  server = undefined;
  // What a venue gone filled is the operator's.
  await expectAuditOk(env, (what) => fail(`${orderId} (killed at ${killedAt}): ${what}`), ROUTED.map((v) => `${v}-sim`));
  await chain.stop();
  chain = undefined;
}

describe(`deadline fault suite (FAULT_SEED=${SEED})`, () => {
  it(
    "ends an order whose venue never answers at its lock's or escrow's deadline exactly once, through kills, with the client's expiry or without",
    async () => {
      const deadline = Date.now() + MINUTES * 60_000;
      for (let n = 0; Date.now() < deadline || n < 2; n++) await deadlineCase(n);
      expect(tally.waitedForDeadline).toBeGreaterThan(0);
    },
    (MINUTES + 10) * 60_000,
  );
});
