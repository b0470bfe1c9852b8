import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../domain/errors.ts";
import { systemClock } from "../domain/types.ts";
import type { Store } from "../store/store.ts";
import { openEvmVault } from "../vault/evm/evm-vault.ts";
import { closeTestChain, openTestChain, openTestStore, tempDir, type TestChain } from "../vault/testkit.ts";
import { VaultTxError, type Address, type Vault } from "../vault/vault.ts";
import { AccountDirectory, findOrCreateAccount, TOP_UP_INTERVAL_MS, topUp } from "./service.ts";

const FAUCET = 10_000_000_000n;
let t: TestChain;
let store: Store;
beforeAll(async () => {
  t = await openTestChain(tempDir());
  store = t.store;
});
afterAll(() => closeTestChain(t));

const directory = (s: Store = store) => new AccountDirectory(s, t.vault, FAUCET, systemClock);

async function newAccount(email: string) {
  return (await findOrCreateAccount(store, email, (k) => k)).account;
}

describe("the dev faucet's funding of an account", () => {
  it("happens once when two servers meet a new account at the same moment", async () => {
    const before = (await t.vault.ledger()).usdcTotalSupply;
    const account = await newAccount("twice@example.com");
    const [a, b] = await Promise.all([directory().get(account.id), directory().get(account.id)]);
    expect(a.fundedAt ?? b.fundedAt).not.toBeNull();
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: FAUCET, locked: 0n });
    expect((await t.vault.ledger()).usdcTotalSupply - before).toBe(FAUCET);
  });

  it("is not repeated after a crash between the funding and the account being marked funded", async () => {
    const account = await newAccount("crash@example.com");
    const crashing: Store = Object.assign(Object.create(store) as Store, {
      markAccountFunded: () => Promise.reject(new Error("killed before the store was written")),
    });
    await expect(directory(crashing).get(account.id)).rejects.toThrow(/killed/);
    expect((await store.accountById(account.id))?.fundedAt).toBeNull();

    const again = await directory().get(account.id);
    expect(again.fundedAt).not.toBeNull();
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: FAUCET, locked: 0n });
  });

  it("answers chain_unavailable, not an internal error, when the chain fails it, and is asked again at the next request", async () => {
    const account = await newAccount("chain-down@example.com");
    const down: Vault = Object.assign(Object.create(t.vault) as Vault, {
      fund: () => Promise.reject(new VaultTxError("reverted", "NotSent", "TestUSDC.drip: not sent (fetch failed)")),
    });
    const failed = await new AccountDirectory(store, down, FAUCET, systemClock).get(account.id).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(AppError);
    expect((failed as AppError).code).toBe("chain_unavailable");
    expect((await store.accountById(account.id))?.fundedAt).toBeNull();

    expect((await directory().get(account.id)).fundedAt).not.toBeNull();
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: FAUCET, locked: 0n });
  });

  it("is made again in a new Vault after the dev chain's contracts were redeployed", async () => {
    const account = await directory().get((await newAccount("redeployed@example.com")).id);
    expect(account.fundedAt).not.toBeNull();
    // Another deployment on the same chain, as an upgrade of the contracts makes: a store without this one's record.
    const elsewhere = await openTestStore(tempDir());
    const redeployed = await openEvmVault({ rpcUrl: t.chain.rpcUrl, operatorKey: t.chain.operatorKey, store: elsewhere, faucet: true, devChain: t.chain });
    try {
      await new AccountDirectory(store, redeployed, FAUCET, systemClock).get(account.id);
      expect(await redeployed.balanceOf(account.address as Address)).toEqual({ available: FAUCET, locked: 0n });
    } finally {
      await redeployed.close();
      await elsewhere.close();
    }
  });
});

describe("the terminal's top-up", () => {
  it("lists in the activity every drip in the vault, one that landed before a crash kept it from the store too, found again at the next click", async () => {
    const account = await directory().get((await newAccount("top-up@example.com")).id);
    const dripped = async () => (await store.activity(account.id, { limit: 50, cursor: null })).data.filter((e) => e.type === "faucet").reduce((sum, e) => sum + e.amount, 0n);
    let now = Date.parse("2026-12-01T00:00:00.000Z");
    const clock = { now: () => now };
    const crashing: Store = Object.assign(Object.create(store) as Store, {
      recordFaucetDrip: () => Promise.reject(new Error("killed before the store was written")),
    });
    await expect(topUp(crashing, t.vault, account, FAUCET, clock)).rejects.toThrow(/killed/);
    expect(await dripped()).toBe(FAUCET);

    // A minute on: the drip is found and recorded, not made again; another minute on, the next one is made.
    now += TOP_UP_INTERVAL_MS;
    await topUp(store, t.vault, account, FAUCET, clock);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 2n * FAUCET, locked: 0n });
    expect(await dripped()).toBe(2n * FAUCET);
    now += TOP_UP_INTERVAL_MS;
    await topUp(store, t.vault, account, FAUCET, clock);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 3n * FAUCET, locked: 0n });
    expect(await dripped()).toBe(3n * FAUCET);
  });
});
