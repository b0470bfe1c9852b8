// fast-check arbitraries of EVM values and of the venues' orders, for the property tests of this folder.
import fc from "fast-check";
import { bytesToHex } from "viem";

export const bytesN = (n: number) => fc.uint8Array({ minLength: n, maxLength: n }).map((b) => bytesToHex(b));
export const uint256 = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n });
export const uint8 = fc.integer({ min: 0, max: 255 });
export const address = bytesN(20);

/** The CTF exchange's order (venues/ctf-order.ts: Limitless, Opinion), any value of each field's type. */
export const ctfOrder = fc.record({
  salt: uint256,
  maker: address,
  signer: address,
  taker: address,
  tokenId: uint256,
  makerAmount: uint256,
  takerAmount: uint256,
  expiration: uint256,
  nonce: uint256,
  feeRateBps: uint256,
  side: uint8,
  signatureType: uint8,
});
