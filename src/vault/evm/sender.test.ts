import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { keccak256, parseTransaction, toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startFaultyNode, type FaultyNode } from "../../../test/helpers/rpc-proxy.ts";
import { openSqliteStore } from "../../store/sqlite/sqlite-store.ts";
import type { Store } from "../../store/store.ts";
import { JsonRpc } from "../rpc.ts";
import { VaultTxError } from "../vault.ts";
import { storeNonceBook, type NonceBook } from "./nonce-book.ts";
import { TxSender, rpcSubmit, type Mined, type SenderOptions } from "./sender.ts";

let node: FaultyNode;
let store: Store;
beforeAll(async () => {
  node = await startFaultyNode();
  store = await openSqliteStore(":memory:");
  await store.migrate();
});
afterAll(async () => {
  await node.stop();
  await store.close();
});

let sender: TxSender;
let operator: Hex;
let book: NonceBook;
let newSender: (o?: Partial<SenderOptions>) => TxSender;
beforeEach(async () => {
  node.onSend = () => ({ kind: "pass" });
  const account = privateKeyToAccount(generatePrivateKey());
  operator = account.address;
  await node.rpc.call("anvil_setBalance", [operator, "0xde0b6b3a7640000"]);
  const rpc = new JsonRpc(node.url);
  book = storeNonceBook(store, { chainId: 31337, genesis: "0x00", operator });
  // Another instance sending as the same operator is another sender on the same book.
  newSender = (o = {}) => new TxSender({ rpc, account, chainId: 31337, submit: rpcSubmit(rpc), errorAbi: [], receiptPollMs: 20, nonces: book, ...o });
  sender = newSender();
});

/** A call with a mark in its data, to an address without code: it succeeds and changes nothing. */
const callBy = (by: TxSender, mark: bigint): Promise<Mined> =>
  by.send({ label: `call ${mark}`, to: "0x000000000000000000000000000000000000dEaD", data: toHex(mark, { size: 1 }), gas: 30_000n });
const call = (mark: bigint): Promise<Mined> => callBy(sender, mark);

async function nonceOf(hash: Hex): Promise<number> {
  const tx = await node.rpc.call<{ nonce: Hex }>("eth_getTransactionByHash", [hash]);
  return Number(tx.nonce);
}

/** The operator's mined transaction of this nonce, in any block, is a transfer of nothing to itself. */
async function nothingIn(nonce: number): Promise<boolean> {
  const latest = Number(await node.rpc.call<Hex>("eth_blockNumber"));
  for (let n = latest; n >= 0; n--) {
    const block = await node.rpc.call<{ transactions: { nonce: Hex; from: Hex; to: Hex; input: Hex; value: Hex }[] }>("eth_getBlockByNumber", [toHex(n), true]);
    const tx = block.transactions.find((t) => t.from.toLowerCase() === operator.toLowerCase() && Number(t.nonce) === nonce);
    if (tx) return tx.to.toLowerCase() === operator.toLowerCase() && tx.input === "0x" && BigInt(tx.value) === 0n;
  }
  return false;
}

async function minedCount(): Promise<number> {
  return Number(await node.rpc.call<Hex>("eth_getTransactionCount", [operator, "latest"]));
}

function unknown(e: unknown): boolean {
  return e instanceof VaultTxError && e.outcome === "unknown";
}

describe("TxSender against a node that fails", () => {
  it("counts a batch the node took without answering as pending until mined, and carries on after it", async () => {
    node.onSend = () => ({ kind: "drop" });
    const lost = await Promise.allSettled([call(1n), call(2n)]);
    expect(lost.every((r) => r.status === "rejected" && unknown(r.reason))).toBe(true);
    // In the node's mempool, not mined: those transactions can still land.
    expect(await sender.pendingCount()).toBe(2);
    await node.rpc.call("evm_mine");
    expect(await sender.pendingCount()).toBe(0);
    expect(await minedCount()).toBe(2);

    node.onSend = () => ({ kind: "pass" });
    const next = await call(3n);
    expect(await nonceOf(next.txHash)).toBe(2);
    expect(await sender.pendingCount()).toBe(0);
  });

  it("counts a batch lost on the way as pending while the node cannot be reached, then takes its nonces itself", async () => {
    node.onSend = () => ({ kind: "refuse" });
    const lost = await Promise.allSettled([call(1n), call(2n), call(3n)]);
    expect(lost.every((r) => r.status === "rejected" && unknown(r.reason))).toBe(true);
    // The node never saw them, but the book holds nonces 0 to 2 as reserved (the first batch's, then the
    // second's past it): nothing may be concluded yet, and the fillers this sender tries are lost too.
    expect(await sender.pendingCount()).toBe(3);

    node.onSend = () => ({ kind: "pass" });
    // The next batch first takes the lost nonces with transfers of nothing, then goes past them.
    const first = await call(4n);
    expect(await nonceOf(first.txHash)).toBe(3);
    expect(await sender.pendingCount()).toBe(0);
    expect(await minedCount()).toBe(4);
    for (const n of [0, 1, 2]) expect(await nothingIn(n)).toBe(true);
    const next = await call(5n);
    expect(await nonceOf(next.txHash)).toBe(4);
  });

  it("counts its own lost nonces when nothing else is sent, and takes them itself at once", async () => {
    node.onSend = () => ({ kind: "refuse" });
    expect(unknown(await call(1n).catch((e: unknown) => e))).toBe(true);
    node.onSend = () => ({ kind: "pass" });
    expect(await sender.pendingCount()).toBe(0);
    expect(await nothingIn(0)).toBe(true);
  });

  it("fills the nonce of a refused transaction so that the accepted ones after it are mined", async () => {
    // The four calls go as one batch, whose third the node refuses.
    node.onSend = (raws) => (raws.length === 4 ? { kind: "refuseTxs", indexes: [2] } : { kind: "pass" });
    const results = await Promise.allSettled([call(1n), call(2n), call(3n), call(4n)]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    const refused = (results[2] as PromiseRejectedResult).reason as VaultTxError;
    expect([refused.outcome, refused.reason]).toEqual(["reverted", "Refused"]);
    const after = (results[3] as PromiseFulfilledResult<Mined>).value;
    expect(await nonceOf(after.txHash)).toBe(3);
    expect(await minedCount()).toBe(4);
    expect(await sender.pendingCount()).toBe(0);
    // Nonce 2 went to a transfer of nothing to the operator itself: the refused call never happened.
    expect(await nothingIn(2)).toBe(true);
  });

  it("waits for the receipt of a transaction the node refused as already known, which lands, instead of calling it not made", async () => {
    const submit = rpcSubmit(new JsonRpc(node.url));
    // The node takes the transaction, and answers a second copy of it (a provider that forwarded the send twice).
    const twice = newSender({ submit: async (raws) => (await submit(raws)).map(() => ({ ok: false, error: "already known" })) });
    const mined = await callBy(twice, 9n);
    expect(await nonceOf(mined.txHash)).toBe(0);
    expect(await nothingIn(0)).toBe(false);
    expect(await twice.pendingCount()).toBe(0);
  });

  it("sends again a transaction a reorganisation removed while its receipt was awaited, instead of holding every send until the receipt deadline", async () => {
    const submit = rpcSubmit(new JsonRpc(node.url));
    const before = await node.rpc.call<Hex>("evm_snapshot");
    let reorganised = false;
    // The first submit is mined, then a reorganisation replaces its block with an empty one before any receipt is read.
    const reorging = newSender({
      gapGraceMs: 300,
      receiptTimeoutMs: 20_000,
      submit: async (raws) => {
        const results = await submit(raws);
        if (!reorganised) {
          reorganised = true;
          await node.rpc.call("evm_revert", [before]);
          await node.rpc.call("evm_mine");
        }
        return results;
      },
    });
    const started = Date.now();
    const mined = await callBy(reorging, 7n);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await nonceOf(mined.txHash)).toBe(0);
    expect(await reorging.pendingCount()).toBe(0);
  }, 30_000);
});

describe("TxSenders of several instances sharing one nonce book", () => {
  it("never take the same nonce, and every transaction lands", async () => {
    const other = newSender();
    const mined = await Promise.all(Array.from({ length: 40 }, (_, i) => callBy(i % 2 ? other : sender, BigInt(i))));
    const nonces = await Promise.all(mined.map((m) => nonceOf(m.txHash)));
    expect(new Set(nonces).size).toBe(40);
    expect(await minedCount()).toBe(40);
    expect(await sender.pendingCount()).toBe(0);
    expect(await other.pendingCount()).toBe(0);
  });

  it("leave a batch that reaches the node before the earlier nonces it waits for until they come, within the grace", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const submit = rpcSubmit(new JsonRpc(node.url));
    // The first instance reserves nonce 0, then its submit is held on the way; the second's nonce 1 arrives first.
    const slow = newSender({ submit: async (raws) => (await held, submit(raws)) });
    const first = callBy(slow, 1n);
    await expect.poll(async () => (await book.handedOut()).next).toBe(1);
    // A grace this test's half second and the release come well within on a busy machine: past it, the second would take nonce 0 with a transfer of nothing.
    const second = callBy(newSender({ gapGraceMs: 10_000 }), 2n);
    await new Promise((r) => setTimeout(r, 500));
    expect(await minedCount()).toBe(0);
    release();
    const [a, b] = await Promise.all([first, second]);
    expect([await nonceOf(a.txHash), await nonceOf(b.txHash)]).toEqual([0, 1]);
  });

  it("take the nonces of an instance that reserved them and died before sending, once they are older than the grace", async () => {
    expect(await book.reserve(0, 2)).toBe(0);
    const started = Date.now();
    const mined = await callBy(newSender({ gapGraceMs: 300 }), 1n);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(await nonceOf(mined.txHash)).toBe(2);
    expect([await nothingIn(0), await nothingIn(1)]).toEqual([true, true]);
  });

  it("count another instance's reserved nonce as pending until it is older than the grace, then take it", async () => {
    // A grace the first count comes well within on a busy machine; the second comes once it has passed.
    const counting = newSender({ gapGraceMs: 2_000 });
    await book.reserve(0, 1);
    expect(await counting.pendingCount()).toBe(1);
    await new Promise((r) => setTimeout(r, 2_050));
    expect(await counting.pendingCount()).toBe(0);
    expect(await nothingIn(0)).toBe(true);
  });
});

describe("TxSender's dry run", () => {
  /** A call the chain refuses: the pairing precompile fails on input that is not a multiple of 192 bytes. */
  const failing = { label: "bad pairing", to: "0x0000000000000000000000000000000000000008", data: "0x01", gas: 100_000n } as const;

  it("refuses a call that would revert before it takes a nonce, unless told to send it without one", async () => {
    const before = await minedCount();
    const refused = await sender.send(failing).catch((e: unknown) => e);
    expect(refused).toMatchObject({ outcome: "reverted" });
    expect(await minedCount()).toBe(before);
    // Without the dry run it is sent: mined, reverted on chain, its nonce taken.
    const sent = await sender.send({ ...failing, dryRun: false }).catch((e: unknown) => e);
    expect(sent).toMatchObject({ outcome: "reverted", message: expect.stringContaining("on chain") });
    expect(await minedCount()).toBe(before + 1);
  });
});

describe("TxSender's failed receipts", () => {
  /** An address whose code reverts every call, until a reorganisation takes the code away. */
  const target = "0x00000000000000000000000000000000000000bd";

  it("calls a transaction that failed not made only once its block is under the confirmations: a reorganisation may mine it again, where it succeeds", async () => {
    await node.rpc.call("anvil_setCode", [target, "0x60006000fd"]);
    const before = await node.rpc.call<Hex>("evm_snapshot");
    const deep = newSender({ confirmations: 2, gapGraceMs: 300, receiptTimeoutMs: 20_000 });
    const outcome = deep.send({ label: "flaky", to: target, data: "0x", gas: 50_000n, dryRun: false }).then(
      (m) => m,
      (e: unknown) => e,
    );
    // Mined and failed; the failed receipt is read, then a reorganisation removes its block, and the code with it.
    await new Promise((r) => setTimeout(r, 500));
    await node.rpc.call("evm_revert", [before]);
    await node.rpc.call("anvil_setCode", [target, "0x"]);
    const mined = (await outcome) as Mined;
    expect(mined.txHash).toMatch(/^0x/);
    expect(await nonceOf(mined.txHash)).toBe(0);
    const receipt = await node.rpc.call<{ status: Hex }>("eth_getTransactionReceipt", [mined.txHash]);
    expect(receipt.status).toBe("0x1");

    // One that stays failed is answered so once two blocks are above it.
    await node.rpc.call("anvil_setCode", [target, "0x60006000fd"]);
    const failed = deep.send({ label: "failing", to: target, data: "0x", gas: 50_000n, dryRun: false }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 300));
    await node.rpc.call("evm_mine");
    await node.rpc.call("evm_mine");
    expect(await failed).toMatchObject({ outcome: "reverted", message: expect.stringContaining("on chain") });
  }, 30_000);
});

describe("TxSender's failed receipts on a chain slower than the receipts' deadline", () => {
  const target = "0x00000000000000000000000000000000000000be";

  it("answers a transaction that failed not made once its block is under the confirmations, though that takes longer than the deadline, while the chain mines", async () => {
    await node.rpc.call("anvil_setCode", [target, "0x60006000fd"]);
    // Three blocks of 600 ms are longer than the 1 s deadline, as twelve of 12 s are longer than two minutes.
    const slow = newSender({ confirmations: 3, receiptTimeoutMs: 1_000 });
    const blocks = setInterval(() => void node.rpc.call("evm_mine").catch(() => undefined), 600);
    try {
      const failed = await slow.send({ label: "failing", to: target, data: "0x", gas: 50_000n, dryRun: false }).catch((e: unknown) => e);
      expect(failed).toMatchObject({ outcome: "reverted", message: expect.stringContaining("on chain") });
    } finally {
      clearInterval(blocks);
    }
    // A chain that mines nothing more leaves it shallow: unknown at the deadline.
    const stalled = await slow.send({ label: "failing", to: target, data: "0x", gas: 50_000n, dryRun: false }).catch((e: unknown) => e);
    expect(stalled).toMatchObject({ outcome: "unknown", message: expect.stringContaining("not yet 3 deep") });
  }, 30_000);
});

describe("TxSender's failed receipts and the transactions behind them", () => {
  const target = "0x00000000000000000000000000000000000000bf";

  it("answers the transactions sent after one that failed while it waits for its depth, rather than holding them for its blocks", async () => {
    await node.rpc.call("anvil_setCode", [target, "0x60006000fd"]);
    const deep = newSender({ confirmations: 3, receiptTimeoutMs: 20_000 });
    let answered = false;
    const failed = deep.send({ label: "failing", to: target, data: "0x", gas: 50_000n, dryRun: false }).catch((e: unknown) => e);
    void failed.then(() => (answered = true));
    // Mined and failed: its answer waits for three blocks above it.
    await expect.poll(minedCount).toBe(1);
    // The next one is mined a block above it and answered at once, though the failed one is still shallow.
    const next = await Promise.race([callBy(deep, 1n), new Promise((r) => setTimeout(() => r("held"), 5_000))]);
    expect(next).toMatchObject({ txHash: expect.stringMatching(/^0x/) });
    expect(await nonceOf((next as Mined).txHash)).toBe(1);
    expect(answered).toBe(false);
    await node.rpc.call("evm_mine");
    await node.rpc.call("evm_mine");
    expect(await failed).toMatchObject({ outcome: "reverted", message: expect.stringContaining("on chain") });

    // A stop answers one still waiting for its depth as unknown, for recovery to read from the chain, rather than wait for its blocks.
    const stopped = deep.send({ label: "failing", to: target, data: "0x", gas: 50_000n, dryRun: false }).catch((e: unknown) => e);
    await expect.poll(minedCount).toBe(3);
    deep.stopWaits();
    expect(await stopped).toMatchObject({ outcome: "unknown" });
    await deep.idle();
  }, 30_000);
});

describe("TxSender and fees that rise past a transaction's", () => {
  it("sends again a transaction left unmined by a base fee above its cap, its nonce and call with fees raised, and answers the one mined", async () => {
    await node.rpc.call("anvil_setBalance", [operator, toHex(10n ** 24n)]);
    const anvil = rpcSubmit(node.rpc);
    let first: Hex | undefined;
    // The first transaction reaches the node, then the base fee jumps far past its cap before the next block.
    const rising = newSender({
      gapGraceMs: 300,
      receiptTimeoutMs: 15_000,
      submit: async (raws) => {
        const results = await anvil(raws);
        if (!first) {
          first = raws[0]!;
          // A million times the price its fees were set by: empty blocks take the base fee down 12.5 % each, a hundred blocks to get under its cap.
          const price = await node.rpc.call<Hex>("eth_gasPrice");
          await node.rpc.call("anvil_setNextBlockBaseFeePerGas", [toHex(BigInt(price) * 1_000_000n)]);
        }
        await node.rpc.call("evm_mine");
        return results;
      },
    });
    const blocks = setInterval(() => void node.rpc.call("evm_mine").catch(() => undefined), 200);
    try {
      const mined = await callBy(rising, 5n);
      const stuck = keccak256(first!);
      expect(mined.txHash).not.toBe(stuck);
      expect(await nonceOf(mined.txHash)).toBe(0);
      // Mined once: the first one can never be, its nonce taken by the one that replaced it.
      expect(await minedCount()).toBe(1);
      expect(await node.rpc.call("eth_getTransactionReceipt", [stuck])).toBeNull();
      // The same call, to the same address, with the same gas; fees raised by at least what nodes ask of a replacement.
      // Its versions: the first one sent, then those that replaced it, the one mined among them.
      expect(mined.versions[0]!.raw).toBe(first);
      const raw = mined.versions.find((v) => v.hash === mined.txHash)!.raw;
      const [was, now] = [parseTransaction(first!), parseTransaction(raw)];
      expect(keccak256(raw)).toBe(mined.txHash);
      expect([now.to, now.data, now.gas, now.nonce]).toEqual([was.to, was.data, was.gas, was.nonce]);
      expect(now.maxFeePerGas!).toBeGreaterThanOrEqual((was.maxFeePerGas! * 9n) / 8n);
      expect(now.maxPriorityFeePerGas!).toBeGreaterThanOrEqual((was.maxPriorityFeePerGas! * 9n) / 8n);
    } finally {
      clearInterval(blocks);
    }
  }, 30_000);
});

describe("TxSender and a reorganisation that mines another version of a replaced transaction", () => {
  const target = "0x00000000000000000000000000000000000000c0";

  /**
   * A call to `target`, whose code is `code`, sent by a sender of 3 confirmations; the base fee jumps past its cap once it
   * reaches the node, so three blocks on it is replaced, and the replacement is mined. Then `reorganise` removes that block
   * and mines the first version instead, `target` doing nothing there, and answers its hash.
   */
  async function replacedAndMined(code: Hex) {
    await node.rpc.call("anvil_setBalance", [operator, toHex(10n ** 24n)]);
    await node.rpc.call("anvil_setCode", [target, code]);
    // A base fee of 1 gwei, whatever the tests before left.
    await node.rpc.call("anvil_setNextBlockBaseFeePerGas", [toHex(10n ** 9n)]);
    await node.rpc.call("evm_mine");
    const price = await node.rpc.call<Hex>("eth_gasPrice");
    const before = await node.rpc.call<Hex>("evm_snapshot");
    const anvil = rpcSubmit(node.rpc);
    let first: Hex | undefined;
    const sender = newSender({
      confirmations: 3,
      gapGraceMs: 300,
      receiptTimeoutMs: 5_000,
      submit: async (raws) => {
        const results = await anvil(raws);
        if (!first) {
          await node.rpc.call("anvil_setNextBlockBaseFeePerGas", [toHex(BigInt(price) * 1_000n)]);
          first = raws[0]!;
        }
        await node.rpc.call("evm_mine");
        return results;
      },
    });
    const outcome = sender.send({ label: "replaced", to: target, data: "0x", gas: 50_000n, dryRun: false }).then(
      (m) => m,
      (e: unknown) => e,
    );
    await expect.poll(() => first).toBeDefined();
    // Blocks until the replacement is mined, fewer than three.
    while ((await minedCount()) === 0) {
      await node.rpc.call("evm_mine");
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await node.rpc.call("eth_getTransactionReceipt", [keccak256(first!)])).toBeNull();
    // The sender reads the replacement's receipt meanwhile.
    await new Promise((r) => setTimeout(r, 500));
    const reorganise = async (): Promise<Hex> => {
      await node.rpc.call("evm_revert", [before]);
      await node.rpc.call("anvil_setCode", [target, "0x"]);
      await node.rpc.call("anvil_setNextBlockBaseFeePerGas", [price]);
      await node.rpc.call("eth_sendRawTransaction", [first!]);
      await node.rpc.call("evm_mine");
      const held = await node.rpc.call<{ status: Hex } | null>("eth_getTransactionReceipt", [keccak256(first!)]);
      expect(held?.status).toBe("0x1");
      expect(await minedCount()).toBe(1);
      return keccak256(first!);
    };
    return { sender, outcome, reorganise };
  }

  it("answers a failed one with the version the chain holds when a reorganisation removes its block and mines the other, rather than unknown at the deadline", async () => {
    // The replacement fails: its answer waits for three blocks above it.
    const { outcome, reorganise } = await replacedAndMined("0x60006000fd");
    const held = await reorganise();
    const mined = await outcome;
    expect(mined).toMatchObject({ txHash: held, blockNumber: BigInt(await node.rpc.call<Hex>("eth_blockNumber")) });
  }, 30_000);

  it("answers deep() with the version the chain holds when a reorganisation removes the block of the one mined and mines the other", async () => {
    // The replacement succeeds and is answered at once; a batch's refused calls then wait for its depth.
    const { sender, outcome, reorganise } = await replacedAndMined("0x");
    const mined = (await outcome) as Mined;
    expect(mined.versions).toHaveLength(2);
    const deep = sender.deep("replaced", mined).catch((e: unknown) => e);
    const held = await reorganise();
    expect(held).not.toBe(mined.txHash);
    const block = BigInt(await node.rpc.call<Hex>("eth_blockNumber"));
    for (let i = 0; i < 3; i++) await node.rpc.call("evm_mine");
    expect(await deep).toMatchObject({ txHash: held, blockNumber: block });
  }, 30_000);
});
