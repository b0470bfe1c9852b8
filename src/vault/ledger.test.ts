import { describe, expect, it } from "vitest";
import { testUSDCAbi } from "../contracts/artifacts.ts";
import { sotTokenId } from "../contracts/sot.ts";
import { TREASURY_GRANT } from "./evm/deployment.ts";
import { openEvmVault } from "./evm/evm-vault.ts";
import { keyOf, newClient } from "./testkit.ts";
import { testChainPerFile } from "./vitest-kit.ts";

const USDC = 1_000_000n;
const TTL = 60;

// Two blocks per eth_getLogs range: the ledger is read across many ranges, as on a node with a low limit.
const t = testChainPerFile({ lockTtlSeconds: TTL, logRangeBlocks: 2 });

async function usdcSupply(): Promise<bigint> {
  const c = await newClient(t);
  return c.reader.readContract({ address: t.vault.info().contracts.usdc, abi: testUSDCAbi, functionName: "totalSupply" });
}

describe("the dev faucet", () => {
  it("funds an account once per key, whether asked again later or twice at once", async () => {
    const before = await usdcSupply();
    const a = await newClient(t);
    const first = await t.vault.fund(a.address, 100n * USDC, keyOf(`faucet-${a.address}`));
    // A retry after a crash that came after the funding landed: nothing more is minted, the first funding is named.
    expect(await t.vault.fund(a.address, 100n * USDC, keyOf(`faucet-${a.address}`))).toEqual(first);
    expect(await t.vault.balanceOf(a.address)).toEqual({ available: 100n * USDC, locked: 0n });

    const b = await newClient(t);
    const twice = await Promise.all([1, 2].map(() => t.vault.fund(b.address, 50n * USDC, keyOf(`faucet-${b.address}`))));
    expect(twice[0]).toEqual(twice[1]);
    expect(await t.vault.balanceOf(b.address)).toEqual({ available: 50n * USDC, locked: 0n });
    expect((await usdcSupply()) - before).toBe(150n * USDC);
  });
});

describe("the ledger", () => {
  it("tells every lock, ending, deposit, withdrawal, drip and SOT mint, with balances that add up", async () => {
    const a = await newClient(t);
    const b = await newClient(t);
    const dripA = await t.vault.fund(a.address, 100n * USDC, keyOf(`ledger-${a.address}`));
    const dripB = await t.vault.fund(b.address, 50n * USDC, keyOf(`ledger-${b.address}`));
    const tokenId = sotTokenId("ledger", "YES");
    const [o1, o2, o3, o4, o5] = [1, 2, 3, 4, 5].map((i) => keyOf(`ledger-order-${i}-${a.address}`)) as [`0x${string}`, `0x${string}`, `0x${string}`, `0x${string}`, `0x${string}`];

    const lock1 = await t.vault.lock(o1, a.address, 30n * USDC);
    const settle1 = await t.vault.settle(o1, 10n * USDC, { tokenId, shares: 20n * USDC });
    await t.vault.lock(o2, a.address, 5n * USDC);
    const settle2 = await t.vault.settle(o2, 0n, { tokenId, shares: 0n });
    await t.vault.lock(o3, a.address, 7n * USDC);
    const release3 = await t.vault.release(o3);
    await t.vault.lock(o4, b.address, 8n * USDC);
    await t.rpc.call("evm_increaseTime", [TTL + 1]);
    await t.rpc.call("evm_mine");
    await b.expire(o4);
    const expired4 = await t.vault.lockState(o4);
    await a.withdraw(20n * USDC);
    await b.withdraw(10n * USDC);
    await b.deposit(5n * USDC);
    await t.vault.lock(o5, b.address, 2n * USDC);

    const ledger = await t.vault.ledger();
    const mine = <T extends { orderId: string }>(xs: T[]) => xs.filter((x) => [o1, o2, o3, o4, o5].includes(x.orderId as `0x${string}`));
    const ofClients = <T extends { client: string }>(xs: T[]) => xs.filter((x) => x.client === a.address || x.client === b.address);

    expect(mine(ledger.locks).map((l) => [l.orderId, l.client, l.amount])).toEqual([
      [o1, a.address, 30n * USDC],
      [o2, a.address, 5n * USDC],
      [o3, a.address, 7n * USDC],
      [o4, b.address, 8n * USDC],
      [o5, b.address, 2n * USDC],
    ]);
    expect(mine(ledger.locks)[0]!.txHash).toBe(lock1.txHash);
    expect(mine(ledger.endings).map(({ blockNumber: _, ...e }) => e)).toEqual([
      { kind: "settled", orderId: o1, client: a.address, spent: 10n * USDC, released: 20n * USDC, tokenId, shares: 20n * USDC, txHash: settle1.txHash },
      { kind: "settled", orderId: o2, client: a.address, spent: 0n, released: 5n * USDC, tokenId, shares: 0n, txHash: settle2.txHash },
      { kind: "released", orderId: o3, client: a.address, amount: 7n * USDC, expired: false, txHash: release3.txHash },
      { kind: "released", orderId: o4, client: b.address, amount: 8n * USDC, expired: true, txHash: (expired4 as { txHash: string }).txHash },
    ]);
    // One SOT mint, by the settle that had shares, in that settle's transaction.
    expect(ledger.sotMints.filter((m) => m.to === a.address || m.to === b.address)).toEqual([
      { to: a.address, tokenId, amount: 20n * USDC, txHash: settle1.txHash, blockNumber: settle1.blockNumber },
    ]);
    expect(ofClients(ledger.drips).map((d) => [d.client, d.amount, d.txHash])).toEqual([
      [a.address, 100n * USDC, dripA.txHash],
      [b.address, 50n * USDC, dripB.txHash],
    ]);
    const usdc = t.vault.info().contracts.usdc;
    expect(ofClients(ledger.deposits).map((d) => [d.client, d.from, d.amount])).toEqual([
      [a.address, usdc, 100n * USDC],
      [b.address, usdc, 50n * USDC],
      [b.address, b.address, 5n * USDC],
    ]);
    expect(ofClients(ledger.withdrawals).map((w) => [w.client, w.amount])).toEqual([
      [a.address, 20n * USDC],
      [b.address, 10n * USDC],
    ]);
    // Balances at the ledger's block: deposits - settle spends - withdrawals, with what is still locked.
    expect(ofClients(ledger.balances)).toEqual([
      { client: a.address, available: 70n * USDC, locked: 0n },
      { client: b.address, available: 43n * USDC, locked: 2n * USDC },
    ]);
    // Every token in existence came from a drip, or from the treasury's grant at deployment.
    expect(ledger.usdcGranted).toBe(TREASURY_GRANT);
    expect(ledger.usdcTotalSupply).toBe(ledger.drips.reduce((s, d) => s + d.amount, 0n) + TREASURY_GRANT);

    // The same history read in ranges of 10 000 blocks.
    const wide = await openEvmVault({ rpcUrl: t.chain.rpcUrl, operatorKey: t.chain.operatorKey, store: t.store, faucet: true });
    try {
      expect(await wide.ledger()).toEqual(ledger);
    } finally {
      await wide.close();
    }
  });
});

describe("the ledger of shares", () => {
  it("tells every escrow, its ending, each redemption and SOT burn, and each token's supply", async () => {
    const a = await newClient(t);
    await t.vault.fund(a.address, 100n * USDC, keyOf(`shares-${a.address}`));
    const tokenId = sotTokenId(`ledger-shares-${a.address}`, "YES");
    const [buy, sold, kept] = [1, 2, 3].map((i) => keyOf(`ledger-shares-${i}-${a.address}`)) as [`0x${string}`, `0x${string}`, `0x${string}`];
    await t.vault.lock(buy, a.address, 10n * USDC);
    await t.vault.settle(buy, 6n * USDC, { tokenId, shares: 10n * USDC });
    const escrowed = await t.vault.escrow(sold, a.address, { tokenId, shares: 4n * USDC });
    const settled = await t.vault.settleSell(sold, 3n * USDC, 2_100_000n);
    await t.vault.escrow(kept, a.address, { tokenId, shares: 2n * USDC });
    const released = await t.vault.releaseEscrow(kept);
    const key = keyOf(`ledger-shares-redeemed-${a.address}`);
    const redeemed = await t.vault.redeem([{ key, account: a.address, tokenId, shares: 7n * USDC, payout: 7n * USDC }]);

    const ledger = await t.vault.ledger();
    const { vault } = t.vault.info().contracts;
    const mine = <T extends { orderId: string }>(xs: T[]) => xs.filter((x) => x.orderId === sold || x.orderId === kept);
    expect(mine(ledger.escrows).map(({ blockNumber: _, ...e }) => e)).toEqual([
      { orderId: sold, client: a.address, tokenId, shares: 4n * USDC, txHash: escrowed.txHash },
      { orderId: kept, client: a.address, tokenId, shares: 2n * USDC, txHash: expect.any(String) },
    ]);
    expect(mine(ledger.escrowEndings).map(({ blockNumber: _, ...e }) => e)).toEqual([
      { kind: "settled", orderId: sold, client: a.address, tokenId, sold: 3n * USDC, returned: 1n * USDC, proceeds: 2_100_000n, txHash: settled.txHash },
      { kind: "released", orderId: kept, client: a.address, tokenId, shares: 2n * USDC, expired: false, txHash: released.txHash },
    ]);
    expect(ledger.redemptions.filter((r) => r.key === key)).toEqual([{ key, client: a.address, tokenId, shares: 7n * USDC, payout: 7n * USDC, ...redeemed }]);
    // The sale burns from the Vault's escrow, the redemption from the holder.
    expect(ledger.sotBurns.filter((b) => b.tokenId === tokenId)).toEqual([
      { from: vault, tokenId, amount: 3n * USDC, txHash: settled.txHash, blockNumber: settled.blockNumber },
      { from: a.address, tokenId, amount: 7n * USDC, ...redeemed },
    ]);
    expect(ledger.sotSupply.filter((s) => s.tokenId === tokenId)).toEqual([{ tokenId, supply: 0n }]);
    // Proceeds and the payout came into the vault balance: 100 - 6 spent + 2.1 + 7.
    expect(ledger.balances.filter((b) => b.client === a.address)).toEqual([{ client: a.address, available: 103_100_000n, locked: 0n }]);
  });
});

describe("the holds of some blocks", () => {
  it("tells, range by range, the locks, escrows and endings the ledger tells, each in the range of its block", async () => {
    const a = await newClient(t);
    await t.vault.fund(a.address, 20n * USDC, keyOf(`holds-${a.address}`));
    const [open, ended] = [1, 2].map((i) => keyOf(`holds-order-${i}-${a.address}`)) as [`0x${string}`, `0x${string}`];
    await t.vault.lock(open, a.address, 3n * USDC);
    await t.vault.lock(ended, a.address, 4n * USDC);
    await t.vault.release(ended);

    const ledger = await t.vault.ledger();
    const { deployedAt } = t.vault.info();
    const cuts = [deployedAt, (deployedAt + ledger.toBlock) / 2n, ledger.toBlock - 1n, ledger.toBlock + 1n];
    const ranges = await Promise.all(cuts.slice(1).map((end, i) => t.vault.holds(cuts[i]!, end - 1n).then((holds) => ({ from: cuts[i]!, to: end - 1n, holds }))));
    for (const { from, to, holds } of ranges) {
      for (const e of [...holds.locks, ...holds.endings, ...holds.escrows, ...holds.escrowEndings]) expect(e.blockNumber >= from && e.blockNumber <= to).toBe(true);
    }
    for (const k of ["locks", "endings", "escrows", "escrowEndings"] as const) expect(ranges.flatMap((r): unknown[] => r.holds[k])).toEqual(ledger[k]);
    expect(ledger.locks.some((l) => l.orderId === open) && ledger.endings.some((e) => e.orderId === ended)).toBe(true);
  });
});
