import { encodePacked, hexToBigInt, type Hex } from "viem";
import { keccak256 } from "../evm/keccak.ts";

/** Token ids computed so far, at most TOKEN_IDS_KEPT: one is an ABI packing, a keccak256 and a bigint parsed from hex, and an order asks for its token id three times or more. */
const tokenIds = new Map<string, bigint>();
const TOKEN_IDS_KEPT = 10_000;

/** The SOT (ERC-1155) token id of an event's outcome, the same the PositionToken contract computes. */
export function sotTokenId(eventId: string, outcome: "YES" | "NO"): bigint {
  const key = `${outcome}:${eventId}`;
  let id = tokenIds.get(key);
  if (id === undefined) {
    id = hexToBigInt(keccak256(encodePacked(["string", "string", "string"], [eventId, ":", outcome])));
    if (tokenIds.size >= TOKEN_IDS_KEPT) tokenIds.clear();
    tokenIds.set(key, id);
  }
  return id;
}

/** The CAIP-19 asset id of an SOT: `eip155:<chainId>/erc1155:<address lowercase>/<tokenId decimal>`. */
export function sotAssetId(chainId: number, sotAddress: Hex, tokenId: bigint): string {
  return `eip155:${chainId}/erc1155:${sotAddress.toLowerCase()}/${tokenId.toString(10)}`;
}
