import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { recoverTypedDataAddress, type Hex } from "viem";
import type { LocalAccount } from "viem/accounts";
import { ceilDiv, ONE, type PriceMicro, type ShareMicro } from "../../domain/money.ts";
import { ORDER_TYPES, SIDE_BUY, SIDE_SELL, SIGNATURE_EOA, ZERO_ADDRESS, type OrderStruct } from "../ctf-order.ts";
import { parseRaw, rawNumber } from "./wire.ts";

/**
 * What trading on Limitless needs: an API token (its id and base64 secret, for the lmts-* HMAC
 * headers), the wallet key that signs orders, and the profile id orders are posted under (ownerId).
 */
export interface LimitlessCredentials {
  apiKey: string;
  /** Base64, as the token is issued. */
  secret: string;
  privateKey: Hex;
  ownerId: number;
}

export const LIMITLESS_HEADERS = {
  key: "lmts-api-key",
  timestamp: "lmts-timestamp",
  signature: "lmts-signature",
} as const;

/** Base mainnet: the chain Limitless settles on. */
export const LIMITLESS_CHAIN_ID = 8453;

/** The text a request's HMAC covers: ISO timestamp, method, path with its query string, and the exact body sent. */
export function limitlessSigningText(timestamp: string, method: string, pathWithQuery: string, body: string): string {
  return `${timestamp}\n${method.toUpperCase()}\n${pathWithQuery}\n${body}`;
}

/** Base64 HMAC-SHA256 under the base64-decoded secret, as the official SDK's computeHMACSignature. */
export function signLimitless(secret: string, timestamp: string, method: string, pathWithQuery: string, body: string): string {
  return createHmac("sha256", Buffer.from(secret, "base64")).update(limitlessSigningText(timestamp, method, pathWithQuery, body)).digest("base64");
}

export function verifyLimitless(secret: string, timestamp: string, method: string, pathWithQuery: string, body: string, signature: string): boolean {
  const expected = Buffer.from(signLimitless(secret, timestamp, method, pathWithQuery, body), "base64");
  const given = Buffer.from(signature, "base64");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The three lmts-* headers of one request; the timestamp is ISO-8601 with milliseconds. */
export function limitlessAuthHeaders(apiKey: string, secret: string, nowMs: number, method: string, pathWithQuery: string, body: string): Record<string, string> {
  const timestamp = new Date(nowMs).toISOString();
  return {
    [LIMITLESS_HEADERS.key]: apiKey,
    [LIMITLESS_HEADERS.timestamp]: timestamp,
    [LIMITLESS_HEADERS.signature]: signLimitless(secret, timestamp, method, pathWithQuery, body),
  };
}

/** Each market names its exchange contract (`venue.exchange`): orders are signed for that contract. */
export function orderDomain(verifyingContract: Hex) {
  return { name: "Limitless CTF Exchange", version: "1", chainId: LIMITLESS_CHAIN_ID, verifyingContract } as const;
}

/**
 * The salt of a child order, derived from its client order id. Limitless has no client order id,
 * so the salt is what makes a retried order the same order (same signed content) and what finds it
 * again after a crash. 52 bits: the API takes the salt as a JSON number, exact only up to 2^53.
 */
export function saltFor(clientOrderId: string): bigint {
  return BigInt("0x" + createHash("sha256").update(clientOrderId).digest("hex").slice(0, 13));
}

/**
 * The signed `expiration` (unix seconds, as the CTF exchange compares it with block time) of a child
 * order that expires at `expiresAt` (ms): rounded down, so the venue refuses the order no later than
 * the child's expiry, and never 0, which the venue reads as "no expiration".
 */
export function orderExpiration(expiresAt: number): bigint {
  if (!Number.isFinite(expiresAt)) throw new RangeError(`expiresAt ${expiresAt} is not a time`);
  const seconds = BigInt(Math.floor(expiresAt / 1000));
  return seconds < 1n ? 1n : seconds;
}

/** What a buy or a sell of a child order is signed with. */
export interface OrderArgs {
  maker: Hex;
  tokenId: string;
  limitPrice: PriceMicro;
  shares: ShareMicro;
  feeRateBps: bigint;
  salt: bigint;
  expiration: bigint;
}

/**
 * A buy of `shares` of `tokenId` paying at most `limitPrice` each: USDC offered (rounded up, as the
 * SDK does), shares wanted, refused by the venue once `expiration` (unix seconds) has passed.
 */
export function buyOrder(args: OrderArgs): OrderStruct {
  return ctfOrder(args, SIDE_BUY, ceilDiv(args.limitPrice * args.shares, ONE), args.shares);
}

/**
 * A sell of `shares` of `tokenId` for at least `limitPrice` each, as the SDK builds a SELL: shares
 * offered, USDC wanted (rounded down, the SDK's floor for a SELL), refused once `expiration` has passed.
 */
export function sellOrder(args: OrderArgs): OrderStruct {
  return ctfOrder(args, SIDE_SELL, args.shares, (args.limitPrice * args.shares) / ONE);
}

function ctfOrder(args: OrderArgs, side: number, makerAmount: bigint, takerAmount: bigint): OrderStruct {
  return {
    salt: args.salt,
    maker: args.maker,
    signer: args.maker,
    taker: ZERO_ADDRESS,
    tokenId: BigInt(args.tokenId),
    makerAmount,
    takerAmount,
    expiration: args.expiration,
    nonce: 0n,
    feeRateBps: args.feeRateBps,
    side,
    signatureType: SIGNATURE_EOA,
  };
}

/**
 * Signs with the wallet's account, derived from its key once (deriving it is an elliptic-curve multiplication:
 * per order it was most of the signing's cost). ECDSA under RFC 6979 is deterministic, so a retried order
 * carries the very same signature.
 */
export function signOrder(wallet: LocalAccount, order: OrderStruct, exchange: Hex): Promise<Hex> {
  return wallet.signTypedData({ domain: orderDomain(exchange), types: ORDER_TYPES, primaryType: "Order", message: order });
}

/** The address whose key signed `order` for `exchange`. */
export function orderSigner(order: OrderStruct, exchange: Hex, signature: Hex): Promise<Hex> {
  return recoverTypedDataAddress({ domain: orderDomain(exchange), types: ORDER_TYPES, primaryType: "Order", message: order, signature });
}

/** The order as the API takes it: amounts and salt as JSON numbers, the token id and expiration as decimal strings. */
export function wireOrder(o: OrderStruct): Record<string, unknown> {
  return {
    salt: rawNumber(o.salt, "salt"),
    maker: o.maker,
    signer: o.signer,
    taker: o.taker,
    tokenId: o.tokenId.toString(),
    makerAmount: rawNumber(o.makerAmount, "makerAmount"),
    takerAmount: rawNumber(o.takerAmount, "takerAmount"),
    expiration: o.expiration.toString(),
    nonce: rawNumber(o.nonce, "nonce"),
    feeRateBps: rawNumber(o.feeRateBps, "feeRateBps"),
    side: o.side,
    signatureType: o.signatureType,
  };
}

/** The signed struct back from an order as posted; throws on a field that is missing or not exact. */
export function orderFromWire(w: Record<string, unknown>): OrderStruct {
  const address = (v: unknown, field: string): Hex => {
    if (typeof v !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(v)) throw new RangeError(`${field} must be an address`);
    return v as Hex;
  };
  const small = (v: unknown, field: string): number => {
    if (v !== 0 && v !== 1 && v !== 2 && v !== 3) throw new RangeError(`${field} must be 0-3`);
    return v;
  };
  return {
    salt: parseRaw(w.salt, "salt"),
    maker: address(w.maker, "maker"),
    signer: address(w.signer, "signer"),
    taker: address(w.taker ?? ZERO_ADDRESS, "taker"),
    tokenId: parseRaw(w.tokenId, "tokenId"),
    makerAmount: parseRaw(w.makerAmount, "makerAmount"),
    takerAmount: parseRaw(w.takerAmount, "takerAmount"),
    expiration: parseRaw(w.expiration ?? "0", "expiration"),
    nonce: parseRaw(w.nonce ?? 0, "nonce"),
    feeRateBps: parseRaw(w.feeRateBps, "feeRateBps"),
    side: small(w.side, "side"),
    signatureType: small(w.signatureType, "signatureType"),
  };
}
