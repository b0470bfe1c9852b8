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
   * Every log of each filter from `fromBlock` to `toBlock`, oldest first; one JSON-RPC batch per block range (`range`).
   * With `toHash`, the hash the caller read of `toBlock`, a node whose block there is another (on another fork) fails the
   * read: its logs are not those of the chain the caller goes on from. Each range after the first asks too for the last
   * block of the range before, whose hash must be the one read with that range's logs: a block's hash commits to every
   * block under it, so each range is read from the chain of the last, and a range before it answered by a node on
   * another fork fails the read as the last would.
   */
  async between(filters: readonly LogFilter[], fromBlock: bigint, toBlock: bigint, toHash?: Hex): Promise<RawLog[][]> {
    const out = filters.map((): RawLog[] => []);
    let before: { block: bigint; hash: Hex } | undefined;
    for (let from = fromBlock; from <= toBlock; from += this.rangeBlocks) {
      const to = from + this.rangeBlocks - 1n < toBlock ? from + this.rangeBlocks - 1n : toBlock;
      const { hashes, logs } = await this.range(filters, from, to, [[to, to === toBlock ? toHash : undefined], ...(before ? [[before.block, before.hash] as const] : [])]);
      before = { block: to, hash: hashes[0]! };
      logs.forEach((found, i) => out[i]!.push(...found));
    }
    return out;
  }

  /**
   * The newest log of the filter, searching back from the latest block (what is looked up is usually recent), on the
   * chain of the node that named that block: each range is read with the hash of its last block, which must be the one
   * the head read named (the first range's) or the one the range after it read of the block under it. A node behind
   * that head, or on another fork, fails the search rather than miss a log the chain has or find one it has not.
   */
  async newest(filter: LogFilter): Promise<RawLog | undefined> {
    const head = await this.rpc.call<{ number: Hex; hash: Hex }>("eth_getBlockByNumber", ["latest", false]);
    let hash = head.hash;
    for (let to = BigInt(head.number); to >= this.fromBlock; to -= this.rangeBlocks) {
      const from = to - this.rangeBlocks + 1n > this.fromBlock ? to - this.rangeBlocks + 1n : this.fromBlock;
      const { hashes, logs } = await this.range([filter], from, to, [[to, hash], ...(from > this.fromBlock ? [[from - 1n, undefined] as const] : [])]);
      const found = logs[0]!;
      if (found.length > 0) return found[found.length - 1];
      hash = hashes[1]!;
    }
    return undefined;
  }

  /**
   * Each filter's logs from `from` to `to` and the hash of each block of `ends`, in one JSON-RPC batch, which asks for
   * the blocks first. A node behind a block asked for (one of a pool behind CHAIN_RPC_URL) answers `eth_getLogs` with
   * the logs up to its own head and no error (geth); one that has no such block before its logs are read has not read
   * the range whole, and the read fails rather than miss the logs of the blocks it lacks. A block given with a hash
   * must have it, else the node that answered is on another fork and the read fails.
   */
  private async range(filters: readonly LogFilter[], from: bigint, to: bigint, ends: readonly (readonly [bigint, Hex | undefined])[]): Promise<{ hashes: Hex[]; logs: RawLog[][] }> {
    const answers = await this.rpc.batch([...ends.map(([n]) => ({ method: "eth_getBlockByNumber", params: [toHex(n), false] })), ...filters.map((f) => this.query(f, from, to))]);
    const hashes = ends.map(([n, expected], i) => {
      const block = answers[i]!;
      if (!block.ok) throw block.error;
      if (block.result === null) throw new RpcError("eth_getLogs", -32000, `the node that answered has no block ${n} yet: the logs up to it may be incomplete`);
      const { hash } = block.result as { hash: Hex };
      if (expected !== undefined && hash.toLowerCase() !== expected.toLowerCase()) {
        throw new RpcError("eth_getLogs", -32000, `the node that answered has another block ${n} than ${expected}: its logs are another fork's`);
      }
      return hash;
    });
    const logs = answers.slice(ends.length).map((g) => {
      if (!g.ok) throw g.error;
      return g.result as RawLog[];
    });
    return { hashes, logs };
  }

  private query(f: LogFilter, from: bigint, to: bigint): { method: string; params: unknown[] } {
    return { method: "eth_getLogs", params: [{ address: f.address, topics: f.topics, fromBlock: toHex(from), toBlock: toHex(to) }] };
  }
}
