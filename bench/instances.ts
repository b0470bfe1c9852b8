// `npm run bench:instances`: POST /v1/order on one instance, then on three instances sharing one
// PostgreSQL database (a fresh one on TEST_DATABASE_URL's server), one chain (`crossfill chain`) and
// one set of venue simulators (`crossfill sim`), with the same load (autocannon, c=16 or BENCH_ORDER_CONNECTIONS, spread over the instances),
// and REDIS_URL from TEST_REDIS_URL when set. Prints orders/s and p50/p99 of each, and the one instance's own work.
import { execFileSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { meansMs, ownWorkMs } from "./chain-rate.ts";
import { load, signedPost, type LoadResult } from "./load.ts";
import { serverArgs, startChild, startServer } from "./procs.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_ORDER_CONNECTIONS ?? 16);
const root = new URL("..", import.meta.url).pathname;

async function onServer(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A CLI command that prints KEY=value settings on stdout and then runs until stopped. */
async function settingsOf(command: string, env: NodeJS.ProcessEnv, last: string): Promise<{ child: ChildProcess; env: Record<string, string> }> {
  const settings: Record<string, string> = {};
  const child = await startChild(["bin/crossfill.mjs", command], { ...env, CROSSFILL_FROM_SOURCE: "1" }, (line) => {
    const eq = line.indexOf("=");
    if (eq > 0) settings[line.slice(0, eq)] = line.slice(eq + 1);
    return line.startsWith(`${last}=`);
  });
  return { child, env: settings };
}

function row(name: string, r: LoadResult): string {
  return [name.padEnd(34), r.rps.toFixed(1).padStart(9), r.p50Ms.toFixed(0).padStart(8), r.p99Ms.toFixed(0).padStart(8), `${r.errors}/${r.requests}`.padStart(10)].join(" ");
}

async function main(): Promise<void> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin) throw new Error("TEST_DATABASE_URL is not set: the several-instances bench needs a PostgreSQL server.");
  const name = `crossfill_bench_${randomBytes(4).toString("hex")}`;
  await onServer(admin, `CREATE DATABASE ${name}`);
  const databaseUrl = Object.assign(new URL(admin), { pathname: `/${name}` }).toString();
  const dir = mkdtempSync(join(tmpdir(), "crossfill-bench-instances-"));
  const children: ChildProcess[] = [];
  try {
    const sim = await settingsOf("sim", { DATA_DIR: join(dir, "sim"), LOG_LEVEL: "warn" }, "OPINION_MULTISIG_ADDRESS");
    const chain = await settingsOf("chain", { DATA_DIR: join(dir, "chain"), LOG_LEVEL: "warn" }, "OPERATOR_PRIVATE_KEY");
    children.push(sim.child, chain.child);
    const shared = {
      ...sim.env,
      ...chain.env,
      DATABASE_URL: databaseUrl,
      MASTER_KEY: randomBytes(32).toString("hex"),
      LOG_LEVEL: "warn",
      RATE_LIMIT_PER_MINUTE: "1000000000",
      ...(process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL } : {}),
    };
    const instance = async (i: number) => {
      const { child, url } = await startServer(serverArgs(), { ...shared, DATA_DIR: join(dir, `instance-${i}`) });
      children.push(child);
      return url;
    };
    const urls = [await instance(0)];
    const key = JSON.parse(
      execFileSync(process.execPath, ["bin/crossfill.mjs", "keys", "create", "--name", "bench", "--scopes", "read,trade", "--json"], {
        cwd: root,
        env: { ...process.env, ...shared, DATA_DIR: join(dir, "cli"), CROSSFILL_FROM_SOURCE: "1" },
        encoding: "utf8",
      }),
    ) as { api_key: string; api_secret: string };
    const opts = { seconds: SECONDS, connections: CONNECTIONS };
    // The first authenticated request funds the account from the dev faucet.
    await fetch(`${urls[0]}/v1/account`, { headers: { "x-api-key": key.api_key } });
    let n = 0;
    const order = () => {
      const body = JSON.stringify({ market_id: "fed-cut-2026-12", outcome: n % 2 ? "NO" : "YES", side: "buy", amount_usdc: "1", max_slippage: 0.05, client_order_id: `bench-${n++}` });
      return signedPost(key, "/v1/order", body);
    };
    const one = await load(urls, order, opts);
    // The one instance's own work on PostgreSQL, before the three share the load.
    const metrics = await (await fetch(`${urls[0]}/metrics`)).text();
    const own = (q: string) => ownWorkMs(metrics, q).toFixed(2);
    urls.push(await instance(1), await instance(2));
    // Each instance takes at least one connection.
    const three = await load(urls, order, { ...opts, connections: Math.max(CONNECTIONS, urls.length) });

    console.log(`\ncrossfill several-instances bench — ${SECONDS}s per run, PostgreSQL${process.env.TEST_REDIS_URL ? " + Redis" : ""}, c=${CONNECTIONS}, ${process.platform} ${process.arch}, node ${process.version}`);
    console.log(["".padEnd(34), "orders/s".padStart(9), "p50 ms".padStart(8), "p99 ms".padStart(8), "errors".padStart(10)].join(" "));
    console.log(row("POST /v1/order, 1 instance", one));
    console.log(row(`POST /v1/order, 3 instances${CONNECTIONS < 3 ? ", c=3" : ""}`, three));
    console.log(`own work, 1 instance (venue and chain waits excluded): p50 ${own("0.5")} ms, p90 ${own("0.9")} ms, p99 ${own("0.99")} ms`);
    console.log(`mean step, ms, 1 instance (from the step before): ${JSON.stringify(meansMs(metrics, "crossfill_order_step_seconds", "step"))}`);
    console.log(`statuses, 1 instance: ${JSON.stringify(one.statuses)}; 3 instances: ${JSON.stringify(three.statuses)}`);
  } finally {
    for (const c of children.reverse()) c.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 2000));
    rmSync(dir, { recursive: true, force: true });
    await onServer(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

await main();
