// The Vault port on an EVM chain through viem: reads are eth_calls, writes go through the group-commit
// sender as the operator. The same code serves the embedded dev chain and any other EVM chain.
import { createPublicClient, encodeFunctionData, http, type Abi, type Hex, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { positionTokenAbi, testUSDCAbi, vaultAbi } from "../../contracts/artifacts.ts";
import type { Micro, ShareMicro } from "../../domain/money.ts";
import { JsonRpc } from "../rpc.ts";
import type { Address, ChainInfo, Hex32, LockState, TxRef, Vault } from "../vault.ts";
import { ensureContracts, type ContractOverrides, type Contracts } from "./deployment.ts";
import { TxSender, rpcSubmit, type Submit } from "./sender.ts";

export interface EvmVaultOptions {
  rpcUrl: string;
  operatorKey: Hex;
  /** The server's data directory: the deployment is recorded in `<dataDir>/chain/deployment.json`. */
  dataDir: string;
  /** The embedded dev chain: deploys a test USDC and lets `fund` mint it. */
  faucet: boolean;
  /**
   * The embedded dev chain, when the vault runs on it: its `submit` journals each batch and mines it.
   * Without it, transactions are sent as they are and the chain's own blocks include them.
   */
  devChain?: { submit: Submit } | undefined;
  contracts?: ContractOverrides;
  /** How often to look for receipts on a chain that mines by itself (ms, default 250: viem's 4 s is far too slow here). */
  receiptPollMs?: number;
}

/** Gas limits, about twice what each call was measured to use (docs/chain.md), room for an ERC-1155 receiver hook on settle. */
const GAS = { lock: 150_000n, settle: 300_000n, release: 100_000n, depositFor: 150_000n, mint: 100_000n } as const;
const LOCK_STATES = ["none", "locked", "settled", "released"] as const;
const ERROR_ABI = [...vaultAbi, ...testUSDCAbi, ...positionTokenAbi] as Abi;

export async function openEvmVault(opts: EvmVaultOptions): Promise<Vault> {
  const rpc = new JsonRpc(opts.rpcUrl);
  const chainId = Number(await rpc.call<Hex>("eth_chainId"));
  const account = privateKeyToAccount(opts.operatorKey);
  const sender = new TxSender({
    rpc,
    account,
    chainId,
    submit: opts.devChain?.submit ?? rpcSubmit(rpc),
    errorAbi: ERROR_ABI,
    ...(opts.receiptPollMs !== undefined ? { receiptPollMs: opts.receiptPollMs } : {}),
  });
  const contracts = await ensureContracts(
    { rpc, sender, chainId, operator: account.address, dataDir: opts.dataDir, faucet: opts.faucet },
    opts.contracts ?? {},
  );
  // JSON-RPC batching folds the reads of many concurrent orders into few HTTP requests.
  const client = createPublicClient({ transport: http(opts.rpcUrl, { batch: { batchSize: 500, wait: 0 } }) });
  const info: ChainInfo = { chainId, rpcUrl: opts.rpcUrl, contracts, operator: account.address, faucet: opts.faucet };
  return new EvmVault(info, client, sender);
}

class EvmVault implements Vault {
  private closed = false;
  private readonly c: Contracts;

  constructor(
    private readonly chain: ChainInfo,
    private readonly client: PublicClient,
    private readonly sender: TxSender,
  ) {
    this.c = chain.contracts;
  }

  info(): ChainInfo {
    return this.chain;
  }

  async balanceOf(account: Address): Promise<{ available: Micro; locked: Micro }> {
    const [available, locked] = await Promise.all([
      this.client.readContract({ address: this.c.vault, abi: vaultAbi, functionName: "available", args: [account] }),
      this.client.readContract({ address: this.c.vault, abi: vaultAbi, functionName: "locked", args: [account] }),
    ]);
    return { available, locked };
  }

  lock(orderId: Hex32, account: Address, amount: Micro): Promise<TxRef> {
    return this.vaultTx("lock", GAS.lock, encodeFunctionData({ abi: vaultAbi, functionName: "lock", args: [orderId, account, amount] }));
  }

  settle(orderId: Hex32, spent: Micro, position: { tokenId: bigint; shares: ShareMicro }): Promise<TxRef> {
    const args = [orderId, spent, position.tokenId, position.shares] as const;
    return this.vaultTx("settle", GAS.settle, encodeFunctionData({ abi: vaultAbi, functionName: "settle", args }));
  }

  release(orderId: Hex32): Promise<TxRef> {
    return this.vaultTx("release", GAS.release, encodeFunctionData({ abi: vaultAbi, functionName: "release", args: [orderId] }));
  }

  async lockState(orderId: Hex32): Promise<LockState> {
    const [, amount, state] = await this.client.readContract({
      address: this.c.vault,
      abi: vaultAbi,
      functionName: "lockOf",
      args: [orderId],
    });
    const kind = LOCK_STATES[state];
    if (kind === undefined) throw new Error(`Vault.lockOf returned unknown state ${state}`);
    return kind === "locked" ? { kind, amount } : { kind };
  }

  sotBalance(account: Address, tokenId: bigint): Promise<bigint> {
    return this.client.readContract({
      address: this.c.sot,
      abi: positionTokenAbi,
      functionName: "balanceOf",
      args: [account, tokenId],
    });
  }

  async fund(account: Address, amount: Micro): Promise<TxRef> {
    if (!this.chain.faucet) throw new Error("fund is only available on the dev chain (faucet)");
    await this.tx("TestUSDC.mint", this.c.usdc, GAS.mint, encodeFunctionData({
      abi: testUSDCAbi,
      functionName: "mint",
      args: [this.chain.operator, amount],
    }));
    return this.vaultTx("depositFor", GAS.depositFor, encodeFunctionData({ abi: vaultAbi, functionName: "depositFor", args: [account, amount] }));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.sender.idle();
  }

  private vaultTx(fn: string, gas: bigint, data: Hex): Promise<TxRef> {
    return this.tx(`Vault.${fn}`, this.c.vault, gas, data);
  }

  private async tx(label: string, to: Address, gas: bigint, data: Hex): Promise<TxRef> {
    if (this.closed) throw new Error("the vault is closed");
    const m = await this.sender.send({ label, to, data, gas });
    return { txHash: m.txHash, blockNumber: m.blockNumber };
  }
}
