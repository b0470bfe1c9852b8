import type { Hex } from "viem";
import type { Micro, ShareMicro } from "../domain/money.ts";

export type Address = Hex;
/** 0x-prefixed 32-byte hex. */
export type Hex32 = Hex;

export interface TxRef {
  txHash: Hex32;
  blockNumber: bigint;
}

export interface ChainInfo {
  chainId: number;
  /** Where the chain is, as GET /v1/health and the logs show it: the origin only, since a provider's URL holds its API key in its path, query or user. */
  rpcUrl: string;
  contracts: { usdc: Address; vault: Address; sot: Address };
  operator: Address;
  /** Where settles pay and whence proceeds and payouts are pulled: the operator, unless VAULT_ADDRESS names a Vault deployed with another. */
  treasury: Address;
  /** True on the embedded dev chain, where new accounts get test USDC. */
  faucet: boolean;
  /** Seconds from a lock, or a sell's escrow, to the deadline after which anyone may expire the lock, or its client the escrow. */
  lockTtlSeconds: number;
  /** The block the Vault was deployed in (0 when unknown): no event of ours, and no deposit to credit, is older. */
  deployedAt: bigint;
}

/** The most items one `Vault.redeem` takes: one transaction (of at most 9.1 M gas on the EVM chain). */
export const REDEEM_MAX_ITEMS = 100;

/**
 * A Vault transaction that failed. `reverted`: it was not executed and nothing changed; `reason` is the
 * contract's custom error name (e.g. "InsufficientAvailable", "AlreadySettled"), or "NotSent"/"Refused"
 * when it never reached a block. `unknown`: it may or may not have been executed (the node went away
 * mid-flight): read the state by id (`lockState`, `escrowState`, `redemption`, `withdrawalState`, `depositState`)
 * before deciding anything.
 */
export class VaultTxError extends Error {
  constructor(
    readonly outcome: "reverted" | "unknown",
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = "VaultTxError";
  }
}

/** Whether the Vault contract itself refused the call (a custom error): not a call the node never executed (`NotSent`, `Refused`), nor one whose outcome is unknown. */
export function refusedByVault(err: unknown): boolean {
  return err instanceof VaultTxError && err.outcome === "reverted" && err.reason !== "NotSent" && err.reason !== "Refused";
}

/**
 * The state of one order's lock in the Vault contract. An ended lock carries the transaction that ended
 * it, read from the Vault's own event log (each lock has exactly one ending event), so a settle or release
 * that landed before a crash is recorded with its real tx hash.
 */
export type LockState =
  | { kind: "none" }
  /** `deadline`: unix seconds after which anyone may expire the lock (docs/chain.md). */
  | { kind: "locked"; amount: Micro; deadline: number }
  | { kind: "settled"; txHash: Hex32; spent: Micro; shares: ShareMicro; tokenId: bigint }
  /** `expired`: ended by `expire` after its deadline, not by the operator's release. */
  | { kind: "released"; txHash: Hex32; expired: boolean };

/**
 * The state of one sell order's escrow of shares in the Vault contract. Like a lock, an ended escrow carries
 * the transaction that ended it, read from its one ending event (SellSettled, EscrowReleased or EscrowExpired).
 */
export type EscrowState =
  | { kind: "none" }
  /** `deadline`: unix seconds after which the client may expire the escrow (docs/chain.md). */
  | { kind: "escrowed"; account: Address; tokenId: bigint; shares: ShareMicro; deadline: number }
  | { kind: "settled"; txHash: Hex32; sold: ShareMicro; proceeds: Micro }
  /** `expired`: ended by the client's `expireEscrow` after its deadline, not by the operator's release. */
  | { kind: "released"; txHash: Hex32; expired: boolean };

/** One holder's resolved position to redeem, under a key redeemed at most once on chain. */
export interface RedemptionItem {
  key: Hex32;
  account: Address;
  tokenId: bigint;
  shares: ShareMicro;
  /** What the shares pay: all of them for a winning outcome (1 USDC a share), 0 for a losing one; never more than `shares`. */
  payout: Micro;
}

/** A withdrawal's state in the Vault: paid by the one transaction that logged its WithdrawnTo event, or not (yet). */
export type WithdrawalState = { kind: "none" } | ({ kind: "paid"; client: Address; to: Address; amount: Micro } & LoggedAt);

/** A deposit's state in the Vault: credited by the one transaction that logged its DepositCredited event, or not (yet). */
export type DepositState = { kind: "none" } | ({ kind: "credited"; client: Address; amount: Micro } & LoggedAt);

/** One ERC-20 Transfer of the Vault's USDC, named by its transaction and its log's index in the block. */
export interface UsdcTransfer extends LoggedAt {
  logIndex: number;
  from: Address;
  to: Address;
  amount: Micro;
}

/** Signs a 32-byte digest with a client's key (an EIP-2612 permit's): a 65-byte signature, hex. */
export type DigestSigner = (digest: Hex32) => Promise<Hex>;

/** Where an event was logged. Logs exist only for transactions that succeeded: a reverted one leaves none. */
export interface LoggedAt {
  txHash: Hex32;
  blockNumber: bigint;
}

/**
 * Everything the contracts did, read from their own event logs between `fromBlock` (the Vault's deployment)
 * and `toBlock`, oldest first, with the balances as they stood at `toBlock`. For the audit: every lock and
 * escrow ends at most once and the ending names its order, settle spends come back out of deposits and
 * proceeds and payouts go into them, the USDC supply is what the faucet dripped and the treasury was granted,
 * one SOT mint per settle with shares, one burn per sale or redemption, and each token's supply is what was
 * minted less what was burned. A stored tx hash that appears
 * here as its order's `settled` ending is a successful transaction carrying that order's Settled event.
 */
export interface Ledger {
  fromBlock: bigint;
  toBlock: bigint;
  locks: ({ orderId: Hex32; client: Address; amount: Micro } & LoggedAt)[];
  endings: ((
    | { kind: "settled"; spent: Micro; released: Micro; tokenId: bigint; shares: ShareMicro }
    | { kind: "released"; amount: Micro; expired: boolean }
  ) & { orderId: Hex32; client: Address } & LoggedAt)[];
  /** `from` paid the tokens in: the client itself, the faucet (the USDC contract) or anyone else. */
  deposits: ({ client: Address; from: Address; amount: Micro } & LoggedAt)[];
  withdrawals: ({ client: Address; amount: Micro } & LoggedAt)[];
  /** The dev faucet's mints (each also deposited, so also in `deposits`). Empty on a chain without the faucet. */
  drips: ({ key: Hex32; client: Address; amount: Micro } & LoggedAt)[];
  /** SOT minted (ERC-1155 TransferSingle from the zero address). */
  sotMints: ({ to: Address; tokenId: bigint; amount: ShareMicro } & LoggedAt)[];
  /** Sells' escrows of shares, by order id. */
  escrows: ({ orderId: Hex32; client: Address; tokenId: bigint; shares: ShareMicro } & LoggedAt)[];
  /** How escrows ended: `settled` burned `sold`, credited `proceeds` and returned the rest; `released` returned `shares` (`expired`: by the client's `expireEscrow`). */
  escrowEndings: ((
    | { kind: "settled"; sold: ShareMicro; returned: ShareMicro; proceeds: Micro }
    | { kind: "released"; shares: ShareMicro; expired: boolean }
  ) & { orderId: Hex32; client: Address; tokenId: bigint } & LoggedAt)[];
  redemptions: ({ key: Hex32; client: Address; tokenId: bigint; shares: ShareMicro; payout: Micro } & LoggedAt)[];
  /** SOT burned (ERC-1155 TransferSingle to the zero address). */
  sotBurns: ({ from: Address; tokenId: bigint; amount: ShareMicro } & LoggedAt)[];
  /** The SOT's own supply of each token id ever minted, at `toBlock`. */
  sotSupply: { tokenId: bigint; supply: ShareMicro }[];
  /** The test USDC granted to the treasury when TestUSDC was deployed (`treasuryGrant`: the dev chain's one mint besides the faucet); 0 on a chain without the faucet. */
  usdcGranted: Micro;
  usdcTotalSupply: Micro;
  /** The operator's withdrawals to an address (WithdrawnTo), by withdrawal id. */
  withdrawnTo: ({ withdrawalId: Hex32; client: Address; to: Address; amount: Micro } & LoggedAt)[];
  /** Deposits sent to a client's address and credited by the operator (DepositCredited), by key. */
  depositCredits: ({ key: Hex32; client: Address; amount: Micro } & LoggedAt)[];
  /** The USDC the Vault itself holds: what backs every client's available and locked balance. */
  vaultUsdc: Micro;
  /** Every client of a lock, escrow, redemption, deposit, withdrawal or credit above. */
  balances: { client: Address; available: Micro; locked: Micro }[];
}

/** The locks and escrows some blocks opened, and those they ended: what the sweep for stranded holds follows. */
export type HoldEvents = Pick<Ledger, "locks" | "endings" | "escrows" | "escrowEndings">;

/** The chain behind a port: the Vault, the USDC token and the position token (SOT). */
export interface Vault {
  info(): ChainInfo;
  balanceOf(account: Address): Promise<{ available: Micro; locked: Micro }>;
  /** Locks `amount` of the account's available balance for the order. Reverts (throws) if it is not available. */
  lock(orderId: Hex32, account: Address, amount: Micro): Promise<TxRef>;
  /** Spends `spent` of the lock, releases the rest to the account and mints `position.shares` SOT to it, in one transaction. */
  settle(orderId: Hex32, spent: Micro, position: { tokenId: bigint; shares: ShareMicro }): Promise<TxRef>;
  /** Releases the whole lock back to the account. */
  release(orderId: Hex32): Promise<TxRef>;
  /** The order's lock as the chain holds it; `none` only from a node at or above every block this vault has seen, else the read fails. */
  lockState(orderId: Hex32): Promise<LockState>;
  /** The transaction that locked the order's USDC or escrowed its shares (its Locked or Escrowed event); null when none did. */
  heldBy(orderId: Hex32): Promise<Hex32 | null>;
  /** Takes `position.shares` of the account's SOT into escrow for the sell order. Reverts (throws) if it does not hold them. */
  escrow(orderId: Hex32, account: Address, position: { tokenId: bigint; shares: ShareMicro }): Promise<TxRef>;
  /** Burns `sold` of the escrow, credits `proceeds` (at most `sold`) to the account's available USDC and returns the rest, in one transaction. */
  settleSell(orderId: Hex32, sold: ShareMicro, proceeds: Micro): Promise<TxRef>;
  /** Returns every escrowed share to the account. */
  releaseEscrow(orderId: Hex32): Promise<TxRef>;
  /** The order's escrow, read as `lockState` reads a lock. */
  escrowState(orderId: Hex32): Promise<EscrowState>;
  /**
   * Redeems resolved positions in one transaction (at most REDEEM_MAX_ITEMS): each item burns its shares and
   * credits its payout, on its own. An item whose key was redeemed before, or that the contract refuses (the
   * account does not hold the shares), changes nothing and the others still happen; the transaction succeeds
   * either way. What happened to each key is `redemption(key)`: its one redemption, in whichever transaction.
   */
  redeem(items: readonly RedemptionItem[]): Promise<TxRef>;
  /** The key's redemption, or null when it was never redeemed. */
  redemption(key: Hex32): Promise<({ shares: ShareMicro; payout: Micro } & LoggedAt) | null>;
  /**
   * How many operator transactions may still land. 0 means none can: a lock whose outcome was unknown and
   * whose `lockState` read *after* this returned 0 is `none` will never lock. A batch the node never
   * received keeps this above 0 until the operator's next transactions take its nonces.
   */
  pendingTransactions(): Promise<number>;
  /**
   * How many of the operator's transactions are mined at `block` (default: the latest): its nonce there. Read after
   * `pendingTransactions()` returned 0 it counts every transaction sent so far; once it is reached at the block
   * DEPOSIT_CONFIRMATIONS under the head, those that failed stay failed (a reorganisation may still mine a shallower one
   * again, where it succeeds).
   */
  minedTransactions(block?: bigint): Promise<number>;
  sotBalance(account: Address, tokenId: bigint): Promise<bigint>;
  /** The balances of several (account, token) pairs, in their order, read in one call (ERC-1155 balanceOfBatch). */
  sotBalances(holdings: readonly { account: Address; tokenId: bigint }[]): Promise<bigint[]>;
  /**
   * Dev chain only: mints test USDC into the account's vault balance, in one transaction, once per `key`.
   * A repeated key (a retry, a crash after the first landed) mints nothing and resolves with the first funding.
   */
  fund(account: Address, amount: Micro, key: Hex32): Promise<TxRef>;
  /**
   * Pays `amount` of the account's available balance to `to`, once per withdrawal id. Sent again for an id already
   * paid (a retry, a recovery), it pays nothing and resolves with the payment that was made.
   */
  withdrawTo(withdrawalId: Hex32, account: Address, to: Address, amount: Micro): Promise<TxRef>;
  withdrawalState(withdrawalId: Hex32): Promise<WithdrawalState>;
  /**
   * Why the USDC token would refuse to pay `amount` from the Vault to `to` now (a blacklist, a pause: its revert
   * reason, its custom error, or that it reverted with none), read by simulating the transfer; undefined when it
   * would pay. Throws when the chain cannot be asked.
   */
  transferRefusal(to: Address, amount: Micro): Promise<string | undefined>;
  /**
   * Credits `amount` that was sent to the account's own address to its vault balance, pulled from that address under
   * an EIP-2612 permit `sign` makes with the account's key, once per `key`, and only while the chain still has the block
   * `transferBlock` (the transfer's, from its receipt): a credit landing after a reorganisation replaced it reverts
   * `TransferBlockReplaced` instead of pulling what the address holds then. Sent again for a key already credited, it
   * credits nothing and resolves with the credit that was made.
   */
  creditDeposit(key: Hex32, account: Address, amount: Micro, transferBlock: { number: bigint; hash: Hex32 }, sign: DigestSigner): Promise<TxRef>;
  depositState(key: Hex32): Promise<DepositState>;
  /**
   * Every USDC transfer logged from `fromBlock` to `toBlock` (inclusive), oldest first, whoever received it: the
   * caller picks its own addresses' (read by recipient, the request would grow with the accounts). With `toHash`, the
   * hash the caller read of `toBlock`, it throws when the logs came from a node with another block there (another fork).
   */
  usdcTransfers(fromBlock: bigint, toBlock: bigint, toHash?: Hex32): Promise<UsdcTransfer[]>;
  /**
   * The USDC transfers the transaction `txHash` logged, in order; `failedIn`, the block it was mined in, when its receipt
   * says it failed and so moved nothing (a reorganisation can mine a transfer again where its sender no longer holds the
   * USDC); undefined when the chain has no receipt of it (it may have been reorganised away).
   */
  usdcTransfersOf(txHash: Hex32): Promise<UsdcTransfer[] | { failedIn: bigint } | undefined>;
  /** The block the transaction `txHash` was mined in, from its receipt; undefined when the chain has no successful receipt of it. */
  blockOf(txHash: Hex32): Promise<{ number: bigint; hash: Hex32 } | undefined>;
  /** The latest block's number. */
  blockNumber(): Promise<bigint>;
  /** The latest block's timestamp, in unix seconds: the chain's time, which a lock's deadline is measured in. */
  blockTime(): Promise<number>;
  /** The hash of the block at `number`, undefined when the chain has no such block. */
  blockHash(number: bigint): Promise<Hex32 | undefined>;
  /** Whether the block at `number` holds the transaction `txHash`; undefined when the chain has no such block. One request, so one node's answer. */
  blockHolds(number: bigint, txHash: Hex32): Promise<boolean | undefined>;
  /** The contracts' whole history from their event logs, for the audit. */
  ledger(): Promise<Ledger>;
  /** The locks and escrows opened and ended from `fromBlock` to `toBlock` (inclusive), oldest first; `toHash` as for usdcTransfers. */
  holds(fromBlock: bigint, toBlock: bigint, toHash?: Hex32): Promise<HoldEvents>;
  close(): Promise<void>;
}
