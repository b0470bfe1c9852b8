import { randomBytes, randomUUID } from "node:crypto";
import type { Hex } from "viem";
import { feeInShares, grossForDelivered, limitlessFee, orderFee, withheldShares, type FeeModel } from "../../../domain/fees.ts";
import { ceilDiv, formatMicro, notional, ONE, proceedsOf } from "../../../domain/money.ts";
import type { Outcome } from "../../../domain/types.ts";
import type { SimExchange } from "../../simulated/exchange.ts";
import type { ChildOrder, TradeSide } from "../../venue.ts";
import { SIDE_BUY, SIDE_SELL, SIGNATURE_EOA, type OrderStruct } from "../../ctf-order.ts";
import { orderFromWire, orderSigner, wireOrder } from "../signing.ts";
import { LIMITLESS_LOT, parsePrice, type LimitlessExecution, type LimitlessHistoryEntry, type LimitlessMatch } from "../wire.ts";

/** What never changes of an order: the posted order, its signature and the venue's own fields. */
interface OrderFields {
  id: string;
  createdAt: string;
  marketSlug: string;
  marketId: number;
  orderType: "FAK";
  price: number;
  signature: string;
  [field: string]: unknown;
}

/** An order as the simulator returns it. */
export interface LimitlessOrderRecord extends OrderFields {
  /**
   * The documented order statuses: MATCHED once it took something and nothing of it rests, CANCELED
   * when a FAK order found nothing or its rest was cancelled, LIVE while part of it rests (the
   * `resting` fault; a FAK order never rests on the venue).
   */
  status: "LIVE" | "MATCHED" | "CANCELED";
  /** Shares still resting, raw 6-decimal units (assumed field, named after the SDK's order events). */
  remainingSize: string;
}

export interface OrderAnswer {
  order: LimitlessOrderRecord;
  makerMatches: LimitlessMatch[];
  /**
   * SDK 1.1.0 `Execution`: `settlementStatus` `DELAYED` with `eligibleAt` while the order is held by a
   * taker delay, else `MATCHED` or `UNMATCHED`; `totalsRaw` what the order's matches came to.
   */
  execution: LimitlessExecution & { matched: boolean; feeRateBps: number; effectiveFeeBps: number };
}

/** What the desk keeps of an order; its status and what rests are read from the exchange when asked. */
interface DeskOrder {
  fields: OrderFields;
  /** The order's client order id on the shared exchange. */
  key: string;
  matches: LimitlessMatch[];
  outcomeIndex: number;
  side: TradeSide;
  /** One settlement transaction per taker order. */
  transactionHash: string;
  cancelled: boolean;
  /** While held by the market's taker delay: when the order meets the book (ms). */
  heldUntil?: number;
}

/** The refusal of a sell of more outcome tokens than the account holds (assumed words: Limitless documents none). */
const NOT_ENOUGH_SHARES = "Insufficient outcome token balance";

export type CreateOutcome = { kind: "created"; answer: OrderAnswer } | { kind: "refused"; status: number; message: string };

export interface DeskMarket {
  id: number;
  slug: string;
  title: string;
  closed: boolean;
  tokens: Record<Outcome, string>;
  exchange: Hex;
  feeRateBps: number;
}

/**
 * The trading side of the Limitless simulator: checks a posted order as the venue would (owner,
 * EIP-712 signature by the account's wallet for the market's exchange, fee rate, amounts, expiry, and
 * for a sell the outcome tokens the account holds), runs it as an immediate-or-cancel buy or sell on
 * the shared exchange, and keeps the order with its matches.
 * Every answer that lists matches lists each twice while the `duplicateTrades` fault is on.
 */
export class LimitlessOrderDesk {
  private readonly orders = new Map<string, DeskOrder>();
  private readonly bySalt = new Map<string, string>();
  private readonly byClientOrderId = new Set<string>();
  /** Orders held by the taker delay, until their release. */
  private readonly holds = new Set<ReturnType<typeof setTimeout>>();

  constructor(
    private readonly exchange: SimExchange,
    private readonly account: { address: Hex; ownerId: number },
    private readonly market: (slug: string) => DeskMarket | undefined,
    private readonly now: () => number,
    /** The taker delay of every market, ms: a posted order is held this long before it meets the book (0: none). */
    private readonly takerDelayMs = 0,
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
    if (order.side !== SIDE_BUY && order.side !== SIDE_SELL) return refused(400, "side must be 0 (BUY) or 1 (SELL)");
    if (order.feeRateBps !== BigInt(market.feeRateBps)) return refused(400, `feeRateBps must be ${market.feeRateBps}`);
    // a BUY offers USDC (maker) for shares (taker), a SELL offers shares for USDC
    const side: TradeSide = order.side === SIDE_BUY ? "buy" : "sell";
    const shares = side === "buy" ? order.takerAmount : order.makerAmount;
    if (side === "buy" && order.makerAmount < ceilDiv(price * shares, ONE)) return refused(400, "makerAmount does not pay price × takerAmount");
    if (side === "sell" && order.takerAmount > (price * shares) / ONE) return refused(400, "takerAmount asks more than price × makerAmount");
    let signer: Hex;
    try {
      signer = await orderSigner(order, market.exchange, signature);
    } catch {
      return refused(400, "invalid order signature");
    }
    if (signer.toLowerCase() !== order.maker.toLowerCase()) return refused(400, "invalid order signature");
    const key = `${order.maker.toLowerCase()}:${order.salt}`;
    if (this.bySalt.has(key)) return refused(409, "an order with this salt already exists");
    // Create Order: an optional `clientOrderId` (at most 128 characters) is an idempotency key, a repeat answers 409
    const clientOrderId = b.clientOrderId;
    if (clientOrderId !== undefined && (typeof clientOrderId !== "string" || clientOrderId === "" || clientOrderId.length > 128)) {
      return refused(400, "clientOrderId must be a string of 1 to 128 characters");
    }
    if (clientOrderId !== undefined && this.byClientOrderId.has(clientOrderId)) return refused(409, "an order with this clientOrderId already exists");

    // a buy pays its fee in the contracts it buys: the shared exchange takes orders for the shares they deliver
    const model = limitlessFee(BigInt(market.feeRateBps) * 100n);
    const inShares = feeInShares(model, side);
    const delivered = inShares ? shares - withheldShares(model, shares) : shares;
    if (inShares && grossForDelivered(model, LIMITLESS_LOT, delivered) !== shares) return refused(400, "takerAmount is not a whole number of 0.01-share lots");
    const child: ChildOrder = { clientOrderId: key, venueMarketId: market.slug, outcome, side, limitPrice: price, shares: delivered, expiresAt: expiresAt(order.expiration) };
    const at = new Date(this.now()).toISOString();
    const id = randomUUID();
    let matches: LimitlessMatch[] = [];
    if (this.takerDelayMs === 0) {
      const result = this.exchange.place(child);
      if (result.kind === "rejected" && result.reason.startsWith("order_expired")) return refused(400, "Order expired");
      if (result.kind === "rejected" && result.reason.startsWith("insufficient_position")) return refused(400, NOT_ENOUGH_SHARES);
      if (result.kind === "rejected" && !result.reason.startsWith("no_match")) return refused(400, result.reason);
      matches = this.matchesOf(key, at);
    } else if (child.expiresAt <= this.now()) {
      return refused(400, "Order expired");
    }
    const placed: DeskOrder = {
      fields: {
        ...wireOrder(order),
        id,
        createdAt: at,
        marketSlug: market.slug,
        marketId: market.id,
        orderType: "FAK",
        price: Number(formatMicro(price)),
        signature,
        ...(clientOrderId === undefined ? {} : { clientOrderId }),
      },
      key,
      matches,
      outcomeIndex: outcome === "YES" ? 0 : 1,
      side,
      transactionHash: `0x${randomBytes(32).toString("hex")}`,
      cancelled: false,
    };
    this.orders.set(id, placed);
    this.bySalt.set(key, id);
    if (clientOrderId !== undefined) this.byClientOrderId.add(clientOrderId);
    if (this.takerDelayMs > 0) {
      placed.heldUntil = this.now() + this.takerDelayMs;
      // released to the book when the delay ends; one that expired meanwhile takes nothing
      const hold = setTimeout(() => {
        this.holds.delete(hold);
        placed.heldUntil = undefined;
        this.exchange.place(child);
        placed.matches = this.matchesOf(key, new Date(this.now()).toISOString());
      }, this.takerDelayMs);
      this.holds.add(hold);
    }
    return { kind: "created", answer: this.view(placed) };
  }

  /** Drops the orders still held: a stopped simulator releases nothing. */
  close(): void {
    for (const hold of this.holds) clearTimeout(hold);
    this.holds.clear();
  }

  order(id: string): OrderAnswer | undefined {
    const o = this.orders.get(id);
    return o && this.view(o);
  }

  /** The account's orders in one market, newest first. */
  inMarket(slug: string): LimitlessOrderRecord[] {
    return [...this.orders.values()].filter((o) => o.fields.marketSlug === slug).map((o) => this.view(o).order).reverse();
  }

  /** Cancels what rests of an order; false when nothing of it rests (unknown, matched, killed or already cancelled). */
  cancel(id: string): boolean {
    const o = this.orders.get(id);
    if (!o || this.exchange.resting(o.key) === 0n) return false;
    this.exchange.cancel(o.key);
    o.cancelled = true;
    return true;
  }

  /** The account's trades as its history lists them, newest first: one entry per match. */
  history(): LimitlessHistoryEntry[] {
    const entries = [...this.orders.values()].flatMap((o) => {
      const m = this.market(o.fields.marketSlug)!;
      return o.matches.map((match): LimitlessHistoryEntry => {
        const shares = BigInt(match.matchedSize);
        const amounts = ["0", "0"];
        amounts[o.outcomeIndex] = shares.toString();
        return {
          blockTimestamp: Math.floor(Date.parse(match.createdAt) / 1000),
          collateralAmount: notional(parsePrice(match.price, "price"), shares).toString(),
          market: { id: String(m.id), slug: m.slug, title: m.title, closed: m.closed },
          outcomeIndex: o.outcomeIndex,
          outcomeTokenAmount: shares.toString(),
          outcomeTokenAmounts: amounts,
          outcomeTokenPrice: match.price,
          strategy: o.side === "buy" ? "Buy" : "Sell",
          transactionHash: o.transactionHash,
          matchId: match.id,
          orderId: o.fields.id,
        };
      });
    });
    return this.reported(entries.reverse());
  }

  private view(o: DeskOrder): OrderAnswer {
    const feeRateBps = Number(o.fields.feeRateBps);
    const model = limitlessFee(BigInt(feeRateBps) * 100n);
    if (o.heldUntil !== undefined) {
      return {
        order: { ...o.fields, status: "LIVE", remainingSize: "0" },
        makerMatches: [],
        execution: { matched: false, settlementStatus: "DELAYED", eligibleAt: new Date(o.heldUntil).toISOString(), feeRateBps, effectiveFeeBps: feeRateBps, totalsRaw: totalsOf([], o.side, model) },
      };
    }
    const rests = this.exchange.resting(o.key);
    const status = rests > 0n ? "LIVE" : o.cancelled || o.matches.length === 0 ? "CANCELED" : "MATCHED";
    const matched = o.matches.length > 0;
    return {
      order: { ...o.fields, status, remainingSize: rests.toString() },
      makerMatches: this.reported(o.matches),
      execution: { matched, settlementStatus: matched ? "MATCHED" : "UNMATCHED", feeRateBps, effectiveFeeBps: feeRateBps, totalsRaw: totalsOf(o.matches, o.side, model) },
    };
  }

  /** The venue's matches of an order on the shared exchange: each as the book made it, before the fee in contracts. */
  private matchesOf(key: string, at: string): LimitlessMatch[] {
    return this.exchange.matches(key).map((f) => ({ id: f.tradeId, createdAt: at, matchedSize: f.shares.toString(), orderId: randomUUID(), price: Number(formatMicro(f.price)) }));
  }

  /** What the venue reports of a list of trades: each twice, same id, while the duplicate fault is on. */
  private reported<T>(trades: T[]): T[] {
    return this.exchange.faults.duplicateTrades ? trades.flatMap((t) => [t, t]) : trades;
  }
}

/**
 * What an order's matches came to (`execution.totalsRaw`, raw 6-decimal integers): a buy pays the
 * notional of the contracts matched and leaves rate × contracts of them as its fee; a sell delivers
 * every contract and pays its fee in USDC out of the proceeds.
 */
function totalsOf(matches: readonly LimitlessMatch[], side: TradeSide, model: FeeModel): NonNullable<LimitlessExecution["totalsRaw"]> {
  const levels = matches.map((m) => ({ price: parsePrice(m.price, "price"), shares: BigInt(m.matchedSize) }));
  const contracts = levels.reduce((s, l) => s + l.shares, 0n);
  const contractsFee = side === "buy" ? withheldShares(model, contracts) : 0n;
  const usdGross = levels.reduce((s, l) => s + (side === "buy" ? notional(l.price, l.shares) : proceedsOf(l.price, l.shares)), 0n);
  const usdFee = side === "buy" ? 0n : orderFee(model, levels);
  const raw = (x: bigint) => x.toString();
  return {
    contractsGross: raw(contracts),
    contractsFee: raw(contractsFee),
    contractsNet: raw(contracts - contractsFee),
    usdGross: raw(usdGross),
    usdFee: raw(usdFee),
    usdNet: raw(side === "buy" ? usdGross : usdGross - usdFee),
  };
}

/** The expiry of a signed order in ms: `expiration` is unix seconds, 0 for none. */
function expiresAt(expiration: bigint): number {
  return expiration === 0n ? Number.POSITIVE_INFINITY : Number(expiration) * 1000;
}
