import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { JsonRpc } from "../rpc.ts";
import { tempDir } from "../testkit.ts";
import { startDevChain, type DevChain } from "./devchain.ts";
import { readJournal } from "./journal.ts";

/** A transfer of nothing from the operator to itself; below 21 000 gas the node refuses it outright. */
function transfer(chain: DevChain, nonce: number, gas = 21_000n): Promise<Hex> {
  const account = privateKeyToAccount(chain.operatorKey);
  return account.signTransaction({ chainId: chain.chainId, type: "eip1559", nonce, to: account.address, value: 0n, gas, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n });
}

async function mined(chain: DevChain): Promise<number> {
  const rpc = new JsonRpc(chain.rpcUrl);
  return Number(await rpc.call<Hex>("eth_getTransactionCount", [privateKeyToAccount(chain.operatorKey).address, "latest"]));
}

describe("the dev chain's submit", () => {
  it("keeps what it accepted past a refused nonce until that nonce comes, and replays it so; a copy refused again stays mined", async () => {
    const dir = join(tempDir(), "node");
    const chain = await startDevChain({ dataDir: dir, snapshotEvery: 1_000_000 });
    const results = await chain.submit([await transfer(chain, 0), await transfer(chain, 1, 20_000n), await transfer(chain, 2)]);
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
    expect(await mined(chain)).toBe(1);
    // Nonce 1 taken by another transaction (a filler), and nonce 0's sent again, as two instances may: refused as already there.
    const again = await chain.submit([await transfer(chain, 1), await transfer(chain, 0)]);
    expect(again.map((r) => r.ok)).toEqual([true, false]);
    expect(await mined(chain)).toBe(3);

    // Killed before any snapshot: the journal replays the same three, the copy of nonce 0 refused only where it was.
    process.kill(chain.pid, "SIGKILL");
    await new Promise((r) => setTimeout(r, 200));
    await chain.stop();
    const restarted = await startDevChain({ dataDir: dir });
    try {
      expect(await mined(restarted)).toBe(3);
    } finally {
      await restarted.stop();
    }
  });

  it("answers a batch as mined when the snapshot after it fails, and tries again once as many transactions more are journaled", async () => {
    const dir = join(tempDir(), "node");
    const failures: unknown[] = [];
    const chain = await startDevChain({ dataDir: dir, snapshotEvery: 2, onSnapshotError: (err) => failures.push(err) });
    try {
      // A directory where the snapshot is written: each snapshot fails, as a full disk would fail it.
      const snapshot = join(dir, "state.json.gz");
      mkdirSync(snapshot);
      const first = await chain.submit([await transfer(chain, 0), await transfer(chain, 1)]);
      expect(first.map((r) => r.ok)).toEqual([true, true]);
      expect(await mined(chain)).toBe(2);
      expect(failures).toHaveLength(1);
      // Three journaled, fewer than the two of the failure and two more: no dump is tried.
      expect((await chain.submit([await transfer(chain, 2)])).map((r) => r.ok)).toEqual([true]);
      expect(failures).toHaveLength(1);
      expect(readJournal(join(dir, "journal.jsonl")).batches).toHaveLength(2);

      rmSync(snapshot, { recursive: true });
      expect((await chain.submit([await transfer(chain, 3)])).map((r) => r.ok)).toEqual([true]);
      expect(failures).toHaveLength(1);
      expect(existsSync(snapshot)).toBe(true);
      expect(readJournal(join(dir, "journal.jsonl")).batches).toHaveLength(0);
    } finally {
      await chain.stop();
    }
    const restarted = await startDevChain({ dataDir: dir });
    try {
      expect(await mined(restarted)).toBe(4);
    } finally {
      await restarted.stop();
    }
  });
});
