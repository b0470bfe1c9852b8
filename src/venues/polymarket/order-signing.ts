import { createHash } from "node:crypto";
import { hashTypedData, type Hex } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { ONE, type PriceMicro, type ShareMicro } from "../../domain/money.ts";
import { ORDER_TYPES, SIDE_BUY, SIGNATURE_EOA, ZERO_ADDRESS, type OrderStruct } from "../ctf-order.ts";

/** Polygon mainnet: the chain and the CTF exchanges that settle Polymarket orders (clob-client's MATIC_CONTRACTS). */
export const POLYGON_CHAIN_ID = 137;
export const CTF_EXCHANGE = "0x4bFb41d5B3570DeFd03C39a9A4D8dE6Bd8B8982E" as const;
export const NEG_RISK_CTF_EXCHANGE = "0xC5d563A36AE78145C45a50134d48A1215220f80a" as const;

export function orderDomain(negRisk: boolean) {
  return {
    name: "Polymarket CTF Exchange",
    version: "1",
    chainId: POLYGON_CHAIN_ID,
    verifyingContract: negRisk ? NEG_RISK_CTF_EXCHANGE : CTF_EXCHANGE,
  } as const;
}

/** The order hash: Polymarket's order id. */
export function orderHash(order: OrderStruct, negRisk: boolean): Hex {
  return hashTypedData({ domain: orderDomain(negRisk), types: ORDER_TYPES, primaryType: "Order", message: order });
}

/**
 * The salt of our order with this client id. Derived rather than random (clob-client draws it
 * from Math.random) so that the same child order always hashes to the same order id: a retry is
 * recognised by the venue as a duplicate, and the order can be found again after a crash. 48
 * bits, because the wire carries the salt as a JSON number.
 */
export function saltFor(clientOrderId: string): bigint {
  return BigInt(`0x${createHash("sha256").update(clientOrderId).digest("hex").slice(0, 12)}`);
}

/**
 * A buy of `shares` at `limitPrice` in the exchange's 6-decimal amounts: the maker gives USDC,
 * the taker side is the shares. Exact, or undefined when price × size is not a whole number of
 * micro-USDC (off the 0.01-share lot the venue enforces).
 */
function buyAmounts(limitPrice: PriceMicro, shares: ShareMicro): { makerAmount: bigint; takerAmount: bigint } | undefined {
  const usdc = limitPrice * shares;
  if (usdc % ONE !== 0n) return undefined;
  return { makerAmount: usdc / ONE, takerAmount: shares };
}

/**
 * The order's `expiration` (unix seconds) for a child order's `expiresAt` (ms), rounded down to the
 * whole second the field counts: the venue then refuses the order no later than the child expires,
 * which is what lets recovery call a child it does not find never placed once its expiry has passed. It is signed, so it is part of the order hash: the same child order
 * always carries the same expiration. It is the child's expiry as it is, without the one-minute
 * "security threshold" the docs describe for GTD orders: a venue that applied the threshold to our
 * FAK orders too would refuse them up to a minute early, never late, whereas adding the minute would
 * let a venue that does not apply it take an order a minute after its child expired.
 */
export function expirationFor(expiresAt: number): bigint {
  return BigInt(Math.floor(expiresAt / 1000));
}

export interface BuyOrderParams {
  clientOrderId: string;
  tokenId: string;
  limitPrice: PriceMicro;
  shares: ShareMicro;
  feeRateBps: bigint;
  negRisk: boolean;
  /** The child order's expiry, ms since the epoch. */
  expiresAt: number;
}

/** Signs orders for one EOA (signature type 0: the signer is the maker and holds the funds). */
export class OrderSigner {
  readonly account: PrivateKeyAccount;

  constructor(privateKey: Hex) {
    this.account = privateKeyToAccount(privateKey);
  }

  get address(): Hex {
    return this.account.address;
  }

  /** The order struct of a buy; undefined when its amounts are not exact (see buyAmounts). */
  buyOrder(p: BuyOrderParams): OrderStruct | undefined {
    const amounts = buyAmounts(p.limitPrice, p.shares);
    if (!amounts) return undefined;
    return {
      salt: saltFor(p.clientOrderId),
      maker: this.address,
      signer: this.address,
      taker: ZERO_ADDRESS,
      tokenId: BigInt(p.tokenId),
      ...amounts,
      expiration: expirationFor(p.expiresAt),
      nonce: 0n,
      feeRateBps: p.feeRateBps,
      side: SIDE_BUY,
      signatureType: SIGNATURE_EOA,
    };
  }

  sign(order: OrderStruct, negRisk: boolean): Promise<Hex> {
    return this.account.signTypedData({ domain: orderDomain(negRisk), types: ORDER_TYPES, primaryType: "Order", message: order });
  }
}

/** The JSON of `POST /order`, as clob-client's orderToJson writes it (salt as a number, amounts as strings). */
export function orderBody(order: OrderStruct, signature: Hex, owner: string, orderType: "FAK" | "FOK" | "GTC" | "GTD") {
  return {
    deferExec: false,
    order: {
      salt: Number(order.salt),
      maker: order.maker,
      signer: order.signer,
      taker: order.taker,
      tokenId: order.tokenId.toString(),
      makerAmount: order.makerAmount.toString(),
      takerAmount: order.takerAmount.toString(),
      side: order.side === SIDE_BUY ? "BUY" : "SELL",
      expiration: order.expiration.toString(),
      nonce: order.nonce.toString(),
      feeRateBps: order.feeRateBps.toString(),
      signatureType: order.signatureType,
      signature,
    },
    owner,
    orderType,
  };
}
