// The Vault port on an EVM chain through viem: reads are eth_calls, writes go through the group-commit
// sender as the operator. The same code serves the embedded dev chain and any other EVM chain.
import { BaseError, ContractFunctionRevertedError, createPublicClient, decodeEventLog, decodeFunctionResult, encodeEventTopics, encodeFunctionData, http, parseSignature, toHex, zeroHash, type Abi, type Hex, type PublicClient } from "viem";
import { evmAccount } from "../../evm/account.ts";
import { positionTokenAbi, testUSDCAbi, vaultAbi } from "../../contracts/artifacts.ts";
import type { Micro, ShareMicro } from "../../domain/money.ts";
import { DEFAULT_RPC_TIMEOUT_MS, JsonRpc, resultOf } from "../rpc.ts";
import {
  REDEEM_MAX_ITEMS,
  VaultTxError,
  type Address,
  type ChainInfo,
  type DepositState,
  type DigestSigner,
  type EscrowState,
  type Hex32,
  type HoldEvents,
  type Ledger,
  type LockState,
  type LoggedAt,
  type RedemptionItem,
  type TxRef,
  type UsdcTransfer,
  type Vault,
  type WithdrawalState,
} from "../vault.ts";
import { ensureContracts, type ContractOverrides, type Contracts } from "./deployment.ts";
import { asTransfer, permitDigest, transferFilter } from "./funds.ts";
import { loggedAt, readHolds, readLedger } from "./ledger.ts";
import { LogReader, type RawLog } from "./logs.ts";
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
  /** How deep a failed transaction's block must be before it counts as not made (default 0): DEPOSIT_CONFIRMATIONS. */
  confirmations?: number;
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
  withdrawTo: 150_000n,
  creditDeposit: 250_000n,
} as const;
/** A redeem's gas: the transaction and the treasury's one transfer, then each item's burn and credit. */
const REDEEM_GAS = { base: 100_000n, item: 90_000n } as const;
/** How long a deposit's permit stays valid, from the latest block's time (the chain's clock, not ours). */
const PERMIT_SECONDS = 3_600n;
/**
 * How far under the head a deposit's transfer block may be for its credit to check it (`blockhash` reaches 256 blocks,
 * less room for the blocks mined before the credit lands); deeper, a zero hash checks nothing.
 */
const TRANSFER_BLOCK_CHECKED = 250n;
/** Balances read by one balanceOfBatch: ~2,600 gas each (a cold storage read), well within a node's gas cap on eth_call. */
const SOT_BALANCES_PER_CALL = 500;
const DAY = 86_400;
/** topic0 of the events that end a lock, and of those that end an escrow. */
const ENDINGS = (["Settled", "Released", "Expired"] as const).map((eventName) => encodeEventTopics({ abi: vaultAbi, eventName })[0]);
const ESCROW_ENDINGS = (["SellSettled", "EscrowReleased", "EscrowExpired"] as const).map((eventName) => encodeEventTopics({ abi: vaultAbi, eventName })[0]);
/** topic0 of the events that open a lock or an escrow. */
const HOLDS = (["Locked", "Escrowed"] as const).map((eventName) => encodeEventTopics({ abi: vaultAbi, eventName })[0]);
const LOCK_STATES = ["none", "locked", "settled", "released"] as const;
const ESCROW_STATES = ["none", "escrowed", "settled", "released"] as const;
const ERROR_ABI = [...vaultAbi, ...testUSDCAbi, ...positionTokenAbi] as Abi;

export async function openEvmVault(opts: EvmVaultOptions): Promise<Vault> {
  const timeout = opts.rpcTimeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
  const rpc = new JsonRpc(opts.rpcUrl, timeout);
  const chainId = Number(await rpc.call<Hex>("eth_chainId"));
  // A dev chain started afresh keeps its id but not its genesis block: its nonces start again at 0.
  const genesis = (await rpc.call<{ hash: Hex }>("eth_getBlockByNumber", ["0x0", false])).hash;
  const account = evmAccount(opts.operatorKey);
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
    ...(opts.confirmations !== undefined ? { confirmations: opts.confirmations } : {}),
    ...(opts.txObserver ? { observer: opts.txObserver } : {}),
  });
  const { contracts, treasury, fromBlock, lockTtlSeconds } = await ensureContracts(
    { rpc, sender, chainId, operator: account.address, store: opts.store, faucet: opts.faucet, lockTtlSeconds: opts.lockTtlSeconds ?? DAY },
    opts.contracts ?? {},
  );
  // JSON-RPC batching folds the reads of many concurrent orders into few HTTP requests. viem names its URL in
  // every error, which the logs print: it is given the origin, and its requests go to the URL whole.
  const { origin } = new URL(opts.rpcUrl);
  const client = createPublicClient({ transport: http(origin, { batch: { batchSize: 500, wait: 0 }, timeout, fetchFn: (_url, init) => fetch(opts.rpcUrl, init) }) });
  const info: ChainInfo = { chainId, rpcUrl: origin, contracts, operator: account.address, treasury, faucet: opts.faucet, lockTtlSeconds, deployedAt: fromBlock };
  const logs = new LogReader(rpc, fromBlock, BigInt(opts.logRangeBlocks ?? 10_000));
  const head = BigInt(await rpc.call<Hex>("eth_blockNumber"));
  const batcher = new VaultBatcher({
    sender,
    vault: contracts.vault,
    ...(opts.batchGas !== undefined ? { maxGas: opts.batchGas } : {}),
    ...(opts.txObserver ? { observer: opts.txObserver } : {}),
  });
  // A dev chain started afresh deploys the contracts at the same addresses: its genesis tells its record from the old chain's.
  const holdsBlock = { store: opts.store, name: `holds:${chainId}:${genesis}:${contracts.vault.toLowerCase()}` };
  return new EvmVault(info, client, rpc, sender, batcher, logs, holdsBlock, head);
}

class EvmVault implements Vault {
  private closed = false;
  private readonly c: Contracts;
  /** The last block this vault recorded in `holdsBlock`, and its write. */
  private recorded: { block: bigint; write: Promise<void> } = { block: 0n, write: Promise.resolve() };

  constructor(
    private readonly chain: ChainInfo,
    private readonly client: PublicClient,
    private readonly rpc: JsonRpc,
    private readonly sender: TxSender,
    private readonly batcher: VaultBatcher,
    private readonly logs: LogReader,
    /**
     * The store's record (a chain cursor by this name) of the highest block a lock, settle or release, or an escrow call,
     * of any instance landed in, with that transaction's hash: every hold is in a block at or under it once its call was answered.
     */
    private readonly holdsBlock: { store: ChainStore; name: string },
    /**
     * The highest block a node has shown this vault (a head read, at the start and since; a block its own transactions
     * landed in): a node whose head is under it is behind, one of a pool behind CHAIN_RPC_URL.
     */
    private seen: bigint,
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
    const read = await this.holdRead(encodeFunctionData({ abi: vaultAbi, functionName: "lockOf", args: [orderId] }));
    const [, amount, deadline, state] = decodeFunctionResult({ abi: vaultAbi, functionName: "lockOf", data: read.result });
    const kind = LOCK_STATES[state];
    if (kind === undefined) throw new Error(`Vault.lockOf returned unknown state ${state}`);
    if (kind === "none") return this.none(read.head, orderId);
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

  async heldBy(orderId: Hex32): Promise<Hex32 | null> {
    const log = await this.logs.newest({ address: this.c.vault, topics: [HOLDS, orderId] });
    return log ? log.transactionHash : null;
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
    const read = await this.holdRead(encodeFunctionData({ abi: vaultAbi, functionName: "escrowOf", args: [orderId] }));
    const [account, tokenId, shares, deadline, state] = decodeFunctionResult({ abi: vaultAbi, functionName: "escrowOf", data: read.result });
    const kind = ESCROW_STATES[state];
    if (kind === undefined) throw new Error(`Vault.escrowOf returned unknown state ${state}`);
    if (kind === "none") return this.none(read.head, orderId);
    if (kind === "escrowed") return { kind, account, tokenId, shares, deadline: Number(deadline) };
    // Ended: the one SellSettled, EscrowReleased or EscrowExpired event of this order says by which transaction.
    const log = await this.logs.newest({ address: this.c.vault, topics: [ESCROW_ENDINGS, orderId] });
    if (!log) throw new Error(`Vault says escrow ${orderId} is ${kind} but logged no ending for it`);
    const e = decodeEventLog({ abi: vaultAbi, data: log.data, topics: log.topics });
    if (e.eventName === "SellSettled") return { kind: "settled", txHash: log.transactionHash, sold: e.args.sold, proceeds: e.args.proceeds };
    return { kind: "released", txHash: log.transactionHash, expired: e.eventName === "EscrowExpired" };
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

  async minedTransactions(block?: bigint): Promise<number> {
    return Number(await this.rpc.call<Hex>("eth_getTransactionCount", [this.chain.operator, block === undefined ? "latest" : toHex(block)]));
  }

  sotBalance(account: Address, tokenId: bigint): Promise<bigint> {
    return this.client.readContract({
      address: this.c.sot,
      abi: positionTokenAbi,
      functionName: "balanceOf",
      args: [account, tokenId],
    });
  }

  async sotBalances(holdings: readonly { account: Address; tokenId: bigint }[]): Promise<bigint[]> {
    const calls: Promise<readonly bigint[]>[] = [];
    for (let i = 0; i < holdings.length; i += SOT_BALANCES_PER_CALL) {
      const chunk = holdings.slice(i, i + SOT_BALANCES_PER_CALL);
      calls.push(
        this.client.readContract({ address: this.c.sot, abi: positionTokenAbi, functionName: "balanceOfBatch", args: [chunk.map((h) => h.account), chunk.map((h) => h.tokenId)] }),
      );
    }
    return (await Promise.all(calls)).flat();
  }

  async fund(account: Address, amount: Micro, key: Hex32): Promise<TxRef> {
    if (!this.chain.faucet) throw new Error("fund is only available on the dev chain (faucet)");
    const data = encodeFunctionData({ abi: testUSDCAbi, functionName: "drip", args: [key, this.c.vault, account, amount] });
    return this.once({ label: "TestUSDC.drip", to: this.c.usdc, gas: GAS.drip, data }, "AlreadyDripped", async () => {
      const log = await this.logs.newest({ address: this.c.usdc, topics: encodeEventTopics({ abi: testUSDCAbi, eventName: "Dripped", args: { key } }) });
      return log && loggedAt(log);
    });
  }

  async withdrawTo(withdrawalId: Hex32, account: Address, to: Address, amount: Micro): Promise<TxRef> {
    const data = encodeFunctionData({ abi: vaultAbi, functionName: "withdrawTo", args: [withdrawalId, account, to, amount] });
    return this.once({ label: "Vault.withdrawTo", to: this.c.vault, gas: GAS.withdrawTo, data }, "AlreadyWithdrawn", async () => {
      const state = await this.withdrawalState(withdrawalId);
      return state.kind === "paid" ? state : undefined;
    });
  }

  async withdrawalState(withdrawalId: Hex32): Promise<WithdrawalState> {
    const log = await this.endedBy("withdrawn", "WithdrawnTo", withdrawalId);
    if (!log) return { kind: "none" };
    const e = decodeEventLog({ abi: vaultAbi, eventName: "WithdrawnTo", data: log.data, topics: log.topics });
    return { kind: "paid", client: e.args.client, to: e.args.to, amount: e.args.amount, ...loggedAt(log) };
  }

  async transferRefusal(to: Address, amount: Micro): Promise<string | undefined> {
    try {
      const { result } = await this.client.simulateContract({ address: this.c.usdc, abi: testUSDCAbi, functionName: "transfer", args: [to, amount], account: this.c.vault });
      return result ? undefined : "its transfer returned false";
    } catch (e) {
      const revert = e instanceof BaseError ? e.walk((x) => x instanceof ContractFunctionRevertedError) : null;
      if (!(revert instanceof ContractFunctionRevertedError)) throw e;
      return revert.reason ?? revert.data?.errorName ?? (revert.signature ? `custom error ${revert.signature}` : revert.shortMessage);
    }
  }

  async creditDeposit(key: Hex32, account: Address, amount: Micro, transferBlock: { number: bigint; hash: Hex32 }, sign: DigestSigner): Promise<TxRef> {
    const usdc = { address: this.c.usdc, abi: testUSDCAbi } as const;
    const [domain, nonce, latest] = await Promise.all([
      this.client.readContract({ ...usdc, functionName: "DOMAIN_SEPARATOR" }),
      this.client.readContract({ ...usdc, functionName: "nonces", args: [account] }),
      this.client.getBlock({ blockTag: "latest" }),
    ]);
    const deadline = latest.timestamp + PERMIT_SECONDS;
    const sig = parseSignature(await sign(permitDigest(domain, { owner: account, spender: this.c.vault, value: amount, nonce, deadline })));
    const v = Number(sig.v ?? BigInt(sig.yParity + 27));
    const credit = (hash: Hex32) => {
      const data = encodeFunctionData({ abi: vaultAbi, functionName: "creditDeposit", args: [key, account, amount, transferBlock.number, hash, deadline, v, sig.r, sig.s] });
      return this.once({ label: "Vault.creditDeposit", to: this.c.vault, gas: GAS.creditDeposit, data }, "AlreadyCredited", async () => {
        const state = await this.depositState(key);
        return state.kind === "credited" ? state : undefined;
      });
    };
    if (latest.number - transferBlock.number >= TRANSFER_BLOCK_CHECKED) return credit(zeroHash);
    try {
      return await credit(transferBlock.hash);
    } catch (e) {
      // Refused while the chain still has the block as it was: this node's BLOCKHASH does not tell the block's hash (anvil
      // started from its saved state, before foundry-rs/foundry#15167, names blocks from before the start keccak256 of their
      // number), so the credit cannot be checked here and goes unchecked, as one deeper than BLOCKHASH reaches.
      if (!(e instanceof VaultTxError && e.reason === "TransferBlockReplaced" && (await this.blockHash(transferBlock.number)) === transferBlock.hash)) throw e;
      return credit(zeroHash);
    }
  }

  async depositState(key: Hex32): Promise<DepositState> {
    const log = await this.endedBy("credited", "DepositCredited", key);
    if (!log) return { kind: "none" };
    const e = decodeEventLog({ abi: vaultAbi, eventName: "DepositCredited", data: log.data, topics: log.topics });
    return { kind: "credited", client: e.args.client, amount: e.args.amount, ...loggedAt(log) };
  }

  async usdcTransfers(fromBlock: bigint, toBlock: bigint, toHash?: Hex32): Promise<UsdcTransfer[]> {
    if (fromBlock > toBlock) return [];
    const [found] = await this.logs.between([transferFilter(this.c.usdc)], fromBlock, toBlock, toHash);
    return found!
      .flatMap((log) => asTransfer(this.c.usdc, log) ?? [])
      .sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
  }

  async usdcTransfersOf(txHash: Hex32): Promise<UsdcTransfer[] | { failedIn: bigint } | undefined> {
    const receipt = await this.rpc.call<{ status: Hex; blockNumber: Hex; logs: (RawLog & { address: string })[] } | null>("eth_getTransactionReceipt", [txHash]);
    if (!receipt) return undefined;
    if (receipt.status !== "0x1") return { failedIn: BigInt(receipt.blockNumber) };
    return receipt.logs.flatMap((log) => asTransfer(this.c.usdc, log) ?? []);
  }

  async blockOf(txHash: Hex32): Promise<{ number: bigint; hash: Hex32 } | undefined> {
    const receipt = await this.rpc.call<{ status: Hex; blockNumber: Hex; blockHash: Hex32 } | null>("eth_getTransactionReceipt", [txHash]);
    if (!receipt || receipt.status !== "0x1") return undefined;
    return { number: BigInt(receipt.blockNumber), hash: receipt.blockHash };
  }

  async blockNumber(): Promise<bigint> {
    return this.saw(await this.client.getBlockNumber({ cacheTime: 0 }));
  }

  async blockTime(): Promise<number> {
    const block = await this.rpc.call<{ timestamp: Hex }>("eth_getBlockByNumber", ["latest", false]);
    return Number(BigInt(block.timestamp));
  }

  async blockHash(number: bigint): Promise<Hex32 | undefined> {
    const block = await this.rpc.call<{ hash: Hex } | null>("eth_getBlockByNumber", [toHex(number), false]);
    return block?.hash;
  }

  async blockHolds(number: bigint, txHash: Hex32): Promise<boolean | undefined> {
    const block = await this.rpc.call<{ transactions: Hex[] } | null>("eth_getBlockByNumber", [toHex(number), false]);
    return block ? block.transactions.some((t) => t.toLowerCase() === txHash.toLowerCase()) : undefined;
  }

  ledger(): Promise<Ledger> {
    return readLedger(this.chain, this.client, this.logs);
  }

  holds(fromBlock: bigint, toBlock: bigint, toHash?: Hex32): Promise<HoldEvents> {
    return readHolds(this.c.vault, this.logs, fromBlock, toBlock, toHash);
  }

  async close(): Promise<void> {
    this.closed = true;
    // The calls and transactions waiting for their block's depth are answered unknown at once: a stop is not held for blocks.
    this.sender.stopWaits();
    await this.batcher.idle();
    await this.sender.idle();
  }

  /** Locks, settles and releases, and sells' escrow calls, go in batches: one transaction carries many orders' calls, each answered on its own. */
  private async vaultCall(fn: VaultCall, orderId: Hex32, data: Hex): Promise<TxRef> {
    if (this.closed) throw new Error("the vault is closed");
    const ref = await this.batcher.call({ fn, orderId, data, gas: GAS[fn] });
    this.saw(ref.blockNumber);
    // Recorded before the call is answered, so before its order is: a process that reads the order reads the block too.
    if (ref.blockNumber > this.recorded.block) {
      // A write that fails is tried again by the next call of its block, not answered failed to every one of them.
      const before = this.recorded;
      const write: Promise<void> = this.holdsBlock.store.raiseChainCursor(this.holdsBlock.name, { block: ref.blockNumber, hash: ref.txHash }).catch((err: unknown) => {
        if (this.recorded.write === write) this.recorded = before;
        throw err;
      });
      this.recorded = { block: ref.blockNumber, write };
    }
    await this.recorded.write;
    return ref;
  }

  /** Raises the highest block seen to `block`; answers it. */
  private saw(block: bigint): bigint {
    if (block > this.seen) this.seen = block;
    return block;
  }

  /** A Vault read of an order's hold (`lockOf`, `escrowOf`), in one JSON-RPC batch with the head of the node answering it. */
  private async holdRead(data: Hex): Promise<{ result: Hex; head: bigint }> {
    const [head, read] = await this.rpc.batch([
      { method: "eth_blockNumber", params: [] },
      { method: "eth_call", params: [{ to: this.c.vault, data }, "latest"] },
    ]);
    return { result: resultOf<Hex>(read!), head: this.saw(BigInt(resultOf<Hex>(head!))) };
  }

  /**
   * No hold of the order, as a node whose head is `head` answered: taken only from one at or above every block seen, the
   * store's record of the highest block of a hold's call among them (a process started since, another instance's calls). A
   * node behind (one of a pool behind CHAIN_RPC_URL) may lack a hold the chain has, and its `none` fails the read for the
   * caller to ask again, rather than have recovery take the hold for one a reorganisation removed (an order whose venues
   * filled failed, its lock then released as stranded: the operator carrying the fills).
   */
  private async none(head: bigint, orderId: Hex32): Promise<{ kind: "none" }> {
    this.saw((await this.holdsBlock.store.chainCursor(this.holdsBlock.name))?.block ?? 0n);
    if (head < this.seen) throw new Error(`the node that answered is at block ${head}, behind block ${this.seen} another showed: it may lack the hold of ${orderId}`);
    return { kind: "none" };
  }

  /**
   * A call the contract makes once per id: sent again for an id already done, the contract refuses it by `already`,
   * and the call resolves with the transaction that did it, which `done` finds by the id's event.
   */
  private async once(call: { label: string; to: Address; gas: bigint; data: Hex }, already: string, done: () => Promise<TxRef | undefined>): Promise<TxRef> {
    try {
      return await this.tx(call.label, call.to, call.gas, call.data);
    } catch (e) {
      if (!(e instanceof VaultTxError && e.reason === already)) throw e;
      const ref = await done();
      if (!ref) throw new Error(`${call.label}: the contract says ${already} but logged no event for it`);
      return { txHash: ref.txHash, blockNumber: ref.blockNumber };
    }
  }

  /** The event that did a once-per-id call, found by the id as its first topic, when the Vault's flag says it was done. */
  private async endedBy(flag: "withdrawn" | "credited", eventName: "WithdrawnTo" | "DepositCredited", id: Hex32): Promise<RawLog | undefined> {
    const done = await this.client.readContract({ address: this.c.vault, abi: vaultAbi, functionName: flag, args: [id] });
    if (!done) return undefined;
    const log = await this.logs.newest({ address: this.c.vault, topics: [encodeEventTopics({ abi: vaultAbi, eventName })[0], id] });
    if (!log) throw new Error(`the Vault says ${id} is ${flag} but logged no ${eventName} for it`);
    return log;
  }

  private async tx(label: string, to: Address, gas: bigint, data: Hex): Promise<TxRef> {
    if (this.closed) throw new Error("the vault is closed");
    const m = await this.sender.send({ label, to, data, gas });
    return { txHash: m.txHash, blockNumber: this.saw(m.blockNumber) };
  }
}
