import type { Hex } from "viem";

/**
 * The EIP-712 Order of Polymarket's V1 CTF exchange, which Limitless's exchange keeps field for field
 * and signs under its own domain. Polymarket itself signs the V2 order since CLOB V2
 * (polymarket/order-signing.ts); the side and signature-type codes below serve both.
 */
export const ORDER_TYPES = {
  Order: [
    { name: "salt", type: "uint256" },
    { name: "maker", type: "address" },
    { name: "signer", type: "address" },
    { name: "taker", type: "address" },
    { name: "tokenId", type: "uint256" },
    { name: "makerAmount", type: "uint256" },
    { name: "takerAmount", type: "uint256" },
    { name: "expiration", type: "uint256" },
    { name: "nonce", type: "uint256" },
    { name: "feeRateBps", type: "uint256" },
    { name: "side", type: "uint8" },
    { name: "signatureType", type: "uint8" },
  ],
} as const;

export interface OrderStruct {
  salt: bigint;
  maker: Hex;
  signer: Hex;
  taker: Hex;
  tokenId: bigint;
  makerAmount: bigint;
  takerAmount: bigint;
  expiration: bigint;
  nonce: bigint;
  feeRateBps: bigint;
  side: number;
  signatureType: number;
}

/** The taker of an order open to anyone. */
export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000" as const;
export const SIDE_BUY = 0;
export const SIDE_SELL = 1;
/** An order signed by the maker's own key (no proxy, no safe). */
export const SIGNATURE_EOA = 0;
