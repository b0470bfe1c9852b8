// `npm run bench:chain`: the embedded chain's raw transaction rate beside orders, in one run (issue 9:
// orders per second at least the chain's raw transaction rate). On a fresh dev chain, as the server runs it:
//   1. raw: operator transactions of one simple call each (a transfer of nothing), through the same
//      group-commit sender as every operator transaction: what the chain takes when each order is a transaction;
//   2. orders' chain work: each order a lock then a settle through the Vault port, which batches them
//      (Vault.batch), with the calls per transaction seen;
// then 3. POST /v1/order on the server (embedded default), with p50/p99 and the calls per batch
// transaction its /metrics saw. BENCH_SECONDS (default 10) per run, BENCH_CONCURRENCY (default 200) in flight.
import { callsPerTx, onTestChain, ordersChainRate, rawRate } from "./chain-rate.ts";
import { load, signedPost, type LoadResult } from "./load.ts";
import { startCrossfill } from "./procs.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 200);
const loop = { seconds: SECONDS, concurrency: CONCURRENCY };

/** POST /v1/order on the server's embedded default, and the calls per batch transaction its /metrics saw. */
async function httpOrders(): Promise<{ orders: LoadResult; calls: string }> {
  const server = await startCrossfill({ LOG_LEVEL: "warn", DEV_FAUCET_USDC: "100000000" });
  try {
    let n = 0;
    const orders = await load(
      server.url,
      () => {
        const body = JSON.stringify({ market_id: "fed-cut-2026-12", outcome: n % 2 ? "NO" : "YES", side: "buy", amount_usdc: "1", max_slippage: 0.05, strategy: "optimize_price", client_order_id: `bench-${n++}` });
        return signedPost(server.key, "/v1/order", body);
      },
      { connections: CONCURRENCY, seconds: SECONDS },
    );
    return { orders, calls: callsPerTx(await (await fetch(`${server.url}/metrics`)).text()) };
  } finally {
    await server.stop();
  }
}

const chain = await onTestChain(async (t, calls) => ({ raw: await rawRate(t, loop), orders: await ordersChainRate(t, loop), calls: calls.summary() }));
const http = await httpOrders();
const ratio = (x: number) => `${(x / chain.raw.perSecond).toFixed(2)}× raw`;
console.log(`\ncrossfill chain bench — ${SECONDS}s per run, ${CONCURRENCY} in flight, node ${process.version}`);
console.log(`raw chain: one transfer per transaction     ${chain.raw.perSecond.toFixed(0).padStart(6)} tx/s      p50 ${chain.raw.p50Ms.toFixed(0)} ms  p99 ${chain.raw.p99Ms.toFixed(0)} ms`);
console.log(`orders' chain work (lock + settle, batched) ${chain.orders.perSecond.toFixed(0).padStart(6)} orders/s  p50 ${chain.orders.p50Ms.toFixed(0)} ms  p99 ${chain.orders.p99Ms.toFixed(0)} ms  ${ratio(chain.orders.perSecond)}`);
console.log(`  batches: ${chain.calls}`);
console.log(`POST /v1/order                              ${http.orders.rps.toFixed(0).padStart(6)} orders/s  p50 ${http.orders.p50Ms.toFixed(0)} ms  p99 ${http.orders.p99Ms.toFixed(0)} ms  ${ratio(http.orders.rps)}`);
console.log(`  statuses ${JSON.stringify(http.orders.statuses)}; batches: ${http.calls}`);
