import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openEvmVault } from "../evm/evm-vault.ts";
import { closeTestChain, keyOf, openTestChain, openTestStore, tempDir } from "../testkit.ts";
import { startDevChain } from "./devchain.ts";
import { readJournal } from "./journal.ts";

const client = "0x00000000000000000000000000000000000c11e8" as const;

describe("the dev chain's final snapshot", () => {
  it("is harmless when it fails: stop() says so and resolves, and the next start replays the journal", async () => {
    const dir = tempDir();
    const failures: unknown[] = [];
    const chain = await startDevChain({ dataDir: join(dir, "node"), snapshotEvery: 1_000_000, onSnapshotError: (err) => failures.push(err) });
    const store = await openTestStore(dir);
    const vault = await openEvmVault({ rpcUrl: chain.rpcUrl, operatorKey: chain.operatorKey, store, faucet: true, devChain: chain });
    await vault.fund(client, 5_000_000n, keyOf("final-snapshot"));
    await vault.close();
    await store.close();
    // anvil gone before the server's stop: what a signal to the whole process group did before anvil had a group of its own
    process.kill(chain.pid, "SIGKILL");
    await new Promise((r) => setTimeout(r, 200));
    await chain.stop();
    expect(failures).toHaveLength(1);
    expect(readJournal(join(dir, "node", "journal.jsonl")).batches.length).toBeGreaterThan(0);

    const again = await openTestChain(dir);
    try {
      expect(await again.vault.balanceOf(client)).toEqual({ available: 5_000_000n, locked: 0n });
    } finally {
      await closeTestChain(again);
    }
  });
});
