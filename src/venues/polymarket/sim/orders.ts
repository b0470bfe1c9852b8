import { createHash } from "node:crypto";
import { recoverTypedDataAddress, type Hex } from "viem";
import { formatMicro, ONE } from "../../../domain/money.ts";
import type { Clock, Outcome } from "../../../domain/types.ts";
import type { SimExchange } from "../../simulated/exchange.ts";
import type { VenueFill } from "../../venue.ts";
import { ORDER_TYPES, SIDE_BUY, SIDE_SELL, type OrderStruct } from "../../ctf-order.ts";
import { orderDomain, orderHash } from "../order-signing.ts";
import { cursorPage } from "./render.ts";

export interface SimMarketRef {
  conditionId: string;
  outcome: Outcome;
  feeRateBps: bigint;
  tickSize: bigint;
  minOrderShares: bigint;
}

interface OrderRecord {
  id: string;
  market: string;
  assetId: string;
  outcome: Outcome;
  price: bigint;
  originalSize: bigint;
  fills: VenueFill[];
  createdAt: number;
  maker: string;
  owner: string;
  orderType: "FAK" | "FOK";
  /** As signed: unix seconds, 0 for none. */
  expiration: bigint;
  /** Cancelled by `DELETE /order` while part of it rested. */
  canceled: boolean;
}

/** The answer of one request: HTTP status and JSON body. */
export interface Answer {
  status: number;
  body: unknown;
}

const DUPLICATED = "order is invalid. Duplicated. Same order has already been placed, can't be placed again";
const FAK_NO_MATCH = "no orders found to match with FAK order. FAK orders are partially filled or killed if no match is found.";
const FOK_NOT_FILLED = "order couldn't be fully filled. FOK orders are fully filled or killed.";
/** INVALID_ORDER_EXPIRATION of docs.polymarket.com/developers/CLOB/orders/create-order: "expiration field expresses a time before now". */
const EXPIRED = "invalid expiration";
/** `not_canceled` reasons: the docs name the map but none of its words, so these are the simulator's own. */
const NOT_FOUND = "order not found";
const NOT_RESTING = "order is not open: already matched or canceled";

/**
 * Polymarket's order endpoints over the shared matching engine: checks a posted order as the
 * venue does (owner, EIP-712 signature, token, tick, size, fee rate, duplicate hash, expiration),
 * fills it immediately (FAK or FOK), keeps the order and its trades for `/data/order` and
 * `/data/trades`, and cancels what the `resting` fault left open (`DELETE /order`).
 */
export class SimOrderBook {
  private readonly orders = new Map<string, OrderRecord>();
  private readonly trades = new Map<string, { trade: VenueFill; order: OrderRecord }>();

  constructor(
    private readonly exchange: SimExchange,
    private readonly clock: Clock,
    private readonly tokenRef: (tokenId: string) => SimMarketRef | undefined,
    /** Trades per page of `GET /data/trades`. */
    private readonly pageSize: number,
  ) {}

  /** Handles `POST /order` from an authenticated caller; `executed` is told the market the order traded on. */
  async post(body: unknown, caller: { apiKey: string; address: string }, executed: (conditionId: string) => void): Promise<Answer> {
    const b = body as { order?: Record<string, unknown>; owner?: unknown; orderType?: unknown } | undefined;
    const o = b?.order;
    if (!o || typeof o !== "object") return bad("Invalid order payload");
    if (b.owner !== caller.apiKey) return bad("the order owner has to be the owner of the API KEY");
    const ref = typeof o["tokenId"] === "string" ? this.tokenRef(o["tokenId"]) : undefined;
    if (!ref) return bad("Invalid token id");
    let struct: OrderStruct;
    try {
      struct = {
        salt: BigInt(o["salt"] as number),
        maker: o["maker"] as Hex,
        signer: o["signer"] as Hex,
        taker: o["taker"] as Hex,
        tokenId: BigInt(o["tokenId"] as string),
        makerAmount: BigInt(o["makerAmount"] as string),
        takerAmount: BigInt(o["takerAmount"] as string),
        expiration: BigInt(o["expiration"] as string),
        nonce: BigInt(o["nonce"] as string),
        feeRateBps: BigInt(o["feeRateBps"] as string),
        side: o["side"] === "BUY" ? SIDE_BUY : SIDE_SELL,
        signatureType: Number(o["signatureType"]),
      };
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
    if (struct.side !== SIDE_BUY) return bad("order is invalid. The simulator takes buy orders only");
    const orderType = b.orderType;
    if (orderType !== "FAK" && orderType !== "FOK") return bad(`order type ${String(orderType)} is not supported by the simulator: use FAK or FOK`);
    if (ref.feeRateBps > 0n && struct.feeRateBps !== ref.feeRateBps) {
      return bad(`invalid fee rate (${struct.feeRateBps}), current market's taker fee: ${ref.feeRateBps}`);
    }
    const shares = struct.takerAmount;
    if (shares <= 0n || (struct.makerAmount * ONE) % shares !== 0n) return bad(`order is invalid. Price breaks minimum tick size rule: ${formatMicro(ref.tickSize)}`);
    const price = (struct.makerAmount * ONE) / shares;
    const id = orderHash(struct, false);
    if (this.orders.has(id)) return bad(DUPLICATED);
    if (orderType === "FOK" && this.available(ref, price) < shares) return bad(FOK_NOT_FILLED);
    // checked now, as the order is processed, however long it took to arrive; 0 signs no expiry
    const expiresAt = struct.expiration === 0n ? Number.POSITIVE_INFINITY : Number(struct.expiration) * 1000;
    const result = this.exchange.place({ clientOrderId: id, venueMarketId: ref.conditionId, outcome: ref.outcome, side: "buy", limitPrice: price, shares, expiresAt });
    if (result.kind === "rejected") return bad(venueMessage(result.reason, price, shares, ref));
    if (result.kind === "unknown") return { status: 500, body: { error: "Internal Server Error" } };
    const record: OrderRecord = {
      id,
      market: ref.conditionId,
      assetId: struct.tokenId.toString(),
      outcome: ref.outcome,
      price,
      originalSize: shares,
      fills: result.fills.map((f) => ({ ...f, venueOrderId: id })),
      createdAt: Math.floor(this.clock.now() / 1000),
      maker: struct.maker,
      owner: caller.apiKey,
      orderType,
      expiration: struct.expiration,
      canceled: false,
    };
    this.orders.set(id, record);
    for (const trade of record.fills) this.trades.set(trade.tradeId, { trade, order: record });
    executed(ref.conditionId);
    const filled = record.fills.reduce((s, f) => s + f.shares, 0n);
    const spent = record.fills.reduce((s, f) => s + (f.price * f.shares) / ONE, 0n);
    return {
      status: 200,
      body: {
        success: true,
        errorMsg: "",
        orderID: id,
        transactionsHashes: record.fills.map((f) => `0x${createHash("sha256").update(`tx:${f.tradeId}`).digest("hex")}`),
        status: this.exchange.resting(id) > 0n ? "live" : "matched",
        takingAmount: formatMicro(filled),
        makingAmount: formatMicro(spent),
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
        side: "BUY",
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
    return { status: 200, body: { ...page, data: page.data.map(({ trade, order }) => renderTrade(trade, order, order.fills.indexOf(trade))) } };
  }

  /** A list of trades as the wire carries it: each twice under the `duplicateTrades` fault. */
  private repeated<T>(trades: T[]): T[] {
    return this.exchange.faults.duplicateTrades ? trades.flatMap((t) => [t, t]) : trades;
  }

  private available(ref: SimMarketRef, limit: bigint): bigint {
    const book = this.exchange.book(ref.conditionId, ref.outcome);
    return (book?.asks ?? []).filter((l) => l.price <= limit).reduce((s, l) => s + l.shares, 0n);
  }
}

function renderTrade(t: VenueFill, o: OrderRecord, index: number) {
  const at = String(o.createdAt);
  return {
    id: t.tradeId,
    taker_order_id: o.id,
    market: o.market,
    asset_id: o.assetId,
    side: "BUY",
    size: formatMicro(t.shares),
    fee_rate_bps: "0",
    price: formatMicro(t.price),
    status: "MATCHED",
    match_time: at,
    last_update: at,
    outcome: o.outcome === "YES" ? "Yes" : "No",
    bucket_index: index,
    owner: o.owner,
    maker_address: o.maker,
    maker_orders: [],
    transaction_hash: `0x${createHash("sha256").update(`tx:${t.tradeId}`).digest("hex")}`,
    trader_side: "TAKER",
  };
}

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
    default:
      return `order is invalid. ${reason}`;
  }
}

function bad(error: string): Answer {
  return { status: 400, body: { error } };
}
