import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { startCrossfill, type Crossfill } from "../../src/main.ts";
import { startDevChain, type DevChain } from "../../src/vault/devnode/index.ts";
import { JsonRpc } from "../../src/vault/rpc.ts";
import { startRpcProxy, type RpcProxy } from "../helpers/rpc-proxy.ts";

// A provider's URL holds its API key in the path or the query (https://eth-mainnet.example/v2/<key>).
const KEY = "pr0vider-k3y";

let chainDir: string;
let dataDir: string;
let chain: DevChain;
let proxy: RpcProxy;
let server: Crossfill;
const logged: string[] = [];

beforeAll(async () => {
  chainDir = mkdtempSync(join(tmpdir(), "crossfill-key-chain-"));
  dataDir = mkdtempSync(join(tmpdir(), "crossfill-key-"));
  chain = await startDevChain({ dataDir: chainDir });
  await new JsonRpc(chain.rpcUrl).call("evm_setAutomine", [true]);
  proxy = await startRpcProxy(chain.rpcUrl);
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logged.push(chunk.toString("utf8"));
      done();
    },
  });
  const env = { DATA_DIR: dataDir, PORT: "0", SIM_LATENCY_SCALE: "0.05", RESOLUTION_POLL_MS: "0", CHAIN_RPC_URL: `${proxy.url}/v2/${KEY}?apikey=${KEY}`, OPERATOR_PRIVATE_KEY: chain.operatorKey };
  server = await startCrossfill(loadConfig(env), { logger: pino({ level: "debug" }, sink) });
});
afterAll(async () => {
  await server?.stop();
  await proxy?.stop();
  await chain?.stop();
  for (const dir of [chainDir, dataDir]) rmSync(dir, { recursive: true, force: true });
});

describe("CHAIN_RPC_URL holding a provider's API key", () => {
  it("GET /v1/health and the start-up line show the chain's origin, not the key", async () => {
    const health = (await (await fetch(`${server.url}/v1/health`)).json()) as { chain: { rpc_url: string } };
    expect(health.chain.rpc_url).toBe(proxy.url);
    expect(logged.join("")).toMatch(/crossfill is serving/);
    expect(logged.join("")).not.toContain(KEY);
  });

  it("an error of the chain's, as logged, does not hold the key", async () => {
    const someone = `0x${"1".repeat(40)}` as const;
    await expect(server.vault.balanceOf(someone)).resolves.toEqual({ available: 0n, locked: 0n });
    proxy.decide = () => ({ kind: "error" });
    // Through viem (the balances) and the project's own JSON-RPC client (the Vault's logs).
    const reads = await Promise.allSettled([server.vault.balanceOf(someone), new JsonRpc(`${proxy.url}/v2/${KEY}`).call("eth_blockNumber")]);
    proxy.decide = () => ({ kind: "pass" });
    const failed = reads.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
    expect(failed).toHaveLength(2);
    const line = (err: unknown) => {
      const out: string[] = [];
      pino({}, new Writable({ write: (c: Buffer, _e, done) => (out.push(c.toString()), done()) })).error({ err }, "failed");
      return out.join("");
    };
    for (const err of failed) expect(line(err)).not.toContain(KEY);
  });
});

describe("CHAIN_RPC_URL that does not answer", () => {
  it("stops the start with a sentence that names the setting and the chain's origin, not the key", async () => {
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, "127.0.0.1", done));
    const origin = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((done) => closed.close(done));
    const dir = mkdtempSync(join(tmpdir(), "crossfill-key-down-"));
    try {
      const env = { DATA_DIR: dir, PORT: "0", CHAIN_RPC_URL: `${origin}/v2/${KEY}`, OPERATOR_PRIVATE_KEY: chain.operatorKey };
      const refused = await startCrossfill(loadConfig(env), { logger: pino({ level: "silent" }) }).catch((e: unknown) => e as Error);
      expect(refused).toBeInstanceOf(Error);
      expect((refused as Error).message).toMatch(new RegExp(`^reading the chain at CHAIN_RPC_URL \\(${origin}\\) failed: `));
      expect((refused as Error).message).not.toContain(KEY);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
