// `npm run bench:chain`: the embedded chain's raw transaction rate beside orders, in one run (issue 9:
// orders per second at least the chain's raw transaction rate). On a fresh dev chain, as the server runs it:
//   1. raw: operator transactions of one simple call each (a transfer of nothing), through the same
//      group-commit sender as every operator transaction: what the chain takes when each order is a transaction;
//   2. orders' chain work: each order a lock then a settle through the Vault port, which batches them
//      (Vault.batch), with the calls per transaction seen;
// then 3. POST /v1/order on the server (embedded default), with p50/p99 and the calls per batch
// transaction its /metrics saw. BENCH_SECONDS (default 10) per run, BENCH_CONCURRENCY (default 200) in flight.
import { execFileSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keccak256, toHex, type Abi } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { vaultAbi } from "../src/contracts/artifacts.ts";
import { sotTokenId } from "../src/contracts/sot.ts";
import { storeNonceBook } from "../src/vault/evm/nonce-book.ts";
import { TxSender, type TxObserver } from "../src/vault/evm/sender.ts";
import { closeTestChain, keyOf, openTestChain, tempDir } from "../src/vault/testkit.ts";
import { load, signedPost, type LoadResult } from "./load.ts";
import { freePort, startChild } from "./procs.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 200);
const root = new URL("..", import.meta.url).pathname;

interface Rate {
  done: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** `CONCURRENCY` workers each run `one` again and again for `SECONDS`: how many a second, and their latency. */
async function closedLoop(one: (n: number) => Promise<void>): Promise<Rate> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      await one(next++);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { done: latencies.length, seconds, perSecond: latencies.length / seconds, p50Ms: pct(0.5), p99Ms: pct(0.99) };
}

/** Calls per Vault.batch transaction: how many, their mean and largest. */
class CallsSeen {
  sizes: number[] = [];
  readonly observer: TxObserver = { transaction: () => undefined, batch: () => undefined, calls: (n) => void this.sizes.push(n) };
  summary(): string {
    if (this.sizes.length === 0) return "no batch transaction";
    const sum = this.sizes.reduce((s, n) => s + n, 0);
    return `${this.sizes.length} transactions, ${(sum / this.sizes.length).toFixed(1)} calls each on average, ${Math.max(...this.sizes)} at most`;
  }
}

async function chainRuns(): Promise<{ raw: Rate; orders: Rate; calls: string }> {
  const calls = new CallsSeen();
  const t = await openTestChain(tempDir(), { snapshotEvery: 1_000_000, txObserver: calls.observer });
  try {
    const account = privateKeyToAccount(t.chain.operatorKey);
    // A second sender as the operator, as another instance would be: the nonce book in the store keeps them apart.
    const raw = new TxSender({
      rpc: t.rpc,
      account,
      chainId: t.chain.chainId,
      submit: t.chain.submit,
      errorAbi: vaultAbi as Abi,
      nonces: storeNonceBook(t.store, { chainId: t.chain.chainId, genesis: (await t.rpc.call<{ hash: `0x${string}` }>("eth_getBlockByNumber", ["0x0", false])).hash, operator: account.address }),
    });
    const rawRate = await closedLoop(async () => void (await raw.send({ label: "transfer", to: account.address, data: "0x", gas: 21_000n })));
    const client = "0x0000000000000000000000000000000000be4c11" as const;
    await t.vault.fund(client, 10n ** 15n, keyOf("bench-chain"));
    const tokenId = sotTokenId("bench", "YES");
    const orderRate = await closedLoop(async (n) => {
      const o = keccak256(toHex(`bench-chain-${n}`));
      await t.vault.lock(o, client, 1_000n);
      await t.vault.settle(o, 600n, { tokenId, shares: 1_000n });
    });
    return { raw: rawRate, orders: orderRate, calls: calls.summary() };
  } finally {
    await closeTestChain(t);
  }
}

/** POST /v1/order on the server's embedded default, and the calls per batch transaction its /metrics saw. */
async function httpOrders(): Promise<{ orders: LoadResult; calls: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), "crossfill-bench-chain-"));
  const port = await freePort();
  let server: ChildProcess | undefined;
  try {
    const env = { PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: "warn", RATE_LIMIT_PER_MINUTE: "1000000000", DEV_FAUCET_USDC: "100000000" };
    server = await startChild(["--import", "tsx", "src/main.ts"], { ...env, LOG_LEVEL: "info" }, (l) => l.includes("crossfill is serving"));
    const key = JSON.parse(
      execFileSync(process.execPath, ["bin/crossfill.mjs", "keys", "create", "--name", "bench", "--scopes", "read,trade", "--json"], { cwd: root, env: { ...process.env, ...env, CROSSFILL_FROM_SOURCE: "1" }, encoding: "utf8" }),
    ) as { api_key: string; api_secret: string };
    const url = `http://127.0.0.1:${port}`;
    await load(url, () => ({ method: "GET", path: "/v1/account", headers: { "x-api-key": key.api_key } }), { connections: 1, seconds: 1 });
    let n = 0;
    const orders = await load(
      url,
      () => {
        const body = JSON.stringify({ market_id: "fed-cut-2026-12", outcome: n % 2 ? "NO" : "YES", side: "buy", amount_usdc: "1", max_slippage: 0.05, strategy: "optimize_price", client_order_id: `bench-${n++}` });
        return signedPost(key, "/v1/order", body);
      },
      { connections: CONCURRENCY, seconds: SECONDS },
    );
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const sample = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(metrics)?.[1] ?? NaN);
    const count = sample("crossfill_chain_calls_per_tx_count");
    const calls = `${count} transactions, ${(sample("crossfill_chain_calls_per_tx_sum") / count).toFixed(1)} calls each on average`;
    return { orders, calls };
  } finally {
    server?.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 1000));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const chain = await chainRuns();
const http = await httpOrders();
const ratio = (x: number) => `${(x / chain.raw.perSecond).toFixed(2)}× raw`;
console.log(`\ncrossfill chain bench — ${SECONDS}s per run, ${CONCURRENCY} in flight, node ${process.version}`);
console.log(`raw chain: one transfer per transaction     ${chain.raw.perSecond.toFixed(0).padStart(6)} tx/s      p50 ${chain.raw.p50Ms.toFixed(0)} ms  p99 ${chain.raw.p99Ms.toFixed(0)} ms`);
console.log(`orders' chain work (lock + settle, batched) ${chain.orders.perSecond.toFixed(0).padStart(6)} orders/s  p50 ${chain.orders.p50Ms.toFixed(0)} ms  p99 ${chain.orders.p99Ms.toFixed(0)} ms  ${ratio(chain.orders.perSecond)}`);
console.log(`  batches: ${chain.calls}`);
console.log(`POST /v1/order                              ${http.orders.rps.toFixed(0).padStart(6)} orders/s  p50 ${http.orders.p50Ms.toFixed(0)} ms  p99 ${http.orders.p99Ms.toFixed(0)} ms  ${ratio(http.orders.rps)}`);
console.log(`  statuses ${JSON.stringify(http.orders.statuses)}; batches: ${http.calls}`);
