import { toHex, type Hex } from "viem";
import { describe, expect, it } from "vitest";
import type { JsonRpc, RpcResult } from "../rpc.ts";
import { LogReader, type LogFilter, type RawLog } from "./logs.ts";

const VAULT = "0x00000000000000000000000000000000000000aa";
/** A node's chain: its hash of each block, and the one log it holds, in block 5. */
const chain = (fork: string) => ({ hash: (n: bigint): Hex => `0x${fork.repeat(56)}${n.toString(16).padStart(8, "0")}`, log: fork === "a" });
const LOG: RawLog = { topics: [`0x${"11".repeat(32)}`], data: "0x", blockNumber: toHex(5n), transactionHash: `0x${"22".repeat(32)}`, logIndex: "0x0" };

/** One URL before a pool whose batches go, in turn, to each of `nodes`: a batch is answered by one node; `head` (the first unless named) names the latest block, 29. */
function pool(nodes: ReturnType<typeof chain>[], head = nodes[0]!): JsonRpc {
  let next = 0;
  return {
    call: async () => ({ number: toHex(29n), hash: head.hash(29n) }),
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

describe("LogReader.newest, through a pool of nodes", () => {
  const filter: LogFilter = { address: VAULT, topics: [] };

  it("finds the newest log searching back from the head, range by range", async () => {
    expect(await new LogReader(pool([chain("a")]), 0n, 10n).newest(filter)).toEqual(LOG);
  });

  it("fails a search a range of which a node on another fork answered, rather than miss the log the chain has", async () => {
    // The head and the two newest ranges (blocks 10 to 29) from the caller's chain; the oldest from a node whose chain forked under block 9, without the log.
    const reader = new LogReader(pool([chain("a"), chain("a"), chain("b")]), 0n, 10n);
    await expect(reader.newest(filter)).rejects.toThrow(/another block 9/);
  });

  it("fails a search whose newest range a node on another fork answered, rather than find a log of its chain", async () => {
    // The head from a node without the log; every range from one whose chain forked under block 29, with it.
    const reader = new LogReader(pool([chain("a")], chain("b")), 0n, 10n);
    await expect(reader.newest(filter)).rejects.toThrow(/another block 29/);
  });
});
