// `npm run bench:burst` (issue 9): a burst of BURST_ORDERS (default 1,000) signed buys of $1–$50 (amounts from
// BURST_SEED) on one event, all at once over BURST_CONNECTIONS (default 200) keep-alive connections, against
// the server on its embedded default in a fresh data directory; then the embedded chain's raw transaction
// rate measured in the same run (bench/chain-rate.ts, BENCH_SECONDS, default 10, at BENCH_CONCURRENCY,
// default 200). Prints orders/s, p50/p99, outcomes, child orders per venue, calls per batch transaction.
import { Agent, request } from "node:http";
import { cpus } from "node:os";
import { Rng } from "../src/venues/simulated/prng.ts";
import { callsPerTx, childOrders, loopDelay, meansMs, onTestChain, ownWorkMs, rawRate, sample } from "./chain-rate.ts";
import { signedPost, type RequestSpec } from "./load.ts";
import { cpuSeconds, startCrossfill } from "./procs.ts";

const ORDERS = Number(process.env.BURST_ORDERS ?? 1000);
const CONNECTIONS = Number(process.env.BURST_CONNECTIONS ?? 200);
const SEED = Number(process.env.BURST_SEED ?? 9);
const STRATEGY = process.env.BURST_STRATEGY ?? "optimize_price";
const EVENT = "fed-cut-2026-12";
const loop = { seconds: Number(process.env.BENCH_SECONDS ?? 10), concurrency: Number(process.env.BENCH_CONCURRENCY ?? 200) };

/** One request on a keep-alive connection of `agent`: its status and body. */
function send(agent: Agent, base: URL, spec: RequestSpec): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: base.hostname, port: base.port, method: spec.method, path: spec.path, headers: spec.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(spec.body);
  });
}

/** What an answer says of the order: its status, or the error code it was refused with. */
function outcomeOf(status: number, body: string): string {
  try {
    const o = JSON.parse(body) as { status?: string; error?: { code?: string } | null };
    return `${status} ${o.status ?? o.error?.code ?? "?"}${o.status && o.error?.code ? ` (${o.error.code})` : ""}`;
  } catch {
    return `${status} unreadable`;
  }
}

function count(into: Record<string, number>, key: string): void {
  into[key] = (into[key] ?? 0) + 1;
}

/** The burst on a fresh server: every answer's latency and outcome, how long it took, the server's CPU and its /metrics after. */
async function burst(): Promise<{ latencies: number[]; outcomes: Record<string, number>; seconds: number; cpu: number; metrics: string; audit: { ok: boolean; report: string } }> {
  const rng = new Rng(SEED);
  const amounts = Array.from({ length: ORDERS }, () => rng.int(100, 5_000));
  const server = await startCrossfill({ LOG_LEVEL: "warn", DEV_FAUCET_USDC: String(ORDERS * 50 + 1_000) });
  try {
    const base = new URL(server.url);
    const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
    const latencies: number[] = [];
    const outcomes: Record<string, number> = {};
    let next = 0;
    // A scrape resets the server's event-loop delay histogram: the one after the burst holds its alone.
    await (await fetch(`${server.url}/metrics`)).text();
    const cpuFrom = cpuSeconds(server.pid);
    const started = performance.now();
    // Each connection sends the next order as soon as its last one is answered, signed as it is sent.
    const worker = async () => {
      for (let n = next++; n < ORDERS; n = next++) {
        const cents = amounts[n]!;
        const body = JSON.stringify({
          market_id: EVENT,
          outcome: n % 2 ? "NO" : "YES",
          side: "buy",
          amount_usdc: `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`,
          max_slippage: 0.05,
          strategy: STRATEGY,
          client_order_id: `burst-${n}`,
        });
        const t0 = performance.now();
        const r = await send(agent, base, signedPost(server.key, "/v1/order", body));
        latencies.push(performance.now() - t0);
        count(outcomes, outcomeOf(r.status, r.body));
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONNECTIONS, ORDERS) }, worker));
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuSeconds(server.pid) - cpuFrom;
    agent.destroy();
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    return { latencies, outcomes, seconds, cpu, metrics, audit: server.audit() };
  } finally {
    await server.stop();
  }
}

const { latencies, outcomes, seconds, cpu, metrics, audit } = await burst();
const raw = await onTestChain((t) => rawRate(t, loop));
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
const perSecond = ORDERS / seconds;
const own = (q: string) => ownWorkMs(metrics, q).toFixed(1);

console.log(`\ncrossfill burst — ${ORDERS} buys of $1–$50 (seed ${SEED}, ${STRATEGY}) on ${EVENT}, ${CONNECTIONS} connections, ${cpus().length} cores, node ${process.version}`);
console.log(`orders/s          ${perSecond.toFixed(1)} (${ORDERS} in ${seconds.toFixed(2)} s; the server used ${(cpu / seconds).toFixed(2)} cores)`);
console.log(`latency           p50 ${pct(0.5).toFixed(0)} ms  p99 ${pct(0.99).toFixed(0)} ms  max ${latencies[latencies.length - 1]!.toFixed(0)} ms`);
console.log(`own work          p50 ${own("0.5")} ms  p99 ${own("0.99")} ms (the order's time less its chain and venue waits)`);
console.log(`outcomes          ${JSON.stringify(outcomes)}`);
console.log(`child orders      ${JSON.stringify(childOrders(metrics))}`);
const steps = (step: string) => sample(metrics, `crossfill_order_step_seconds_count{step="${step}"}`);
console.log(`routing rounds    ${steps("order.routing")} for ${steps("order.settle.sent")} orders settled: ${steps("order.routing") - steps("order.settle.sent")} later rounds (re-routes)`);
console.log(`mean step, ms     ${JSON.stringify(meansMs(metrics, "crossfill_order_step_seconds", "step"))} (from the step before)`);
console.log(`mean place, ms    ${JSON.stringify(meansMs(metrics, "crossfill_venue_place_seconds", "venue"))} (a child order's round trip; a sell's includes its queue, a buy's took its turn before)`);
console.log(`chain batches     ${callsPerTx(metrics)}`);
console.log(`event-loop delay  ${loopDelay(metrics)}`);
console.log(`raw chain         ${raw.perSecond.toFixed(0)} tx/s (one transfer per transaction, ${loop.concurrency} in flight, ${loop.seconds} s): orders/s is ${(perSecond / raw.perSecond).toFixed(2)}× raw`);
// Run once every order was answered: the burst must leave every invariant of the order path holding (nothing locked, each charge its fills', ...).
console.log(`audit             ${audit.ok ? audit.report.split("\n")[0] : `\n${audit.report}`}`);
if (!audit.ok) process.exitCode = 1;
