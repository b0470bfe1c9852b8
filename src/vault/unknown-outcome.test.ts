import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../store/store.ts";
import { encodeFunctionData, getAddress, toHex } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { openEvmVault } from "./evm/evm-vault.ts";
import { startFaultyNode, startPool, type FaultyNode } from "../../test/helpers/rpc-proxy.ts";
import { vaultAbi } from "../contracts/artifacts.ts";
import { sotTokenId } from "../contracts/sot.ts";
import { keyOf, openTestStore, tempDir } from "./testkit.ts";
import { VaultTxError, type Vault } from "./vault.ts";

const client = "0x00000000000000000000000000000000000c11e7" as const;
let node: FaultyNode;
let vault: Vault;
let store: Store;
const operatorKey = generatePrivateKey();
/** The server's vault, as a process opens it: a chain reached over the network, transactions sent with eth_sendRawTransaction. */
const open = (rpcTimeoutMs?: number) =>
  openEvmVault({ rpcUrl: node.url, operatorKey, store, faucet: true, receiptPollMs: 20, ...(rpcTimeoutMs ? { rpcTimeoutMs } : {}) });
beforeAll(async () => {
  store = await openTestStore(tempDir());
  node = await startFaultyNode();
  await node.rpc.call("anvil_setBalance", [privateKeyToAddress(operatorKey), "0x3635c9adc5dea00000"]);
  vault = await open();
  await vault.fund(client, 100_000_000n, keyOf("unknown-outcome"));
});
afterAll(async () => {
  await vault.close();
  await node.stop();
  await store.close();
});

async function unknownLock(orderId: `0x${string}`, by: Vault = vault): Promise<void> {
  await unknown(by.lock(orderId, client, 1_000_000n));
}

async function unknown(call: Promise<unknown>): Promise<void> {
  const e = await call.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(VaultTxError);
  expect((e as VaultTxError).outcome).toBe("unknown");
}

describe("a lock whose outcome is unknown", () => {
  it("is told by the chain once nothing of the operator's is pending: it locked after all", async () => {
    const o = keyOf("unanswered");
    node.onSend = () => ({ kind: "drop" });
    await unknownLock(o);
    // Not on chain yet, but it may still land: `none` means nothing while a transaction is pending.
    expect(await vault.lockState(o)).toEqual({ kind: "none" });
    expect(await vault.pendingTransactions()).toBe(1);
    await node.rpc.call("evm_mine");
    expect(await vault.pendingTransactions()).toBe(0);
    expect(await vault.lockState(o)).toMatchObject({ kind: "locked", amount: 1_000_000n });
    node.onSend = () => ({ kind: "pass" });
  });

  it("leaves each order of a batch whose answer was lost unknown, and the chain tells them all alike", async () => {
    const orders = [keyOf("batched 1"), keyOf("batched 2"), keyOf("batched 3")];
    node.onSend = () => ({ kind: "drop" });
    await Promise.all(orders.map((o) => unknownLock(o)));
    node.onSend = () => ({ kind: "pass" });
    // One transaction carried the three locks: one pending, and none of them on chain yet.
    expect(await vault.pendingTransactions()).toBe(1);
    for (const o of orders) expect(await vault.lockState(o)).toEqual({ kind: "none" });
    await node.rpc.call("evm_mine");
    expect(await vault.pendingTransactions()).toBe(0);
    const states = await Promise.all(orders.map((o) => vault.lockState(o)));
    expect(states.map((s) => s.kind)).toEqual(["locked", "locked", "locked"]);
    await Promise.all(orders.map((o) => vault.release(o)));
  });

  it("is told by the chain once its nonce is taken: it never locked and never will", async () => {
    const lost = keyOf("lost");
    node.onSend = () => ({ kind: "refuse" });
    await unknownLock(lost);
    expect(await vault.pendingTransactions()).toBe(1);
    node.onSend = () => ({ kind: "pass" });
    // The next operator batch first takes the nonce the lost lock held.
    await vault.lock(keyOf("next order"), client, 1_000_000n);
    expect(await vault.pendingTransactions()).toBe(0);
    expect(await vault.lockState(lost)).toEqual({ kind: "none" });
    expect(await vault.balanceOf(client)).toEqual({ available: 98_000_000n, locked: 2_000_000n });
  });

  it("is told by the chain when nothing else is sent either: the lost nonce is taken by a transfer of nothing", async () => {
    const lost = keyOf("lost, and nothing after it");
    node.onSend = () => ({ kind: "refuse" });
    await unknownLock(lost);
    node.onSend = () => ({ kind: "pass" });
    // No order sends anything after it (recovery waits on this very count), yet the count comes down to 0.
    expect(await vault.pendingTransactions()).toBe(0);
    expect(await vault.lockState(lost)).toEqual({ kind: "none" });
    expect(await vault.balanceOf(client)).toEqual({ available: 98_000_000n, locked: 2_000_000n });
  });

  it("is told by the chain after a restart too, while the lock the process before sent is still on its way", async () => {
    const late = keyOf("held past the timeout, then the process died");
    const before = await open(300);
    // The node gets the lock only after the sender gave up on it, and after the process that sent it is gone.
    node.onSend = () => ({ kind: "delay", ms: 1_500 });
    await unknownLock(late, before);
    node.onSend = () => ({ kind: "pass" });
    const after = await open();
    try {
      // The nonce the process before reserved may be another live instance's, about to be sent: the count
      // stays above 0 until the held lock lands, or the reservation is older than the grace and a filler takes it.
      await expect.poll(() => after.pendingTransactions(), { timeout: 10_000, interval: 100 }).toBe(0);
      const told = await after.lockState(late);
      await node.settled();
      // Whatever the count's 0 let the chain say stays true once the held lock has reached the node.
      expect(await after.lockState(late)).toEqual(told);
    } finally {
      await after.close();
    }
  });
});

describe("a lock read after a restart through a node of a pool behind it", () => {
  it("is not taken for none: the block its transaction landed in outlives the process that sent it", async () => {
    const o = keyOf("locked, then the process restarted");
    const behind = await vault.blockNumber();
    await vault.lock(o, client, 1_000_000n);
    // One URL before a pool: head reads and reads of the lock go to a node still at `behind`, under the lock's block.
    const lockOf = encodeFunctionData({ abi: vaultAbi, functionName: "lockOf", args: [o] }).slice(0, 10);
    const pool = await startPool(
      node.url,
      (c) => c.method === "eth_blockNumber" || (c.method === "eth_call" && ((c.params[0] as { data?: string }).data ?? "").startsWith(lockOf)),
      async (c, forward) => {
        if (c.method === "eth_blockNumber") return { jsonrpc: "2.0", id: c.id, result: toHex(behind) };
        return forward(c.method === "eth_call" ? { ...c, params: [c.params[0], toHex(behind)] } : c);
      },
    );
    const restarted = await openEvmVault({ rpcUrl: pool.url, operatorKey, store, faucet: true, receiptPollMs: 20 });
    try {
      await expect(restarted.lockState(o)).rejects.toThrow(/behind block/);
      expect(await vault.lockState(o)).toMatchObject({ kind: "locked", amount: 1_000_000n });
    } finally {
      await restarted.close();
      await pool.stop();
    }
    await vault.release(o);
  });
});

describe("a sell's escrow, its settlement, or a redemption whose outcome is unknown", () => {
  const tokenId = sotTokenId("unknown-outcome", "YES");
  beforeAll(async () => {
    const buy = keyOf("bought before selling");
    await vault.lock(buy, client, 5_000_000n);
    await vault.settle(buy, 5_000_000n, { tokenId, shares: 10_000_000n });
  });

  it("an escrow is told by the chain once nothing of the operator's is pending: it escrowed after all", async () => {
    const o = keyOf("escrow, answer lost");
    node.onSend = () => ({ kind: "drop" });
    await unknown(vault.escrow(o, client, { tokenId, shares: 4_000_000n }));
    node.onSend = () => ({ kind: "pass" });
    expect(await vault.escrowState(o)).toEqual({ kind: "none" });
    expect(await vault.pendingTransactions()).toBe(1);
    await node.rpc.call("evm_mine");
    expect(await vault.pendingTransactions()).toBe(0);
    expect(await vault.escrowState(o)).toEqual({ kind: "escrowed", account: getAddress(client), tokenId, shares: 4_000_000n, deadline: expect.any(Number) });
    expect(await vault.sotBalance(client, tokenId)).toBe(6_000_000n);
  });

  it("a sell settlement that never reached the node is told so once its nonce is taken, and settles once when sent again", async () => {
    const o = keyOf("escrow, answer lost");
    const before = await vault.balanceOf(client);
    node.onSend = () => ({ kind: "refuse" });
    await unknown(vault.settleSell(o, 3_000_000n, 1_800_000n));
    node.onSend = () => ({ kind: "pass" });
    expect(await vault.pendingTransactions()).toBe(0);
    expect(await vault.escrowState(o)).toMatchObject({ kind: "escrowed" });
    const ref = await vault.settleSell(o, 3_000_000n, 1_800_000n);
    expect(await vault.escrowState(o)).toEqual({ kind: "settled", txHash: ref.txHash, sold: 3_000_000n, proceeds: 1_800_000n });
    expect(await vault.balanceOf(client)).toEqual({ ...before, available: before.available + 1_800_000n });
    expect(await vault.sotBalance(client, tokenId)).toBe(7_000_000n);
  });

  it("a sell settlement whose answer was lost is told by the chain: it settled, with its transaction, and a retry is refused", async () => {
    const o = keyOf("settle, answer lost");
    await vault.escrow(o, client, { tokenId, shares: 2_000_000n });
    const before = await vault.balanceOf(client);
    node.onSend = () => ({ kind: "drop" });
    await unknown(vault.settleSell(o, 2_000_000n, 1_000_000n));
    node.onSend = () => ({ kind: "pass" });
    expect(await vault.escrowState(o)).toMatchObject({ kind: "escrowed" });
    await node.rpc.call("evm_mine");
    expect(await vault.pendingTransactions()).toBe(0);
    const state = await vault.escrowState(o);
    expect(state).toMatchObject({ kind: "settled", sold: 2_000_000n, proceeds: 1_000_000n });
    const e = await vault.settleSell(o, 2_000_000n, 1_000_000n).catch((err: unknown) => err);
    expect((e as VaultTxError).reason).toBe("AlreadySettled");
    expect(await vault.balanceOf(client)).toEqual({ ...before, available: before.available + 1_000_000n });
  });

  it("a redemption whose answer was lost is told by its key, and sent again pays nothing more", async () => {
    const key = keyOf("redemption, answer lost");
    const item = { key, account: client, tokenId, shares: 5_000_000n, payout: 5_000_000n };
    const before = await vault.balanceOf(client);
    node.onSend = () => ({ kind: "drop" });
    await unknown(vault.redeem([item]));
    node.onSend = () => ({ kind: "pass" });
    expect(await vault.redemption(key)).toBeNull();
    await node.rpc.call("evm_mine");
    expect(await vault.pendingTransactions()).toBe(0);
    const done = await vault.redemption(key);
    expect(done).toMatchObject({ shares: 5_000_000n, payout: 5_000_000n });
    await vault.redeem([item]);
    expect(await vault.redemption(key)).toEqual(done);
    expect(await vault.balanceOf(client)).toEqual({ ...before, available: before.available + 5_000_000n });
    expect(await vault.sotBalance(client, tokenId)).toBe(0n);
  });
});

describe("a withdrawal whose outcome is unknown", () => {
  it("is told by the chain by its id once nothing is pending: paid after all, and sending it again pays nothing more", async () => {
    const w = keyOf("withdrawal unanswered");
    const to = "0x0000000000000000000000000000000000000b0b" as const;
    const before = (await vault.balanceOf(client)).available;
    node.onSend = () => ({ kind: "drop" });
    const e = await vault.withdrawTo(w, client, to, 1_000_000n).then(
      () => undefined,
      (err: unknown) => err,
    );
    node.onSend = () => ({ kind: "pass" });
    expect((e as VaultTxError).outcome).toBe("unknown");
    expect(await vault.withdrawalState(w)).toEqual({ kind: "none" });
    expect(await vault.pendingTransactions()).toBe(1);
    await node.rpc.call("evm_mine");
    expect(await vault.pendingTransactions()).toBe(0);
    const state = await vault.withdrawalState(w);
    expect(state).toMatchObject({ kind: "paid", client: expect.stringMatching(/c11e7$/i), to: expect.stringMatching(/b0b$/i), amount: 1_000_000n });
    const { txHash, blockNumber } = state as { txHash: `0x${string}`; blockNumber: bigint };
    expect(await vault.withdrawTo(w, client, to, 1_000_000n)).toEqual({ txHash, blockNumber });
    expect((await vault.balanceOf(client)).available).toBe(before - 1_000_000n);
  });
});
