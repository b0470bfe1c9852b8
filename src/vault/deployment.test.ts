import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openEvmVault, type EvmVaultOptions } from "./evm/evm-vault.ts";
import { keyOf, newClient, tempDir } from "./testkit.ts";
import { testChainPerFile } from "./vitest-kit.ts";

const t = testChainPerFile();

const file = (dir: string) => join(dir, "chain", "deployment.json");
type Entries = Record<string, { vault: string; build?: string }>;

/** Rewrites the dev chain's entry in a deployment.json, as an older version or another build left it. */
function edit(dir: string, change: (entry: Entries[string]) => void): void {
  const all = JSON.parse(readFileSync(file(dir), "utf8")) as Entries;
  change(all["31337"]!);
  writeFileSync(file(dir), JSON.stringify(all));
}

/** Another vault over the test chain (`t.vault` itself sends nothing here, so its cached nonce never goes stale). */
async function open(opts: Partial<EvmVaultOptions> & { dataDir: string }) {
  return openEvmVault({ rpcUrl: t.chain.rpcUrl, operatorKey: t.chain.operatorKey, faucet: true, devChain: t.chain, ...opts });
}

describe("the recorded deployment", () => {
  it("is used again as it is, with its own lock TTL even when opened with another", async () => {
    const again = await open({ dataDir: t.dir, lockTtlSeconds: 60 });
    try {
      expect(again.info().contracts).toEqual(t.vault.info().contracts);
      expect(again.info().lockTtlSeconds).toBe(86_400);
    } finally {
      await again.close();
    }
  });

  it("is replaced on the dev chain when it was deployed from an older build of the contracts", async () => {
    const dir = tempDir();
    const first = await open({ dataDir: dir });
    const c = await newClient(t);
    await first.fund(c.address, 5_000_000n, keyOf(`old-${c.address}`));
    await first.close();
    // An entry written before deployments recorded their build: its Vault has no lock deadlines.
    edit(dir, (e) => delete e.build);

    const next = await open({ dataDir: dir });
    try {
      expect(next.info().contracts.vault).not.toBe(first.info().contracts.vault);
      expect(next.info().contracts.usdc).not.toBe(first.info().contracts.usdc);
      expect((JSON.parse(readFileSync(file(dir), "utf8")) as Entries)["31337"]!.vault).toBe(next.info().contracts.vault);
      // A fresh Vault: nothing of the old one's balances, and the same key funds the account in it.
      expect(await next.balanceOf(c.address)).toEqual({ available: 0n, locked: 0n });
      await next.fund(c.address, 5_000_000n, keyOf(`old-${c.address}`));
      await next.lock(keyOf(`new-${c.address}`), c.address, 1_000_000n);
      expect(await next.lockState(keyOf(`new-${c.address}`))).toMatchObject({ kind: "locked", amount: 1_000_000n });
    } finally {
      await next.close();
    }
  });

  it("is never replaced on a chain without the faucet: another build, or no code at the address, stops the start", async () => {
    const dir = tempDir();
    const usdc = t.vault.info().contracts.usdc;
    const real = { dataDir: dir, faucet: false, contracts: { usdc } };
    const first = await open(real);
    await first.close();
    const again = await open(real);
    expect(again.info().contracts).toEqual(first.info().contracts);
    await again.close();

    const build = (JSON.parse(readFileSync(file(dir), "utf8")) as Entries)["31337"]!.build;
    edit(dir, (e) => (e.build = "0x00"));
    await expect(open(real)).rejects.toThrow(/deployed from another build of the contracts/);
    edit(dir, (e) => {
      e.build = build;
      e.vault = "0x000000000000000000000000000000000000c0de";
    });
    await expect(open(real)).rejects.toThrow(/no Vault code at 0x000000000000000000000000000000000000c0de/);
  });
});
