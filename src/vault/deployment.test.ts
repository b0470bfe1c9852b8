import { describe, expect, it } from "vitest";
import type { Store } from "../store/store.ts";
import { openEvmVault, type EvmVaultOptions } from "./evm/evm-vault.ts";
import { keyOf, newClient, openTestStore, tempDir } from "./testkit.ts";
import { testChainPerFile } from "./vitest-kit.ts";

const t = testChainPerFile();

/** Rewrites the dev chain's recorded deployment, as an older version or another build left it (under a claim, as a deployer writes). */
async function edit(store: Store, change: { vault?: string; build?: string }): Promise<void> {
  const { deployment } = await store.chainDeployment(31337);
  const claim = { owner: "test", until: new Date(Date.now() + 60_000).toISOString() };
  expect(await store.claimChainDeployment(31337, deployment!.vault, claim, new Date().toISOString())).toBe(true);
  expect(await store.finishChainDeployment(31337, "test", { ...deployment!, ...change })).toBe(true);
}

/** Another vault over the test chain, recording in `store`. */
async function open(opts: Partial<EvmVaultOptions> & { store: Store }) {
  return openEvmVault({ rpcUrl: t.chain.rpcUrl, operatorKey: t.chain.operatorKey, faucet: true, devChain: t.chain, ...opts });
}

describe("the recorded deployment", () => {
  it("is used again as it is, with its own lock TTL even when opened with another", async () => {
    const again = await open({ store: t.store, lockTtlSeconds: 60 });
    try {
      expect(again.info().contracts).toEqual(t.vault.info().contracts);
      expect(again.info().lockTtlSeconds).toBe(86_400);
    } finally {
      await again.close();
    }
  });

  it("is replaced on the dev chain when it was deployed from an older build of the contracts", async () => {
    const store = await openTestStore(tempDir());
    const first = await open({ store });
    const c = await newClient(t);
    await first.fund(c.address, 5_000_000n, keyOf(`old-${c.address}`));
    await first.close();
    await edit(store, { build: "0x00" });

    const next = await open({ store });
    try {
      expect(next.info().contracts.vault).not.toBe(first.info().contracts.vault);
      expect(next.info().contracts.usdc).not.toBe(first.info().contracts.usdc);
      expect((await store.chainDeployment(31337)).deployment?.vault).toBe(next.info().contracts.vault);
      // A fresh Vault: nothing of the old one's balances, and the same key funds the account in it.
      expect(await next.balanceOf(c.address)).toEqual({ available: 0n, locked: 0n });
      await next.fund(c.address, 5_000_000n, keyOf(`old-${c.address}`));
      await next.lock(keyOf(`new-${c.address}`), c.address, 1_000_000n);
      expect(await next.lockState(keyOf(`new-${c.address}`))).toMatchObject({ kind: "locked", amount: 1_000_000n });
    } finally {
      await next.close();
      await store.close();
    }
  });

  it("is never replaced on a chain without the faucet: another build, or no code at the address, stops the start", async () => {
    const store = await openTestStore(tempDir());
    const usdc = t.vault.info().contracts.usdc;
    const real = { store, faucet: false, contracts: { usdc } };
    const first = await open(real);
    await first.close();
    const again = await open(real);
    expect(again.info().contracts).toEqual(first.info().contracts);
    await again.close();

    const build = (await store.chainDeployment(31337)).deployment!.build;
    await edit(store, { build: "0x00" });
    await expect(open(real)).rejects.toThrow(/deployed from another build of the contracts/);
    await edit(store, { build, vault: "0x000000000000000000000000000000000000c0de" });
    await expect(open(real)).rejects.toThrow(/no Vault code at 0x000000000000000000000000000000000000c0de/);
    await store.close();
  });
});
