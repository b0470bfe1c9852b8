import { describe, expect, it } from "vitest";
import { keccak256, toHex, type Hex } from "viem";
import { keyOf, newClient } from "../testkit.ts";
import { testChainPerFile } from "../vitest-kit.ts";
import type { TxRef } from "../vault.ts";

const USDC = 1_000_000n;
const oid = (s: string) => keccak256(toHex(`${s}-${Math.random()}`));

// Blocks are final two deep here, as they are 12 deep off the dev chain.
const t = testChainPerFile({ confirmations: 2 });

describe("VaultBatcher on a chain whose blocks are final only some blocks deep", () => {
  it("answers a call refused in a batch that succeeded as the batch ends once its block is that deep: a reorganisation may mine it again where the call goes through", async () => {
    const [rich, poor] = await Promise.all([newClient(t), newClient(t)]);
    await Promise.all([t.vault.fund(rich.address, 10n * USDC, keyOf(rich.address)), t.vault.fund(poor.address, 3n * USDC, keyOf(poor.address))]);
    // 1 USDC available in the vault, 2 in the client's wallet.
    await poor.withdraw(2n * USDC);
    const before = await t.rpc.call<Hex>("evm_snapshot");
    const [a, b] = [oid("rich"), oid("poor")];
    let answer: TxRef | unknown = "none yet";
    // One batch: the rich client's lock goes through, the poor one's is refused for want of funds.
    void t.vault.lock(b, poor.address, 2n * USDC).then(
      (ref) => (answer = ref),
      (e: unknown) => (answer = e),
    );
    const locked = await t.vault.lock(a, rich.address, 5n * USDC);
    const raw = await t.rpc.call<Hex>("eth_getRawTransactionByHash", [locked.txHash]);
    // A reorganisation removes the batch's block; the client's deposit comes first where the node mines the batch again.
    await t.rpc.call("evm_revert", [before]);
    await poor.deposit(2n * USDC);
    await t.rpc.call("eth_sendRawTransaction", [raw]);
    await t.rpc.call("evm_mine");
    expect(await t.vault.lockState(b)).toMatchObject({ kind: "locked", amount: 2n * USDC });
    await t.rpc.call("evm_mine");
    await t.rpc.call("evm_mine");
    await expect.poll(() => answer, { timeout: 10_000 }).not.toBe("none yet");
    expect(answer).toEqual({ txHash: locked.txHash, blockNumber: expect.any(BigInt) });

    // One that stays refused is answered so once two blocks are above it, and not before.
    const c = oid("poor again");
    const refused = t.vault.lock(c, poor.address, 100n * USDC).then(
      () => "locked",
      (e: unknown) => e,
    );
    let settled = false;
    void refused.then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 1_000));
    expect(settled).toBe(false);
    await t.rpc.call("evm_mine");
    await t.rpc.call("evm_mine");
    expect(await refused).toMatchObject({ outcome: "reverted", reason: "InsufficientAvailable" });
    expect(await t.vault.lockState(c)).toEqual({ kind: "none" });
  }, 30_000);

  it("answers a call still waiting for its batch's depth as unknown when the vault closes, rather than holding the stop for the blocks", async () => {
    const poor = await newClient(t);
    await t.vault.fund(poor.address, USDC, keyOf(poor.address));
    const refused = t.vault.lock(oid("too poor"), poor.address, 100n * USDC).then(
      () => "locked",
      (e: unknown) => e,
    );
    // The batch is mined, its call refused: the answer waits for two blocks no one mines.
    await new Promise((r) => setTimeout(r, 1_000));
    const closed = await Promise.race([t.vault.close().then(() => "closed"), new Promise((r) => setTimeout(() => r("still waiting"), 3_000))]);
    if (closed !== "closed") await Promise.all([t.rpc.call("evm_mine"), t.rpc.call("evm_mine")]);
    expect(closed).toBe("closed");
    expect(await refused).toMatchObject({ outcome: "unknown" });
  }, 30_000);
});
