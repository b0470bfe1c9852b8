// One command, `npm run bench`: crossfill's GET /v1/prices, GET /v1/markets and POST /v1/order on the
// embedded default beside a bare node:http server measured in the same run with the same load (autocannon:
// the GETs from loader processes of their own, in turns with the baseline; the signed POSTs from this
// process; the servers under test are processes of their own), and the ratios.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { childOrders, loopDelay, meansMs, ownWorkMs } from "./chain-rate.ts";
import { load, Loaders, signedPost, summarise, type Loaded, type LoadResult, type RequestSpec } from "./load.ts";
import { cpuSeconds, startChild, startCrossfill } from "./procs.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const GET_CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ORDER_CONNECTIONS = Number(process.env.BENCH_ORDER_CONNECTIONS ?? 16);
/** `orders`: only the POSTs (the echo and POST /v1/order), for the order path's own work at a chosen concurrency. */
const ONLY_ORDERS = process.env.BENCH_ONLY === "orders";
/** Loader processes the GETs' connections are shared among. */
const LOADERS = Number(process.env.BENCH_LOADERS ?? 1);
/** Turns a GET's baseline and service each get, of SECONDS / TURNS each. */
const TURNS = Number(process.env.BENCH_TURNS ?? 5);

interface Measured extends LoadResult {
  /** CPU milliseconds the server under test used per answer. */
  cpuMs: number;
}

/** Loads one server and measures the CPU its process used meanwhile. */
async function measure(pid: number, url: string, next: () => RequestSpec, connections: number, seconds = SECONDS): Promise<Measured> {
  const cpu = cpuSeconds(pid);
  const r = await load(url, next, { connections, seconds });
  return { ...r, cpuMs: ((cpuSeconds(pid) - cpu) * 1000) / Math.max(1, r.requests) };
}

interface Target {
  pid: number;
  url: string;
  request: RequestSpec;
}

/**
 * The baseline and the service loaded in turns (TURNS windows each, alternating), from the loader
 * processes, with the CPU each server's process used in its own windows: whatever else the machine runs
 * meanwhile falls on both alike, rather than on whichever ran while it did.
 */
async function measurePair(loaders: Loaders, base: Target, service: Target): Promise<[Measured, Measured]> {
  const seen = [base, service].map(() => ({ windows: [] as Loaded[], cpu: 0 }));
  for (let turn = 0; turn < TURNS; turn++) {
    for (const [i, t] of [base, service].entries()) {
      let from = 0;
      seen[i]!.windows.push(await loaders.load(t.url, t.request, { connections: GET_CONNECTIONS, seconds: SECONDS / TURNS, onStart: () => (from = cpuSeconds(t.pid)) }));
      seen[i]!.cpu += cpuSeconds(t.pid) - from;
    }
  }
  const [b, s] = seen.map(({ windows, cpu }) => {
    const r = summarise(windows);
    return { ...r, cpuMs: (cpu * 1000) / Math.max(1, r.requests) };
  });
  return [b!, s!];
}

function row(name: string, r: Measured, base: Measured): string {
  return [
    name.padEnd(30),
    r.rps.toFixed(0).padStart(8),
    r.p50Ms.toFixed(2).padStart(8),
    r.p99Ms.toFixed(2).padStart(8),
    (r.rps / base.rps).toFixed(2).padStart(9),
    (r.p99Ms / base.p99Ms).toFixed(2).padStart(9),
    r.cpuMs.toFixed(3).padStart(11),
    (r.cpuMs / base.cpuMs).toFixed(1).padStart(9),
    r.loaderCores.toFixed(2).padStart(8),
    `${r.errors}/${r.requests}`.padStart(12),
  ].join(" ");
}

/** The GETs' rows: prices and markets, each beside the bare server answering the same bytes. */
async function measureGets(basePid: number, bare: string, serverPid: number, crossfill: string, read: Record<string, string>): Promise<string[]> {
  const prices = "/v1/prices/fed-cut-2026-12";
  const markets = "/v1/markets";
  const loaders = await Loaders.start(LOADERS);
  const get = (pid: number, url: string, path: string, headers: Record<string, string> = {}): Target => ({ pid, url, request: { method: "GET", path, headers } });
  // Warm-up (JIT, caches, connections), not counted.
  for (const t of [get(basePid, bare, prices), get(serverPid, crossfill, prices, read)]) await loaders.load(t.url, t.request, { connections: GET_CONNECTIONS, seconds: 2 });
  const [getBase, getPrices] = await measurePair(loaders, get(basePid, bare, prices), get(serverPid, crossfill, prices, read));
  const [marketsBase, getMarkets] = await measurePair(loaders, get(basePid, bare, markets), get(serverPid, crossfill, markets, read));
  loaders.stop();
  return [
    row(`node:http GET prices (c=${GET_CONNECTIONS})`, getBase, getBase),
    row(`GET /v1/prices/{id} (c=${GET_CONNECTIONS})`, getPrices, getBase),
    row(`node:http GET markets (c=${GET_CONNECTIONS})`, marketsBase, marketsBase),
    row(`GET /v1/markets (c=${GET_CONNECTIONS})`, getMarkets, marketsBase),
  ];
}

async function main(): Promise<void> {
  const server = await startCrossfill();
  const bodiesDir = mkdtempSync(join(tmpdir(), "crossfill-bench-bodies-"));
  let baseline: ChildProcess | undefined;
  try {
    const crossfill = server.url;
    const key = server.key;
    const read = { "x-api-key": key.api_key };

    const idleFrom = cpuSeconds(server.pid);
    await new Promise((r) => setTimeout(r, 5000));
    const idle = (cpuSeconds(server.pid) - idleFrom) / 5;

    // The baseline answers the service's own bytes.
    const prices = "/v1/prices/fed-cut-2026-12";
    const markets = "/v1/markets";
    const bodies: Record<string, string> = {};
    for (const path of [prices, markets]) bodies[path] = await (await fetch(crossfill + path, { headers: read })).text();
    const bodiesFile = join(bodiesDir, "baseline-bodies.json");
    writeFileSync(bodiesFile, JSON.stringify(bodies));
    let basePort = 0;
    baseline = await startChild(["--import", "tsx", "bench/baseline-server.ts"], { BASELINE_BODIES: bodiesFile }, (l) => {
      basePort = JSON.parse(l).port;
      return true;
    });
    const bare = `http://127.0.0.1:${basePort}`;

    const gets = ONLY_ORDERS ? [] : await measureGets(baseline.pid!, bare, server.pid, crossfill, read);

    let n = 0;
    const orderBody = () =>
      JSON.stringify({ market_id: "fed-cut-2026-12", outcome: n % 2 ? "NO" : "YES", side: "buy", amount_usdc: "1", max_slippage: 0.05, strategy: "optimize_price", client_order_id: `bench-${n++}` });
    const postBase = await measure(baseline.pid!, bare, () => ({ method: "POST", path: "/v1/order", headers: { "content-type": "application/json" }, body: orderBody() }), ORDER_CONNECTIONS);
    // A scrape resets the server's event-loop delay histogram: the one after the orders holds theirs alone.
    await (await fetch(`${crossfill}/metrics`)).text();
    const postOrder = await measure(
      server.pid,
      crossfill,
      () => {
        return signedPost(key, "/v1/order", orderBody());
      },
      ORDER_CONNECTIONS,
    );
    const metrics = await (await fetch(`${crossfill}/metrics`)).text();
    const own = (q: string) => ownWorkMs(metrics, q).toFixed(2);

    console.log(
      `\ncrossfill bench — autocannon, ${SECONDS}s per run (GETs from ${LOADERS} loader process${LOADERS === 1 ? "" : "es"}, in ${TURNS} turns with the baseline), loopback, ${process.platform} ${process.arch}, ${cpus().length} cores, node ${process.version}`,
    );
    console.log(`idle server: ${(idle * 100).toFixed(1)} % of a core`);
    console.log(
      ["".padEnd(30), "req/s".padStart(8), "p50 ms".padStart(8), "p99 ms".padStart(8), "rps ratio".padStart(9), "p99 ratio".padStart(9), "CPU ms/req".padStart(11), "CPU ratio".padStart(9), "loader".padStart(8), "errors".padStart(12)].join(" "),
    );
    for (const line of gets) console.log(line);
    console.log(row(`node:http POST echo (c=${ORDER_CONNECTIONS})`, postBase, postBase));
    console.log(row(`POST /v1/order (c=${ORDER_CONNECTIONS})`, postOrder, postBase));
    console.log(`POST /v1/order own work (venue and chain waits excluded): p50 ${own("0.5")} ms, p90 ${own("0.9")} ms, p99 ${own("0.99")} ms`);
    // The idle server's CPU (its venue streams and timers) runs whether orders come or not; at ~10 orders a
    // second it is most of the figure above. What the orders themselves add, beside the echo's:
    const addedMs = postOrder.cpuMs - (idle * postOrder.seconds * 1000) / Math.max(1, postOrder.requests);
    console.log(`POST /v1/order CPU above the idle server's: ${addedMs.toFixed(3)} ms an order (${(addedMs / postBase.cpuMs).toFixed(0)}× the echo)`);
    console.log(`mean step, ms (from the step before): ${JSON.stringify(meansMs(metrics, "crossfill_order_step_seconds", "step"))}`);
    console.log(`server's event-loop delay during the orders: ${loopDelay(metrics)}`);
    console.log(`order statuses: ${JSON.stringify(postOrder.statuses)}`);
    // A 200 may be partially filled: the child orders' answers tell where the misses were.
    console.log(`child orders by venue and answer: ${JSON.stringify(childOrders(metrics))}`);
  } finally {
    baseline?.kill("SIGTERM");
    await server.stop();
    rmSync(bodiesDir, { recursive: true, force: true });
  }
}

await main();
