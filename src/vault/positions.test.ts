// The Vault's sells and redemptions on the dev chain: escrow, settleSell, releaseEscrow, redeem, each rule
// the contract itself enforces, and what one transaction does.
import { describe, expect, it } from "vitest";
import { decodeErrorResult, encodeFunctionData, keccak256, parseEventLogs, toHex, zeroAddress, type Hex } from "viem";
import { positionTokenAbi, testUSDCAbi, vaultAbi } from "../contracts/artifacts.ts";
import { sotTokenId } from "../contracts/sot.ts";
import { keyOf, newClient } from "./testkit.ts";
import { refusedOnChain, reverts, testChainPerFile } from "./vitest-kit.ts";
import { REDEEM_MAX_ITEMS, VaultTxError, type Address, type Hex32 } from "./vault.ts";

const USDC = 1_000_000n;
const SHARE = 1_000_000n;
const oid = (s: string) => keccak256(toHex(`${s}-${Math.random()}`));

const t = testChainPerFile();

/** A client holding `shares` of the token, bought through a lock and a settle as an order would. */
async function holder(tokenId: bigint, shares: bigint) {
  const c = await newClient(t);
  await t.vault.fund(c.address, 100n * USDC, keyOf(c.address));
  const buy = oid("buy");
  await t.vault.lock(buy, c.address, 10n * USDC);
  await t.vault.settle(buy, 10n * USDC, { tokenId, shares });
  return c;
}

async function treasuryUsdc(c: Awaited<ReturnType<typeof newClient>>): Promise<bigint> {
  const { operator, contracts } = t.vault.info();
  return c.reader.readContract({ address: contracts.usdc, abi: testUSDCAbi, functionName: "balanceOf", args: [operator] });
}

async function sotSupply(c: Awaited<ReturnType<typeof newClient>>, tokenId: bigint): Promise<bigint> {
  return c.reader.readContract({ address: t.vault.info().contracts.sot, abi: positionTokenAbi, functionName: "totalSupply", args: [tokenId] });
}

/** The failures `redeem` answers for these items, by custom error name ("ok" for a redeemed item), without sending it. */
async function redeemAnswers(c: Awaited<ReturnType<typeof newClient>>, items: { key: Hex32; client: Address; tokenId: bigint; shares: bigint; payout: bigint }[]) {
  const { operator, contracts } = t.vault.info();
  const { result } = await c.reader.simulateContract({ address: contracts.vault, abi: vaultAbi, functionName: "redeem", args: [items], account: operator });
  return result.map((r: Hex) => (r === "0x" ? "ok" : decodeErrorResult({ abi: vaultAbi, data: r }).errorName));
}

describe("position balances", () => {
  it("reads the balances of many holders and tokens in their order, more than one call holds", async () => {
    const [yes, no] = [sotTokenId("balances", "YES"), sotTokenId("balances", "NO")];
    const a = await holder(yes, 3n * SHARE);
    const b = await holder(no, 5n * SHARE);
    const pairs = Array.from({ length: 1_201 }, (_, i) => ({ account: i % 2 === 0 ? a.address : b.address, tokenId: i % 3 === 0 ? yes : no }));
    const balances = await t.vault.sotBalances(pairs);
    expect(balances).toEqual(pairs.map((p) => (p.account === a.address && p.tokenId === yes ? 3n * SHARE : p.account === b.address && p.tokenId === no ? 5n * SHARE : 0n)));
    expect(await t.vault.sotBalances([])).toEqual([]);
  });
});

describe("a sell's escrow on the dev chain", () => {
  it("escrows the shares, then burns the sold ones, credits the proceeds and returns the rest, in one transaction", async () => {
    const tokenId = sotTokenId(`sell-${Math.random()}`, "YES");
    const c = await holder(tokenId, 10n * SHARE);
    const { vault, sot } = t.vault.info().contracts;
    const o = oid("sell");

    await t.vault.escrow(o, c.address, { tokenId, shares: 6n * SHARE });
    expect(await t.vault.sotBalance(c.address, tokenId)).toBe(4n * SHARE);
    expect(await t.vault.sotBalance(vault, tokenId)).toBe(6n * SHARE);
    expect(await t.vault.escrowState(o)).toEqual({ kind: "escrowed", account: c.address, tokenId, shares: 6n * SHARE, deadline: expect.any(Number) });

    const available = (await t.vault.balanceOf(c.address)).available;
    const treasury = await treasuryUsdc(c);
    const ref = await t.vault.settleSell(o, 4n * SHARE, 2_500_000n);
    expect(await t.vault.escrowState(o)).toEqual({ kind: "settled", txHash: ref.txHash, sold: 4n * SHARE, proceeds: 2_500_000n });
    expect(await t.vault.balanceOf(c.address)).toEqual({ available: available + 2_500_000n, locked: 0n });
    expect(await t.vault.sotBalance(c.address, tokenId)).toBe(6n * SHARE);
    expect(await t.vault.sotBalance(vault, tokenId)).toBe(0n);
    expect(await sotSupply(c, tokenId)).toBe(6n * SHARE);
    expect(treasury - (await treasuryUsdc(c))).toBe(2_500_000n);

    // The one transaction holds the order's SellSettled, the proceeds pulled from the treasury, the burn and the return.
    const receipt = await c.reader.getTransactionReceipt({ hash: ref.txHash });
    expect(receipt.status).toBe("success");
    const settled = parseEventLogs({ abi: vaultAbi, eventName: "SellSettled", logs: receipt.logs }).filter((l) => l.args.orderId === o);
    expect(settled.map((l) => l.args)).toEqual([{ orderId: o, client: c.address, tokenId, sold: 4n * SHARE, returned: 2n * SHARE, proceeds: 2_500_000n }]);
    const moved = parseEventLogs({ abi: positionTokenAbi, eventName: "TransferSingle", logs: receipt.logs })
      .filter((l) => l.address.toLowerCase() === sot.toLowerCase() && l.args.id === tokenId)
      .map((l) => [l.args.from, l.args.to, l.args.value]);
    expect(moved).toEqual([
      [vault, zeroAddress, 4n * SHARE],
      [vault, c.address, 2n * SHARE],
    ]);
    const paid = parseEventLogs({ abi: testUSDCAbi, eventName: "Transfer", logs: receipt.logs }).map((l) => [l.args.from, l.args.to, l.args.value]);
    expect(paid).toContainEqual([t.vault.info().operator, vault, 2_500_000n]);
  });

  it("releases an escrow whole: every share goes back and nothing is paid", async () => {
    const tokenId = sotTokenId(`release-${Math.random()}`, "NO");
    const c = await holder(tokenId, 3n * SHARE);
    const o = oid("release");
    await t.vault.escrow(o, c.address, { tokenId, shares: 3n * SHARE });
    expect(await t.vault.sotBalance(c.address, tokenId)).toBe(0n);
    const available = (await t.vault.balanceOf(c.address)).available;
    const ref = await t.vault.releaseEscrow(o);
    expect(await t.vault.escrowState(o)).toEqual({ kind: "released", txHash: ref.txHash, expired: false });
    expect(await t.vault.sotBalance(c.address, tokenId)).toBe(3n * SHARE);
    expect(await t.vault.balanceOf(c.address)).toEqual({ available, locked: 0n });
    expect(await sotSupply(c, tokenId)).toBe(3n * SHARE);
    expect(await t.vault.escrowState(oid("never escrowed"))).toEqual({ kind: "none" });
  });

  it("cannot sell twice: escrowed shares cannot be escrowed again, and an escrow ends once", async () => {
    const tokenId = sotTokenId(`twice-${Math.random()}`, "YES");
    const c = await holder(tokenId, 5n * SHARE);
    const o = oid("twice");
    await t.vault.escrow(o, c.address, { tokenId, shares: 5n * SHARE });
    // The same shares under another order: the client no longer holds them.
    await reverts(t.vault.escrow(oid("again"), c.address, { tokenId, shares: 1n }), "InsufficientShares");
    await reverts(t.vault.escrow(o, c.address, { tokenId, shares: 1n }), "AlreadyEscrowed");
    await t.vault.settleSell(o, 5n * SHARE, 4n * USDC);
    const paid = await t.vault.balanceOf(c.address);
    await reverts(t.vault.settleSell(o, 5n * SHARE, 4n * USDC), "AlreadySettled");
    await reverts(t.vault.releaseEscrow(o), "AlreadySettled");
    await reverts(t.vault.escrow(o, c.address, { tokenId, shares: 1n }), "AlreadyEscrowed");
    expect(await t.vault.balanceOf(c.address)).toEqual(paid);
    // The sold shares are burned: nothing is left to sell again.
    expect(await sotSupply(c, tokenId)).toBe(0n);
    await reverts(t.vault.escrow(oid("after"), c.address, { tokenId, shares: 1n }), "InsufficientShares");
  });

  it("enforces the escrow rules in the contract", async () => {
    const tokenId = sotTokenId(`rules-${Math.random()}`, "YES");
    const c = await holder(tokenId, 2n * SHARE + 1n);
    await reverts(t.vault.escrow(oid("zero"), c.address, { tokenId, shares: 0n }), "ZeroAmount");
    await reverts(t.vault.escrow(oid("big"), c.address, { tokenId, shares: 2n * SHARE + 2n }), "InsufficientShares");
    await reverts(t.vault.escrow(oid("other token"), c.address, { tokenId: tokenId + 1n, shares: 1n }), "InsufficientShares");
    // The Vault holds every sell's escrowed shares: none of them can be escrowed again in its name.
    await t.vault.escrow(oid("held by the Vault"), c.address, { tokenId, shares: 1n });
    await reverts(t.vault.escrow(oid("the Vault's"), t.vault.info().contracts.vault, { tokenId, shares: 1n }), "NotAClient");

    const o = oid("rules");
    await t.vault.escrow(o, c.address, { tokenId, shares: 2n * SHARE });
    await reverts(t.vault.settleSell(o, 2n * SHARE + 1n, 0n), "SoldExceedsEscrow");
    // A share pays at most 1 USDC: proceeds above the shares sold are a bug, whatever the price.
    await reverts(t.vault.settleSell(o, 1n * SHARE, 1n * USDC + 1n), "PaysMoreThanShares");
    await reverts(t.vault.settleSell(o, 0n, 1n), "PaysMoreThanShares");
    await reverts(t.vault.settleSell(oid("unknown"), 0n, 0n), "UnknownOrder");
    await reverts(t.vault.releaseEscrow(oid("unknown")), "UnknownOrder");
    await t.vault.releaseEscrow(o);
    await reverts(t.vault.settleSell(o, 0n, 0n), "AlreadyReleased");
    await reverts(t.vault.releaseEscrow(o), "AlreadyReleased");
    expect(await t.vault.sotBalance(c.address, tokenId)).toBe(2n * SHARE);

    // A sell that sold nothing may still settle: everything comes back, nothing is paid.
    const none = oid("sold nothing");
    await t.vault.escrow(none, c.address, { tokenId, shares: 1n * SHARE });
    const before = await t.vault.balanceOf(c.address);
    await t.vault.settleSell(none, 0n, 0n);
    expect(await t.vault.sotBalance(c.address, tokenId)).toBe(2n * SHARE);
    expect(await t.vault.balanceOf(c.address)).toEqual(before);
  });

  it("lets only the operator escrow, settle a sell, release an escrow and redeem, and only the Vault burn or move SOT", async () => {
    const tokenId = sotTokenId(`operator-${Math.random()}`, "YES");
    const c = await holder(tokenId, 1n * SHARE);
    const o = oid("op");
    await t.vault.escrow(o, c.address, { tokenId, shares: 1n * SHARE });
    const { vault, sot } = t.vault.info().contracts;
    const as = { address: vault, abi: vaultAbi, account: c.address } as const;
    await refusedOnChain(c.reader.simulateContract({ ...as, functionName: "escrow", args: [oid("x"), c.address, tokenId, 1n] }), "OnlyOperator");
    await refusedOnChain(c.reader.simulateContract({ ...as, functionName: "settleSell", args: [o, 1n, 0n] }), "OnlyOperator");
    await refusedOnChain(c.reader.simulateContract({ ...as, functionName: "releaseEscrow", args: [o] }), "OnlyOperator");
    const item = { key: oid("k"), client: c.address, tokenId, shares: 1n, payout: 1n };
    await refusedOnChain(c.reader.simulateContract({ ...as, functionName: "redeem", args: [[item]] }), "OnlyOperator");
    const token = { address: sot, abi: positionTokenAbi, account: c.address } as const;
    await refusedOnChain(c.reader.simulateContract({ ...token, functionName: "burn", args: [c.address, tokenId, 1n] }), "OnlyMinter");
    await refusedOnChain(c.reader.simulateContract({ ...token, functionName: "move", args: [vault, c.address, tokenId, 1n] }), "OnlyMinter");
  });
});

describe("redemption on the dev chain", () => {
  it("pays each winning holder 1 USDC a share and burns the losers' for nothing, in one transaction", async () => {
    const event = `resolved-${Math.random()}`;
    const [yes, no] = [sotTokenId(event, "YES"), sotTokenId(event, "NO")];
    const [a, b, l] = await Promise.all([holder(yes, 7n * SHARE), holder(yes, 2_500_000n), holder(no, 4n * SHARE)]);
    const before = await Promise.all([a, b, l].map((c) => t.vault.balanceOf(c.address)));
    const treasury = await treasuryUsdc(a);
    const items = [
      { key: oid("a"), account: a.address, tokenId: yes, shares: 7n * SHARE, payout: 7n * USDC },
      { key: oid("b"), account: b.address, tokenId: yes, shares: 2_500_000n, payout: 2_500_000n },
      { key: oid("l"), account: l.address, tokenId: no, shares: 4n * SHARE, payout: 0n },
    ];
    const ref = await t.vault.redeem(items);
    const after = await Promise.all([a, b, l].map((c) => t.vault.balanceOf(c.address)));
    expect(after.map((x, i) => x.available - before[i]!.available)).toEqual([7n * USDC, 2_500_000n, 0n]);
    expect(treasury - (await treasuryUsdc(a))).toBe(9_500_000n);
    for (const c of [a, b]) expect(await t.vault.sotBalance(c.address, yes)).toBe(0n);
    expect(await t.vault.sotBalance(l.address, no)).toBe(0n);
    expect(await sotSupply(a, yes)).toBe(0n);
    expect(await sotSupply(a, no)).toBe(0n);
    for (const i of items) expect(await t.vault.redemption(i.key)).toEqual({ shares: i.shares, payout: i.payout, ...ref });
    expect(await t.vault.redemption(oid("never"))).toBeNull();
    const receipt = await a.reader.getTransactionReceipt({ hash: ref.txHash });
    expect(parseEventLogs({ abi: vaultAbi, eventName: "Redeemed", logs: receipt.logs }).map((l) => l.args.key)).toEqual(items.map((i) => i.key));
  });

  it("redeem twice pays once: a repeated key is skipped, and the items beside it are still redeemed", async () => {
    const tokenId = sotTokenId(`twice-${Math.random()}`, "YES");
    const [a, b] = await Promise.all([holder(tokenId, 4n * SHARE), holder(tokenId, 4n * SHARE)]);
    const first = { key: oid("first"), account: a.address, tokenId, shares: 2n * SHARE, payout: 2n * USDC };
    const ref = await t.vault.redeem([first]);
    const paid = await t.vault.balanceOf(a.address);
    // A retry after a crash, with a new item beside the repeated one: a still holds 2 shares, yet nothing more is paid to it.
    const second = { key: oid("second"), account: b.address, tokenId, shares: 4n * SHARE, payout: 4n * USDC };
    const again = await t.vault.redeem([first, second]);
    expect(again.txHash).not.toBe(ref.txHash);
    expect(await t.vault.balanceOf(a.address)).toEqual(paid);
    expect(await t.vault.sotBalance(a.address, tokenId)).toBe(2n * SHARE);
    expect(await t.vault.redemption(first.key)).toEqual({ shares: 2n * SHARE, payout: 2n * USDC, ...ref });
    expect(await t.vault.redemption(second.key)).toEqual({ shares: 4n * SHARE, payout: 4n * USDC, ...again });
    expect(await t.vault.sotBalance(b.address, tokenId)).toBe(0n);
  });

  it("answers each item of a redeem on its own: refused items change nothing, the others are paid", async () => {
    const tokenId = sotTokenId(`mixed-${Math.random()}`, "YES");
    const [a, b] = await Promise.all([holder(tokenId, 3n * SHARE), holder(tokenId, 1n * SHARE)]);
    await t.vault.escrow(oid("escrowed"), b.address, { tokenId, shares: 1n });
    const done = { key: oid("done"), client: a.address, tokenId, shares: 1n * SHARE, payout: 1n * USDC };
    await t.vault.redeem([{ ...done, account: a.address }]);
    const ok = { key: oid("ok"), client: a.address, tokenId, shares: 2n * SHARE, payout: 2n * USDC };
    const items = [
      ok,
      { ...done },
      { key: oid("more than paid"), client: b.address, tokenId, shares: 1n * SHARE, payout: 1n * USDC + 1n },
      { key: oid("not held"), client: b.address, tokenId, shares: 1n * SHARE + 1n, payout: 0n },
      { key: oid("zero"), client: b.address, tokenId, shares: 0n, payout: 0n },
      { key: oid("the Vault's"), client: t.vault.info().contracts.vault, tokenId, shares: 1n, payout: 1n },
      { ...ok, client: b.address, shares: 1n, payout: 0n },
    ];
    expect(await redeemAnswers(a, items)).toEqual(["ok", "AlreadyRedeemed", "PaysMoreThanShares", "InsufficientShares", "ZeroAmount", "NotAClient", "AlreadyRedeemed"]);
    const before = await Promise.all([a, b].map((c) => t.vault.balanceOf(c.address)));
    await t.vault.redeem(items.map(({ client, ...i }) => ({ ...i, account: client })));
    expect((await t.vault.balanceOf(a.address)).available - before[0]!.available).toBe(2n * USDC);
    expect(await t.vault.balanceOf(b.address)).toEqual(before[1]);
    expect(await t.vault.sotBalance(a.address, tokenId)).toBe(0n);
    expect(await t.vault.sotBalance(b.address, tokenId)).toBe(1n * SHARE - 1n);
    for (const i of items.slice(2, 6)) expect(await t.vault.redemption(i.key)).toBeNull();
    expect(await sotSupply(a, tokenId)).toBe(1n * SHARE);
  });

  it("takes at most REDEEM_MAX_ITEMS items in one call", async () => {
    const c = await newClient(t);
    const item = { key: oid("k"), account: c.address, tokenId: 1n, shares: 1n, payout: 0n };
    await expect(t.vault.redeem([])).rejects.toThrow(`1 to ${REDEEM_MAX_ITEMS} items, not 0`);
    await expect(t.vault.redeem(Array.from({ length: REDEEM_MAX_ITEMS + 1 }, () => item))).rejects.toThrow(`not ${REDEEM_MAX_ITEMS + 1}`);
  });
});

describe("sells in Vault.batch", () => {
  it("batches locks, escrows, sell settlements and releases of different orders, each done or refused on its own", async () => {
    const tokenId = sotTokenId(`batch-${Math.random()}`, "YES");
    const [a, b] = await Promise.all([holder(tokenId, 5n * SHARE), holder(tokenId, 5n * SHARE)]);
    const [settling, releasing] = [oid("settling"), oid("releasing")];
    await Promise.all([
      t.vault.escrow(settling, a.address, { tokenId, shares: 2n * SHARE }),
      t.vault.escrow(releasing, b.address, { tokenId, shares: 1n * SHARE }),
    ]);
    const [escrowed, refused, sold, released, locked] = await Promise.allSettled([
      t.vault.escrow(oid("escrowed"), a.address, { tokenId, shares: 3n * SHARE }),
      t.vault.escrow(oid("refused"), b.address, { tokenId, shares: 5n * SHARE }),
      t.vault.settleSell(settling, 2n * SHARE, 1_200_000n),
      t.vault.releaseEscrow(releasing),
      t.vault.lock(oid("lock"), b.address, 1n * USDC),
    ]);
    const hashes = [escrowed, sold, released, locked].map((r) => (r as PromiseFulfilledResult<{ txHash: Hex }>).value.txHash);
    expect(new Set(hashes).size).toBe(1);
    expect(refused.status).toBe("rejected");
    expect(((refused as PromiseRejectedResult).reason as VaultTxError).reason).toBe("InsufficientShares");
    expect(await t.vault.sotBalance(a.address, tokenId)).toBe(0n);
    expect(await t.vault.sotBalance(b.address, tokenId)).toBe(5n * SHARE);
    expect(await t.vault.escrowState(settling)).toEqual({ kind: "settled", txHash: hashes[0], sold: 2n * SHARE, proceeds: 1_200_000n });
    expect(await t.vault.escrowState(releasing)).toEqual({ kind: "released", txHash: hashes[0], expired: false });
  });

  it("runs escrow, settleSell and releaseEscrow in a batch, but not redeem", async () => {
    const tokenId = sotTokenId(`selectors-${Math.random()}`, "YES");
    const c = await holder(tokenId, 1n * SHARE);
    const { operator, contracts } = t.vault.info();
    const o = oid("o");
    const calls = [
      encodeFunctionData({ abi: vaultAbi, functionName: "escrow", args: [o, c.address, tokenId, 1n * SHARE] }),
      encodeFunctionData({ abi: vaultAbi, functionName: "settleSell", args: [oid("never escrowed"), 0n, 0n] }),
      encodeFunctionData({ abi: vaultAbi, functionName: "releaseEscrow", args: [o] }),
      encodeFunctionData({ abi: vaultAbi, functionName: "redeem", args: [[{ key: oid("k"), client: c.address, tokenId, shares: 1n, payout: 0n }]] }),
    ];
    const { result } = await c.reader.simulateContract({ address: contracts.vault, abi: vaultAbi, functionName: "batch", args: [calls], account: operator });
    const errors = result.map((r) => (r === "0x" ? "ok" : decodeErrorResult({ abi: vaultAbi, data: r }).errorName));
    expect(errors).toEqual(["ok", "UnknownOrder", "ok", "NotBatchable"]);
    expect(await t.vault.escrowState(o)).toEqual({ kind: "none" });
  });
});
