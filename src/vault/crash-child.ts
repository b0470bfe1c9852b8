// Crash-test fixture (run by restart.test.ts as a separate node process): owns a dev chain, commits
// some orders, prints what it did as one JSON line, then waits to be killed with SIGKILL.
import { toHex } from "viem";
import { keccak256 } from "../evm/keccak.ts";
import { sotTokenId } from "../contracts/sot.ts";
import { keyOf, openTestChain } from "./testkit.ts";

const dir = process.argv[2]!;
const client = process.argv[3] as `0x${string}`;
const t = await openTestChain(dir, { snapshotEvery: 1_000_000 });
await t.vault.fund(client, 100_000_000n, keyOf("crash"));
const refs = await Promise.all(
  Array.from({ length: 20 }, async (_, i) => {
    const o = keccak256(toHex(`crash-${i}`));
    await t.vault.lock(o, client, 1_000_000n);
    return t.vault.settle(o, 400_000n, { tokenId: sotTokenId("crash", "YES"), shares: 2_000_000n });
  }),
);
console.log(JSON.stringify({ anvilPid: t.chain.pid, txHashes: refs.map((r) => r.txHash) }));
setInterval(() => undefined, 60_000);
