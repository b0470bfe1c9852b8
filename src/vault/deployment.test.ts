import { join } from "node:path";
import { encodeDeployData, encodeFunctionData, getAbiItem, getAddress, toFunctionSelector, toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { testUSDCAbi, vaultAbi, vaultBytecode } from "../contracts/artifacts.ts";
import { sotTokenId } from "../contracts/sot.ts";
import type { Store } from "../store/store.ts";
import { contractsFromEnv } from "./evm/deployment.ts";
import { openEvmVault, type EvmVaultOptions } from "./evm/evm-vault.ts";
import { startDevChain } from "./devnode/devchain.ts";
import { closeTestChain, keyOf, newClient, openTestChain, openTestStore, tempDir } from "./testkit.ts";
import type { Address } from "./vault.ts";
import { testChainPerFile } from "./vitest-kit.ts";

const t = testChainPerFile();

/** Rewrites the dev chain's recorded deployment, as an older version or another build left it (under a claim, as a deployer writes). */
async function edit(store: Store, change: { vault?: string; sot?: string; build?: string }): Promise<void> {
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
    await edit(store, { build: "0x00", vault: await deployVault(vaultBeforeTransferBlocks()) });

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

  it("is used again when recorded by a build whose contracts differ only by the compiler's metadata (a change of comments), balances and all", async () => {
    const store = await openTestStore(tempDir());
    const first = await open({ store });
    const c = await newClient(t);
    await first.fund(c.address, 5_000_000n, keyOf(`comments-${c.address}`));
    await first.close();
    await edit(store, { build: "0x00" });
    for (const faucet of [true, false]) {
      const next = await open({ store, faucet });
      try {
        expect(next.info().contracts).toEqual(first.info().contracts);
        expect(await next.balanceOf(c.address)).toEqual({ available: 5_000_000n, locked: 0n });
      } finally {
        await next.close();
      }
    }
    await store.close();
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
    const { vault, sot } = first.info().contracts;
    await edit(store, { build: "0x00", vault: await deployVault(vaultBeforeTransferBlocks()) });
    await expect(open(real)).rejects.toThrow(/deployed from another build of the contracts/);
    // A position token of other code, the Vault's being this build's.
    await edit(store, { vault, sot: usdc });
    await expect(open(real)).rejects.toThrow(/deployed from another build of the contracts/);
    await edit(store, { sot });
    await edit(store, { build, vault: "0x000000000000000000000000000000000000c0de" });
    await expect(open(real)).rejects.toThrow(/no Vault code at 0x000000000000000000000000000000000000c0de/);
    await store.close();
  });

  it("stops the start when USDC_ADDRESS names another token than the recorded Vault's USDC, which it would not count", async () => {
    const store = await openTestStore(tempDir());
    const usdc = t.vault.info().contracts.usdc;
    const first = await open({ store, faucet: false, contracts: { usdc } });
    await first.close();
    const other = getAddress("0x000000000000000000000000000000000000c0de");
    await expect(open({ store, faucet: false, contracts: { usdc: other } })).rejects.toThrow(
      `USDC_ADDRESS ${other} is not the USDC of the Vault in use, ${first.info().contracts.vault}, which holds ${usdc}`,
    );
    await store.close();
  });

  it("stops the start when OPERATOR_PRIVATE_KEY is not the key of the recorded Vault's operator, naming both addresses", async () => {
    const store = await openTestStore(tempDir());
    const real = { store, faucet: false, contracts: { usdc: t.vault.info().contracts.usdc } };
    const first = await open(real);
    await first.close();
    const other = generatePrivateKey();
    await expect(open({ ...real, operatorKey: other })).rejects.toThrow(
      new RegExp(`the Vault at ${first.info().contracts.vault} is operated by ${first.info().operator}, not by OPERATOR_PRIVATE_KEY's address ${privateKeyToAddress(other)}`),
    );
    await store.close();
  });
});

/** One of anvil's own unlocked accounts: someone other than the operator deploys the Vault that VAULT_ADDRESS names. */
const DEPLOYER = "0xa0ee7a142d267c1f36714e4a8f75612f20a79720";

/** A transaction from DEPLOYER, mined at once; its receipt. */
async function fromDeployer(tx: { to?: Address; data: Hex }) {
  const hash = await t.rpc.call<Hex>("eth_sendTransaction", [{ from: DEPLOYER, ...tx, gas: toHex(10_000_000) }]);
  await t.rpc.call("evm_mine");
  const receipt = await t.rpc.call<{ status: Hex; contractAddress: Address; blockNumber: Hex }>("eth_getTransactionReceipt", [hash]);
  expect(receipt.status).toBe("0x1");
  return receipt;
}

/** A Vault deployed on the test chain from `bytecode`, for this test chain's operator (its treasury too) and USDC unless others are named. */
async function deployVault(bytecode: Hex, operator: Address = t.vault.info().operator, usdc: Address = t.vault.info().contracts.usdc, treasury: Address = operator): Promise<Address> {
  const receipt = await fromDeployer({ data: encodeDeployData({ abi: vaultAbi, bytecode, args: [usdc, operator, treasury, 86_400, ""] }) });
  return getAddress(receipt.contractAddress);
}

/** The Vault as deployed before creditDeposit took its transfer's block (cddbc86): its dispatcher knows the old creditDeposit only. */
function vaultBeforeTransferBlocks(): Hex {
  const now = toFunctionSelector(getAbiItem({ abi: vaultAbi, name: "creditDeposit" })).slice(2);
  const before = toFunctionSelector("creditDeposit(bytes32,address,uint256,uint256,uint8,bytes32,bytes32)").slice(2);
  expect(vaultBytecode.split(`63${now}`)).toHaveLength(2);
  return vaultBytecode.replace(`63${now}`, `63${before}`) as Hex;
}

/** A token of 18 decimals, as USDC is on some chains: code that answers 18 to any call. */
async function wideToken(): Promise<Address> {
  const wide = getAddress("0x0000000000000000000000000000000000000018");
  await t.rpc.call("anvil_setCode", [wide, "0x601260005260206000f3"]);
  return wide;
}

describe("a Vault deployed against USDC_ADDRESS", () => {
  it("is not deployed when the token there counts in other decimals than USDC's 6, or there is no contract: money would be mis-scaled", async () => {
    const wide = await wideToken();
    const nothing = getAddress("0x000000000000000000000000000000000000c0de");
    for (const [usdc, why] of [
      [wide, `USDC_ADDRESS ${wide}: the token there counts in 18 decimals, not USDC's 6`],
      [nothing, `USDC_ADDRESS ${nothing}: chain 31337 has no contract there`],
    ] as const) {
      const store = await openTestStore(tempDir());
      await expect(open({ store, faucet: false, contracts: { usdc } })).rejects.toThrow(why);
      expect((await store.chainDeployment(31337)).deployment).toBeUndefined();
      await store.close();
    }
  });
});

describe("the Vault named by VAULT_ADDRESS", () => {
  const named = async (vault: Address) => open({ store: await openTestStore(tempDir()), faucet: false, contracts: { vault } });

  it("is used when it is this build's Vault, deployed by anyone", async () => {
    const address = await deployVault(vaultBytecode);
    const vault = await named(address);
    try {
      expect(vault.info().contracts).toEqual({ usdc: t.vault.info().contracts.usdc, vault: address, sot: expect.any(String) });
      expect(vault.info().lockTtlSeconds).toBe(86_400);
    } finally {
      await vault.close();
    }
  });

  it("reads its history from the block it was deployed in, not from the chain's first block", async () => {
    const operator = t.vault.info().operator;
    const args = [t.vault.info().contracts.usdc, operator, operator, 86_400, ""] as const;
    const receipt = await fromDeployer({ data: encodeDeployData({ abi: vaultAbi, bytecode: vaultBytecode, args }) });
    await t.rpc.call("anvil_mine", [toHex(300)]);
    const vault = await named(getAddress(receipt.contractAddress));
    try {
      expect(vault.info().deployedAt).toBe(BigInt(receipt.blockNumber));
      expect((await vault.ledger()).fromBlock).toBe(BigInt(receipt.blockNumber));
    } finally {
      await vault.close();
    }
  });

  it("finds its past events on a chain that keeps no state of past blocks (a dev chain started again from its saved state)", async () => {
    const own = await openTestChain(tempDir());
    const c = await newClient(own);
    const order = keyOf(`before-restart-${own.dir}`);
    await own.vault.fund(c.address, 5_000_000n, keyOf(`fund-${own.dir}`));
    await own.vault.lock(order, c.address, 1_000_000n);
    const released = await own.vault.release(order);
    await closeTestChain(own);
    const chain = await startDevChain({ dataDir: join(own.dir, "node") });
    const store = await openTestStore(tempDir());
    const vault = await openEvmVault({ rpcUrl: chain.rpcUrl, operatorKey: chain.operatorKey, store, faucet: true, devChain: chain, contracts: { vault: own.vault.info().contracts.vault } });
    try {
      expect(await vault.lockState(order)).toEqual({ kind: "released", txHash: released.txHash, expired: false });
    } finally {
      await vault.close();
      await chain.stop();
      await store.close();
    }
  });

  it("is approved at start by its treasury when that is the operator, so a sell's proceeds are paid from it", async () => {
    const address = await deployVault(vaultBytecode);
    const vault = await open({ store: await openTestStore(tempDir()), contracts: { vault: address } });
    try {
      const c = await newClient(t);
      await vault.fund(c.address, 10_000_000n, keyOf(`named-${address}`));
      const tokenId = sotTokenId(`named-${address}`, "YES");
      const [buy, sell] = [keyOf(`buy-${address}`), keyOf(`sell-${address}`)];
      await vault.lock(buy, c.address, 5_000_000n);
      await vault.settle(buy, 5_000_000n, { tokenId, shares: 10_000_000n });
      await vault.escrow(sell, c.address, { tokenId, shares: 10_000_000n });
      await vault.settleSell(sell, 10_000_000n, 6_000_000n);
      expect(await vault.balanceOf(c.address)).toEqual({ available: 11_000_000n, locked: 0n });
      expect(await vault.sotBalance(c.address, tokenId)).toBe(0n);
    } finally {
      await vault.close();
    }
  });

  it("stops the start, saying who must approve it, when its treasury is another address that has not approved it: no sell or redemption could be paid", async () => {
    const address = await deployVault(vaultBytecode, undefined, undefined, DEPLOYER);
    const usdc = t.vault.info().contracts.usdc;
    await expect(named(address)).rejects.toThrow(
      `VAULT_ADDRESS ${address}: its treasury ${getAddress(DEPLOYER)} has not approved it to take USDC ${usdc}, which pays sells' proceeds and redemptions: send USDC.approve(${address}, amount) from ${getAddress(DEPLOYER)}, then start again`,
    );
    await fromDeployer({ to: usdc, data: encodeFunctionData({ abi: testUSDCAbi, functionName: "approve", args: [address, 1_000_000_000n] }) });
    const vault = await named(address);
    await vault.close();
  });

  it("stops the start, naming the address, when it is an older Vault whose creditDeposit takes other arguments: every deposit's credit would revert", async () => {
    const address = await deployVault(vaultBeforeTransferBlocks());
    await expect(named(address)).rejects.toThrow(new RegExp(`VAULT_ADDRESS ${address}: .*not the Vault of this version`));
  });

  it("stops the start, naming both addresses, when its operator is not OPERATOR_PRIVATE_KEY's: every lock, credit and withdrawal would revert OnlyOperator", async () => {
    const address = await deployVault(vaultBytecode, DEPLOYER);
    await expect(named(address)).rejects.toThrow(
      new RegExp(`VAULT_ADDRESS ${address}: its operator is ${getAddress(DEPLOYER)}, not OPERATOR_PRIVATE_KEY's address ${t.vault.info().operator}`),
    );
  });

  it("stops the start when its USDC counts in other decimals than USDC's 6", async () => {
    const wide = await wideToken();
    const address = await deployVault(vaultBytecode, undefined, wide);
    await expect(named(address)).rejects.toThrow(`VAULT_ADDRESS ${address}: its USDC ${wide}: the token there counts in 18 decimals, not USDC's 6`);
  });

  it("stops the start when USDC_ADDRESS names another token than its USDC", async () => {
    const address = await deployVault(vaultBytecode);
    const other = getAddress("0x000000000000000000000000000000000000c0de");
    await expect(open({ store: await openTestStore(tempDir()), faucet: false, contracts: { vault: address, usdc: other } })).rejects.toThrow(
      `USDC_ADDRESS ${other} is not the USDC of the Vault in use, ${address}, which holds ${t.vault.info().contracts.usdc}`,
    );
  });

  it("stops the start when it names another contract, or no contract", async () => {
    const usdc = t.vault.info().contracts.usdc;
    await expect(named(usdc)).rejects.toThrow(new RegExp(`VAULT_ADDRESS ${usdc}: .*not the Vault of this version`));
    const nothing = getAddress("0x000000000000000000000000000000000000c0de");
    await expect(named(nothing)).rejects.toThrow(new RegExp(`VAULT_ADDRESS ${nothing}: chain 31337 has no contract there`));
  });
});

describe("VAULT_ADDRESS and USDC_ADDRESS", () => {
  it("are refused at start, by name, when not an address, or mixed-case with a checksum that fails (a mistyped character)", () => {
    const good = "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720";
    expect(contractsFromEnv({ VAULT_ADDRESS: good.toLowerCase(), USDC_ADDRESS: good })).toEqual({ vault: good, usdc: good });
    const typo = good.replace("a79720", "a79721");
    for (const name of ["VAULT_ADDRESS", "USDC_ADDRESS"]) {
      for (const raw of ["0x123", typo, "a0Ee7A142d267C1f36714E4a8F75612F20a79720"]) {
        expect(() => contractsFromEnv({ [name]: raw })).toThrow(`${name} must be an address`);
      }
    }
  });
});
