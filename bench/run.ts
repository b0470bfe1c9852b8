// One command, `npm run bench`: measures crossfill's GET /v1/prices and POST /v1/order on the embedded
// default beside a bare node:http JSON server measured in the same run, and prints the ratios.
import { execFileSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sign } from "../src/auth/hmac.ts";
import { load, type LoadResult } from "./load.ts";
import { freePort, startChild } from "./procs.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const root = new URL("..", import.meta.url).pathname;

function row(name: string, r: LoadResult, base: LoadResult): string {
  return [
    name.padEnd(28),
    r.rps.toFixed(0).padStart(8),
    r.p50Ms.toFixed(2).padStart(8),
    r.p99Ms.toFixed(2).padStart(8),
    (r.rps / base.rps).toFixed(3).padStart(10),
    (r.p50Ms / base.p50Ms).toFixed(2).padStart(9),
    `${r.errors}/${r.requests}`.padStart(12),
  ].join(" ");
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "crossfill-bench-"));
  const port = await freePort();
  const children: ChildProcess[] = [];
  try {
    let basePort = 0;
    children.push(
      await startChild(["--import", "tsx", "bench/baseline-server.ts"], {}, (l) => {
        basePort = JSON.parse(l).port;
        return true;
      }),
    );
    // One key sends thousands of requests a second: a limit that never bites, so the bench measures
    // the server with its rate limiter running, not the limiter's refusals.
    const env = { PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: "info", RATE_LIMIT_PER_MINUTE: "1000000000" };
    children.push(await startChild(["--import", "tsx", "src/main.ts"], env, (l) => l.includes("crossfill is serving")));
    const key = JSON.parse(
      execFileSync(process.execPath, ["bin/crossfill.mjs", "keys", "create", "--name", "bench", "--scopes", "read,trade", "--json"], {
        cwd: root,
        env: { ...process.env, ...env },
        encoding: "utf8",
      }),
    ) as { api_key: string; api_secret: string };

    const crossfill = `http://127.0.0.1:${port}`;
    const baseline = `http://127.0.0.1:${basePort}`;
    const opts = { seconds: SECONDS, maxRequests: 1_000_000 };
    // Warm up: the first authenticated request funds the account from the dev faucet.
    await load(crossfill, () => ({ method: "GET", path: "/v1/account", headers: { "x-api-key": key.api_key } }), { ...opts, seconds: 1, concurrency: 1 });

    const getBase = await load(baseline, () => ({ method: "GET", path: "/v1/prices/fed-cut-2026-12" }), { ...opts, concurrency: 32 });
    const getPrices = await load(
      crossfill,
      () => ({ method: "GET", path: "/v1/prices/fed-cut-2026-12", headers: { "x-api-key": key.api_key } }),
      { ...opts, concurrency: 32 },
    );
    let n = 0;
    const orderBody = () =>
      JSON.stringify({ market_id: "fed-cut-2026-12", outcome: n % 2 ? "NO" : "YES", side: "buy", amount_usdc: "1", max_slippage: 0.05, strategy: "optimize_price", client_order_id: `bench-${n++}` });
    const postBase = await load(
      baseline,
      () => ({ method: "POST", path: "/v1/order", headers: { "content-type": "application/json" }, body: orderBody() }),
      { ...opts, concurrency: 16 },
    );
    const postOrder = await load(
      crossfill,
      () => {
        const body = orderBody();
        const ts = String(Math.floor(Date.now() / 1000));
        return {
          method: "POST",
          path: "/v1/order",
          headers: { "content-type": "application/json", "x-api-key": key.api_key, "x-timestamp": ts, "x-signature": sign(key.api_secret, ts, "POST", "/v1/order", body) },
          body,
        };
      },
      { ...opts, concurrency: 16 },
    );

    console.log(`\ncrossfill bench — ${SECONDS}s per run, loopback, ${process.platform} ${process.arch}, node ${process.version}`);
    console.log(["".padEnd(28), "req/s".padStart(8), "p50 ms".padStart(8), "p99 ms".padStart(8), "rps ratio".padStart(10), "p50 ratio".padStart(9), "errors".padStart(12)].join(" "));
    console.log(row("node:http GET (baseline)", getBase, getBase));
    console.log(row("GET /v1/prices (c=32)", getPrices, getBase));
    console.log(row("node:http POST (baseline)", postBase, postBase));
    console.log(row("POST /v1/order (c=16)", postOrder, postBase));
    console.log(`order statuses: ${JSON.stringify(postOrder.statuses)}`);
  } finally {
    for (const c of children) c.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 1000));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
