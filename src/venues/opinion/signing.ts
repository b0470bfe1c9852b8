import { createHash } from "node:crypto";
import { getAddress, recoverTypedDataAddress, type Hex } from "viem";
import type { LocalAccount } from "viem/accounts";
import { formatMicro, proceedsOf, type PriceMicro, type ShareMicro } from "../../domain/money.ts";
import { ORDER_TYPES, SIDE_BUY, SIDE_SELL, ZERO_ADDRESS, type OrderStruct } from "../ctf-order.ts";
import { toTokenUnits } from "./wire.ts";

/**
 * What trading on Opinion needs: the API key Opinion Labs issues (header `apikey`), the key of the
 * wallet that signs orders, and the Gnosis Safe that holds the funds (the orders' maker; the signer
 * is one of its owners).
 */
export interface OpinionCredentials {
  apiKey: string;
  privateKey: Hex;
  multiSigAddress: Hex;
}

export const OPINION_API_KEY_HEADER = "apikey";

/** BNB Chain mainnet, the one chain the official SDK supports. */
export const OPINION_CHAIN_ID = 56;

/** Orders that a Safe's owner signs for the Safe (the SDK's SignatureType.POLY_GNOSIS_SAFE). */
export const SIGNATURE_GNOSIS_SAFE = 2;

/** The order's `tradingMethod`: 1 market, 2 limit. */
export const TRADING_LIMIT = 2;

/** The EIP-712 domain of Opinion's CTF exchange; the contract is the quote token's `ctfExchangeAddress`. */
export function orderDomain(verifyingContract: Hex) {
  return { name: "OPINION CTF Exchange", version: "1", chainId: OPINION_CHAIN_ID, verifyingContract } as const;
}

/** A salt derived from the child's client order id (64 bits of its SHA-256): the same child is the same signed order. */
export function saltFor(clientOrderId: string): bigint {
  return createHash("sha256").update(clientOrderId).digest().readBigUInt64BE(0);
}

/** What a limit buy or sell of a child order is signed with. */
export interface OrderArgs {
  maker: Hex;
  signer: Hex;
  tokenId: string;
  limitPrice: PriceMicro;
  shares: ShareMicro;
  decimals: number;
  salt: bigint;
}

/**
 * A limit buy of `shares` at `limitPrice` as the SDK builds it: the Safe pays price × shares of the
 * quote token (makerAmount) for the shares (takerAmount), both in the token's decimals, so that
 * makerAmount / takerAmount is the price exactly; fee rate, nonce and the signed expiration are 0
 * as the SDK sends them (the expiry travels unsigned, as orderExpTime).
 */
export function buyOrder(o: OrderArgs): OrderStruct {
  return ctfOrder(o, SIDE_BUY, toTokenUnits(proceedsOf(o.limitPrice, o.shares), o.decimals), toTokenUnits(o.shares, o.decimals));
}

/**
 * A limit sell as the SDK's calculateOrderAmounts builds a SELL: the Safe gives the shares
 * (makerAmount) for price × shares of the quote token (takerAmount), so takerAmount / makerAmount is
 * the price exactly.
 */
export function sellOrder(o: OrderArgs): OrderStruct {
  return ctfOrder(o, SIDE_SELL, toTokenUnits(o.shares, o.decimals), toTokenUnits(proceedsOf(o.limitPrice, o.shares), o.decimals));
}

function ctfOrder(o: OrderArgs, side: number, makerAmount: bigint, takerAmount: bigint): OrderStruct {
  return {
    salt: o.salt,
    maker: getAddress(o.maker),
    signer: getAddress(o.signer),
    taker: ZERO_ADDRESS,
    tokenId: BigInt(o.tokenId),
    makerAmount,
    takerAmount,
    expiration: 0n,
    nonce: 0n,
    feeRateBps: 0n,
    side,
    signatureType: SIGNATURE_GNOSIS_SAFE,
  };
}

/** Signs with the signer's account, derived from its key once (deriving it per order cost as much as signing). */
export async function signOrder(signer: LocalAccount, order: OrderStruct, exchange: Hex): Promise<Hex> {
  return signer.signTypedData({ domain: orderDomain(exchange), types: ORDER_TYPES, primaryType: "Order", message: order });
}

export function orderSigner(order: OrderStruct, exchange: Hex, signature: Hex): Promise<Hex> {
  return recoverTypedDataAddress({ domain: orderDomain(exchange), types: ORDER_TYPES, primaryType: "Order", message: order, signature });
}

/** The body of `POST /order`, field for field as the official SDK posts it. */
export function orderBody(o: { order: OrderStruct; signature: Hex; marketId: number; currency: Hex; limitPrice: PriceMicro; expiresAtSeconds: number; nowSeconds: number }): Record<string, unknown> {
  const s = o.order;
  return {
    salt: s.salt.toString(),
    topicId: o.marketId,
    maker: s.maker,
    signer: s.signer,
    taker: s.taker,
    tokenId: s.tokenId.toString(),
    makerAmount: s.makerAmount.toString(),
    takerAmount: s.takerAmount.toString(),
    expiration: s.expiration.toString(),
    nonce: s.nonce.toString(),
    feeRateBps: s.feeRateBps.toString(),
    side: String(s.side),
    signatureType: String(s.signatureType),
    signature: o.signature,
    sign: o.signature,
    contractAddress: "",
    currencyAddress: getAddress(o.currency),
    price: formatMicro(o.limitPrice),
    tradingMethod: TRADING_LIMIT,
    timestamp: o.nowSeconds,
    safeRate: "0",
    orderExpTime: String(o.expiresAtSeconds),
  };
}

/** The signed order of a posted body; throws on a missing or malformed field. */
export function orderFromBody(b: Record<string, unknown>): OrderStruct {
  const uint = (k: string): bigint => {
    const v = b[k];
    if (typeof v !== "string" || !/^\d{1,78}$/.test(v)) throw new RangeError(`${k} must be a string of digits`);
    return BigInt(v);
  };
  const address = (k: string): Hex => {
    const v = b[k];
    if (typeof v !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(v)) throw new RangeError(`${k} must be an address`);
    return getAddress(v);
  };
  return {
    salt: uint("salt"),
    maker: address("maker"),
    signer: address("signer"),
    taker: address("taker"),
    tokenId: uint("tokenId"),
    makerAmount: uint("makerAmount"),
    takerAmount: uint("takerAmount"),
    expiration: uint("expiration"),
    nonce: uint("nonce"),
    feeRateBps: uint("feeRateBps"),
    side: Number(uint("side")),
    signatureType: Number(uint("signatureType")),
  };
}
