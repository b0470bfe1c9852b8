import { encodePacked, getAddress, hexToBigInt, keccak256, type Hex } from "viem";

/** The SOT (ERC-1155) token id of an event's outcome, the same the PositionToken contract computes. */
export function sotTokenId(eventId: string, outcome: "YES" | "NO"): bigint {
  return hexToBigInt(keccak256(encodePacked(["string", "string", "string"], [eventId, ":", outcome])));
}

/** The CAIP-19 asset id of an SOT: `eip155:<chainId>/erc1155:<address lowercase>/<tokenId decimal>`. */
export function sotAssetId(chainId: number, sotAddress: Hex, tokenId: bigint): string {
  return `eip155:${chainId}/erc1155:${getAddress(sotAddress).toLowerCase()}/${tokenId.toString(10)}`;
}
