// The Vault port on an EVM chain through viem: reads are eth_calls, writes go through the group-commit
// sender as the operator. The same code serves the embedded dev chain and any other EVM chain.
import { createPublicClient, decodeEventLog, encodeEventTopics, encodeFunctionData, http, type Abi, type Hex, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { positionTokenAbi, testUSDCAbi, vaultAbi } from "../../contracts/artifacts.ts";
import type { Micro, ShareMicro } from "../../domain/money.ts";
import { DEFAULT_RPC_TIMEOUT_MS, JsonRpc } from "../rpc.ts";
import {
  REDEEM_MAX_ITEMS,
  VaultTxError,
  type Address,
  type ChainInfo,
  type EscrowState,
  type Hex32,
  type Ledger,
  type LockState,
  type LoggedAt,
  type RedemptionItem,
  type TxRef,
  type Vault,
} from "../vault.ts";
import { ensureContracts, type ContractOverrides, type Contracts } from "./deployment.ts";
import { loggedAt, readLedger } from "./ledger.ts";
import { LogReader } from "./logs.ts";
import { storeNonceBook, type ChainStore } from "./nonce-book.ts";
import { VaultBatcher, type VaultCall } from "./batcher.ts";
import { TxSender, rpcSubmit, type Submit, type TxObserver } from "./sender.ts";

export interface EvmVaultOptions {
  rpcUrl: string;
  operatorKey: Hex;
  /**
   * Where the contracts' deployment and the operator's nonces are recorded: the server's store, so every
   * instance on it uses the same contracts and never takes a nonce another one took.
   */
  store: ChainStore;
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
  /**
   * Seconds from a lock to the deadline after which anyone may expire it (default one day). Built into a
   * Vault when it is deployed: an existing deployment keeps its own, which `info().lockTtlSeconds` tells.
   */
  lockTtlSeconds?: number;
  /** Blocks per eth_getLogs range (default 10 000): providers refuse larger ranges. */
  logRangeBlocks?: number;
  /** How long one JSON-RPC request may take before its outcome counts as unknown (default 15 s), for reads and writes alike. */
  rpcTimeoutMs?: number;
  /** Told of the operator's transactions and batches, for /metrics. */
  txObserver?: TxObserver;
  /** The most gas one Vault.batch transaction may ask for (default 15 M); more calls go as several transactions. */
  batchGas?: bigint;
}

/** Gas limits, about twice what each call was measured to use (docs/chain.md), room for an ERC-1155 receiver hook on settle. */
const GAS = {
  lock: 150_000n,
  settle: 300_000n,
  release: 100_000n,
  escrow: 200_000n,
  settleSell: 200_000n,
  releaseEscrow: 100_000n,
  drip: 250_000n,
} as const;
/** A redeem's gas: the transaction and the treasury's one transfer, then each item's burn and credit. */
const REDEEM_GAS = { base: 100_000n, item: 90_000n } as const;
const DAY = 86_400;
/** topic0 of the events that end a lock, and of those that end an escrow. */
const ENDINGS = (["Settled", "Released", "Expired"] as const).map((eventName) => encodeEventTopics({ abi: vaultAbi, eventName })[0]);
const ESCROW_ENDINGS = (["SellSettled", "EscrowReleased"] as const).map((eventName) => encodeEventTopics({ abi: vaultAbi, eventName })[0]);
const LOCK_STATES = ["none", "locked", "settled", "released"] as const;
const ESCROW_STATES = ["none", "escrowed", "settled", "released"] as const;
const ERROR_ABI = [...vaultAbi, ...testUSDCAbi, ...positionTokenAbi] as Abi;

export async function openEvmVault(opts: EvmVaultOptions): Promise<Vault> {
  const timeout = opts.rpcTimeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
  const rpc = new JsonRpc(opts.rpcUrl, timeout);
  const chainId = Number(await rpc.call<Hex>("eth_chainId"));
  // A dev chain started afresh keeps its id but not its genesis block: its nonces start again at 0.
  const genesis = (await rpc.call<{ hash: Hex }>("eth_getBlockByNumber", ["0x0", false])).hash;
  const account = privateKeyToAccount(opts.operatorKey);
  const sender = new TxSender({
    rpc,
    account,
    chainId,
    submit: opts.devChain?.submit ?? rpcSubmit(rpc),
    errorAbi: ERROR_ABI,
    // The embedded chain's journal would do for it alone (it holds every batch before it is sent and is
    // replayed at start), but one way for every chain is simpler, and the reservation costs one row write.
    nonces: storeNonceBook(opts.store, { chainId, genesis, operator: account.address }),
    ...(opts.receiptPollMs !== undefined ? { receiptPollMs: opts.receiptPollMs } : {}),
    ...(opts.txObserver ? { observer: opts.txObserver } : {}),
  });
  const { contracts, fromBlock, lockTtlSeconds } = await ensureContracts(
    { rpc, sender, chainId, operator: account.address, store: opts.store, faucet: opts.faucet, lockTtlSeconds: opts.lockTtlSeconds ?? DAY },
    opts.contracts ?? {},
  );
  // JSON-RPC batching folds the reads of many concurrent orders into few HTTP requests.
  const client = createPublicClient({ transport: http(opts.rpcUrl, { batch: { batchSize: 500, wait: 0 }, timeout }) });
  const info: ChainInfo = { chainId, rpcUrl: opts.rpcUrl, contracts, operator: account.address, faucet: opts.faucet, lockTtlSeconds };
  const logs = new LogReader(rpc, fromBlock, BigInt(opts.logRangeBlocks ?? 10_000));
  const batcher = new VaultBatcher({
    sender,
    vault: contracts.vault,
    ...(opts.batchGas !== undefined ? { maxGas: opts.batchGas } : {}),
    ...(opts.txObserver ? { observer: opts.txObserver } : {}),
  });
  return new EvmVault(info, client, sender, batcher, logs);
}

class EvmVault implements Vault {
  private closed = false;
  private readonly c: Contracts;

  constructor(
    private readonly chain: ChainInfo,
    private readonly client: PublicClient,
    private readonly sender: TxSender,
    private readonly batcher: VaultBatcher,
    private readonly logs: LogReader,
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
    return this.vaultCall("lock", orderId, encodeFunctionData({ abi: vaultAbi, functionName: "lock", args: [orderId, account, amount] }));
  }

  settle(orderId: Hex32, spent: Micro, position: { tokenId: bigint; shares: ShareMicro }): Promise<TxRef> {
    const args = [orderId, spent, position.tokenId, position.shares] as const;
    return this.vaultCall("settle", orderId, encodeFunctionData({ abi: vaultAbi, functionName: "settle", args }));
  }

  release(orderId: Hex32): Promise<TxRef> {
    return this.vaultCall("release", orderId, encodeFunctionData({ abi: vaultAbi, functionName: "release", args: [orderId] }));
  }

  async lockState(orderId: Hex32): Promise<LockState> {
    const [, amount, deadline, state] = await this.client.readContract({
      address: this.c.vault,
      abi: vaultAbi,
      functionName: "lockOf",
      args: [orderId],
    });
    const kind = LOCK_STATES[state];
    if (kind === undefined) throw new Error(`Vault.lockOf returned unknown state ${state}`);
    if (kind === "none") return { kind };
    if (kind === "locked") return { kind, amount, deadline: Number(deadline) };
    // Ended: the one Settled, Released or Expired event of this order says by which transaction.
    const log = await this.logs.newest({ address: this.c.vault, topics: [ENDINGS, orderId] });
    if (!log) throw new Error(`Vault says order ${orderId} is ${kind} but logged no ending for it`);
    const e = decodeEventLog({ abi: vaultAbi, data: log.data, topics: log.topics });
    if (e.eventName === "Settled") {
      return { kind: "settled", txHash: log.transactionHash, spent: e.args.spent, shares: e.args.shares, tokenId: e.args.tokenId };
    }
    return { kind: "released", txHash: log.transactionHash, expired: e.eventName === "Expired" };
  }

  escrow(orderId: Hex32, account: Address, position: { tokenId: bigint; shares: ShareMicro }): Promise<TxRef> {
    const args = [orderId, account, position.tokenId, position.shares] as const;
    return this.vaultCall("escrow", orderId, encodeFunctionData({ abi: vaultAbi, functionName: "escrow", args }));
  }

  settleSell(orderId: Hex32, sold: ShareMicro, proceeds: Micro): Promise<TxRef> {
    return this.vaultCall("settleSell", orderId, encodeFunctionData({ abi: vaultAbi, functionName: "settleSell", args: [orderId, sold, proceeds] }));
  }

  releaseEscrow(orderId: Hex32): Promise<TxRef> {
    return this.vaultCall("releaseEscrow", orderId, encodeFunctionData({ abi: vaultAbi, functionName: "releaseEscrow", args: [orderId] }));
  }

  async escrowState(orderId: Hex32): Promise<EscrowState> {
    const [account, tokenId, shares, state] = await this.client.readContract({
      address: this.c.vault,
      abi: vaultAbi,
      functionName: "escrowOf",
      args: [orderId],
    });
    const kind = ESCROW_STATES[state];
    if (kind === undefined) throw new Error(`Vault.escrowOf returned unknown state ${state}`);
    if (kind === "none") return { kind };
    if (kind === "escrowed") return { kind, account, tokenId, shares };
    // Ended: the one SellSettled or EscrowReleased event of this order says by which transaction.
    const log = await this.logs.newest({ address: this.c.vault, topics: [ESCROW_ENDINGS, orderId] });
    if (!log) throw new Error(`Vault says escrow ${orderId} is ${kind} but logged no ending for it`);
    const e = decodeEventLog({ abi: vaultAbi, data: log.data, topics: log.topics });
    if (e.eventName === "SellSettled") return { kind: "settled", txHash: log.transactionHash, sold: e.args.sold, proceeds: e.args.proceeds };
    return { kind: "released", txHash: log.transactionHash };
  }

  redeem(items: readonly RedemptionItem[]): Promise<TxRef> {
    if (items.length === 0 || items.length > REDEEM_MAX_ITEMS) {
      return Promise.reject(new Error(`Vault.redeem takes 1 to ${REDEEM_MAX_ITEMS} items, not ${items.length}`));
    }
    const args = [items.map((i) => ({ key: i.key, client: i.account, tokenId: i.tokenId, shares: i.shares, payout: i.payout }))] as const;
    const gas = REDEEM_GAS.base + REDEEM_GAS.item * BigInt(items.length);
    return this.tx("Vault.redeem", this.c.vault, gas, encodeFunctionData({ abi: vaultAbi, functionName: "redeem", args }));
  }

  async redemption(key: Hex32): Promise<({ shares: ShareMicro; payout: Micro } & LoggedAt) | null> {
    const done = await this.client.readContract({ address: this.c.vault, abi: vaultAbi, functionName: "redeemed", args: [key] });
    if (!done) return null;
    const log = await this.logs.newest({ address: this.c.vault, topics: encodeEventTopics({ abi: vaultAbi, eventName: "Redeemed", args: { key } }) });
    if (!log) throw new Error(`Vault says key ${key} was redeemed but logged no Redeemed for it`);
    const e = decodeEventLog({ abi: vaultAbi, eventName: "Redeemed", data: log.data, topics: log.topics });
    return { shares: e.args.shares, payout: e.args.payout, ...loggedAt(log) };
  }

  pendingTransactions(): Promise<number> {
    return this.sender.pendingCount();
  }

  sotBalance(account: Address, tokenId: bigint): Promise<bigint> {
    return this.client.readContract({
      address: this.c.sot,
      abi: positionTokenAbi,
      functionName: "balanceOf",
      args: [account, tokenId],
    });
  }

  async fund(account: Address, amount: Micro, key: Hex32): Promise<TxRef> {
    if (!this.chain.faucet) throw new Error("fund is only available on the dev chain (faucet)");
    const data = encodeFunctionData({ abi: testUSDCAbi, functionName: "drip", args: [key, this.c.vault, account, amount] });
    try {
      return await this.tx("TestUSDC.drip", this.c.usdc, GAS.drip, data);
    } catch (e) {
      if (!(e instanceof VaultTxError && e.reason === "AlreadyDripped")) throw e;
      const log = await this.logs.newest({ address: this.c.usdc, topics: encodeEventTopics({ abi: testUSDCAbi, eventName: "Dripped", args: { key } }) });
      if (!log) throw new Error(`the faucet says key ${key} was dripped but logged no Dripped for it`);
      return loggedAt(log);
    }
  }

  ledger(): Promise<Ledger> {
    return readLedger(this.chain, this.client, this.logs);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.batcher.idle();
    await this.sender.idle();
  }

  /** Locks, settles and releases, and sells' escrow calls, go in batches: one transaction carries many orders' calls, each answered on its own. */
  private vaultCall(fn: VaultCall, orderId: Hex32, data: Hex): Promise<TxRef> {
    if (this.closed) return Promise.reject(new Error("the vault is closed"));
    return this.batcher.call({ fn, orderId, data, gas: GAS[fn] });
  }

  private async tx(label: string, to: Address, gas: bigint, data: Hex): Promise<TxRef> {
    if (this.closed) throw new Error("the vault is closed");
    const m = await this.sender.send({ label, to, data, gas });
    return { txHash: m.txHash, blockNumber: m.blockNumber };
  }
}
