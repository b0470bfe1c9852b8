import { describe, expect, it } from "vitest";
import { vaultAbi } from "../contracts/artifacts.ts";
import { keyOf, newClient } from "./testkit.ts";
import { refusedOnChain, reverts, testChainPerFile } from "./vitest-kit.ts";

const USDC = 1_000_000n;
const TTL = 60;

const t = testChainPerFile({ lockTtlSeconds: TTL });

/** Moves the chain's clock on by `seconds` and mines a block there. */
async function later(seconds: number): Promise<void> {
  await t.rpc.call("evm_increaseTime", [seconds]);
  await t.rpc.call("evm_mine");
}

describe("a lock's deadline", () => {
  it("lets anyone end a forgotten lock once its deadline has passed, exactly once", async () => {
    const c = await newClient(t);
    await t.vault.fund(c.address, 10n * USDC, keyOf(`expire-${c.address}`));
    const o = keyOf(`forgotten-${c.address}`);
    const ref = await t.vault.lock(o, c.address, 4n * USDC);
    const { timestamp } = await c.reader.getBlock({ blockNumber: ref.blockNumber });
    const deadline = Number(timestamp) + TTL;
    expect(await t.vault.lockState(o)).toEqual({ kind: "locked", amount: 4n * USDC, deadline });

    const expire = { address: t.vault.info().contracts.vault, abi: vaultAbi, account: c.address, functionName: "expire", args: [o] } as const;
    await refusedOnChain(c.reader.simulateContract(expire), "NotExpired");
    expect(await t.vault.blockTime()).toBeLessThanOrEqual(deadline);

    await later(TTL + 1);
    expect(await t.vault.blockTime()).toBeGreaterThan(deadline);
    await c.expire(o);
    expect(await t.vault.balanceOf(c.address)).toEqual({ available: 10n * USDC, locked: 0n });
    const state = await t.vault.lockState(o);
    expect(state).toMatchObject({ kind: "released", expired: true });
    const receipt = await c.reader.getTransactionReceipt({ hash: (state as { txHash: `0x${string}` }).txHash });
    expect(receipt.from.toLowerCase()).toBe(c.address.toLowerCase());

    // Ended for good: neither a second expire nor the operator can touch it again.
    await refusedOnChain(c.reader.simulateContract(expire), "AlreadyReleased");
    await reverts(t.vault.settle(o, 1n, { tokenId: 1n, shares: 1n }), "AlreadyReleased");
    await reverts(t.vault.release(o), "AlreadyReleased");
    expect(await t.vault.balanceOf(c.address)).toEqual({ available: 10n * USDC, locked: 0n });
  });

  it("still lets the operator settle a late fill after the deadline, until someone expires the lock", async () => {
    const c = await newClient(t);
    await t.vault.fund(c.address, 10n * USDC, keyOf(`late-${c.address}`));
    const settled = keyOf(`late-settle-${c.address}`);
    const released = keyOf(`late-release-${c.address}`);
    await t.vault.lock(settled, c.address, 3n * USDC);
    await t.vault.lock(released, c.address, 2n * USDC);
    await later(TTL + 1);

    const s = await t.vault.settle(settled, 1n * USDC, { tokenId: 7n, shares: 2n * USDC });
    const r = await t.vault.release(released);
    expect(await t.vault.lockState(settled)).toEqual({ kind: "settled", txHash: s.txHash, spent: 1n * USDC, shares: 2n * USDC, tokenId: 7n });
    expect(await t.vault.lockState(released)).toEqual({ kind: "released", txHash: r.txHash, expired: false });
    expect(await t.vault.balanceOf(c.address)).toEqual({ available: 9n * USDC, locked: 0n });
    expect(await t.vault.sotBalance(c.address, 7n)).toBe(2n * USDC);

    const as = { address: t.vault.info().contracts.vault, abi: vaultAbi, account: c.address, functionName: "expire" } as const;
    await refusedOnChain(c.reader.simulateContract({ ...as, args: [settled] }), "AlreadySettled");
    await refusedOnChain(c.reader.simulateContract({ ...as, args: [released] }), "AlreadyReleased");
    await refusedOnChain(c.reader.simulateContract({ ...as, args: [keyOf("never locked")] }), "UnknownOrder");
  });
});

describe("a sell's escrow deadline", () => {
  /** A client holding `shares` of a token of its own, bought through a lock and a settle as an order would. */
  async function holder(shares: bigint) {
    const c = await newClient(t);
    const tokenId = BigInt(keyOf(`token-${c.address}`));
    await t.vault.fund(c.address, 10n * USDC, keyOf(`escrow-${c.address}`));
    const buy = keyOf(`buy-${c.address}`);
    await t.vault.lock(buy, c.address, 1n * USDC);
    await t.vault.settle(buy, 1n * USDC, { tokenId, shares });
    return { c, tokenId };
  }

  it("lets the client, and only the client, take its escrowed shares back once the deadline has passed, exactly once", async () => {
    const { c, tokenId } = await holder(5n * USDC);
    const o = keyOf(`stranded-${c.address}`);
    const ref = await t.vault.escrow(o, c.address, { tokenId, shares: 3n * USDC });
    const { timestamp } = await c.reader.getBlock({ blockNumber: ref.blockNumber });
    const deadline = Number(timestamp) + TTL;
    expect(await t.vault.escrowState(o)).toEqual({ kind: "escrowed", account: c.address, tokenId, shares: 3n * USDC, deadline });

    const expire = { address: t.vault.info().contracts.vault, abi: vaultAbi, functionName: "expireEscrow", args: [o] } as const;
    await refusedOnChain(c.reader.simulateContract({ ...expire, account: c.address }), "NotExpired");

    await later(TTL + 1);
    const stranger = await newClient(t);
    await refusedOnChain(stranger.reader.simulateContract({ ...expire, account: stranger.address }), "NotEscrowClient");
    await refusedOnChain(c.reader.simulateContract({ ...expire, account: t.vault.info().operator }), "NotEscrowClient");
    await c.expireEscrow(o);
    expect(await t.vault.sotBalance(c.address, tokenId)).toBe(5n * USDC);
    expect(await t.vault.sotBalance(t.vault.info().contracts.vault, tokenId)).toBe(0n);
    const state = await t.vault.escrowState(o);
    expect(state).toMatchObject({ kind: "released", expired: true });
    const receipt = await c.reader.getTransactionReceipt({ hash: (state as { txHash: `0x${string}` }).txHash });
    expect(receipt.from.toLowerCase()).toBe(c.address.toLowerCase());
    const ledger = await t.vault.ledger();
    expect(ledger.escrowEndings.filter((e) => e.orderId === o)).toEqual([
      { kind: "released", orderId: o, client: c.address, tokenId, shares: 3n * USDC, expired: true, txHash: receipt.transactionHash, blockNumber: receipt.blockNumber },
    ]);

    // Ended for good: neither a second expire nor the operator can touch it again.
    await refusedOnChain(c.reader.simulateContract({ ...expire, account: c.address }), "AlreadyReleased");
    await reverts(t.vault.settleSell(o, 1n, 0n), "AlreadyReleased");
    await reverts(t.vault.releaseEscrow(o), "AlreadyReleased");
    expect(await t.vault.sotBalance(c.address, tokenId)).toBe(5n * USDC);
  });

  it("still lets the operator settle a late sale after the deadline, until the client expires the escrow", async () => {
    const { c, tokenId } = await holder(5n * USDC);
    const settled = keyOf(`late-sell-${c.address}`);
    const released = keyOf(`late-return-${c.address}`);
    await t.vault.escrow(settled, c.address, { tokenId, shares: 3n * USDC });
    await t.vault.escrow(released, c.address, { tokenId, shares: 2n * USDC });
    await later(TTL + 1);

    const s = await t.vault.settleSell(settled, 1n * USDC, 600_000n);
    const r = await t.vault.releaseEscrow(released);
    expect(await t.vault.escrowState(settled)).toEqual({ kind: "settled", txHash: s.txHash, sold: 1n * USDC, proceeds: 600_000n });
    expect(await t.vault.escrowState(released)).toEqual({ kind: "released", txHash: r.txHash, expired: false });
    expect(await t.vault.sotBalance(c.address, tokenId)).toBe(4n * USDC);

    const as = { address: t.vault.info().contracts.vault, abi: vaultAbi, account: c.address, functionName: "expireEscrow" } as const;
    await refusedOnChain(c.reader.simulateContract({ ...as, args: [settled] }), "AlreadySettled");
    await refusedOnChain(c.reader.simulateContract({ ...as, args: [released] }), "AlreadyReleased");
    await refusedOnChain(c.reader.simulateContract({ ...as, args: [keyOf("never escrowed")] }), "UnknownOrder");
  });
});
