import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startFaultyNode, type FaultyNode } from "../../../test/helpers/rpc-proxy.ts";
import { JsonRpc } from "../rpc.ts";
import { VaultTxError } from "../vault.ts";
import { TxSender, rpcSubmit, type Mined } from "./sender.ts";

let node: FaultyNode;
beforeAll(async () => {
  node = await startFaultyNode();
});
afterAll(() => node.stop());

let sender: TxSender;
let operator: Hex;
beforeEach(async () => {
  node.onSend = () => ({ kind: "pass" });
  const account = privateKeyToAccount(generatePrivateKey());
  operator = account.address;
  await node.rpc.call("anvil_setBalance", [operator, "0xde0b6b3a7640000"]);
  const rpc = new JsonRpc(node.url);
  sender = new TxSender({ rpc, account, chainId: 31337, submit: rpcSubmit(rpc), errorAbi: [], receiptPollMs: 20 });
});

/** A call with a mark in its data, to an address without code: it succeeds and changes nothing. */
const call = (mark: bigint): Promise<Mined> =>
  sender.send({ label: `call ${mark}`, to: "0x000000000000000000000000000000000000dEaD", data: toHex(mark, { size: 1 }), gas: 30_000n });

async function nonceOf(hash: Hex): Promise<number> {
  const tx = await node.rpc.call<{ nonce: Hex }>("eth_getTransactionByHash", [hash]);
  return Number(tx.nonce);
}

async function minedCount(): Promise<number> {
  return Number(await node.rpc.call<Hex>("eth_getTransactionCount", [operator, "latest"]));
}

/** The operator's transaction of this nonce, in the latest block, is a transfer of nothing to itself. */
async function nothingAt(nonce: number): Promise<boolean> {
  const block = await node.rpc.call<{ transactions: { nonce: Hex; from: Hex; to: Hex; input: Hex; value: Hex }[] }>("eth_getBlockByNumber", ["latest", true]);
  const tx = block.transactions.find((t) => t.from.toLowerCase() === operator.toLowerCase() && Number(t.nonce) === nonce);
  return tx !== undefined && tx.to.toLowerCase() === operator.toLowerCase() && tx.input === "0x" && BigInt(tx.value) === 0n;
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
    // The node never saw them, but this sender handed out nonces 0 and 1 (the second batch started again
    // from the node's count): nothing may be concluded yet, and the fillers it tries are lost too.
    expect(await sender.pendingCount()).toBe(2);

    node.onSend = () => ({ kind: "pass" });
    const first = await call(4n);
    expect(await nonceOf(first.txHash)).toBe(0);
    // Nonce 1 is still the lost batch's, and nothing else is sent: the count takes it with a transfer of nothing.
    expect(await sender.pendingCount()).toBe(0);
    expect(await minedCount()).toBe(2);
    expect(await nothingAt(1)).toBe(true);
    const next = await call(5n);
    expect(await nonceOf(next.txHash)).toBe(2);
  });

  it("fills the nonce of a refused transaction so that the accepted ones after it are mined", async () => {
    // The first call goes alone; the three after it form the next batch, whose middle one the node refuses.
    node.onSend = (raws) => (raws.length === 3 ? { kind: "refuseTxs", indexes: [1] } : { kind: "pass" });
    const results = await Promise.allSettled([call(1n), call(2n), call(3n), call(4n)]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    const refused = (results[2] as PromiseRejectedResult).reason as VaultTxError;
    expect([refused.outcome, refused.reason]).toEqual(["reverted", "Refused"]);
    const after = (results[3] as PromiseFulfilledResult<Mined>).value;
    expect(await nonceOf(after.txHash)).toBe(3);
    expect(await minedCount()).toBe(4);
    expect(await sender.pendingCount()).toBe(0);
    // Nonce 2 went to a transfer of nothing to the operator itself: the refused call never happened.
    expect(await nothingAt(2)).toBe(true);
  });
});
