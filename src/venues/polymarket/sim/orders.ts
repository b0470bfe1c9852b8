import { createHash } from "node:crypto";
import { recoverTypedDataAddress, type Hex } from "viem";
import { formatMicro, ONE } from "../../../domain/money.ts";
import type { Clock, Outcome } from "../../../domain/types.ts";
import { costOf } from "../../simulated/book-engine.ts";
import type { SimExchange } from "../../simulated/exchange.ts";
import type { TradeSide, VenueFill } from "../../venue.ts";
import { SIDE_BUY, SIDE_SELL } from "../../ctf-order.ts";
import { ORDER_TYPES, orderDomain, orderHash, type OrderStruct } from "../order-signing.ts";
import { POLYMARKET_MIN_BUY } from "../wire.ts";
import { cursorPage } from "./render.ts";

export interface SimMarketRef {
  conditionId: string;
  outcome: Outcome;
  /** The market's taker fee rate, which its trades report as `fee_rate_bps`. */
  feeRateBps: bigint;
  tickSize: bigint;
  minOrderShares: bigint;
}

interface OrderRecord {
  id: string;
  market: string;
  assetId: string;
  outcome: Outcome;
  side: TradeSide;
  price: bigint;
  originalSize: bigint;
  fills: VenueFill[];
  createdAt: number;
  maker: string;
  owner: string;
  orderType: "FAK" | "FOK";
  /** As posted (not signed in V2): unix seconds, 0 for none. */
  expiration: bigint;
  feeRateBps: bigint;
  /** Cancelled by `DELETE /order` while part of it rested. */
  canceled: boolean;
}

/** An account of the simulator: its L2 credentials and the wallet they belong to. */
export interface SimAccount {
  apiKey: string;
  secret: string;
  passphrase: string;
  address: string;
}

/** The answer of one request: HTTP status and JSON body. */
export interface Answer {
  status: number;
  body: unknown;
}

/** What Polymarket answers a V1-signed order since CLOB V2 (github.com/Polymarket/polymarket-cli/issues/69; clob-client-v2's ORDER_VERSION_MISMATCH_ERROR). */
const VERSION_MISMATCH = "order_version_mismatch";
const DUPLICATED = "order is invalid. Duplicated. Same order has already been placed, can't be placed again";
const FAK_NO_MATCH = "no orders found to match with FAK order. FAK orders are partially filled or killed if no match is found.";
const FOK_NOT_FILLED = "order couldn't be fully filled. FOK orders are fully filled or killed.";
/** What the CLOB answers a FAK/FOK BUY of more than 2 decimals of pUSD or 4 of shares (github.com/Polymarket/rs-clob-client-v2/issues/59, py-clob-client-v2/issues/99). */
const INVALID_MARKET_BUY = "invalid amounts, the market buy orders maker amount supports a max accuracy of 2 decimals, taker amount a max of 4 decimals";
/** What the CLOB answers a FAK/FOK BUY whose maker amount is under $1 (docs/venues/polymarket.md, "Minimum marketable buy"). */
const UNDER_MIN_BUY = (usdc: bigint) => `invalid amount for a marketable BUY order ($${formatMicro(usdc)}), min size: $1`;
/** A cent and a ten-thousandth of a share, in the exchange's 6-decimal amounts. */
const CENT = 10_000n;
const SHARE_STEP = 100n;
/** What the CLOB answers an order whose maker asset the wallet lacks: pUSD for a buy, the outcome's shares for a sell (seen on production; the error-codes page does not list it). */
const NOT_ENOUGH_BALANCE = "not enough balance / allowance";
/** INVALID_ORDER_EXPIRATION of docs.polymarket.com/developers/CLOB/orders/create-order: "expiration field expresses a time before now". */
const EXPIRED = "invalid expiration";
/** `not_canceled` reasons: the docs name the map but none of its words, so these are the simulator's own. */
const NOT_FOUND = "order not found";
const NOT_RESTING = "order is not open: already matched or canceled";

/**
 * Polymarket's CLOB V2 order endpoints over the shared matching engine: checks a posted order as the
 * venue does (order version, owner, EIP-712 V2 signature, token, tick, size, duplicate hash,
 * expiration, and for a SELL the shares the wallet holds), fills it immediately (FAK or FOK), buying
 * from the asks or selling into the bids, keeps the order and its trades for `/data/order` and
 * `/data/trades`, and cancels what the `resting` fault left open (`DELETE /order`). Execution is
 * asynchronous as in V2: the answer names the trades, whose settlement transactions come later.
 */
export class SimOrderBook {
  private readonly orders = new Map<string, OrderRecord>();
  private readonly trades = new Map<string, SimTrade>();
  /** Trades whose settlement failed for good. */
  private readonly failed = new Set<string>();

  constructor(
    private readonly exchange: SimExchange,
    private readonly clock: Clock,
    private readonly tokenRef: (tokenId: string) => SimMarketRef | undefined,
    /** Trades per page of `GET /data/trades`. */
    private readonly pageSize: number,
    /** How long a trade's settlement takes: MATCHED, then MINED with its transaction hash, then CONFIRMED after as long again. */
    private readonly settleMs: number,
  ) {}

  /** Handles `POST /order` from an authenticated caller; `executed` is told the market the order traded on. */
  async post(body: unknown, caller: SimAccount, executed: (conditionId: string) => void): Promise<Answer> {
    const b = body as { order?: Record<string, unknown>; owner?: unknown; orderType?: unknown } | undefined;
    const o = b?.order;
    if (!o || typeof o !== "object") return bad("Invalid order payload");
    // a V1 order carries nonce, feeRateBps and taker instead of V2's timestamp, metadata and builder
    if (o["timestamp"] === undefined || o["metadata"] === undefined || o["builder"] === undefined) return bad(VERSION_MISMATCH);
    if (b.owner !== caller.apiKey) return bad("the order owner has to be the owner of the API KEY");
    const ref = typeof o["tokenId"] === "string" ? this.tokenRef(o["tokenId"]) : undefined;
    if (!ref) return bad("Invalid token id");
    if (o["side"] !== "BUY" && o["side"] !== "SELL") return bad("Invalid order payload");
    let struct: OrderStruct;
    let expiration: bigint;
    try {
      struct = {
        salt: BigInt(o["salt"] as number),
        maker: o["maker"] as Hex,
        signer: o["signer"] as Hex,
        tokenId: BigInt(o["tokenId"] as string),
        makerAmount: BigInt(o["makerAmount"] as string),
        takerAmount: BigInt(o["takerAmount"] as string),
        side: o["side"] === "BUY" ? SIDE_BUY : SIDE_SELL,
        signatureType: Number(o["signatureType"]),
        timestamp: BigInt(o["timestamp"] as string),
        metadata: o["metadata"] as Hex,
        builder: o["builder"] as Hex,
      };
      expiration = BigInt((o["expiration"] as string | undefined) ?? "0");
    } catch {
      return bad("Invalid order payload");
    }
    const signer = await recoverTypedDataAddress({
      domain: orderDomain(false),
      types: ORDER_TYPES,
      primaryType: "Order",
      message: struct,
      signature: o["signature"] as Hex,
    }).catch(() => undefined);
    if (!signer || signer.toLowerCase() !== struct.signer.toLowerCase() || signer.toLowerCase() !== caller.address.toLowerCase()) {
      return bad("invalid signature");
    }
    const orderType = b.orderType;
    if (orderType !== "FAK" && orderType !== "FOK") return bad(`order type ${String(orderType)} is not supported by the simulator: use FAK or FOK`);
    // a BUY gives pUSD (maker) for shares (taker), a SELL gives shares for pUSD: the price is pUSD per share either way
    const side: TradeSide = struct.side === SIDE_BUY ? "buy" : "sell";
    const [usdc, shares] = side === "buy" ? [struct.makerAmount, struct.takerAmount] : [struct.takerAmount, struct.makerAmount];
    // FAK and FOK orders are market orders: a BUY names whole cents and shares of at most 4 decimals
    if (side === "buy" && (usdc % CENT !== 0n || shares % SHARE_STEP !== 0n)) return bad(INVALID_MARKET_BUY);
    if (side === "buy" && usdc < POLYMARKET_MIN_BUY) return bad(UNDER_MIN_BUY(usdc));
    if (shares <= 0n || (usdc * ONE) % shares !== 0n) return bad(`order is invalid. Price breaks minimum tick size rule: ${formatMicro(ref.tickSize)}`);
    const price = (usdc * ONE) / shares;
    const id = orderHash(struct, false);
    if (this.orders.has(id)) return bad(DUPLICATED);
    if (orderType === "FOK" && (side === "buy" ? this.depth(ref, price) < usdc : this.available(ref, price) < shares)) return bad(FOK_NOT_FILLED);
    // checked now, as the order is processed, however long it took to arrive; 0 signs no expiry
    const expiresAt = expiration === 0n ? Number.POSITIVE_INFINITY : Number(expiration) * 1000;
    const child = { clientOrderId: id, venueMarketId: ref.conditionId, outcome: ref.outcome, side, limitPrice: price, shares, expiresAt };
    // a BUY spends its whole maker amount: at better asks it takes more shares than its taker amount
    const result = this.exchange.place(child, caller.address.toLowerCase(), side === "buy" ? usdc : undefined);
    if (result.kind === "rejected") return bad(venueMessage(result.reason, price, shares, ref));
    if (result.kind === "unknown") return { status: 500, body: { error: "Internal Server Error" } };
    const record: OrderRecord = {
      id,
      market: ref.conditionId,
      assetId: struct.tokenId.toString(),
      outcome: ref.outcome,
      side,
      price,
      originalSize: shares,
      fills: result.fills.map((f) => ({ ...f, venueOrderId: id })),
      createdAt: Math.floor(this.clock.now() / 1000),
      maker: struct.maker,
      owner: caller.apiKey,
      orderType,
      expiration,
      feeRateBps: ref.feeRateBps,
      canceled: false,
    };
    this.orders.set(id, record);
    for (const trade of record.fills) this.trades.set(trade.tradeId, { trade, order: record, matchedAt: this.clock.now() });
    executed(ref.conditionId);
    const filled = record.fills.reduce((s, f) => s + f.shares, 0n);
    const paid = record.fills.reduce((s, f) => s + (f.price * f.shares) / ONE, 0n);
    return {
      status: 200,
      body: {
        success: true,
        errorMsg: "",
        orderID: id,
        tradeIDs: record.fills.map((f) => f.tradeId),
        // settlement follows the match: the hashes are on the trades once mined
        transactionsHashes: [],
        status: this.exchange.resting(id) > 0n ? "live" : "matched",
        // what the order took and gave: shares for pUSD on a buy, pUSD for shares on a sell
        takingAmount: formatMicro(side === "buy" ? filled : paid),
        makingAmount: formatMicro(side === "buy" ? paid : filled),
      },
    };
  }

  /** `GET /data/order/{id}`: the order as Polymarket's OpenOrder, or 404. */
  order(id: string, apiKey: string): Answer {
    const r = this.orders.get(id);
    if (!r || r.owner !== apiKey) return { status: 404, body: { error: "order not found" } };
    return {
      status: 200,
      body: {
        id: r.id,
        status: this.exchange.resting(id) > 0n ? "LIVE" : r.canceled ? "CANCELED" : "MATCHED",
        owner: r.owner,
        maker_address: r.maker,
        market: r.market,
        asset_id: r.assetId,
        side: r.side.toUpperCase(),
        original_size: formatMicro(r.originalSize),
        size_matched: formatMicro(r.fills.reduce((s, f) => s + f.shares, 0n)),
        price: formatMicro(r.price),
        outcome: r.outcome === "YES" ? "Yes" : "No",
        expiration: r.expiration.toString(),
        order_type: r.orderType,
        associate_trades: this.repeated(r.fills).map((f) => f.tradeId),
        created_at: r.createdAt,
      },
    };
  }

  /**
   * `DELETE /order`: cancels what rests of one of the caller's orders. Answered 200 either way, as
   * the docs show: the id in `canceled`, or in `not_canceled` with the reason.
   */
  cancel(body: unknown, apiKey: string): Answer {
    const id = (body as { orderID?: unknown } | undefined)?.orderID;
    if (typeof id !== "string") return bad("Invalid order payload");
    const r = this.orders.get(id);
    const refused = (why: string): Answer => ({ status: 200, body: { canceled: [], not_canceled: { [id]: why } } });
    if (!r || r.owner !== apiKey) return refused(NOT_FOUND);
    if (this.exchange.resting(id) === 0n) return refused(NOT_RESTING);
    this.exchange.cancel(id);
    r.canceled = true;
    return { status: 200, body: { canceled: [id], not_canceled: {} } };
  }

  /** `GET /data/trades`: the caller's trades, oldest first, filtered by id, market or asset, paged by `next_cursor`. */
  tradesPage(query: URLSearchParams, apiKey: string): Answer {
    const id = query.get("id");
    const market = query.get("market");
    const asset = query.get("asset_id");
    const mine = [...this.trades.values()].filter(
      ({ trade, order }) => order.owner === apiKey && (!id || trade.tradeId === id) && (!market || order.market === market) && (!asset || order.assetId === asset),
    );
    const page = cursorPage(this.repeated(mine), query.get("next_cursor") ?? "MA==", this.pageSize);
    if (!page) return bad("invalid next_cursor");
    const now = this.clock.now();
    return { status: 200, body: { ...page, data: page.data.map((t) => this.renderTrade(t, now)) } };
  }

  /**
   * Another trader's order takes up to `shares` of what rests of order `id` (the `resting` fault): a trade the
   * account is in as a maker, at its order's price, listed with the other's order as the taker. Answers the trade id.
   */
  takeResting(id: string, shares: bigint): string {
    const r = this.orders.get(id);
    const fill = r && this.exchange.takeResting(id, shares);
    if (!r || !fill) throw new Error(`order ${id} does not rest on the simulator`);
    const trade = { ...fill, venueOrderId: id };
    r.fills.push(trade);
    const taker = `0x${createHash("sha256").update(`taker:${trade.tradeId}`).digest("hex")}`;
    this.trades.set(trade.tradeId, { trade, order: r, matchedAt: this.clock.now(), taker });
    return trade.tradeId;
  }

  failSettlement(tradeId: string): void {
    this.failed.add(tradeId);
  }

  /** A list of trades as the wire carries it: each twice under the `duplicateTrades` fault. */
  private repeated<T>(trades: T[]): T[] {
    return this.exchange.faults.duplicateTrades ? trades.flatMap((t) => [t, t]) : trades;
  }

  /** What a FOK BUY could spend now: the pUSD of the asks at or below its price. */
  private depth(ref: SimMarketRef, limit: bigint): bigint {
    return costOf((this.exchange.book(ref.conditionId, ref.outcome)?.asks ?? []).filter((l) => l.price <= limit));
  }

  /** Shares a FOK SELL could sell now: the bids at or above its price. */
  private available(ref: SimMarketRef, limit: bigint): bigint {
    const levels = (this.exchange.book(ref.conditionId, ref.outcome)?.bids ?? []).filter((l) => l.price >= limit);
    return levels.reduce((s, l) => s + l.shares, 0n);
  }

  /**
   * A trade as `GET /data/trades` lists it, at its settlement stage `now`: the transaction hash once mined. The
   * account's order is its taker, or, for a trade another's order made against one of its resting orders, its
   * only maker (`maker_orders`, the other taking the opposite side of the same token).
   */
  private renderTrade({ trade: t, order: o, matchedAt, taker }: SimTrade, now: number) {
    const at = String(Math.floor(matchedAt / 1000));
    const stage = Math.min(2, Math.floor((now - matchedAt) / this.settleMs));
    const failed = this.failed.has(t.tradeId);
    const outcome = o.outcome === "YES" ? "Yes" : "No";
    const maker = taker !== undefined && {
      order_id: o.id,
      owner: o.owner,
      maker_address: o.maker,
      matched_amount: formatMicro(t.shares),
      price: formatMicro(t.price),
      fee_rate_bps: "0",
      asset_id: o.assetId,
      outcome,
      side: o.side.toUpperCase(),
    };
    return {
      id: t.tradeId,
      taker_order_id: taker ?? o.id,
      market: o.market,
      asset_id: o.assetId,
      side: (maker ? (o.side === "buy" ? "sell" : "buy") : o.side).toUpperCase(),
      size: formatMicro(t.shares),
      fee_rate_bps: o.feeRateBps.toString(),
      price: formatMicro(t.price),
      status: failed ? "FAILED" : SETTLEMENT[stage],
      match_time: at,
      last_update: at,
      outcome,
      bucket_index: o.fills.indexOf(t),
      owner: o.owner,
      maker_address: maker ? OTHER_TRADER : o.maker,
      maker_orders: maker ? [maker] : [],
      transaction_hash: failed || stage === 0 ? "" : `0x${createHash("sha256").update(`tx:${t.tradeId}`).digest("hex")}`,
      trader_side: maker ? "MAKER" : "TAKER",
    };
  }
}

/** One of the account's trades: its order's fill, when it matched (ms; its settlement follows, see SimOrderBook.settleMs), and for a trade of its resting order the other trader's taker order. */
interface SimTrade {
  trade: VenueFill;
  order: OrderRecord;
  matchedAt: number;
  taker?: string;
}

/** The wallet of the other trader whose order takes from a resting order (SimOrderBook.takeResting). */
const OTHER_TRADER = "0x00000000000000000000000000000000000000aa";

/** A trade's statuses as its settlement goes (docs.polymarket.com, user channel: MATCHED, MINED, CONFIRMED). */
const SETTLEMENT = ["MATCHED", "MINED", "CONFIRMED"] as const;

/** The matching engine's refusal in Polymarket's words (docs.polymarket.com/resources/error-codes). */
function venueMessage(reason: string, price: bigint, shares: bigint, ref: SimMarketRef): string {
  const code = reason.split(":")[0];
  switch (code) {
    case "no_match":
      return FAK_NO_MATCH;
    case "order_expired":
      return EXPIRED;
    case "invalid_tick":
      return `order is invalid. Price (${formatMicro(price)}) breaks minimum tick size rule: ${formatMicro(ref.tickSize)}`;
    case "below_min_size":
      return `order is invalid. Size (${formatMicro(shares)}) lower than the minimum: ${formatMicro(ref.minOrderShares)}`;
    case "market_closed":
      return "the market is not yet ready to process new orders";
    case "insufficient_position":
      return NOT_ENOUGH_BALANCE;
    default:
      return `order is invalid. ${reason}`;
  }
}

function bad(error: string): Answer {
  return { status: 400, body: { error } };
}
