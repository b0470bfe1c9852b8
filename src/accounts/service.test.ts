import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../domain/errors.ts";
import { systemClock } from "../domain/types.ts";
import type { Store } from "../store/store.ts";
import { openEvmVault } from "../vault/evm/evm-vault.ts";
import { closeTestChain, openTestChain, openTestStore, tempDir, type TestChain } from "../vault/testkit.ts";
import { VaultTxError, type Address, type Vault } from "../vault/vault.ts";
import { AccountDirectory, findOrCreateAccount } from "./service.ts";

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
