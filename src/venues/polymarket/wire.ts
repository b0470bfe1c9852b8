import { POLYMARKET_LOWEST_PRICE, type FeeModel } from "../../domain/fees.ts";
import { formatMicro, ONE, type Micro, type PriceMicro, type ShareMicro } from "../../domain/money.ts";
import type { Level } from "../../domain/types.ts";
import { resolutionStatus, type TradeSide, type VenueMarket, type VenueResolution } from "../venue.ts";
import { parseDecimal, WireError } from "./decimal.ts";

/** The cursor Polymarket returns on the last page of a listing. */
export const END_CURSOR = "LTE=";
export const INITIAL_CURSOR = "MA==";
/** Sizes on Polymarket are in hundredths of a share. */
export const POLYMARKET_LOT: ShareMicro = 10_000n;
/** A market buy's maker amount (pUSD) is whole cents: the venue refuses one of more than 2 decimals. */
const CENT: Micro = 10_000n;
const FEE_FREE: FeeModel = { kind: "polymarket", ratePpm: 0n, exponent: 1 };
/**
 * The least a marketable (FAK/FOK) buy spends: the venue refuses a smaller maker amount ("invalid amount for
 * a marketable BUY order ($X), min size: $1"; docs/venues/polymarket.md, "Minimum marketable buy").
 */
export const POLYMARKET_MIN_BUY: Micro = 1_000_000n;

/** A market of the CLOB with what the adapter needs beyond the port's VenueMarket. */
export interface ClobMarket {
  market: VenueMarket;
  negRisk: boolean;
  resolution: VenueResolution;
}

export interface Page<T> {
  data: T[];
  nextCursor: string;
}

export interface BookSummary {
  market: string;
  assetId: string;
  bids: Level[];
  asks: Level[];
  tickSize: PriceMicro | undefined;
}

export interface OrderAck {
  success: boolean;
  errorMsg: string;
  orderId: string;
  status: string;
  /** The trades the order made, named before they settle on chain (V2's asynchronous execution). */
  tradeIds: string[];
}

export interface OpenOrder {
  id: string;
  status: "open" | "done";
  market: string;
  assetId: string;
  sizeMatched: ShareMicro;
  associateTrades: string[];
}

export interface ClobTrade {
  tradeId: string;
  takerOrderId: string;
  market: string;
  assetId: string;
  /** The taker order's side: what the account bought or sold when it is the TAKER. */
  side: TradeSide;
  price: PriceMicro;
  size: ShareMicro;
  /** Which side of the trade the authenticated account was on: its order is `taker_order_id` only when "TAKER". */
  traderSide: "TAKER" | "MAKER";
  /** Unix seconds. */
  matchTime: number;
  /** MATCHED, then MINED and CONFIRMED as it settles; RETRYING, or FAILED when its settlement failed for good. */
  status: string;
  /** The resting orders the taker order matched (`maker_orders`), the account's among them when it was a maker. */
  makerOrders: MakerOrder[];
}

/** A resting order's part in a trade, as `maker_orders` lists it. */
export interface MakerOrder {
  orderId: string;
  /** The wallet whose order it is. */
  makerAddress: string;
  /** The token the maker order trades: the taker's, or the other outcome's (a buy matched with a buy, a sell with a sell). */
  assetId: string;
  /** The maker order's own price, of its own token. */
  price: PriceMicro;
  /** Its shares matched in this trade (`matched_amount`). */
  size: ShareMicro;
}

/** One order's part in a trade: the taker order's whole trade, or a maker order's matched shares at its own price. */
export interface OrderTrade {
  tradeId: string;
  orderId: string;
  market: string;
  side: TradeSide;
  price: PriceMicro;
  size: ShareMicro;
  /** The maker order's wallet; undefined for the taker order. Makers pay no fee (docs.polymarket.com/trading/fees: takers only). */
  makerAddress: string | undefined;
  matchTime: number;
  status: string;
}

/** The answer of `DELETE /order`: the ids it cancelled, and why it did not cancel the others. */
export interface CancelResult {
  canceled: string[];
  notCanceled: Record<string, string>;
}

export type StreamEvent =
  | { type: "book"; book: BookSummary }
  | { type: "price_change"; changes: { assetId: string; side: "bids" | "asks"; price: PriceMicro; size: ShareMicro }[] }
  | { type: "tick_size_change"; assetId: string; tickSize: PriceMicro }
  | { type: "other" };

/** A page of `GET /markets`, its markets as listed: each is read on its own (parseMarket), so that one the adapter cannot read is left out alone. */
export function parseMarketsPage(raw: unknown): Page<unknown> {
  const o = obj(raw, "markets page");
  return { data: arr(o["data"], "markets page.data"), nextCursor: str(o["next_cursor"], "next_cursor") };
}

/** A listed market's `condition_id`, read before the rest of it; undefined when it has none. */
export function conditionIdOf(raw: unknown): string | undefined {
  const id = (raw as { condition_id?: unknown } | null)?.condition_id;
  return typeof id === "string" ? id : undefined;
}

/** A market of `GET /markets/{condition_id}`, or of a page of `GET /markets`. */
export function parseMarket(raw: unknown, at = "market"): ClobMarket {
  const o = obj(raw, at);
  const tokens = arr(o["tokens"], `${at}.tokens`).map((t, i) => obj(t, `${at}.tokens[${i}]`));
  if (tokens.length !== 2) throw new WireError(`${at}: a binary market has two tokens, got ${tokens.length}`);
  const byName = (name: string) => tokens.find((t) => String(t["outcome"]).toLowerCase() === name);
  const yes = byName("yes") ?? tokens[0]!;
  const no = byName("no") ?? tokens[1]!;
  const resolution = marketResolution(o, yes, no);
  return {
    market: {
      venueMarketId: str(o["condition_id"], `${at}.condition_id`),
      title: str(o["question"], `${at}.question`),
      outcomeIds: { YES: tokenId(yes, at), NO: tokenId(no, at) },
      status: resolutionStatus(resolution),
      closeTime: str(o["end_date_iso"], `${at}.end_date_iso`),
      ...grid(parseDecimal(o["minimum_tick_size"], `${at}.minimum_tick_size`)),
      minOrderShares: parseDecimal(o["minimum_order_size"], `${at}.minimum_order_size`),
      minOrderAmount: { buy: POLYMARKET_MIN_BUY, sell: 0n },
      // the listing states no fee in V2: the market's fee info does (parseClobMarketFee)
      feeModel: FEE_FREE,
      // the CLOB does not report volume (Gamma does); see docs/venues/polymarket.md
      volume: 0n as Micro,
    },
    negRisk: o["neg_risk"] === true,
    resolution,
  };
}

/** The market on a new tick (a `tick_size_change`): its lot follows the tick. */
export function withTick(m: ClobMarket, tickSize: PriceMicro): ClobMarket {
  return { ...m, market: { ...m.market, ...grid(tickSize) } };
}

/**
 * A market's tick and lots. The lot is the fewest shares, in the venue's 0.01-share
 * steps, that cost whole cents at one tick: tick 0.01 → 1 share, 0.001 → 10, 0.005 → 2, 0.0025 → 4,
 * 0.0001 → 100, 0.1 → 0.1. A whole number of lots at any price on the grid then costs whole cents,
 * which is what the venue takes of a market (FAK/FOK) buy: its pUSD of at most 2 decimals, its
 * shares of at most 4 (docs/venues/polymarket.md, "Market orders"). A sell's lot is the step itself,
 * 0.01 share: its pUSD, price × shares, then has the tick's decimals and 2 more, which the venue takes
 * (clob-client-v2's ROUNDING_CONFIG: 3, 4, 5, 6 at tick 0.1, 0.01, 0.001, 0.0001). The minimum order
 * is the listed `minimum_order_size`, which the router rounds up to the lot of the side it routes: a buy of
 * 10 shares at tick 0.001, a sell of 5. A tick finer than 0.0001, the finest clob-client-v2 knows, is not
 * modelled: a fill there could take more fee than `worstFee` locks for (POLYMARKET_LOWEST_PRICE).
 */
function grid(tickSize: PriceMicro): Pick<VenueMarket, "tickSize" | "lotShares" | "sellLotShares"> {
  if (tickSize < POLYMARKET_LOWEST_PRICE) throw new WireError(`tick size ${formatMicro(tickSize)} is finer than ${formatMicro(POLYMARKET_LOWEST_PRICE)}, the finest the adapter models`);
  const lotShares = (POLYMARKET_LOT * CENT * ONE) / gcd(tickSize * POLYMARKET_LOT, CENT * ONE);
  return { tickSize, lotShares, sellLotShares: POLYMARKET_LOT };
}

function gcd(a: bigint, b: bigint): bigint {
  return b === 0n ? a : gcd(b, a % b);
}

/**
 * A market's resolution from the CLOB's fields. `closed` with a `winner` token: resolved to it (the CLOB
 * names a winner once the market has resolved, after UMA's challenge period and any dispute, so a
 * proposal still open to challenge is no winner yet). `closed` with no winner and both tokens priced
 * 0.5: resolved 50/50 ("Unknown/50-50": each token redeems for $0.50), voided. Otherwise `closed`, or
 * `active: false` or `accepting_orders: false`, no longer trades, and pays nothing yet.
 */
function marketResolution(o: Record<string, unknown>, yes: Record<string, unknown>, no: Record<string, unknown>): VenueResolution {
  if (o["closed"] === true) {
    if (yes["winner"] === true) return { state: "resolved", outcome: "YES" };
    if (no["winner"] === true) return { state: "resolved", outcome: "NO" };
    return Number(yes["price"]) === 0.5 && Number(no["price"]) === 0.5 ? { state: "voided" } : { state: "closed" };
  }
  return o["active"] === false || o["accepting_orders"] === false ? { state: "closed" } : { state: "open" };
}

/**
 * The fee curve of `GET /clob-markets/{condition_id}` (`fd`: rate, exponent, takers only): in CLOB V2
 * the operator sets fees at match time from these parameters (no fee is signed into the order), and
 * clob-client-v2 reads them from here alone. A market without `fd` is fee-free, and an `fd` without
 * `e` is of exponent 0 (a fee of C × rate), as the client takes them (1.1.0, `getClobMarketInfo`:
 * `exponent: result.fd?.e ?? 0`); an exponent the fee model has no curve for is refused.
 */
export function parseClobMarketFee(raw: unknown): FeeModel {
  const fd = obj(raw, "clob market info")["fd"];
  if (fd === undefined || fd === null) return FEE_FREE;
  const f = obj(fd, "clob market info.fd");
  const exponent = Number(f["e"] ?? 0);
  if (exponent !== 0 && exponent !== 1 && exponent !== 2) throw new WireError(`clob market info.fd.e: exponent ${String(f["e"])} is not 0, 1 or 2`);
  return { kind: "polymarket", ratePpm: parseDecimal(f["r"] ?? 0, "clob market info.fd.r"), exponent };
}

/** The tick of `GET /clob-markets/{condition_id}` (`mts`, the minimum tick size, as clob-client-v2 reads it); undefined where it states none. */
export function parseClobMarketTick(raw: unknown): PriceMicro | undefined {
  const mts = obj(raw, "clob market info")["mts"];
  return mts === undefined || mts === null ? undefined : parseDecimal(mts, "clob market info.mts");
}

/**
 * A listed market with the fee curve of its CLOB market info (`GET /clob-markets/{condition_id}`;
 * undefined: the CLOB does not know the market). A market whose fee the CLOB cannot state is not traded:
 * the fee planned with must be the one charged.
 */
export function parseTradedMarket(listed: unknown, info: unknown): ClobMarket {
  if (info === undefined) throw new WireError("the CLOB has no market info for it: its fee is not known");
  const m = parseMarket(listed);
  return { ...m, market: { ...m.market, feeModel: parseClobMarketFee(info) } };
}

/** A book summary of `GET /book`, `POST /books` or a WebSocket `book` event, with its levels sorted best first. */
export function parseBook(raw: unknown, at = "book"): BookSummary {
  const o = obj(raw, at);
  return {
    market: str(o["market"], `${at}.market`),
    assetId: str(o["asset_id"], `${at}.asset_id`),
    bids: levels(o["bids"], `${at}.bids`, "desc"),
    asks: levels(o["asks"], `${at}.asks`, "asc"),
    tickSize: o["tick_size"] === undefined ? undefined : parseDecimal(o["tick_size"], `${at}.tick_size`),
  };
}

export function parseOrderAck(raw: unknown): OrderAck {
  const o = obj(raw, "order response");
  return {
    success: o["success"] === true,
    errorMsg: typeof o["errorMsg"] === "string" ? o["errorMsg"] : "",
    orderId: typeof o["orderID"] === "string" ? o["orderID"] : "",
    status: typeof o["status"] === "string" ? o["status"].toLowerCase() : "",
    tradeIds: o["tradeIDs"] == null ? [] : arr(o["tradeIDs"], "order response.tradeIDs").map((t) => str(t, "trade id")),
  };
}

/** What an order's status says of it: it may still trade (open), or it never will (done). */
const ORDER_STATES: Record<string, "open" | "done"> = { LIVE: "open", DELAYED: "open", MATCHED: "done", UNMATCHED: "done", CANCELED: "done", CANCELED_MARKET_RESOLVED: "done", INVALID: "done" };

/** An order of `GET /data/order/{id}`; a status it does not know is refused, never taken for done: the order may still trade. */
export function parseOpenOrder(raw: unknown): OpenOrder {
  const o = obj(raw, "order");
  const written = str(o["status"], "order.status");
  const status = ORDER_STATES[written.toUpperCase().replace(/^ORDER_STATUS_/, "")];
  if (status === undefined) throw new WireError(`order.status: ${JSON.stringify(written)} is not a status the adapter knows`);
  return {
    id: str(o["id"], "order.id"),
    status,
    market: str(o["market"], "order.market"),
    assetId: str(o["asset_id"], "order.asset_id"),
    sizeMatched: parseDecimal(o["size_matched"], "order.size_matched"),
    associateTrades: o["associate_trades"] == null ? [] : arr(o["associate_trades"], "order.associate_trades").map((t) => str(t, "trade id")),
  };
}

export function parseTradesPage(raw: unknown): Page<ClobTrade> {
  const o = obj(raw, "trades page");
  return {
    data: arr(o["data"], "trades page.data").map((t, i) => parseTrade(t, `data[${i}]`)),
    nextCursor: str(o["next_cursor"], "next_cursor"),
  };
}

function parseTrade(raw: unknown, at = "trade"): ClobTrade {
  const o = obj(raw, at);
  return {
    tradeId: str(o["id"], `${at}.id`),
    takerOrderId: str(o["taker_order_id"], `${at}.taker_order_id`),
    market: str(o["market"], `${at}.market`),
    assetId: str(o["asset_id"], `${at}.asset_id`),
    side: tradeSide(o["side"], `${at}.side`),
    price: parseDecimal(o["price"], `${at}.price`),
    size: parseDecimal(o["size"], `${at}.size`),
    traderSide: str(o["trader_side"], `${at}.trader_side`).toUpperCase() === "MAKER" ? "MAKER" : "TAKER",
    matchTime: unixSeconds(o["match_time"], `${at}.match_time`),
    // written both as CONFIRMED and as TRADE_STATUS_CONFIRMED (the get-trades example)
    status: str(o["status"], `${at}.status`).toUpperCase().replace(/^TRADE_STATUS_/, ""),
    makerOrders: arr(o["maker_orders"] ?? [], `${at}.maker_orders`).map((m, i) => {
      const mo = obj(m, `${at}.maker_orders[${i}]`);
      return {
        orderId: str(mo["order_id"], `${at}.maker_orders[${i}].order_id`),
        makerAddress: str(mo["maker_address"], `${at}.maker_orders[${i}].maker_address`),
        assetId: str(mo["asset_id"], `${at}.maker_orders[${i}].asset_id`),
        price: parseDecimal(mo["price"], `${at}.maker_orders[${i}].price`),
        size: parseDecimal(mo["matched_amount"], `${at}.maker_orders[${i}].matched_amount`),
      };
    }),
  };
}

/**
 * Every order's part in a trade: the taker order's (the trade's side, price and size), then each maker
 * order's, its matched shares at its own price. A maker order on the taker's token took the other side
 * (a sell met by a buy); one on the other outcome's token the same side, the two buys (or sells) minting
 * (or merging) a pair of tokens.
 */
export function orderTrades(t: ClobTrade): OrderTrade[] {
  const part = { tradeId: t.tradeId, market: t.market, matchTime: t.matchTime, status: t.status };
  const opposite: TradeSide = t.side === "buy" ? "sell" : "buy";
  return [
    { ...part, orderId: t.takerOrderId, side: t.side, price: t.price, size: t.size, makerAddress: undefined },
    ...t.makerOrders.map((m) => ({ ...part, orderId: m.orderId, side: m.assetId === t.assetId ? opposite : t.side, price: m.price, size: m.size, makerAddress: m.makerAddress })),
  ];
}

export function parseCancelResult(raw: unknown): CancelResult {
  const o = obj(raw, "cancel response");
  const notCanceled = obj(o["not_canceled"] ?? {}, "cancel response.not_canceled");
  return {
    canceled: arr(o["canceled"] ?? [], "cancel response.canceled").map((id) => str(id, "canceled order id")),
    notCanceled: Object.fromEntries(Object.entries(notCanceled).map(([id, why]) => [id, String(why)])),
  };
}

/** One frame of the market channel: a JSON object, or an array of them (the snapshots sent on subscribing). */
export function parseStreamFrame(text: string): StreamEvent[] {
  const raw: unknown = JSON.parse(text);
  return (Array.isArray(raw) ? raw : [raw]).map(parseStreamEvent);
}

function parseStreamEvent(raw: unknown): StreamEvent {
  const o = obj(raw, "stream event");
  switch (o["event_type"]) {
    case "book":
      return { type: "book", book: parseBook(o, "book event") };
    case "price_change":
      return {
        type: "price_change",
        changes: arr(o["price_changes"], "price_change.price_changes").map((c) => {
          const p = obj(c, "price_changes[]");
          const side = str(p["side"], "side").toUpperCase();
          if (side !== "BUY" && side !== "SELL") throw new WireError(`price_changes[].side: ${side}`);
          return {
            assetId: str(p["asset_id"], "asset_id"),
            side: side === "BUY" ? "bids" : "asks",
            price: parseDecimal(p["price"], "price"),
            size: parseDecimal(p["size"], "size", true),
          };
        }),
      };
    case "tick_size_change":
      return { type: "tick_size_change", assetId: str(o["asset_id"], "asset_id"), tickSize: parseDecimal(o["new_tick_size"], "new_tick_size") };
    default:
      return { type: "other" };
  }
}

/**
 * Polymarket's rejection messages (docs.polymarket.com/resources/error-codes) as the reason codes the
 * router logs. "not enough balance / allowance" is pUSD short on a buy, shares short on a sell.
 */
export function rejectionReason(error: string, side: TradeSide): string {
  const e = error.toLowerCase();
  if (e.includes("expiration")) return "order_expired";
  if (e.includes("fak") || e.includes("no orders found to match")) return "no_match";
  if (e.includes("fully filled") || e.includes("fok")) return "not_filled";
  if (e.includes("tick size")) return "invalid_tick";
  if (e.includes("lower than the minimum") || e.includes("min size")) return "below_min_size";
  if (e.includes("balance") || e.includes("allowance")) return side === "buy" ? "insufficient_balance" : "insufficient_position";
  if (e.includes("signature")) return "invalid_signature";
  if (e.includes("not yet ready") || e.includes("closed")) return "market_closed";
  return "venue_rejected";
}

/** Applies one level change (size 0 removes the level) to a side kept best first. */
export function applyLevel(side: readonly Level[], order: "asc" | "desc", price: PriceMicro, shares: ShareMicro): Level[] {
  let at = 0;
  while (at < side.length && (order === "asc" ? side[at]!.price < price : side[at]!.price > price)) at++;
  const after = side[at]?.price === price ? at + 1 : at;
  return shares > 0n ? side.toSpliced(at, after - at, { price, shares }) : side.toSpliced(at, after - at);
}

function levels(raw: unknown, at: string, order: "asc" | "desc"): Level[] {
  const merged = new Map<bigint, bigint>();
  // named once a side, not once a level: a stream reads thousands of levels a second
  const levelField = `${at}[]`;
  const priceField = `${at}[].price`;
  const sizeField = `${at}[].size`;
  for (const l of arr(raw ?? [], at)) {
    const o = obj(l, levelField);
    const price = parseDecimal(o["price"], priceField);
    const size = parseDecimal(o["size"], sizeField, true);
    merged.set(price, (merged.get(price) ?? 0n) + size);
  }
  const out: Level[] = [];
  for (const [price, shares] of merged) if (shares > 0n) out.push({ price, shares });
  return sortLevels(out, order);
}

function sortLevels(levels: Level[], order: "asc" | "desc"): Level[] {
  return levels.sort((a, b) => (a.price === b.price ? 0 : (a.price < b.price) === (order === "asc") ? -1 : 1));
}

function tradeSide(raw: unknown, at: string): TradeSide {
  const side = str(raw, at).toUpperCase();
  if (side !== "BUY" && side !== "SELL") throw new WireError(`${at}: expected BUY or SELL, got ${JSON.stringify(raw)}`);
  return side === "BUY" ? "buy" : "sell";
}

function unixSeconds(raw: unknown, at: string): number {
  const text = str(raw, at);
  if (!/^\d+$/.test(text)) throw new WireError(`${at}: expected unix seconds, got ${JSON.stringify(text)}`);
  return Number(text);
}

function tokenId(t: Record<string, unknown>, at: string): string {
  const id = t["token_id"];
  if (typeof id !== "string" || !/^\d+$/.test(id)) throw new WireError(`${at}: token_id must be a decimal string`);
  return id;
}

function obj(raw: unknown, at: string): Record<string, unknown> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new WireError(`${at}: expected an object`);
  return raw as Record<string, unknown>;
}

function arr(raw: unknown, at: string): unknown[] {
  if (!Array.isArray(raw)) throw new WireError(`${at}: expected an array`);
  return raw;
}

function str(raw: unknown, at: string): string {
  if (typeof raw !== "string") throw new WireError(`${at}: expected a string`);
  return raw;
}
