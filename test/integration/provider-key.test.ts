import { mkdtempSync, rmSync } from "node:fs";
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

});
