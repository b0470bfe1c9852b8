import { toHex, type Hex } from "viem";
import { describe, expect, it } from "vitest";
import type { JsonRpc, RpcResult } from "../rpc.ts";
import { LogReader, type LogFilter, type RawLog } from "./logs.ts";

const VAULT = "0x00000000000000000000000000000000000000aa";
/** A node's chain: its hash of each block, and the one log it holds, in block 5. */
const chain = (fork: string) => ({ hash: (n: bigint): Hex => `0x${fork.repeat(56)}${n.toString(16).padStart(8, "0")}`, log: fork === "a" });
const LOG: RawLog = { topics: [`0x${"11".repeat(32)}`], data: "0x", blockNumber: toHex(5n), transactionHash: `0x${"22".repeat(32)}`, logIndex: "0x0" };

/** One URL before a pool whose batches go, in turn, to each of `nodes`: a batch is answered by one node. */
function pool(nodes: ReturnType<typeof chain>[]): JsonRpc {
  let next = 0;
  return {
    batch: async (calls: { method: string; params: unknown[] }[]): Promise<RpcResult[]> => {
      const node = nodes[next++ % nodes.length]!;
      return calls.map((c): RpcResult => {
        if (c.method === "eth_getBlockByNumber") return { ok: true, result: { hash: node.hash(BigInt(c.params[0] as Hex)) } };
        const { fromBlock, toBlock } = c.params[0] as { fromBlock: Hex; toBlock: Hex };
        return { ok: true, result: node.log && BigInt(fromBlock) <= 5n && 5n <= BigInt(toBlock) ? [LOG] : [] };
      });
    },
  } as unknown as JsonRpc;
}

describe("LogReader.between, through a pool of nodes", () => {
  const filter: LogFilter = { address: VAULT, topics: [] };

  it("reads every range of the chain whose block the caller names at its end", async () => {
    const a = chain("a");
    expect(await new LogReader(pool([a]), 0n, 10n).between([filter], 0n, 29n, a.hash(29n))).toEqual([[LOG]]);
  });

  it("fails a read of several ranges a range before the last of which a node on another fork answered", async () => {
    const a = chain("a");
    // The first range (blocks 0 to 9) from a node whose chain forked under block 9, without the log; the others from the caller's.
    const reader = new LogReader(pool([chain("b"), a, a]), 0n, 10n);
    await expect(reader.between([filter], 0n, 29n, a.hash(29n))).rejects.toThrow(/another block 9/);
  });
});
