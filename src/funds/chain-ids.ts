import { encodePacked, toHex } from "viem";
import { keccak256 } from "../evm/keccak.ts";
import type { Hex32 } from "../vault/vault.ts";

/** The on-chain id of a withdrawal: keccak256 of its public id, so the chain and the store name the same withdrawal. */
export function chainWithdrawalId(withdrawalId: string): Hex32 {
  return keccak256(toHex(withdrawalId));
}

/**
 * The on-chain key of a deposit: keccak256 of the transfer's transaction hash and the log index it was first
 * found at, one key per transfer (stored with it, so a transfer mined again at another index keeps its key).
 */
export function depositKey(txHash: Hex32, logIndex: number): Hex32 {
  return keccak256(encodePacked(["bytes32", "uint256"], [txHash, BigInt(logIndex)]));
}

/**
 * The store's id of a deposit: its transaction's hash and its place among that transaction's transfers into deposit
 * addresses. Unlike the log index (its place in the block), a reorganisation that mines the transaction again in
 * another block, or beside other transactions, does not change it.
 */
export function depositId(txHash: string, place: number): string {
  return `${txHash.toLowerCase()}:${place}`;
}

/** Each transfer's place among the transfers of its own transaction in `transfers` (the chain's order). */
export function placesInTransactions(transfers: readonly { txHash: string }[]): number[] {
  const seen = new Map<string, number>();
  return transfers.map((t) => {
    const place = seen.get(t.txHash.toLowerCase()) ?? 0;
    seen.set(t.txHash.toLowerCase(), place + 1);
    return place;
  });
}
