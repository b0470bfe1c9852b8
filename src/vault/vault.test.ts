import { describe, expect, it } from "vitest";
import { decodeErrorResult, encodeFunctionData, keccak256, parseEventLogs, toHex, type Hex } from "viem";
import { positionTokenAbi, testUSDCAbi, vaultAbi } from "../contracts/artifacts.ts";
import { sotAssetId, sotTokenId } from "../contracts/sot.ts";
import { startPool } from "../../test/helpers/rpc-proxy.ts";
import { openEvmVault } from "./evm/evm-vault.ts";
import { keyOf, newClient } from "./testkit.ts";
import { refusedOnChain, reverts, testChainPerFile } from "./vitest-kit.ts";
import { VaultTxError } from "./vault.ts";

const USDC = 1_000_000n;
const oid = (s: string) => keccak256(toHex(`${s}-${Math.random()}`));

const t = testChainPerFile();

describe("EvmVault on the dev chain", () => {
  it("deposits and withdraws", async () => {
    const c = await newClient(t);
    await t.vault.fund(c.address, 100n * USDC, keyOf(c.address));
    expect(await t.vault.balanceOf(c.address)).toEqual({ available: 100n * USDC, locked: 0n });
    await c.withdraw(40n * USDC);
    expect(await c.usdcBalance()).toBe(40n * USDC);
    await c.deposit(10n * USDC);
    expect(await t.vault.balanceOf(c.address)).toEqual({ available: 70n * USDC, locked: 0n });
    expect(await c.usdcBalance()).toBe(30n * USDC);
  });

  it("locks, settles with the position minted in the same transaction, and releases", async () => {
    const c = await newClient(t);
    await t.vault.fund(c.address, 50n * USDC, keyOf(c.address));
    const { operator, contracts } = t.vault.info();
    const treasuryBefore = await c.reader.readContract({
      address: contracts.usdc,
      abi: testUSDCAbi,
      functionName: "balanceOf",
      args: [operator],
    });
    const a = oid("a");
    const locked = await t.vault.lock(a, c.address, 30n * USDC);
    expect(await t.vault.balanceOf(c.address)).toEqual({ available: 20n * USDC, locked: 30n * USDC });
    const lockBlock = await c.reader.getBlock({ blockNumber: locked.blockNumber });
    expect(t.vault.info().lockTtlSeconds).toBe(86_400);
    expect(await t.vault.lockState(a)).toEqual({ kind: "locked", amount: 30n * USDC, deadline: Number(lockBlock.timestamp) + 86_400 });

    const tokenId = sotTokenId("fed-cut-2026-06", "YES");
    const ref = await t.vault.settle(a, 18_500_000n, { tokenId, shares: 25_000_000n });
    expect(ref.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await t.vault.balanceOf(c.address)).toEqual({ available: 31_500_000n, locked: 0n });
    expect(await t.vault.lockState(a)).toEqual({ kind: "settled", txHash: ref.txHash, spent: 18_500_000n, shares: 25_000_000n, tokenId });
    expect(await t.vault.sotBalance(c.address, tokenId)).toBe(25_000_000n);
    const receipt = await c.reader.getTransactionReceipt({ hash: ref.txHash });
    expect(receipt.blockNumber).toBe(ref.blockNumber);
    const treasuryAfter = await c.reader.readContract({
      address: contracts.usdc,
      abi: testUSDCAbi,
      functionName: "balanceOf",
      args: [operator],
    });
    expect(treasuryAfter - treasuryBefore).toBe(18_500_000n);

    const b = oid("b");
    await t.vault.lock(b, c.address, 10n * USDC);
    const released = await t.vault.release(b);
    expect(await t.vault.lockState(b)).toEqual({ kind: "released", txHash: released.txHash, expired: false });
    expect(await t.vault.balanceOf(c.address)).toEqual({ available: 31_500_000n, locked: 0n });
    expect(await t.vault.lockState(oid("never"))).toEqual({ kind: "none" });
  });

  it("locks an order id whose lock reverted, once: a reverted lock leaves nothing under its id, as an order run again under its id needs", async () => {
    const c = await newClient(t);
    const id = oid("again");
    await reverts(t.vault.lock(id, c.address, USDC), "InsufficientAvailable");
    expect(await t.vault.lockState(id)).toEqual({ kind: "none" });
    await t.vault.fund(c.address, 2n * USDC, keyOf(c.address));
    await t.vault.lock(id, c.address, USDC);
    await reverts(t.vault.lock(id, c.address, USDC), "AlreadyLocked");
    expect(await t.vault.balanceOf(c.address)).toEqual({ available: USDC, locked: USDC });
  });

  it("enforces the lock rules in the contract", async () => {
    const c = await newClient(t);
    await t.vault.fund(c.address, 10n * USDC, keyOf(c.address));
    await reverts(t.vault.lock(oid("big"), c.address, 10n * USDC + 1n), "InsufficientAvailable");

    const s = oid("s");
    await t.vault.lock(s, c.address, 4n * USDC);
    await reverts(t.vault.lock(s, c.address, 1n), "AlreadyLocked");
    await reverts(t.vault.settle(s, 4n * USDC + 1n, { tokenId: 1n, shares: 1n }), "SpendExceedsLock");
    await t.vault.settle(s, 4n * USDC, { tokenId: 1n, shares: 1n });
    await reverts(t.vault.settle(s, 0n, { tokenId: 1n, shares: 0n }), "AlreadySettled");
    await reverts(t.vault.release(s), "AlreadySettled");

    const r = oid("r");
    await t.vault.lock(r, c.address, 1n * USDC);
    await t.vault.release(r);
    await reverts(t.vault.settle(r, 0n, { tokenId: 1n, shares: 0n }), "AlreadyReleased");
    await reverts(t.vault.release(r), "AlreadyReleased");
    await reverts(t.vault.settle(oid("unknown"), 0n, { tokenId: 1n, shares: 0n }), "UnknownOrder");
    expect(await t.vault.balanceOf(c.address)).toEqual({ available: 6n * USDC, locked: 0n });
  });

  it("lets only the operator lock, settle and release, and a client withdraw only what is not locked", async () => {
    const c = await newClient(t);
    await t.vault.fund(c.address, 5n * USDC, keyOf(c.address));
    const o = oid("op");
    await t.vault.lock(o, c.address, 5n * USDC);
    const vault = t.vault.info().contracts.vault;
    const as = { address: vault, abi: vaultAbi, account: c.address } as const;
    await refusedOnChain(c.reader.simulateContract({ ...as, functionName: "lock", args: [oid("x"), c.address, 1n] }), "OnlyOperator");
    await refusedOnChain(c.reader.simulateContract({ ...as, functionName: "settle", args: [o, 0n, 1n, 0n] }), "OnlyOperator");
    await refusedOnChain(c.reader.simulateContract({ ...as, functionName: "release", args: [o] }), "OnlyOperator");
    await refusedOnChain(c.reader.simulateContract({ ...as, functionName: "withdraw", args: [1n] }), "InsufficientAvailable");
    await refusedOnChain(
      c.reader.simulateContract({ address: t.vault.info().contracts.sot, abi: positionTokenAbi, account: c.address, functionName: "mint", args: [c.address, 1n, 1n] }),
      "OnlyMinter",
    );
  });

  it("computes SOT token ids as the contract does and names them in CAIP-19", async () => {
    const c = await newClient(t);
    const { sot } = t.vault.info().contracts;
    const onChain = await c.reader.readContract({ address: sot, abi: positionTokenAbi, functionName: "tokenIdOf", args: ["btc-100k", "NO"] });
    expect(sotTokenId("btc-100k", "NO")).toBe(onChain);
    expect(sotTokenId("btc-100k", "YES")).not.toBe(onChain);
    expect(sotAssetId(31337, sot, onChain)).toBe(`eip155:31337/erc1155:${sot.toLowerCase()}/${onChain.toString()}`);
  });

  it("commits 200 concurrent lock+settle pairs in a few blocks with exact balances", async () => {
    const c = await newClient(t);
    await t.vault.fund(c.address, 1000n * USDC, keyOf(c.address));
    const tokenId = sotTokenId("concurrent", "YES");
    const start = await c.reader.getBlockNumber();
    const refs = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const o = oid(`c${i}`);
        await t.vault.lock(o, c.address, 2n * USDC);
        return t.vault.settle(o, BigInt(i) * 1000n, { tokenId, shares: 1_000_000n });
      }),
    );
    const spent = (199n * 200n / 2n) * 1000n;
    expect(await t.vault.balanceOf(c.address)).toEqual({ available: 1000n * USDC - spent, locked: 0n });
    expect(await t.vault.sotBalance(c.address, tokenId)).toBe(200n * 1_000_000n);
    // Many orders share each transaction; each order's tx_hash is one that logged its own Settled event.
    const txs = new Set(refs.map((r) => r.txHash));
    expect(txs.size).toBeLessThan(20);
    const settledIn = new Map<string, Set<string>>();
    for (const hash of txs) {
      const receipt = await c.reader.getTransactionReceipt({ hash });
      expect(receipt.status).toBe("success");
      const ids = parseEventLogs({ abi: vaultAbi, eventName: "Settled", logs: receipt.logs }).map((l) => l.args.orderId);
      settledIn.set(hash, new Set(ids));
    }
    expect([...settledIn.values()].reduce((n, ids) => n + ids.size, 0)).toBe(200);
    expect((await c.reader.getBlockNumber()) - start).toBeLessThanOrEqual(4n);
  });

  it("batches several clients' locks in one transaction, where one client's refused lock leaves the others locked", async () => {
    const [rich, poor, other] = await Promise.all([newClient(t), newClient(t), newClient(t)]);
    await Promise.all([
      t.vault.fund(rich.address, 10n * USDC, keyOf(rich.address)),
      t.vault.fund(poor.address, 1n * USDC, keyOf(poor.address)),
      t.vault.fund(other.address, 10n * USDC, keyOf(other.address)),
    ]);
    const [a, b, c] = [oid("rich"), oid("poor"), oid("other")];
    const results = await Promise.allSettled([
      t.vault.lock(a, rich.address, 5n * USDC),
      t.vault.lock(b, poor.address, 2n * USDC),
      t.vault.lock(c, other.address, 3n * USDC),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const [ra, , rc] = results as PromiseFulfilledResult<{ txHash: string }>[];
    expect(ra!.value.txHash).toBe(rc!.value.txHash);
    expect(((results[1] as PromiseRejectedResult).reason as VaultTxError).reason).toBe("InsufficientAvailable");
    expect(await t.vault.lockState(b)).toEqual({ kind: "none" });
    expect(await t.vault.balanceOf(poor.address)).toEqual({ available: 1n * USDC, locked: 0n });
    // A settle and a release of different orders in one batch, each with its own event.
    const [settled, released] = await Promise.all([t.vault.settle(a, 2n * USDC, { tokenId: 7n, shares: 3n * USDC }), t.vault.release(c)]);
    expect(settled.txHash).toBe(released.txHash);
    expect(await t.vault.lockState(a)).toEqual({ kind: "settled", txHash: settled.txHash, spent: 2n * USDC, shares: 3n * USDC, tokenId: 7n });
    expect(await t.vault.lockState(c)).toEqual({ kind: "released", txHash: released.txHash, expired: false });
    expect(await t.vault.balanceOf(rich.address)).toEqual({ available: 8n * USDC, locked: 0n });
    expect(await t.vault.balanceOf(other.address)).toEqual({ available: 10n * USDC, locked: 0n });
  });

  it("answers each call of a batch on its own, runs only locks, settles and releases, and only for the operator", async () => {
    const c = await newClient(t);
    await t.vault.fund(c.address, 4n * USDC, keyOf(c.address));
    const { operator, contracts } = t.vault.info();
    const calls = [
      encodeFunctionData({ abi: vaultAbi, functionName: "lock", args: [oid("x1"), c.address, 3n * USDC] }),
      encodeFunctionData({ abi: vaultAbi, functionName: "lock", args: [oid("x2"), c.address, 3n * USDC] }),
      encodeFunctionData({ abi: vaultAbi, functionName: "release", args: [oid("never locked")] }),
      encodeFunctionData({ abi: vaultAbi, functionName: "expire", args: [oid("x1")] }),
      "0x12" as const,
    ];
    const as = { address: contracts.vault, abi: vaultAbi, functionName: "batch", args: [calls] } as const;
    const { result } = await c.reader.simulateContract({ ...as, account: operator });
    const errors = result.map((r) => (r === "0x" ? "ok" : decodeErrorResult({ abi: vaultAbi, data: r }).errorName));
    expect(errors).toEqual(["ok", "InsufficientAvailable", "UnknownOrder", "NotBatchable", "NotBatchable"]);
    await refusedOnChain(c.reader.simulateContract({ ...as, account: c.address }), "OnlyOperator");
  });

  it("tells which of two locks in one block lost the race for the same funds", async () => {
    const c = await newClient(t);
    await t.vault.fund(c.address, 3n * USDC, keyOf(c.address));
    const results = await Promise.allSettled([t.vault.lock(oid("p"), c.address, 2n * USDC), t.vault.lock(oid("q"), c.address, 2n * USDC)]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(VaultTxError);
    expect((lost.reason as VaultTxError).reason).toBe("InsufficientAvailable");
    expect(await t.vault.balanceOf(c.address)).toEqual({ available: 1n * USDC, locked: 2n * USDC });
  });

  it("fails a search for a lock's transaction, rather than find none, while a node of a pool behind the head another named answers its logs", async () => {
    const c = await newClient(t);
    await t.vault.fund(c.address, 5n * USDC, keyOf(c.address));
    const behind = await t.vault.blockNumber();
    const a = oid("held");
    const locked = await t.vault.lock(a, c.address, 5n * USDC);
    // One URL before a pool: a request reading logs goes to a node still at `behind`, under the lock's block, which answers
    // a range past its head with the logs it has, as geth does; any other request to the node that has every block.
    const pool = await startPool(
      t.chain.rpcUrl,
      (call) => call.method === "eth_getLogs",
      async (call, forward) => {
        if (call.method === "eth_getBlockByNumber" && BigInt(call.params[0] as Hex) > behind) return { jsonrpc: "2.0", id: call.id, result: null };
        if (call.method !== "eth_getLogs") return forward(call);
        const filter = call.params[0] as { fromBlock: Hex; toBlock: Hex };
        if (BigInt(filter.fromBlock) > behind) return { jsonrpc: "2.0", id: call.id, result: [] };
        return forward({ ...call, params: [{ ...filter, toBlock: BigInt(filter.toBlock) > behind ? toHex(behind) : filter.toBlock }] });
      },
    );
    const vault = await openEvmVault({ rpcUrl: pool.url, operatorKey: t.chain.operatorKey, store: t.store, faucet: true, devChain: t.chain });
    try {
      await expect(vault.heldBy(a)).rejects.toThrow(/has no block/);
    } finally {
      await vault.close();
      await pool.stop();
    }
    expect(await t.vault.heldBy(a)).toBe(locked.txHash);
  });
});
