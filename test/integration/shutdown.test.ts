// Graceful shutdown of the real server process (src/main.ts): what SIGTERM and SIGINT do to orders in
// flight, a chain node that stopped answering, a second signal, Ctrl-C reaching the whole process group, and SIGKILL
// still taking anvil and the venue simulators along.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { startDevChain } from "../../src/vault/devnode/index.ts";
import { JsonRpc } from "../../src/vault/rpc.ts";
import { makeTraders } from "../faults/harness.ts";
import { startRpcProxy } from "../helpers/rpc-proxy.ts";

const MAIN = fileURLToPath(new URL("../../src/main.ts", import.meta.url));
// Venues answer a second late while their books move: a wide slippage bound lets the order's re-routes
// find what its first child orders missed, so it most often fills.
const ORDER = { market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 5, max_slippage: 0.2, strategy: "optimize_price" } as const;

interface Running {
  child: ChildProcess;
  url: string;
  dataDir: string;
  /** Everything it printed so far, stdout and stderr. */
  output: () => string;
  /** The exit code, or 128 + the signal's number when a signal ended it. */
  exited: Promise<number>;
}

const started: Running[] = [];
afterEach(async () => {
  for (const r of started.splice(0)) {
    if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL");
    await r.exited;
    rmSync(r.dataDir, { recursive: true, force: true });
  }
});

/** Starts the server in a process group of its own (as a terminal would), on a fresh data directory. */
async function startServer(env: Record<string, string>, dataDir = mkdtempSync(join(tmpdir(), "crossfill-stop-"))): Promise<Running> {
  const child = spawn(process.execPath, ["--import", "tsx", MAIN], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number>((resolve) => child.once("exit", (code, signal) => resolve(code ?? 128 + (signal === "SIGKILL" ? 9 : 15))));
  const running: Running = { child, url: "", dataDir, output: () => out, exited };
  started.push(running);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const line = out.split("\n").find((l) => l.includes("crossfill is serving"));
    if (line) return { ...running, url: (JSON.parse(line) as { url: string }).url };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves with what the promise settles to, or rejects after `ms`. */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`not within ${ms} ms`)), ms))]);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Makes each embedded venue simulator hold every REST answer (orders, not the book streams) for `ms` more. */
async function slowVenues(url: string, ms: number): Promise<void> {
  const health = (await (await fetch(`${url}/v1/health`)).json()) as { venues: { base_url: string }[] };
  for (const v of health.venues) {
    const res = await fetch(new URL("/_sim/faults", v.base_url), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ latencyMs: ms }) });
    expect(res.status).toBe(200);
  }
}

/**
 * A server with a funded trader whose order is in flight, at venues that answer orders `venueDelayMs`
 * late, once the server lists it: the moment to signal. `order` settles to the answer, or to the error
 * of a connection the server closed without one.
 */
async function orderInFlight(env: Record<string, string>, venueDelayMs: number) {
  const dataDir = mkdtempSync(join(tmpdir(), "crossfill-stop-"));
  const [trader] = await makeTraders(dataDir, 1);
  const s = await startServer(env, dataDir);
  const client = trader!.client(s.url);
  await client.account(); // funded before the order's clock starts
  await slowVenues(s.url, venueDelayMs);
  const order = client.request("POST", "/v1/order", { body: JSON.stringify(ORDER), signed: true }).catch((e: unknown) => e);
  // Not a fixed wait: on a busy machine the server may take longer than any to receive the order, and a signal before it refuses the order instead.
  await expect.poll(async () => (await client.orders()).data.length, { timeout: 30_000, interval: 100 }).toBe(1);
  return { s, order };
}

describe("starting the server", () => {
  it("a bad setting stops it with the sentence naming the setting, exit 1, no stack trace", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "crossfill-stop-"));
    const child = spawn(process.execPath, ["--import", "tsx", MAIN], { env: { ...process.env, DATA_DIR: dataDir, PORT: "0", DATABASE_URL: "mysql://db" }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const code = await within(new Promise<number | null>((resolve) => child.once("exit", resolve)), 30_000);
    rmSync(dataDir, { recursive: true, force: true });
    expect(code).toBe(1);
    expect(out).toBe("DATABASE_URL must be a postgres:// or postgresql:// URL (unset, the store is SQLite in DATA_DIR).\n");
  });
});

describe("stopping the server", () => {
  it("SIGTERM: an order in flight finishes and is answered, new requests are refused, the server exits 0", async () => {
    // Venues answer orders in about a second: long enough to signal while the order is out there.
    const { s, order } = await orderInFlight({}, 1_000);
    s.child.kill("SIGTERM");
    await expect.poll(() => fetch(`${s.url}/v1/health`).then(() => "answered", () => "refused"), { timeout: 30_000 }).toBe("refused");

    const res = (await order) as { status: number; body: { status?: string; error?: { code: string; details: { order: { status: string } } } } };
    const answeredAt = Date.now();
    // Answered with the order finished: filled (or in part), or, when the books moved past every child
    // order's limit in the second they took (the simulators walk their prices), failed with its lock released.
    if (res.status === 200) expect(res.body.status).toMatch(/^(partially_)?filled$/);
    else expect([res.status, res.body.error?.code, res.body.error?.details.order.status]).toEqual([502, "all_venues_failed", "failed"]);
    expect(await within(s.exited, 30_000)).toBe(0);
    // Once the last answer is out, not at the 15 s bound: the answer closed its keep-alive connection.
    expect(Date.now() - answeredAt).toBeLessThan(5_000);
    expect(s.output()).toContain('"msg":"stopping: no new requests; those in flight finish first"');
    expect(s.output()).toContain('"msg":"crossfill stopped"');
  });

  it("an order still in flight at SHUTDOWN_GRACE_MS is left to recovery, and the server still exits 0", async () => {
    // A bound of half a second, and venues that take many seconds to answer.
    const { s, order } = await orderInFlight({ SHUTDOWN_GRACE_MS: "500" }, 8_000);
    const signalled = Date.now();
    s.child.kill("SIGTERM");
    expect(await within(s.exited, 20_000)).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(10_000);
    expect(s.output()).toContain("requests still in flight at the shutdown bound; recovery will finish their orders");
    await order;
  });

  it("a chain node that stops answering once an order's lock is sent holds the stop no longer than SHUTDOWN_GRACE_MS; the next start releases the lock", async () => {
    const chainDir = mkdtempSync(join(tmpdir(), "crossfill-stop-chain-"));
    const chain = await startDevChain({ dataDir: chainDir });
    const proxy = await startRpcProxy(chain.rpcUrl);
    try {
      // A chain run apart, as an operator's: its node mines each transaction as it arrives.
      await new JsonRpc(chain.rpcUrl).call("evm_setAutomine", [true]);
      const dataDir = mkdtempSync(join(tmpdir(), "crossfill-stop-"));
      const [trader] = await makeTraders(dataDir, 1);
      // Each read of a node that does not answer is given up after 4 tries of 5 s: the sender's wait for the lock's receipt holds 20 s.
      const env = { CHAIN_RPC_URL: proxy.url, OPERATOR_PRIVATE_KEY: chain.operatorKey, CHAIN_RPC_TIMEOUT_MS: "5000", SHUTDOWN_GRACE_MS: "1000" };
      const s = await startServer(env, dataDir);
      const client = trader!.client(s.url);
      await client.account(); // funded before the node stops answering
      let sent = false;
      proxy.decide = (calls) => {
        if (sent) return { kind: "delay", ms: 60_000 };
        sent = calls.some((c) => c.method === "eth_sendRawTransaction");
        return { kind: "pass" };
      };
      const order = client.request("POST", "/v1/order", { body: JSON.stringify(ORDER), signed: true }).catch((e: unknown) => e);
      await expect.poll(() => sent, { timeout: 30_000 }).toBe(true);
      const signalled = Date.now();
      s.child.kill("SIGTERM");
      expect(await within(s.exited, 10_000)).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(10_000);
      expect(s.output()).toContain("Vault transactions still unanswered at the shutdown bound; recovery reads from the chain what became of them");
      await order;

      proxy.decide = () => ({ kind: "pass" });
      const again = await startServer(env, dataDir);
      const [interrupted] = (await trader!.client(again.url).orders()).data;
      expect(interrupted).toMatchObject({ status: "failed", lock_tx_hash: expect.stringMatching(/^0x/), release_tx_hash: expect.stringMatching(/^0x/) });
      expect((await trader!.client(again.url).account()).locked_usdc).toBe(0);
    } finally {
      await proxy.stop();
      await chain.stop();
      rmSync(chainDir, { recursive: true, force: true });
    }
    // Two starts of the server: over a minute on two busy cores.
  }, 180_000);

  it("a second signal exits at once", async () => {
    const { s, order } = await orderInFlight({ SHUTDOWN_GRACE_MS: "60000" }, 8_000);
    s.child.kill("SIGTERM");
    await sleep(200);
    s.child.kill("SIGTERM");
    const code = await within(s.exited, 5_000).catch((e: Error) => e.message);
    expect(code, s.output().slice(-4_000)).toBe(143);
    expect(s.output()).toContain("second signal: exiting now");
    await order;
  });

  it("Ctrl-C reaches the whole process group, yet the dev chain takes its final snapshot and nothing fails", async () => {
    const s = await startServer({});
    process.kill(-s.child.pid!, "SIGINT");
    expect(await within(s.exited, 30_000)).toBe(0);
    expect(s.output()).not.toMatch(/fetch failed|final snapshot failed|"level":50/);
    // The snapshot holds everything: the journal of batches since it is empty.
    expect(statSync(join(s.dataDir, "chain", "state.json.gz")).size).toBeGreaterThan(0);
    expect(statSync(join(s.dataDir, "chain", "journal.jsonl")).size).toBe(0);
  });

  it("SIGKILL of the server alone still ends its anvil and its venue simulators", async () => {
    const s = await startServer({});
    const { rpcUrl } = JSON.parse(readFileSync(join(s.dataDir, "chain", "running.json"), "utf8")) as { rpcUrl: string };
    const health = (await (await fetch(`${s.url}/v1/health`)).json()) as { venues: { base_url: string }[] };
    const answers = [
      () => fetch(rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' }),
      ...health.venues.map((v) => () => fetch(new URL("/_sim/faults", v.base_url))),
    ];
    for (const answer of answers) expect((await answer()).status).toBe(200);
    s.child.kill("SIGKILL");
    await s.exited;
    const deadline = Date.now() + 10_000;
    for (const answer of answers) {
      for (;;) {
        try {
          await answer();
        } catch {
          break; // refused: gone
        }
        if (Date.now() > deadline) throw new Error("the chain or a simulator outlived the server");
        await sleep(100);
      }
    }
  });
});
