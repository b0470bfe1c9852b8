import type { FeeModel } from "../../domain/fees.ts";
import { ceilScaled, ONE, parseMicro, type Micro, type PriceMicro, type ShareMicro } from "../../domain/money.ts";
import type { Outcome } from "../../domain/types.ts";
import { feesPerFill, uniqueTrades } from "../placement.ts";
import { resolutionStatus, type TradeSide, type VenueFill, type VenueMarket, type VenueResolution } from "../venue.ts";

/** Opinion prices move in 0.001 steps (assumed: the SDK accepts up to 6 decimals, the web app quotes tenths of a cent). */
export const OPINION_TICK: PriceMicro = 1_000n;
/** Share increment of an order (assumed: the exchange is a CTF exchange, whose books rest in 0.01-share lots). */
export const OPINION_LOT: ShareMicro = 10_000n;
/** The SDK refuses amounts under 1 (quote or outcome token): one share is the smallest order. */
export const OPINION_MIN_SHARES: ShareMicro = 1_000_000n;
/**
 * Opinion's minimum order, 5 USDT ("$5 minimum order", docs.opinion.trade, the fees page), taken
 * as the quote-token amount the order signs: a buy's makerAmount, a sell's takerAmount, both
 * `proceedsOf` its price and shares (signing.ts). No endpoint states it.
 */
export const OPINION_MIN_ORDER: Micro = 5_000_000n;

/** Every answer of Opinion's OpenAPI: errno 0 with a result, or a non-zero errno and its message. */
export interface OpinionEnvelope<T> {
  errno: number;
  errmsg: string;
  result: T;
}

/** The fields of a binary market (`GET /market/{marketId}`, entries of `GET /market`) that crossfill reads. */
export interface OpinionMarket {
  marketId: number;
  marketTitle: string;
  /** 1 created, 2 activated, 3 resolving, 4 resolved, 5 failed, 6 deleted. */
  status: number;
  statusEnum?: string;
  yesTokenId: string;
  noTokenId: string;
  /** On a resolved market, the winning token: yesTokenId or noTokenId. */
  resultTokenId?: string;
  /** When trading stops, unix seconds. */
  cutoffAt: number;
  /** The collateral's address; its exchange contract and decimals come from `GET /quoteToken`. */
  quoteToken: string;
  chainId: string;
  conditionId?: string;
  /** Traded volume in quote-token units, a decimal string. */
  volume?: string;
  [field: string]: unknown;
}

/** An entry of `GET /quoteToken`: the collateral, its decimals and the exchange contract orders in it are signed for. */
export interface OpinionQuoteToken {
  quoteTokenAddress: string;
  ctfExchangeAddress: string;
  decimal: number;
  symbol?: string;
  chainId?: string;
}

export interface OpinionLevel {
  price: string;
  size: string;
}

/** `GET /token/orderbook?token_id=`: one token's book, bids best first, asks best first. */
export interface OpinionOrderbook {
  market?: string;
  tokenId: string;
  /** ms since the epoch. */
  timestamp?: number;
  bids: OpinionLevel[];
  asks: OpinionLevel[];
}

/** A trade as the order detail (`trades[]`) and `GET /trade` list it. */
export interface OpinionTrade {
  tradeNo: string;
  /** The account's order the trade filled (assumed: the documented field is named orderNo, "trade identification"). */
  orderNo: string;
  marketId: number;
  /** "Buy" or "Sell". */
  side?: string;
  price: string;
  shares: string;
  amount?: string;
  fee?: number | string;
  feeFormatted?: string;
  /** 1 pending, 2 finished, 3 canceled, 4 expired, 5 failed (the OpenAPI's `OpenapiTradeDataOpenApi`). */
  status?: number;
  createdAt?: number;
  txHash?: string;
  [field: string]: unknown;
}

/** An order (`orderData` of `POST /order`, `GET /order/{orderId}`; entries of `GET /order`). */
export interface OpinionOrder {
  orderId: string;
  marketId: number;
  /** "Buy" or "Sell" (the human-readable form of `side`, whose numbers the API does not document). */
  sideEnum?: string;
  /** 1 yes, 2 no. */
  outcomeSide: number;
  price: string;
  orderShares: string;
  filledShares: string;
  /** 1 pending, 2 finished, 3 canceled, 4 expired, 5 failed. */
  status: number;
  /** Unix seconds; the order's orderExpTime. */
  expiresAt?: number;
  trades?: OpinionTrade[];
  [field: string]: unknown;
}

/** The errno of a refused repeat of a salt the account already used (assumed: Opinion documents no error codes). */
export const ERRNO_DUPLICATE_ORDER = 10_409;

export const ORDER_PENDING = 1;
export const ORDER_FINISHED = 2;
export const ORDER_CANCELED = 3;
export const ORDER_EXPIRED = 4;
export const ORDER_FAILED = 5;
/** A trade's status once its settlement failed: it never settled, and is no fill. */
export const TRADE_FAILED = 5;

export function outcomeSide(outcome: Outcome): number {
  return outcome === "YES" ? 1 : 2;
}

/** An order's or a trade's side as Opinion writes it, "Buy" or "Sell". */
export function tradeSide(side: unknown, field: string): TradeSide {
  if (side !== "Buy" && side !== "Sell") throw new RangeError(`${field} must be Buy or Sell, got ${JSON.stringify(side)}`);
  return side === "Buy" ? "buy" : "sell";
}

/** A decimal string in (0, 1), exact to the micro-USDC. */
export function parsePrice(value: unknown, field: string): PriceMicro {
  const p = parseMicro(value, field);
  if (p <= 0n || p >= ONE) throw new RangeError(`${field} ${String(value)} is not strictly between 0 and 1`);
  return p;
}

/**
 * A market's resolution from `status` and `resultTokenId` (the SDK's TopicStatus and market fields):
 * 2 activated trades; 4 resolved names its winning token in `resultTokenId`, the one the SDK's redeem()
 * pays (it redeems only a resolved market); 3 resolving, and created, failed or deleted markets, trade no
 * more and pay nothing. A resolved market whose `resultTokenId` is neither of its tokens names no outcome: closed.
 */
export function opinionResolution(m: Pick<OpinionMarket, "status" | "resultTokenId" | "yesTokenId" | "noTokenId">): VenueResolution {
  if (m.status === 2) return { state: "open" };
  if (m.status === 4 && m.resultTokenId === m.yesTokenId) return { state: "resolved", outcome: "YES" };
  if (m.status === 4 && m.resultTokenId === m.noTokenId) return { state: "resolved", outcome: "NO" };
  return { state: "closed" };
}

/**
 * Opinion's minimum fee per order, 0.25 USDT: "$5 minimum order and $0.25 minimum fee", "a dynamic
 * fallback so extremely small curve fees revert to $0.25" (docs.opinion.trade, the fees page; an
 * older version says $0.5). No endpoint states it.
 */
export const OPINION_MIN_FEE: Micro = 250_000n;

/** Opinion's fee curve at the market's taker rate (`GET /token/fee-rates`: takerFeeBps), with its minimum fee per order. */
export function opinionFeeModel(takerFeeBps: unknown): FeeModel {
  const bps = typeof takerFeeBps === "string" && /^\d{1,6}$/.test(takerFeeBps) ? Number(takerFeeBps) : takerFeeBps;
  if (typeof bps !== "number" || !Number.isSafeInteger(bps) || bps < 0) throw new RangeError(`takerFeeBps must be a non-negative integer (got ${JSON.stringify(takerFeeBps)})`);
  return { kind: "opinion", ratePpm: BigInt(bps) * 100n, minFee: OPINION_MIN_FEE };
}

/**
 * A market's fee model from the taker rates of its two tokens (`GET /token/fee-rates` rates each token):
 * a market's fee model has one rate, so a market whose tokens the venue rates apart is refused, not
 * priced at one token's rate for orders on the other.
 */
export function tokensFeeModel(takerFeeBps: Record<Outcome, unknown>): FeeModel {
  const [yes, no] = [opinionFeeModel(takerFeeBps.YES), opinionFeeModel(takerFeeBps.NO)];
  if (yes.ratePpm !== no.ratePpm) throw new RangeError(`its YES token's taker rate (${yes.ratePpm / 100n} bps) differs from its NO token's (${no.ratePpm / 100n} bps)`);
  return yes;
}

export function toVenueMarket(m: OpinionMarket, feeModel: FeeModel): VenueMarket {
  return {
    venueMarketId: String(m.marketId),
    title: m.marketTitle,
    outcomeIds: { YES: m.yesTokenId, NO: m.noTokenId },
    status: resolutionStatus(opinionResolution(m)),
    closeTime: new Date(m.cutoffAt * 1000).toISOString(),
    tickSize: OPINION_TICK,
    minOrderShares: OPINION_MIN_SHARES,
    lotShares: OPINION_LOT,
    minOrderAmount: { buy: OPINION_MIN_ORDER, sell: OPINION_MIN_ORDER },
    feeModel,
    volume: m.volume === undefined ? 0n : parseMicro(m.volume, "volume"),
  };
}

/** One side of a book as levels by price, in micro units; empty levels left out, repeated prices added up. */
export function levelMap(levels: readonly OpinionLevel[], field: string): Map<PriceMicro, ShareMicro> {
  const map = new Map<PriceMicro, ShareMicro>();
  // named once a side, not once a level: a stream reads thousands of levels a second
  const priceField = `${field}[].price`;
  const sizeField = `${field}[].size`;
  for (const l of levels) {
    const price = parsePrice(l.price, priceField);
    const size = parseMicro(l.size, sizeField);
    if (size > 0n) map.set(price, (map.get(price) ?? 0n) + size);
  }
  return map;
}

/**
 * The fills of one order from its trades, each trade once however often it is listed, less those whose
 * settlement failed (status 5: nothing was traded, as a FAILED trade on Polymarket is no fill). A trade the
 * venue lists with a fee of 0 is the order's as a maker (part of its rest, taken by another's order before
 * its cancel), which pays nothing: Opinion charges takers only, and a taker at least the minimum fee. The
 * taker trades' fee is the order's fee under the market's curve on them, split over them (feesPerFill), so
 * the parts add up to what the order is charged as a taker; a trade's fee is otherwise not read (docs/venues/opinion.md).
 */
export function fillsFromTrades(trades: readonly OpinionTrade[], venueOrderId: string, clientOrderId: string, model: FeeModel): VenueFill[] {
  const unique = uniqueTrades(
    settled(trades).map((t, i) => ({
      tradeId: t.tradeNo,
      side: tradeSide(t.side, `trades[${i}].side`),
      price: parsePrice(t.price, `trades[${i}].price`),
      shares: parseMicro(t.shares, `trades[${i}].shares`),
      maker: t.fee !== undefined && ceilScaled(t.fee, 1n, `trades[${i}].fee`) === 0n,
    })),
  );
  const takerFees = feesPerFill(model, unique.filter((t) => !t.maker));
  let taker = 0;
  return unique.map((t) => ({ tradeId: t.tradeId, venueOrderId, clientOrderId, side: t.side, price: t.price, shares: t.shares, fee: t.maker ? 0n : takerFees[taker++]! }));
}

/**
 * The account's trades (`GET /trade`), oldest first, each side once, its fee its order's fee split over the order's
 * trades. A self-trade lists one trade number under each of the account's two orders: each is its order's fill.
 */
export function tradesFromList(trades: readonly OpinionTrade[], feeModel: (marketId: string) => FeeModel): VenueFill[] {
  const byOrder = new Map<string, OpinionTrade[]>();
  for (const t of settled(trades)) byOrder.set(t.orderNo, [...(byOrder.get(t.orderNo) ?? []), t]);
  const fills = new Map<string, VenueFill>();
  for (const [orderNo, group] of byOrder) {
    for (const f of fillsFromTrades(group, orderNo, "", feeModel(String(group[0]!.marketId)))) fills.set(`${orderNo}/${f.tradeId}`, f);
  }
  return [...new Set(settled(trades).map((t) => `${t.orderNo}/${t.tradeNo}`))].map((key) => fills.get(key)!);
}

/** The trades that did not fail to settle. */
function settled(trades: readonly OpinionTrade[]): OpinionTrade[] {
  return trades.filter((t) => t.status !== TRADE_FAILED);
}

/** A micro amount in a token of `decimals` decimals (Opinion's USDT on BNB Chain has 18). */
export function toTokenUnits(micro: Micro, decimals: number): bigint {
  if (!Number.isInteger(decimals) || decimals < 6 || decimals > 18) throw new RangeError(`a quote token of ${decimals} decimals is not supported`);
  return micro * 10n ** BigInt(decimals - 6);
}
