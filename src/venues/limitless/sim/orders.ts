import { randomUUID } from "node:crypto";
import type { Hex } from "viem";
import { ceilDiv, formatMicro, ONE } from "../../../domain/money.ts";
import type { Outcome } from "../../../domain/types.ts";
import type { SimExchange } from "../../simulated/exchange.ts";
import type { ChildOrder } from "../../venue.ts";
import { SIDE_BUY, SIGNATURE_EOA, type OrderStruct } from "../../ctf-order.ts";
import { orderFromWire, orderSigner, wireOrder } from "../signing.ts";
import { parsePrice, type LimitlessMatch } from "../wire.ts";

/** An order as the simulator keeps and returns it: the posted order, its signature and the venue's own fields. */
export interface LimitlessOrderRecord {
  id: string;
  createdAt: string;
  marketSlug: string;
  marketId: number;
  orderType: "FAK";
  /** MATCHED when it took something, CANCELLED when a FAK order found nothing (the rest of a FAK order is always cancelled). */
  status: "MATCHED" | "CANCELLED";
  price: number;
  signature: string;
  [field: string]: unknown;
}

export interface OrderAnswer {
  order: LimitlessOrderRecord;
  makerMatches: LimitlessMatch[];
}

export type CreateOutcome = { kind: "created"; answer: OrderAnswer } | { kind: "refused"; status: number; message: string };

export interface DeskMarket {
  id: number;
  slug: string;
  tokens: Record<Outcome, string>;
  exchange: Hex;
  feeRateBps: number;
}

/**
 * The trading side of the Limitless simulator: checks a posted order as the venue would (owner,
 * EIP-712 signature by the account's wallet for the market's exchange, fee rate, amounts), runs it
 * as an immediate-or-cancel buy on the shared exchange, and keeps the order with its matches.
 */
export class LimitlessOrderDesk {
  private readonly orders = new Map<string, OrderAnswer>();
  private readonly bySalt = new Map<string, string>();

  constructor(
    private readonly exchange: SimExchange,
    private readonly account: { address: Hex; ownerId: number },
    private readonly market: (slug: string) => DeskMarket | undefined,
    private readonly now: () => number,
  ) {}

  async create(body: unknown): Promise<CreateOutcome> {
    const refused = (status: number, message: string): CreateOutcome => ({ kind: "refused", status, message });
    const b = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
    if (b.orderType !== "FAK") return refused(400, "this simulator only executes FAK orders");
    if (b.ownerId !== this.account.ownerId) return refused(403, "ownerId does not belong to this API token");
    if (typeof b.marketSlug !== "string") return refused(400, "marketSlug is required");
    const market = this.market(b.marketSlug);
    if (!market) return refused(404, `market ${b.marketSlug} not found`);
    const w = (typeof b.order === "object" && b.order !== null ? b.order : {}) as Record<string, unknown>;
    let order: OrderStruct;
    let price: bigint;
    try {
      order = orderFromWire(w);
      price = parsePrice(w.price, "order.price");
    } catch (err) {
      return refused(400, err instanceof Error ? err.message : String(err));
    }
    if (typeof w.signature !== "string" || !/^0x[0-9a-fA-F]+$/.test(w.signature)) return refused(400, "order.signature is required");
    const signature = w.signature as Hex;
    const outcome = (Object.keys(market.tokens) as Outcome[]).find((o) => BigInt(market.tokens[o]) === order.tokenId);
    if (!outcome) return refused(400, `tokenId is not a position of ${market.slug}`);
    if (order.maker.toLowerCase() !== this.account.address.toLowerCase() || order.signer.toLowerCase() !== order.maker.toLowerCase()) {
      return refused(400, "maker and signer must be the API token's wallet");
    }
    if (order.signatureType !== SIGNATURE_EOA) return refused(400, "only EOA signatures are accepted");
    if (order.side !== SIDE_BUY) return refused(400, "this simulator only executes buys");
    if (order.feeRateBps !== BigInt(market.feeRateBps)) return refused(400, `feeRateBps must be ${market.feeRateBps}`);
    if (order.makerAmount < ceilDiv(price * order.takerAmount, ONE)) return refused(400, "makerAmount does not pay price × takerAmount");
    let signer: Hex;
    try {
      signer = await orderSigner(order, market.exchange, signature);
    } catch {
      return refused(400, "invalid order signature");
    }
    if (signer.toLowerCase() !== order.maker.toLowerCase()) return refused(400, "invalid order signature");
    const key = `${order.maker.toLowerCase()}:${order.salt}`;
    if (this.bySalt.has(key)) return refused(409, "an order with this salt already exists");

    const child: ChildOrder = { clientOrderId: key, venueMarketId: market.slug, outcome, side: "buy", limitPrice: price, shares: order.takerAmount };
    const result = this.exchange.place(child);
    if (result.kind === "rejected" && !result.reason.startsWith("no_match")) return refused(400, result.reason);
    const at = new Date(this.now()).toISOString();
    const id = randomUUID();
    const matches: LimitlessMatch[] =
      result.kind === "filled" || result.kind === "partial"
        ? result.fills.map((f) => ({ id: f.tradeId, createdAt: at, matchedSize: f.shares.toString(), orderId: randomUUID(), price: Number(formatMicro(f.price)) }))
        : [];
    const answer: OrderAnswer = {
      order: {
        ...wireOrder(order),
        id,
        createdAt: at,
        marketSlug: market.slug,
        marketId: market.id,
        orderType: "FAK",
        status: matches.length > 0 ? "MATCHED" : "CANCELLED",
        price: Number(formatMicro(price)),
        signature,
      },
      makerMatches: matches,
    };
    this.orders.set(id, answer);
    this.bySalt.set(key, id);
    return { kind: "created", answer };
  }

  order(id: string): OrderAnswer | undefined {
    return this.orders.get(id);
  }

  /** The account's orders in one market, newest first. */
  inMarket(slug: string): LimitlessOrderRecord[] {
    return [...this.orders.values()].filter((a) => a.order.marketSlug === slug).map((a) => a.order).reverse();
  }
}
