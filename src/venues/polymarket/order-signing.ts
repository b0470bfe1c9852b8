import { createHash } from "node:crypto";
import type { Hex } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { evmAccount } from "../../evm/account.ts";
import { typedDataHash } from "../../evm/typed-data.ts";
import { ONE, type PriceMicro, type ShareMicro } from "../../domain/money.ts";
import { SIDE_BUY, SIDE_SELL, SIGNATURE_EOA } from "../ctf-order.ts";

/** Polygon mainnet and the CLOB V2 exchanges that settle Polymarket orders (docs.polymarket.com/v2-migration, clob-client-v2's MATIC_CONTRACTS). */
export const POLYGON_CHAIN_ID = 137;
export const CTF_EXCHANGE_V2 = "0xE111180000d2663C0091e4f400237545B87B996B" as const;
export const NEG_RISK_CTF_EXCHANGE_V2 = "0xe2222d279d744050d28e00520010520000310F59" as const;
/** The bytes32 of an order without metadata or builder code. */
export const BYTES32_ZERO = `0x${"0".repeat(64)}` as const;

/** The 11 signed fields of a CLOB V2 order. `expiration` travels beside them in the payload, unsigned. */
export const ORDER_TYPES = {
  Order: [
    { name: "salt", type: "uint256" },
    { name: "maker", type: "address" },
    { name: "signer", type: "address" },
    { name: "tokenId", type: "uint256" },
    { name: "makerAmount", type: "uint256" },
    { name: "takerAmount", type: "uint256" },
    { name: "side", type: "uint8" },
    { name: "signatureType", type: "uint8" },
    { name: "timestamp", type: "uint256" },
    { name: "metadata", type: "bytes32" },
    { name: "builder", type: "bytes32" },
  ],
} as const;

export interface OrderStruct {
  salt: bigint;
  maker: Hex;
  signer: Hex;
  tokenId: bigint;
  makerAmount: bigint;
  takerAmount: bigint;
  side: number;
  signatureType: number;
  /** Milliseconds: what tells two otherwise equal orders of one address apart (V1's nonce). */
  timestamp: bigint;
  metadata: Hex;
  builder: Hex;
}

/** A V2 order as posted: the signed struct and its unsigned `expiration` (unix seconds, 0 for none). */
export interface PostedOrder {
  order: OrderStruct;
  expiration: bigint;
}

export function orderDomain(negRisk: boolean) {
  return {
    name: "Polymarket CTF Exchange",
    version: "2",
    chainId: POLYGON_CHAIN_ID,
    verifyingContract: negRisk ? NEG_RISK_CTF_EXCHANGE_V2 : CTF_EXCHANGE_V2,
  } as const;
}

/** The order hash: Polymarket's order id. It does not cover `expiration`. */
export function orderHash(order: OrderStruct, negRisk: boolean): Hex {
  return typedDataHash({ domain: orderDomain(negRisk), types: ORDER_TYPES, primaryType: "Order", message: order });
}

/**
 * The salt of our order with this client id. Derived rather than random (clob-client-v2 draws it
 * from Math.random) so that the same child order always hashes to the same order id: a retry is
 * recognised by the venue as a duplicate, and the order can be found again after a crash. 48
 * bits, because the wire carries the salt as a JSON number.
 */
export function saltFor(clientOrderId: string): bigint {
  return BigInt(`0x${createHash("sha256").update(clientOrderId).digest("hex").slice(0, 12)}`);
}

/** The exchange's amounts have 6 decimals: a market buy's pUSD may have at most 2 and its shares 4 (see buyAmounts), a sell's shares 2 (see sellAmounts). */
const CENT_MICRO = 10_000n;
const SHARE_STEP_MICRO = 100n;
const SELL_SHARE_STEP_MICRO = 10_000n;

/**
 * A buy of `shares` at `limitPrice` in the exchange's 6-decimal amounts: the maker gives pUSD,
 * the taker side is the shares. Exact, or undefined when price × size is not whole cents or the
 * size has more than 4 decimals: the venue refuses such a FAK/FOK buy ("invalid amounts, the market
 * buy orders maker amount supports a max accuracy of 2 decimals, taker amount a max of 4
 * decimals"), which a market's lot (wire.ts, grid) avoids. The venue spends the whole maker amount:
 * at asks below the limit the order receives more shares than `shares`.
 */
function buyAmounts(limitPrice: PriceMicro, shares: ShareMicro): { makerAmount: bigint; takerAmount: bigint } | undefined {
  const usdc = limitPrice * shares;
  if (usdc % (ONE * CENT_MICRO) !== 0n || shares % SHARE_STEP_MICRO !== 0n) return undefined;
  return { makerAmount: usdc / ONE, takerAmount: shares };
}

/**
 * A sell of `shares` at no less than `limitPrice`, as clob-client-v2's getOrderRawAmounts writes a
 * SELL: the maker gives the shares and asks price × size pUSD in return. Exact, or undefined when
 * the shares are off the venue's 0.01-share step (clob-client-v2's ROUNDING_CONFIG rounds a SELL's
 * size to 2 decimals at every tick: 5.000002 shares at 0.5 is a whole micro-pUSD, and refused) or
 * price × size is not a whole micro-pUSD.
 */
function sellAmounts(limitPrice: PriceMicro, shares: ShareMicro): { makerAmount: bigint; takerAmount: bigint } | undefined {
  const usdc = limitPrice * shares;
  if (shares % SELL_SHARE_STEP_MICRO !== 0n || usdc % ONE !== 0n) return undefined;
  return { makerAmount: shares, takerAmount: usdc / ONE };
}

/**
 * The order's `expiration` (unix seconds) for a child order's `expiresAt` (ms), rounded down to the
 * whole second the field counts: the venue then refuses the order no later than the child expires,
 * which is what lets recovery call a child it does not find never placed once its expiry has passed.
 * It is the child's expiry as it is, without the one-minute "security threshold" the docs describe
 * for GTD orders: a venue that applied the threshold to our FAK orders too would refuse them up to a
 * minute early, never late, whereas adding the minute would let a venue that does not apply it take
 * an order a minute after its child expired.
 */
export function expirationFor(expiresAt: number): bigint {
  return BigInt(Math.floor(expiresAt / 1000));
}

export interface OrderParams {
  clientOrderId: string;
  tokenId: string;
  limitPrice: PriceMicro;
  shares: ShareMicro;
  /** The child order's expiry, ms since the epoch. */
  expiresAt: number;
}

/** Signs orders for one EOA (signature type 0: the signer is the maker and holds the pUSD). */
export class OrderSigner {
  readonly account: PrivateKeyAccount;

  constructor(privateKey: Hex) {
    this.account = evmAccount(privateKey);
  }

  get address(): Hex {
    return this.account.address;
  }

  /**
   * The order of a buy; undefined when its amounts are not exact (see buyAmounts). Every signed field
   * comes from the child order, so the same child always makes the same order id: the salt from its
   * client id, and the timestamp is its expiry in ms (a child is placed once, so the timestamp is only
   * needed to be its own, and the expiry is the one instant the child order keeps).
   */
  buyOrder(p: OrderParams): PostedOrder | undefined {
    const amounts = buyAmounts(p.limitPrice, p.shares);
    return amounts && this.posted(p, SIDE_BUY, amounts);
  }

  /** The order of a sell, built as a buy's is (salt, timestamp and expiration from the child order); undefined when its amounts are not exact (see sellAmounts). */
  sellOrder(p: OrderParams): PostedOrder | undefined {
    const amounts = sellAmounts(p.limitPrice, p.shares);
    return amounts && this.posted(p, SIDE_SELL, amounts);
  }

  private posted(p: OrderParams, side: number, amounts: { makerAmount: bigint; takerAmount: bigint }): PostedOrder {
    return {
      order: {
        salt: saltFor(p.clientOrderId),
        maker: this.address,
        signer: this.address,
        tokenId: BigInt(p.tokenId),
        ...amounts,
        side,
        signatureType: SIGNATURE_EOA,
        timestamp: BigInt(p.expiresAt),
        metadata: BYTES32_ZERO,
        builder: BYTES32_ZERO,
      },
      expiration: expirationFor(p.expiresAt),
    };
  }

  /** Signs an order by its hash (orderHash, the order's EIP-712 digest), which placing has made already. */
  sign(orderId: Hex): Promise<Hex> {
    return this.account.sign({ hash: orderId });
  }
}

/** The JSON of `POST /order`, as clob-client-v2's orderToJsonV2 writes it (salt as a number, amounts and timestamp as strings). */
export function orderBody({ order, expiration }: PostedOrder, signature: Hex, owner: string, orderType: "FAK" | "FOK" | "GTC" | "GTD") {
  return {
    deferExec: false,
    postOnly: false,
    order: {
      salt: Number(order.salt),
      maker: order.maker,
      signer: order.signer,
      tokenId: order.tokenId.toString(),
      makerAmount: order.makerAmount.toString(),
      takerAmount: order.takerAmount.toString(),
      side: order.side === SIDE_BUY ? "BUY" : "SELL",
      signatureType: order.signatureType,
      timestamp: order.timestamp.toString(),
      expiration: expiration.toString(),
      metadata: order.metadata,
      builder: order.builder,
      signature,
    },
    owner,
    orderType,
  };
}
