import { describe, expect, it } from "vitest";
import type { ChainInfo, Hex32, HoldEvents } from "../vault/vault.ts";
import { HOLDS_SPAN, OpenHolds } from "./open-holds.ts";

const CLIENT = "0x00000000000000000000000000000000000000c1";
const id = (n: number | bigint) => `0x${n.toString(16).padStart(64, "0")}` as Hex32;
const at = (block: bigint) => ({ txHash: id(1000n + block), blockNumber: block });

/** A chain of blocks from 10 on, each holding the events given for it, whose hashes change with `fork`. */
class FakeChain {
  readonly blocks = new Map<bigint, Partial<HoldEvents>>();
  head = 10n;
  fork = 0;
  reads: [bigint, bigint][] = [];
  failNext = false;

  info(): ChainInfo {
    return { deployedAt: 10n } as ChainInfo;
  }
  async blockNumber() {
    return this.head;
  }
  async blockHash(n: bigint) {
    return n <= this.head ? id(n * 100n + BigInt(this.fork) * 1_000_000n) : undefined;
  }
  async holds(from: bigint, to: bigint): Promise<HoldEvents> {
    this.reads.push([from, to]);
    if (this.failNext) {
      this.failNext = false;
      throw new Error("eth_getLogs failed");
    }
    const out: HoldEvents = { locks: [], endings: [], escrows: [], escrowEndings: [] };
    for (let b = from; b <= to; b++) {
      const e = this.blocks.get(b) ?? {};
      out.locks.push(...(e.locks ?? []));
      out.endings.push(...(e.endings ?? []));
      out.escrows.push(...(e.escrows ?? []));
      out.escrowEndings.push(...(e.escrowEndings ?? []));
    }
    return out;
  }
  /** Mines a block with these events. */
  mine(e: Partial<HoldEvents>) {
    this.blocks.set(++this.head, e);
  }
}

const lock = (n: number, block: bigint) => ({ orderId: id(n), client: CLIENT, amount: BigInt(n) * 1_000_000n, ...at(block) }) as const;
const released = (n: number, block: bigint) => ({ kind: "released", orderId: id(n), client: CLIENT, amount: BigInt(n) * 1_000_000n, expired: false, ...at(block) }) as const;
const escrow = (n: number, block: bigint) => ({ orderId: id(n), client: CLIENT, tokenId: 7n, shares: BigInt(n), ...at(block) }) as const;
const escrowReleased = (n: number, block: bigint) => ({ kind: "released", orderId: id(n), client: CLIENT, tokenId: 7n, shares: BigInt(n), expired: false, ...at(block) }) as const;

const orderIds = async (holds: OpenHolds) => (await holds.read()).open.map((h) => `${h.kind} ${Number(h.orderId)}`).sort();

describe("OpenHolds", () => {
  it("reads the chain from the Vault's deployment once, then only the blocks since its last read", async () => {
    const chain = new FakeChain();
    const holds = new OpenHolds(chain);
    chain.mine({ locks: [lock(1, 11n)] });
    chain.mine({ escrows: [escrow(2, 12n)] });
    expect(await orderIds(holds)).toEqual(["escrow 2", "lock 1"]);
    chain.mine({ locks: [lock(3, 13n)], endings: [released(1, 13n)] });
    expect(await orderIds(holds)).toEqual(["escrow 2", "lock 3"]);
    // No block since: nothing is read.
    expect(await orderIds(holds)).toEqual(["escrow 2", "lock 3"]);
    chain.mine({ escrowEndings: [escrowReleased(2, 14n)] });
    expect(await orderIds(holds)).toEqual(["lock 3"]);
    expect(chain.reads).toEqual([
      [10n, 12n],
      [13n, 13n],
      [14n, 14n],
    ]);
  });

  it("takes off a hold opened and ended in the blocks of one read, and tells a lock from an escrow of the same order id", async () => {
    const chain = new FakeChain();
    chain.mine({ locks: [lock(4, 11n)], escrows: [escrow(4, 11n)] });
    chain.mine({ endings: [released(4, 12n)] });
    expect(await orderIds(new OpenHolds(chain))).toEqual(["escrow 4"]);
  });

  it("answers the holds their deadline ended in the blocks it read, with the transactions that made and ended them, and not those the operator released", async () => {
    const chain = new FakeChain();
    const holds = new OpenHolds(chain);
    chain.mine({ locks: [lock(16, 11n), lock(17, 11n)], escrows: [escrow(18, 11n)] });
    expect((await holds.read()).expired).toEqual([]);
    chain.mine({ endings: [{ ...released(16, 12n), expired: true }, released(17, 12n)], escrowEndings: [{ ...escrowReleased(18, 12n), expired: true }] });
    expect((await holds.read()).expired).toEqual([
      { kind: "lock", orderId: id(16), client: CLIENT, amount: 16_000_000n, lockTx: at(11n).txHash, releaseTx: at(12n).txHash },
      { kind: "escrow", orderId: id(18), client: CLIENT, tokenId: 7n, shares: 18n, lockTx: at(11n).txHash, releaseTx: at(12n).txHash },
    ]);
    // Told once: the next read takes only the blocks since.
    expect((await holds.read()).expired).toEqual([]);
  });

  it("reads again from the deployment when the chain has another block where it read last", async () => {
    const chain = new FakeChain();
    const holds = new OpenHolds(chain);
    chain.mine({ locks: [lock(5, 11n)] });
    chain.mine({ locks: [lock(6, 12n)] });
    expect(await orderIds(holds)).toEqual(["lock 5", "lock 6"]);
    // A reorganisation replaced block 12 and added 13: the lock of 6 is gone, 7 is new.
    chain.fork = 1;
    chain.blocks.set(12n, {});
    chain.mine({ locks: [lock(7, 13n)] });
    expect(await orderIds(holds)).toEqual(["lock 5", "lock 7"]);
    expect(chain.reads.at(-1)).toEqual([10n, 13n]);
  });

  it("keeps what it followed when the node answering lacks the block it read last, one of a pool behind: nothing is read again from the deployment", async () => {
    const chain = new FakeChain();
    const holds = new OpenHolds(chain);
    chain.mine({ locks: [lock(13, 11n)] });
    chain.mine({ endings: [released(13, 12n)], locks: [lock(14, 12n)] });
    expect(await orderIds(holds)).toEqual(["lock 14"]);
    // A node still at block 11 answers: it has neither block 12 nor what happened in it.
    chain.head = 11n;
    expect(await orderIds(holds)).toEqual(["lock 14"]);
    chain.head = 12n;
    chain.mine({ locks: [lock(15, 13n)] });
    expect(await orderIds(holds)).toEqual(["lock 14", "lock 15"]);
    expect(chain.reads).toEqual([
      [10n, 12n],
      [13n, 13n],
    ]);
  });

  it("keeps what it had when a read fails, and reads the same blocks again next time", async () => {
    const chain = new FakeChain();
    const holds = new OpenHolds(chain);
    chain.mine({ locks: [lock(8, 11n)] });
    expect(await orderIds(holds)).toEqual(["lock 8"]);
    chain.mine({ endings: [released(8, 12n)], locks: [lock(9, 12n)] });
    chain.failNext = true;
    await expect(holds.read()).rejects.toThrow("eth_getLogs failed");
    expect(await orderIds(holds)).toEqual(["lock 9"]);
    expect(chain.reads.slice(-2)).toEqual([
      [12n, 12n],
      [12n, 12n],
    ]);
  });

  it("reads a long history a span of blocks at a time, a hold ended spans after it opened taken off, and a span that fails changes nothing", async () => {
    const chain = new FakeChain();
    const holds = new OpenHolds(chain);
    const far = 10n + 2n * HOLDS_SPAN + 500n;
    chain.blocks.set(11n, { locks: [lock(10, 11n)], escrows: [escrow(11, 11n)] });
    chain.blocks.set(10n + HOLDS_SPAN + 5n, { endings: [released(10, 10n + HOLDS_SPAN + 5n)] });
    chain.blocks.set(far, { locks: [lock(12, far)] });
    chain.head = far;
    // The second span's read fails: the next read starts from the deployment again, as if none had been made.
    const read = chain.holds.bind(chain);
    let calls = 0;
    chain.holds = (from, to) => (++calls === 2 ? Promise.reject(new Error("eth_getLogs failed")) : read(from, to));
    await expect(holds.read()).rejects.toThrow("eth_getLogs failed");
    expect(await orderIds(holds)).toEqual(["escrow 11", "lock 12"]);
    expect(chain.reads.slice(-3)).toEqual([
      [10n, 9n + HOLDS_SPAN],
      [10n + HOLDS_SPAN, 9n + 2n * HOLDS_SPAN],
      [10n + 2n * HOLDS_SPAN, far],
    ]);
  });
});
