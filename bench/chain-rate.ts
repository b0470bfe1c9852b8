// The embedded chain's rates on a fresh dev chain as the server runs it, for `npm run bench:chain` and
// `npm run bench:burst`: the raw transaction rate (what the chain takes when each order is a transaction of
// its own) and orders' chain work through the Vault port, which batches it.
import { keccak256, toHex, type Abi } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { vaultAbi } from "../src/contracts/artifacts.ts";
import { sotTokenId } from "../src/contracts/sot.ts";
import { storeNonceBook } from "../src/vault/evm/nonce-book.ts";
import { TxSender, type TxObserver } from "../src/vault/evm/sender.ts";
import { closeTestChain, keyOf, openTestChain, tempDir, type TestChain } from "../src/vault/testkit.ts";

export interface Rate {
  done: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** How long each measurement runs, and how many of its operations are in flight at once. */
export interface LoopOptions {
  seconds: number;
  concurrency: number;
}

/** `concurrency` workers each run `one` again and again for `seconds`: how many a second, and their latency. */
async function closedLoop(one: (n: number) => Promise<void>, opts: LoopOptions): Promise<Rate> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const deadline = started + opts.seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      await one(next++);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { done: latencies.length, seconds, perSecond: latencies.length / seconds, p50Ms: pct(0.5), p99Ms: pct(0.99) };
}

/** Calls per Vault.batch transaction: how many, their mean and largest. */
export class CallsSeen {
  sizes: number[] = [];
  readonly observer: TxObserver = { transaction: () => undefined, batch: () => undefined, calls: (n) => void this.sizes.push(n) };
  summary(): string {
    if (this.sizes.length === 0) return "no batch transaction";
    const sum = this.sizes.reduce((s, n) => s + n, 0);
    return `${this.sizes.length} transactions, ${(sum / this.sizes.length).toFixed(1)} calls each on average, ${Math.max(...this.sizes)} at most`;
  }
}

/** Runs `measure` on a fresh dev chain with the vault on it, `calls` watching its batch transactions. */
export async function onTestChain<T>(measure: (t: TestChain, calls: CallsSeen) => Promise<T>): Promise<T> {
  const calls = new CallsSeen();
  const t = await openTestChain(tempDir(), { snapshotEvery: 1_000_000, txObserver: calls.observer });
  try {
    return await measure(t, calls);
  } finally {
    await closeTestChain(t);
  }
}

/**
 * Operator transactions of one simple call each (a transfer of nothing) through the same group-commit
 * sender as every operator transaction (dry run, nonce book, signing, journal + fsync, one block per group,
 * receipts), from a second sender as the operator, as another instance would be: the nonce book in the
 * store keeps them apart.
 */
export async function rawRate(t: TestChain, opts: LoopOptions): Promise<Rate> {
  const account = privateKeyToAccount(t.chain.operatorKey);
  const raw = new TxSender({
    rpc: t.rpc,
    account,
    chainId: t.chain.chainId,
    submit: t.chain.submit,
    errorAbi: vaultAbi as Abi,
    nonces: storeNonceBook(t.store, { chainId: t.chain.chainId, genesis: (await t.rpc.call<{ hash: `0x${string}` }>("eth_getBlockByNumber", ["0x0", false])).hash, operator: account.address }),
  });
  return closedLoop(async () => void (await raw.send({ label: "transfer", to: account.address, data: "0x", gas: 21_000n })), opts);
}

/** Each order a lock then a settle through the Vault port, which batches them (Vault.batch). */
export async function ordersChainRate(t: TestChain, opts: LoopOptions): Promise<Rate> {
  const client = "0x0000000000000000000000000000000000be4c11" as const;
  await t.vault.fund(client, 10n ** 15n, keyOf("bench-chain"));
  const tokenId = sotTokenId("bench", "YES");
  return closedLoop(async (n) => {
    const o = keccak256(toHex(`bench-chain-${n}`));
    await t.vault.lock(o, client, 1_000n);
    await t.vault.settle(o, 600n, { tokenId, shares: 1_000n });
  }, opts);
}

/** Every sample of a metric in /metrics, by its labels. */
export function samples(metrics: string, name: string): [string, number][] {
  return [...metrics.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, "gm"))].map((m) => [m[1]!, Number(m[2])]);
}

/** The child orders the server counted, by venue and by what the venue answered (filled, partial, rejected, ...). */
export function childOrders(metrics: string): Record<string, Record<string, number>> {
  const children: Record<string, Record<string, number>> = {};
  for (const [labels, n] of samples(metrics, "crossfill_venue_child_orders_total")) {
    const { venue, result } = Object.fromEntries([...labels.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]])) as { venue: string; result: string };
    (children[venue] ??= {})[result] = n;
  }
  return children;
}

/** Mean of a labelled histogram's samples in ms (to the 10 µs), by the label's value. */
export function meansMs(metrics: string, name: string, label: string): Record<string, number> {
  return Object.fromEntries(
    samples(metrics, `${name}_count`).map(([labels, n]) => {
      const value = new RegExp(`${label}="([^"]*)"`).exec(labels)![1]!;
      return [value, Math.round((sample(metrics, `${name}_sum{${labels}}`) / n) * 100_000) / 100];
    }),
  );
}

/** A quantile (`"0.5"`, `"0.99"`) of POST /v1/order's own work in the server's /metrics text, in ms. */
export function ownWorkMs(metrics: string, q: string): number {
  return sample(metrics, `crossfill_order_own_seconds{quantile="${q}"}`) * 1000;
}

/** A sample of the server's /metrics text, by its full name and labels; NaN when absent. */
export function sample(metrics: string, name: string): number {
  const escaped = name.replace(/[{}"]/g, (c) => `\\${c}`);
  return Number(new RegExp(`^${escaped} (\\S+)$`, "m").exec(metrics)?.[1] ?? NaN);
}

/**
 * The server's event-loop delay since /metrics was last scraped, as "p50 …, p99 …, max … ms": prom-client
 * times a 10 ms timer's intervals, so the delay is what they took beyond it.
 */
export function loopDelay(metrics: string): string {
  const late = (q: string) => (sample(metrics, `nodejs_eventloop_lag_${q}_seconds`) * 1000 - 10).toFixed(1);
  return `p50 ${late("p50")}, p99 ${late("p99")}, max ${late("max")} ms`;
}

/** What the server's /metrics saw of its Vault.batch transactions (crossfill_chain_calls_per_tx). */
export function callsPerTx(metrics: string): string {
  const count = sample(metrics, "crossfill_chain_calls_per_tx_count");
  return `${count} transactions, ${(sample(metrics, "crossfill_chain_calls_per_tx_sum") / count).toFixed(1)} calls each on average`;
}
