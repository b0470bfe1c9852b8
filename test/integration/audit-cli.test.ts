import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditReport } from "../../src/audit/run.ts";
import { loadConfig } from "../../src/config.ts";
import { startCrossfill } from "../../src/main.ts";
import { startDevChain, type DevChain } from "../../src/vault/devnode/index.ts";
import { JsonRpc } from "../../src/vault/rpc.ts";

const BIN = fileURLToPath(new URL("../../bin/crossfill.mjs", import.meta.url));

let dataDir: string;
let chainDir: string;
let chain: DevChain;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "crossfill-audit-"));
  chainDir = mkdtempSync(join(tmpdir(), "crossfill-audit-chain-"));
  chain = await startDevChain({ dataDir: chainDir });
  // Over plain RPC the server's transactions are mined as they arrive (the embedded chain mines per batch itself).
  await new JsonRpc(chain.rpcUrl).call("evm_setAutomine", [true]);
});
afterAll(async () => {
  await chain.stop();
  for (const dir of [dataDir, chainDir]) rmSync(dir, { recursive: true, force: true });
});

describe("crossfill audit with CHAIN_RPC_URL", () => {
  it("reads a dev chain run apart from the server, whose contracts the server deployed with the faucet", async () => {
    const env = { DATA_DIR: dataDir, CHAIN_RPC_URL: chain.rpcUrl, OPERATOR_PRIVATE_KEY: chain.operatorKey, SIM_LATENCY_SCALE: "0.05" };
    const server = await startCrossfill(loadConfig({ ...env, PORT: "0" }), { logger: false });
    await server.stop();
    const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) =>
      execFile(process.execPath, [BIN, "audit", "--json"], { env: { ...process.env, ...env, LOG_LEVEL: "silent" }, timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, out: stdout + stderr }),
      ),
    );
    expect(out).not.toMatch(/another build/);
    expect(code).toBe(0);
    const report = JSON.parse(out) as AuditReport;
    expect(report.ok).toBe(true);
    // snake_case, as the API and every other --json output
    expect(Object.keys(report).sort()).toEqual(["checked_at", "invariants", "ok", "orders"]);
    for (const i of report.invariants) expect(Object.keys(i).every((k) => /^[a-z_]+$/.test(k))).toBe(true);
  });
});

describe("crossfill audit with CHAIN_RPC_TIMEOUT_MS", () => {
  it("gives up on a chain that does not answer after CHAIN_RPC_TIMEOUT_MS, as the server does, not after the default 15 s", async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const env = { DATA_DIR: dataDir, CHAIN_RPC_URL: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, OPERATOR_PRIVATE_KEY: chain.operatorKey, CHAIN_RPC_TIMEOUT_MS: "200" };
      const { code, stderr } = await new Promise<{ code: number | string | null | undefined; stderr: string }>((resolve) =>
        execFile(process.execPath, [BIN, "audit"], { env: { ...process.env, ...env, LOG_LEVEL: "silent" }, timeout: 30_000 }, (err, _stdout, stderr) => resolve({ code: err?.code, stderr })),
      );
      expect([code, stderr]).toEqual([2, `crossfill: reading the chain at CHAIN_RPC_URL (${env.CHAIN_RPC_URL}) failed: no answer within 200 ms\n`]);
    } finally {
      silent.close();
    }
  });
});

describe("crossfill audit with a CHAIN_RPC_URL where no chain listens", () => {
  it("names the setting and its origin, not the provider's key in its path", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const env = { DATA_DIR: dataDir, CHAIN_RPC_URL: `${origin}/v2/provider-key-123`, OPERATOR_PRIVATE_KEY: chain.operatorKey };
    const { code, stderr } = await new Promise<{ code: number | string | null | undefined; stderr: string }>((resolve) =>
      execFile(process.execPath, [BIN, "audit"], { env: { ...process.env, ...env, LOG_LEVEL: "silent" }, timeout: 30_000 }, (err, _stdout, stderr) => resolve({ code: err?.code, stderr })),
    );
    expect([code, stderr]).toEqual([2, `crossfill: reading the chain at CHAIN_RPC_URL (${origin}) failed: connect ECONNREFUSED ${origin.slice("http://".length)}\n`]);
  });
});
