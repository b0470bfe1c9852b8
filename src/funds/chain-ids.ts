import { encodePacked, toHex } from "viem";
import { keccak256 } from "../evm/keccak.ts";
import type { Hex32 } from "../vault/vault.ts";

/** The on-chain id of a withdrawal: keccak256 of its public id, so the chain and the store name the same withdrawal. */
export function chainWithdrawalId(withdrawalId: string): Hex32 {
  return keccak256(toHex(withdrawalId));
}

/** The on-chain key of a deposit: keccak256 of the transfer's transaction hash and log index, one key per transfer. */
export function depositKey(txHash: Hex32, logIndex: number): Hex32 {
  return keccak256(encodePacked(["bytes32", "uint256"], [txHash, BigInt(logIndex)]));
}

/** The store's id of a deposit: the transfer as the chain names it. */
export function depositId(txHash: string, logIndex: number): string {
  return `${txHash.toLowerCase()}:${logIndex}`;
}
