// The contracts' own event logs, read in block ranges small enough for a node's eth_getLogs limits
// (public RPC providers refuse ranges of more than some thousands of blocks).
import { toHex, type Hex } from "viem";
import { RpcError, type JsonRpc } from "../rpc.ts";
import type { Address } from "../vault.ts";

export interface LogFilter {
  address: Address;
  /** Per position: one topic, any of several, or null for any. */
  topics: (Hex | Hex[] | null)[];
}

export interface RawLog {
  topics: [Hex, ...Hex[]];
  data: Hex;
  blockNumber: Hex;
  transactionHash: Hex;
  logIndex: Hex;
}

export class LogReader {
  constructor(
    private readonly rpc: JsonRpc,
    /** No log of ours is older: the Vault's deployment block. */
    readonly fromBlock: bigint,
    private readonly rangeBlocks: bigint,
  ) {}

  /** Every log of each filter up to `toBlock`, oldest first; one JSON-RPC batch per block range. */
  all(filters: readonly LogFilter[], toBlock: bigint): Promise<RawLog[][]> {
    return this.between(filters, this.fromBlock, toBlock);
  }

  /**
   * Every log of each filter from `fromBlock` to `toBlock`, oldest first; one JSON-RPC batch per block range, which
   * asks first for the range's last block. A node behind that block (one of a pool behind CHAIN_RPC_URL) answers
   * `eth_getLogs` with the logs up to its own head and no error (geth); one that has no such block before its logs
   * are read has not read the range whole, and the read fails rather than miss the logs of the blocks it lacks. With
   * `toHash`, the hash the caller read of `toBlock`, a node whose block there is another (on another fork) fails the
   * read too: its logs are not those of the chain the caller goes on from. Each range after the first asks too for the
   * last block of the range before, whose hash must be the one read with that range's logs: a block's hash commits to
   * every block under it, so each range is read from the chain of the last, and a range before it answered by a node
   * on another fork fails the read as the last would.
   */
  async between(filters: readonly LogFilter[], fromBlock: bigint, toBlock: bigint, toHash?: Hex): Promise<RawLog[][]> {
    const out = filters.map((): RawLog[] => []);
    let before: { block: bigint; hash: Hex } | undefined;
    for (let from = fromBlock; from <= toBlock; from += this.rangeBlocks) {
      const to = from + this.rangeBlocks - 1n < toBlock ? from + this.rangeBlocks - 1n : toBlock;
      // Each block asked for, with the hash it must have (the caller's at toBlock, the range before's at its end).
      const ends: [bigint, Hex | undefined][] = [[to, to === toBlock ? toHash : undefined], ...(before ? [[before.block, before.hash] as [bigint, Hex]] : [])];
      const answers = await this.rpc.batch([...ends.map(([n]) => ({ method: "eth_getBlockByNumber", params: [toHex(n), false] })), ...filters.map((f) => this.query(f, from, to))]);
      const [hash] = ends.map(([n, expected], i) => {
        const block = answers[i]!;
        if (!block.ok) throw block.error;
        if (block.result === null) throw new RpcError("eth_getLogs", -32000, `the node that answered has no block ${n} yet: the logs up to it may be incomplete`);
        const { hash } = block.result as { hash: Hex };
        if (expected !== undefined && hash.toLowerCase() !== expected.toLowerCase()) {
          throw new RpcError("eth_getLogs", -32000, `the node that answered has another block ${n} than ${expected}: its logs are another fork's`);
        }
        return hash;
      });
      before = { block: to, hash: hash! };
      answers.slice(ends.length).forEach((g, i) => {
        if (!g.ok) throw g.error;
        out[i]!.push(...(g.result as RawLog[]));
      });
    }
    return out;
  }

  /** The newest log of the filter, searching back from the latest block: what is looked up is usually recent. */
  async newest(filter: LogFilter): Promise<RawLog | undefined> {
    const latest = BigInt(await this.rpc.call<Hex>("eth_blockNumber"));
    for (let to = latest; to >= this.fromBlock; to -= this.rangeBlocks) {
      const from = to - this.rangeBlocks + 1n > this.fromBlock ? to - this.rangeBlocks + 1n : this.fromBlock;
      const { method, params } = this.query(filter, from, to);
      const logs = await this.rpc.call<RawLog[]>(method, params);
      if (logs.length > 0) return logs[logs.length - 1];
    }
    return undefined;
  }

  private query(f: LogFilter, from: bigint, to: bigint): { method: string; params: unknown[] } {
    return { method: "eth_getLogs", params: [{ address: f.address, topics: f.topics, fromBlock: toHex(from), toBlock: toHex(to) }] };
  }
}
