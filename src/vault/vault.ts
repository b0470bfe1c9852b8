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
  rpcUrl: string;
  contracts: { usdc: Address; vault: Address; sot: Address };
  operator: Address;
  /** True on the embedded dev chain, where new accounts get test USDC. */
  faucet: boolean;
}

/**
 * A Vault transaction that failed. `reverted`: it was not executed and nothing changed; `reason` is the
 * contract's custom error name (e.g. "InsufficientAvailable", "AlreadySettled"), or "NotSent"/"Refused"
 * when it never reached a block. `unknown`: it may or may not have been executed (the node went away
 * mid-flight): read `lockState` before deciding anything.
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

/** The state of one order's lock in the Vault contract. */
export type LockState =
  | { kind: "none" }
  | { kind: "locked"; amount: Micro }
  | { kind: "settled" }
  | { kind: "released" };

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
  lockState(orderId: Hex32): Promise<LockState>;
  sotBalance(account: Address, tokenId: bigint): Promise<bigint>;
  /** Dev chain only: mints test USDC and deposits it into the account's vault balance. */
  fund(account: Address, amount: Micro): Promise<TxRef>;
  close(): Promise<void>;
}
