import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { keccak256, toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { sotTokenId } from "../contracts/sot.ts";
import { readJournal } from "./devnode/journal.ts";
import { closeTestChain, keyOf, openTestChain, tempDir, type TestChain } from "./testkit.ts";

const tokenId = sotTokenId("restart", "YES");
const client = "0x00000000000000000000000000000000000c11e7" as const;

/** Fund, then lock+settle `n` orders; returns their settle tx hashes. */
async function trade(t: TestChain, n: number, tag: string): Promise<Hex[]> {
  await t.vault.fund(client, BigInt(n) * 1_000_000n, keyOf(`fund-${tag}`));
  const refs = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const o = keccak256(toHex(`${tag}-${i}`));
      await t.vault.lock(o, client, 1_000_000n);
      return t.vault.settle(o, 250_000n, { tokenId, shares: 3_000_000n });
    }),
  );
  return refs.map((r) => r.txHash);
}

async function expectSurvived(t: TestChain, hashes: Hex[], orders: number): Promise<void> {
  expect(await t.vault.balanceOf(client)).toEqual({ available: BigInt(orders) * 750_000n, locked: 0n });
  expect(await t.vault.sotBalance(client, tokenId)).toBe(BigInt(orders) * 3_000_000n);
  for (const h of hashes) {
    const r = await t.rpc.call<{ status: Hex } | null>("eth_getTransactionReceipt", [h]);
    expect(r?.status).toBe("0x1");
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitDead(pid: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (alive(pid)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} still alive`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A crash of the node alone: anvil killed with SIGKILL, nothing flushed; the vault and store of the test closed after it. */
async function killAnvil(t: TestChain): Promise<void> {
  process.kill(t.chain.pid, "SIGKILL");
  await waitDead(t.chain.pid);
  await t.vault.close();
  await t.store.close();
}

describe("dev chain persistence", () => {
  it("keeps balances, receipts, positions and the deployment across a clean stop", async () => {
    const dir = tempDir();
    const t1 = await openTestChain(dir);
    const hashes = await trade(t1, 30, "clean");
    const contracts = t1.vault.info().contracts;
    await closeTestChain(t1);
    expect(readJournal(join(dir, "node", "journal.jsonl")).batches).toHaveLength(0);

    const t2 = await openTestChain(dir);
    try {
      expect(t2.vault.info().contracts).toEqual(contracts);
      await expectSurvived(t2, hashes, 30);
      // The operator's nonces carry on: new transactions still go through.
      await trade(t2, 5, "after");
      await expectSurvived(t2, [], 35);
    } finally {
      await closeTestChain(t2);
    }
  });

  it("replays the journal after anvil is killed with SIGKILL before any snapshot", async () => {
    const dir = tempDir();
    const t1 = await openTestChain(dir, { snapshotEvery: 1_000_000 });
    const hashes = await trade(t1, 40, "kill");
    expect(readJournal(join(dir, "node", "journal.jsonl")).batches.length).toBeGreaterThan(0);
    await killAnvil(t1);

    const t2 = await openTestChain(dir);
    try {
      await expectSurvived(t2, hashes, 40);
      await trade(t2, 5, "after-kill");
      await expectSurvived(t2, [], 45);
    } finally {
      await closeTestChain(t2);
    }
  });

  it("survives SIGKILL of the node process that owns the chain, and anvil dies with it", async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "crash-child.ts"), dir, client], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once("line", resolve);
      child.once("exit", (code) => reject(new Error(`crash child exited early (${code})`)));
    });
    const { anvilPid, txHashes } = JSON.parse(line) as { anvilPid: number; txHashes: Hex[] };
    child.kill("SIGKILL");
    await waitDead(anvilPid);

    const t = await openTestChain(dir);
    try {
      expect(await t.vault.balanceOf(client)).toEqual({ available: 100_000_000n - 20n * 400_000n, locked: 0n });
      expect(await t.vault.sotBalance(client, sotTokenId("crash", "YES"))).toBe(40_000_000n);
      for (const h of txHashes) {
        const r = await t.rpc.call<{ status: Hex } | null>("eth_getTransactionReceipt", [h]);
        expect(r?.status).toBe("0x1");
      }
    } finally {
      await closeTestChain(t);
    }
  });

  it("keeps a transaction another tool sent (a wallet's deposit) once it is mined, across a SIGKILL of anvil", async () => {
    const dir = tempDir();
    const t1 = await openTestChain(dir, { snapshotEvery: 1_000_000 });
    const wallet = privateKeyToAccount(generatePrivateKey());
    await t1.rpc.call("anvil_setBalance", [wallet.address, "0xde0b6b3a7640000"]);
    const to = "0x000000000000000000000000000000000000dEaD" as const;
    const send = async (nonce: number) => {
      const raw = await wallet.signTransaction({ chainId: t1.chain.chainId, type: "eip1559", nonce, to, value: 1n, gas: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n });
      return t1.rpc.call<Hex>("eth_sendRawTransaction", [raw]);
    };
    // One mined by the idle miner, one mined in the block of an operator's batch: neither is in the journal.
    const alone = await send(0);
    await expect.poll(() => t1.rpc.call("eth_getTransactionReceipt", [alone]), { timeout: 5_000, interval: 50 }).not.toBeNull();
    const beside = await send(1);
    const hashes = await trade(t1, 3, "beside");
    await killAnvil(t1);

    const t2 = await openTestChain(dir);
    try {
      for (const h of [alone, beside, ...hashes]) expect((await t2.rpc.call<{ status: Hex } | null>("eth_getTransactionReceipt", [h]))?.status).toBe("0x1");
      expect(BigInt(await t2.rpc.call<Hex>("eth_getBalance", [to, "latest"]))).toBe(2n);
    } finally {
      await closeTestChain(t2);
    }
  });
});
