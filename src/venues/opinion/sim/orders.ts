import { randomBytes } from "node:crypto";
import type { Hex } from "viem";
import { ceilDiv, formatMicro, notional, ONE, type PriceMicro } from "../../../domain/money.ts";
import type { Outcome } from "../../../domain/types.ts";
import { SIDE_BUY, SIDE_SELL, type OrderStruct } from "../../ctf-order.ts";
import type { SimExchange } from "../../simulated/exchange.ts";
import { OPINION_SIM } from "../../simulated/profiles.ts";
import type { ChildOrder, TradeSide, VenueFill } from "../../venue.ts";
import { orderFromBody, orderSigner, SIGNATURE_GNOSIS_SAFE, TRADING_LIMIT } from "../signing.ts";
import { ERRNO_DUPLICATE_ORDER, OPINION_MIN_ORDER, ORDER_CANCELED, ORDER_EXPIRED, ORDER_FINISHED, ORDER_PENDING, outcomeSide, parsePrice, toTokenUnits, type OpinionOrder, type OpinionTrade } from "../wire.ts";

/** Refusals, as `{ errno, errmsg }` (assumed codes: Opinion documents none). */
export const ERRNO_INVALID = 10_400;
export const ERRNO_NOT_FOUND = 10_404;
/** The refusal of a sell of more shares than the Safe holds (assumed words). */
const NOT_ENOUGH_SHARES = "insufficient balance of the outcome token";
/** The refusal of an order whose quote-token amount (a buy's makerAmount, a sell's takerAmount) is under the minimum order (assumed words). */
export const MIN_ORDER = `order amount is below the minimum of ${formatMicro(OPINION_MIN_ORDER)} USDT`;

export interface DeskMarket {
  marketId: number;
  slug: string;
  title: string;
  tokens: Record<Outcome, string>;
}

export interface DeskAccount {
  signer: Hex;
  safe: Hex;
  exchange: Hex;
  quoteToken: Hex;
  /** The quote token's decimals: 10^(decimals − 6) token units make a micro-USDC. */
  decimals: number;
}

interface DeskOrder {
  orderId: string;
  /** The order's client order id on the shared exchange. */
  key: string;
  market: DeskMarket;
  outcome: Outcome;
  side: TradeSide;
  price: PriceMicro;
  shares: bigint;
  createdAt: number;
  /** orderExpTime, unix seconds; 0 for none. */
  expiresAt: number;
  fills: VenueFill[];
  /** Cancelled by its owner, or expired while resting. */
  ended: "cancelled" | "expired" | undefined;
  txHash: string;
}

export type CreateOutcome = { kind: "created"; order: OpinionOrder } | { kind: "refused"; errno: number; errmsg: string };

/**
 * The trading side of the Opinion simulator: checks a posted order as the venue would (market and
 * token, a limit buy or sell, the Safe as maker and its owner as signer, the EIP-712 signature for the
 * quote token's exchange, amounts at the price and at least the minimum order, orderExpTime not passed, a salt not used before, and
 * for a sell the shares the Safe holds), runs it on the shared exchange, and keeps it with its
 * trades. The exchange kills what a limit order cannot take at once, so an order ends `Canceled` with
 * what it took, unless the `resting` fault leaves its rest pending until a cancel or its orderExpTime.
 */
export class OpinionOrderDesk {
  private readonly orders = new Map<string, DeskOrder>();
  private readonly bySalt = new Set<string>();

  constructor(
    private readonly exchange: SimExchange,
    private readonly account: DeskAccount,
    private readonly market: (marketId: number) => DeskMarket | undefined,
    private readonly now: () => number,
  ) {}

  async create(body: unknown): Promise<CreateOutcome> {
    const refused = (errmsg: string, errno = ERRNO_INVALID): CreateOutcome => ({ kind: "refused", errno, errmsg });
    const b = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
    if (b.tradingMethod !== TRADING_LIMIT) return refused("this simulator only executes limit orders (tradingMethod 2)");
    const market = typeof b.topicId === "number" ? this.market(b.topicId) : undefined;
    if (!market) return refused(`market ${String(b.topicId)} not found`, ERRNO_NOT_FOUND);
    let order: OrderStruct;
    let price: PriceMicro;
    try {
      order = orderFromBody(b);
      price = parsePrice(b.price, "price");
    } catch (err) {
      return refused(err instanceof Error ? err.message : String(err));
    }
    const expTime = typeof b.orderExpTime === "string" && /^\d{1,12}$/.test(b.orderExpTime) ? Number(b.orderExpTime) : undefined;
    if (expTime === undefined) return refused("orderExpTime must be unix seconds, 0 for none");
    if (typeof b.signature !== "string" || !/^0x[0-9a-fA-F]+$/.test(b.signature)) return refused("signature is required");
    const outcome = (Object.keys(market.tokens) as Outcome[]).find((o) => BigInt(market.tokens[o]) === order.tokenId);
    if (!outcome) return refused(`tokenId is not a position of market ${market.marketId}`);
    if (typeof b.currencyAddress !== "string" || b.currencyAddress.toLowerCase() !== this.account.quoteToken.toLowerCase()) return refused("currencyAddress is not the market's quote token");
    if (order.side !== SIDE_BUY && order.side !== SIDE_SELL) return refused("side must be 0 (BUY) or 1 (SELL)");
    // a BUY pays the quote token (maker) for shares (taker), a SELL gives shares for the quote token
    const side: TradeSide = order.side === SIDE_BUY ? "buy" : "sell";
    const [paid, sharesIn] = side === "buy" ? [order.makerAmount, order.takerAmount] : [order.takerAmount, order.makerAmount];
    if (order.signatureType !== SIGNATURE_GNOSIS_SAFE) return refused("orders are signed by a Safe's owner (signatureType 2)");
    if (order.maker.toLowerCase() !== this.account.safe.toLowerCase() || order.signer.toLowerCase() !== this.account.signer.toLowerCase()) {
      return refused("maker must be the API key's Safe and signer its owner");
    }
    // an order for a fraction of a lot (the SDK sizes orders by their USDT amount) trades the whole lots in it
    const lot = OPINION_SIM.lotShares * 10n ** BigInt(this.account.decimals - 6);
    const shares = ((sharesIn / lot) * lot) / 10n ** BigInt(this.account.decimals - 6);
    if (shares === 0n) return refused("the order is for less than one lot (0.01 share)");
    if (side === "buy" && paid < ceilDiv(price * sharesIn, ONE)) return refused("makerAmount does not pay price × takerAmount");
    if (side === "sell" && paid > (price * sharesIn) / ONE) return refused("takerAmount asks more than price × makerAmount");
    if (paid < toTokenUnits(OPINION_MIN_ORDER, this.account.decimals)) return refused(MIN_ORDER);
    let signer: Hex;
    try {
      signer = await orderSigner(order, this.account.exchange, b.signature as Hex);
    } catch {
      return refused("invalid order signature");
    }
    if (signer.toLowerCase() !== order.signer.toLowerCase()) return refused("invalid order signature");
    const key = `${order.signer.toLowerCase()}:${order.salt}`;
    if (this.bySalt.has(key)) return refused("an order with this salt already exists", ERRNO_DUPLICATE_ORDER);

    const child: ChildOrder = { clientOrderId: key, venueMarketId: market.slug, outcome, side, limitPrice: price, shares, expiresAt: expTime === 0 ? Number.POSITIVE_INFINITY : expTime * 1000 };
    const result = this.exchange.place(child);
    if (result.kind === "rejected" && result.reason.startsWith("order_expired")) return refused("order expired");
    if (result.kind === "rejected" && result.reason.startsWith("insufficient_position")) return refused(NOT_ENOUGH_SHARES);
    if (result.kind === "rejected" && !result.reason.startsWith("no_match")) return refused(result.reason);
    const placed: DeskOrder = {
      orderId: OPINION_SIM.newOrderId(),
      key,
      market,
      outcome,
      side,
      price,
      shares,
      createdAt: Math.floor(this.now() / 1000),
      expiresAt: expTime,
      fills: result.kind === "filled" || result.kind === "partial" ? result.fills : [],
      ended: undefined,
      txHash: `0x${randomBytes(32).toString("hex")}`,
    };
    this.orders.set(placed.orderId, placed);
    this.bySalt.add(key);
    return { kind: "created", order: this.view(placed, false) };
  }

  /** An order with its trades (`GET /order/{orderId}`). */
  order(orderId: string): OpinionOrder | undefined {
    const o = this.orders.get(orderId);
    return o && this.view(o, true);
  }

  /** The account's orders, newest first, optionally of one market and one status. */
  list(marketId: number | undefined, status: number | undefined): OpinionOrder[] {
    return [...this.orders.values()]
      .reverse()
      .filter((o) => marketId === undefined || o.market.marketId === marketId)
      .map((o) => this.view(o, false))
      .filter((v) => status === undefined || v.status === status);
  }

  /** Cancels what rests of a pending order; an errno for an unknown order or one with nothing resting. */
  cancel(orderId: unknown): { errno: number; errmsg: string } {
    const o = typeof orderId === "string" ? this.orders.get(orderId) : undefined;
    if (!o) return { errno: ERRNO_NOT_FOUND, errmsg: "order not found" };
    if (this.view(o, false).status !== ORDER_PENDING) return { errno: ERRNO_INVALID, errmsg: "order is not pending" };
    this.exchange.cancel(o.key);
    o.ended = "cancelled";
    return { errno: 0, errmsg: "" };
  }

  /**
   * Another trader's order takes up to `shares` of what rests of order `orderId` (the `resting` fault): a trade the
   * account is in as the maker, at its order's price, which pays no fee. Answers the trade number.
   */
  takeResting(orderId: string, shares: bigint): string {
    const o = this.orders.get(orderId);
    const fill = o && this.exchange.takeResting(o.key, shares);
    if (!o || !fill) throw new Error(`order ${orderId} does not rest on the simulator`);
    o.fills = [...o.fills, fill];
    return fill.tradeId;
  }

  /** The account's trades, newest first (`GET /trade`). */
  trades(): OpinionTrade[] {
    const all = [...this.orders.values()].flatMap((o) => o.fills.map((f) => this.trade(o, f)));
    return this.reported(all.reverse());
  }

  private view(o: DeskOrder, withTrades: boolean): OpinionOrder {
    if (o.ended === undefined && o.expiresAt !== 0 && this.exchange.resting(o.key) > 0n && this.now() >= o.expiresAt * 1000) {
      // orderExpTime passed: the venue cancels what rests
      this.exchange.cancel(o.key);
      o.ended = "expired";
    }
    const filled = o.fills.reduce((s, f) => s + f.shares, 0n);
    const paid = o.fills.reduce((s, f) => s + notional(f.price, f.shares), 0n);
    const status = this.exchange.resting(o.key) > 0n ? ORDER_PENDING : o.ended === "expired" ? ORDER_EXPIRED : filled === o.shares ? ORDER_FINISHED : ORDER_CANCELED;
    return {
      orderId: o.orderId,
      transNo: o.orderId,
      marketId: o.market.marketId,
      marketTitle: o.market.title,
      side: o.side === "buy" ? 1 : 2,
      sideEnum: o.side === "buy" ? "Buy" : "Sell",
      outcomeSide: outcomeSide(o.outcome),
      outcomeSideEnum: o.outcome === "YES" ? "Yes" : "No",
      outcome: o.outcome === "YES" ? "Yes" : "No",
      price: formatMicro(o.price),
      orderShares: formatMicro(o.shares),
      orderAmount: formatMicro(notional(o.price, o.shares)),
      filledShares: formatMicro(filled),
      filledAmount: formatMicro(paid),
      status,
      statusEnum: ["", "Pending", "Finished", "Canceled", "Expired"][status],
      tradingMethod: TRADING_LIMIT,
      tradingMethodEnum: "Limit",
      quoteToken: this.account.quoteToken,
      createdAt: o.createdAt,
      expiresAt: o.expiresAt,
      ...(withTrades ? { trades: this.reported(o.fills.map((f) => this.trade(o, f))) } : {}),
    };
  }

  private trade(o: DeskOrder, f: VenueFill): OpinionTrade {
    return {
      tradeNo: f.tradeId,
      orderNo: o.orderId,
      txHash: o.txHash,
      marketId: o.market.marketId,
      marketTitle: o.market.title,
      side: o.side === "buy" ? "Buy" : "Sell",
      outcome: o.outcome === "YES" ? "Yes" : "No",
      outcomeSide: outcomeSide(o.outcome),
      outcomeSideEnum: o.outcome === "YES" ? "Yes" : "No",
      price: formatMicro(f.price),
      shares: formatMicro(f.shares),
      amount: formatMicro(notional(f.price, f.shares)),
      fee: Number(formatMicro(f.fee)),
      feeFormatted: formatMicro(f.fee),
      status: ORDER_FINISHED,
      statusEnum: "Finished",
      quoteToken: this.account.quoteToken,
      quoteTokenUsdPrice: "1",
      usdAmount: formatMicro(notional(f.price, f.shares)),
      chainId: "56",
      createdAt: o.createdAt,
    };
  }

  /** What the venue reports of a list of trades: each twice, same trade number, while the duplicate fault is on. */
  private reported<T>(trades: T[]): T[] {
    return this.exchange.faults.duplicateTrades ? trades.flatMap((t) => [t, t]) : trades;
  }
}
