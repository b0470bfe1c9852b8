// Shared by the vault tests and the crash fixture: a dev chain in a temp dir with the vault on it,
// and clients that sign their own transactions, as a user's wallet would.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPublicClient, createWalletClient, defineChain, http, toHex, type Hex } from "viem";
import { keccak256 } from "../evm/keccak.ts";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { testUSDCAbi, vaultAbi } from "../contracts/artifacts.ts";
import { openSqliteStore } from "../store/sqlite/sqlite-store.ts";
import type { Store } from "../store/store.ts";
import { startDevChain, type DevChain } from "./devnode/devchain.ts";
import { openEvmVault, type EvmVaultOptions } from "./evm/evm-vault.ts";
import { JsonRpc } from "./rpc.ts";
import type { Address, Hex32, Vault } from "./vault.ts";

export interface TestChain {
  dir: string;
  chain: DevChain;
  vault: Vault;
  rpc: JsonRpc;
  /** Where the vault records its deployment and nonces: SQLite in `dir`, as the embedded server keeps it. */
  store: Store;
}

/** A 32-byte key (order id, faucet key) named by a label. */
export function keyOf(label: string): Hex32 {
  return keccak256(toHex(label));
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "crossfill-chain-"));
}

/** The store of a test chain's directory: the same database each time the directory is opened. */
export async function openTestStore(dir: string): Promise<Store> {
  const store = await openSqliteStore(join(dir, "crossfill.db"));
  await store.migrate();
  return store;
}

export async function openTestChain(
  dir: string,
  opts: { snapshotEvery?: number } & Pick<EvmVaultOptions, "lockTtlSeconds" | "logRangeBlocks" | "txObserver" | "confirmations"> = {},
): Promise<TestChain> {
  const { snapshotEvery, ...vaultOpts } = opts;
  const chain = await startDevChain({ dataDir: join(dir, "node"), ...(snapshotEvery ? { snapshotEvery } : {}) });
  const store = await openTestStore(dir);
  const vault = await openEvmVault({
    rpcUrl: chain.rpcUrl,
    operatorKey: chain.operatorKey,
    store,
    faucet: true,
    devChain: chain,
    ...vaultOpts,
  });
  return { dir, chain, vault, rpc: new JsonRpc(chain.rpcUrl), store };
}

/** Closes what openTestChain opened: the vault, then the chain and the store. */
export async function closeTestChain(t: TestChain): Promise<void> {
  await t.vault.close();
  await t.chain.stop();
  await t.store.close();
}

/** A user's wallet on the dev chain: its own key, some ETH for gas, direct calls to the contracts. */
export async function newClient(t: TestChain) {
  const account = privateKeyToAccount(generatePrivateKey());
  await t.rpc.call("anvil_setBalance", [account.address, "0xde0b6b3a7640000"]);
  const chain = defineChain({
    id: t.chain.chainId,
    name: "dev",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [t.chain.rpcUrl] } },
  });
  const wallet = createWalletClient({ account, chain, transport: http(t.chain.rpcUrl) });
  const reader = createPublicClient({ chain, transport: http(t.chain.rpcUrl) });
  const { vault, usdc } = t.vault.info().contracts;
  /** Sends and mines at once: the dev chain otherwise mines strays within a second. */
  const mined = async (hash: Promise<Hex>) => {
    const h = await hash;
    await t.rpc.call("evm_mine");
    const r = await reader.waitForTransactionReceipt({ hash: h, pollingInterval: 20 });
    if (r.status !== "success") throw new Error(`client transaction reverted: ${h}`);
  };
  const approveVault = (amount: bigint) => mined(wallet.writeContract({ address: usdc, abi: testUSDCAbi, functionName: "approve", args: [vault, amount] }));
  return {
    address: account.address as Address,
    reader,
    /** Anyone may expire a lock past its deadline: here a client does. */
    expire: (orderId: Hex32) => mined(wallet.writeContract({ address: vault, abi: vaultAbi, functionName: "expire", args: [orderId] })),
    /** Only the client may expire its escrow past its deadline. */
    expireEscrow: (orderId: Hex32) => mined(wallet.writeContract({ address: vault, abi: vaultAbi, functionName: "expireEscrow", args: [orderId] })),
    withdraw: (amount: bigint) =>
      mined(wallet.writeContract({ address: vault, abi: vaultAbi, functionName: "withdraw", args: [amount] })),
    approveVault,
    deposit: async (amount: bigint) => {
      await approveVault(amount);
      await mined(wallet.writeContract({ address: vault, abi: vaultAbi, functionName: "deposit", args: [amount] }));
    },
    usdcBalance: () =>
      reader.readContract({ address: usdc, abi: testUSDCAbi, functionName: "balanceOf", args: [account.address] }),
  };
}
