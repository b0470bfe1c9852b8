import { createHash } from "node:crypto";
import { recoverTypedDataAddress, type Hex } from "viem";
import { formatMicro, ONE } from "../../../domain/money.ts";
import type { Clock, Outcome } from "../../../domain/types.ts";
import type { SimExchange } from "../../simulated/exchange.ts";
import type { VenueFill } from "../../venue.ts";
import { ORDER_TYPES, SIDE_BUY, SIDE_SELL, type OrderStruct } from "../../ctf-order.ts";
import { orderDomain, orderHash } from "../order-signing.ts";

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
}

/** The answer of one request: HTTP status and JSON body. */
export interface Answer {
  status: number;
  body: unknown;
}

const DUPLICATED = "order is invalid. Duplicated. Same order has already been placed, can't be placed again";
const FAK_NO_MATCH = "no orders found to match with FAK order. FAK orders are partially filled or killed if no match is found.";
const FOK_NOT_FILLED = "order couldn't be fully filled. FOK orders are fully filled or killed.";

/**
 * Polymarket's order endpoints over the shared matching engine: checks a posted order as the
 * venue does (owner, EIP-712 signature, token, tick, size, fee rate, duplicate hash), fills it
 * immediately (FAK or FOK) and keeps the order and its trades for `/data/order` and `/data/trades`.
 */
export class SimOrderBook {
  private readonly orders = new Map<string, OrderRecord>();
  private readonly trades = new Map<string, { trade: VenueFill; order: OrderRecord }>();

  constructor(
    private readonly exchange: SimExchange,
    private readonly clock: Clock,
    private readonly tokenRef: (tokenId: string) => SimMarketRef | undefined,
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
    const result = this.exchange.place({ clientOrderId: id, venueMarketId: ref.conditionId, outcome: ref.outcome, side: "buy", limitPrice: price, shares });
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
        status: "matched",
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
        status: "MATCHED",
        owner: r.owner,
        maker_address: r.maker,
        market: r.market,
        asset_id: r.assetId,
        side: "BUY",
        original_size: formatMicro(r.originalSize),
        size_matched: formatMicro(r.fills.reduce((s, f) => s + f.shares, 0n)),
        price: formatMicro(r.price),
        outcome: r.outcome === "YES" ? "Yes" : "No",
        expiration: "0",
        order_type: "FAK",
        associate_trades: r.fills.map((f) => f.tradeId),
        created_at: r.createdAt,
      },
    };
  }

  /** `GET /data/trades`: the caller's trades, filtered by id, market or asset. One page: the simulator's history is short. */
  tradesPage(query: URLSearchParams, apiKey: string): Answer {
    const data = [...this.trades.values()]
      .filter(({ order }) => order.owner === apiKey)
      .filter(({ trade, order }) => {
        const id = query.get("id");
        const market = query.get("market");
        const asset = query.get("asset_id");
        return (!id || trade.tradeId === id) && (!market || order.market === market) && (!asset || order.assetId === asset);
      })
      .map(({ trade, order }) => renderTrade(trade, order, order.fills.indexOf(trade)));
    return { status: 200, body: { limit: 500, count: data.length, next_cursor: "LTE=", data } };
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
