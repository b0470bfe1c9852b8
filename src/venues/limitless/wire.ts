import { feeInShares, limitlessFee, netOfWithheld, type FeeModel } from "../../domain/fees.ts";
import { notional, ONE, parseMicro, proceedsOf, shareOut, type Micro, type PriceMicro, type ShareMicro } from "../../domain/money.ts";
import type { LevelMap } from "../mirror-book.ts";
import type { Level } from "../../domain/types.ts";
import { feesPerFill, uniqueTrades } from "../placement.ts";
import { resolutionStatus, type TradeSide, type VenueFill, type VenueMarket, type VenueResolution } from "../venue.ts";

/** Limitless prices move in 0.001 steps on every CLOB market (the official SDK's DEFAULT_PRICE_TICK). */
export const LIMITLESS_TICK: PriceMicro = 1_000n;
/**
 * Share increment of an order. The SDK only demands shares divisible by 1/tick (0.001 share); the
 * exchange descends from Polymarket's CTF exchange, whose books rest in 0.01-share lots (assumed).
 */
export const LIMITLESS_LOT: ShareMicro = 10_000n;

/** The fields of a Limitless market (`GET /markets/{slug}`, entries of `/markets/active`) that crossfill reads. */
export interface LimitlessMarket {
  id: number;
  slug: string;
  title: string;
  description?: string;
  /** FUNDED (or FUNDED_FLAGGED) while it trades, LOCKED while trading is paused awaiting the outcome, RESOLVED once the outcome is set. */
  status: string;
  /** Trading has stopped, waiting for resolution. */
  expired?: boolean;
  /** On a RESOLVED market, the winner: 0 YES, 1 NO; null before. */
  winningOutcomeIndex?: number | null;
  /** When the market closes, ms since the epoch. */
  expirationTimestamp: number;
  tradeType: string;
  tokens: { yes: string; no: string };
  /** venue.exchange is the verifyingContract of the market's EIP-712 orders. */
  venue: { exchange: string; adapter?: string | null };
  settings?: { minSize?: string | number };
  /** Traded volume in raw USDC units (6 decimals). */
  volume?: string | number;
  /**
   * Taker fee rate in basis points (assumed field: Limitless documents the rate only as the feeRateBps signed
   * into each order, and SDK 1.1.0's Market has no such field); absent, the account's rank rate applies.
   */
  feeRateBps?: number;
}

export interface LimitlessOrderbookEntry {
  price: unknown;
  size: unknown;
  side?: string;
}

/** `GET /markets/{slug}/orderbook` and the `orderbook` of an `orderbookUpdate`: the YES token's book. */
export interface LimitlessOrderbook {
  bids: LimitlessOrderbookEntry[];
  asks: LimitlessOrderbookEntry[];
  tokenId?: string;
  adjustedMidpoint?: number;
  maxSpread?: number | string;
  minSize?: number | string;
  lastTradePrice?: number;
}

/** One match of a taker order (`makerMatches[]`); price in the taker's token is an assumed field. */
export interface LimitlessMatch {
  id: string;
  createdAt: string;
  /** Shares matched, raw 6-decimal units. */
  matchedSize: string | number;
  /** The resting order it matched. */
  orderId: string;
  price: number;
}

export { mirroredSides, type LevelMap } from "../mirror-book.ts";

/** A price as Limitless sends it, a JSON number such as 0.535, read exactly through its shortest decimal form. */
export function parsePrice(value: unknown, field: string): PriceMicro {
  const p = parseMicro(value, field);
  if (p <= 0n || p >= ONE) throw new RangeError(`${field} ${String(value)} is not strictly between 0 and 1`);
  return p;
}

/**
 * An amount in raw 6-decimal units (sizes, minSize, volume, maker and taker amounts): an integer
 * given as a JSON number or a string of digits. A number beyond 2^53 has already lost digits, so it is refused.
 */
export function parseRaw(value: unknown, field: string): bigint {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  if (typeof value === "string" && /^\d{1,78}$/.test(value)) return BigInt(value);
  throw new RangeError(`${field} must be a non-negative integer in raw 6-decimal units (got ${JSON.stringify(value)})`);
}

/** A raw amount as the JSON number Limitless's order fields take; refused where a double would round it. */
export function rawNumber(value: bigint, field: string): number {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${field} ${value} does not fit a JSON number exactly`);
  return Number(value);
}

/**
 * A market's resolution from `status`, `expired` and `winningOutcomeIndex` (docs.limitless.exchange, Get
 * Market Details): `FUNDED` and `FUNDED_FLAGGED` trade until `expired`; `RESOLVED` names the winner in
 * `winningOutcomeIndex` (0 YES, 1 NO) and lets winners redeem; `LOCKED` (paused, typically awaiting the
 * outcome) and anything else trade no more. A RESOLVED market without a winning index names no outcome: closed.
 */
export function limitlessResolution(m: Pick<LimitlessMarket, "status" | "expired" | "winningOutcomeIndex">): VenueResolution {
  if (m.status === "RESOLVED") {
    if (m.winningOutcomeIndex === 0) return { state: "resolved", outcome: "YES" };
    return m.winningOutcomeIndex === 1 ? { state: "resolved", outcome: "NO" } : { state: "closed" };
  }
  return (m.status === "FUNDED" || m.status === "FUNDED_FLAGGED") && !m.expired ? { state: "open" } : { state: "closed" };
}

/** A market's `feeRateBps` as a fee model: whole basis points below 10 000 (100 %), else refused. */
export function limitlessFeeModel(feeRateBps: unknown): FeeModel {
  if (typeof feeRateBps !== "number" || !Number.isSafeInteger(feeRateBps) || feeRateBps < 0) {
    throw new RangeError(`feeRateBps must be a non-negative integer (got ${JSON.stringify(feeRateBps)})`);
  }
  return limitlessFee(BigInt(feeRateBps) * 100n);
}

/** The rate SDK 1.1.0 signs where the profile states no `rank.feeRateBps` (`OrderClient.ensureUserData`). */
export const LIMITLESS_DEFAULT_RANK_FEE_BPS = 300;

/**
 * The account's fee rate, which the official SDK signs into every order: `rank.feeRateBps` of
 * `GET /profiles/{address}`, LIMITLESS_DEFAULT_RANK_FEE_BPS where the profile states none.
 */
export function rankFeeBps(profile: unknown): number {
  const rate = (profile as { rank?: { feeRateBps?: unknown } } | null)?.rank?.feeRateBps;
  return rate === undefined || rate === null ? LIMITLESS_DEFAULT_RANK_FEE_BPS : Number(rate);
}

/** A market as the Venue port states it; its fee is its own `feeRateBps`, else `rankBps`, the account's (rankFeeBps). */
export function toVenueMarket(m: LimitlessMarket, rankBps?: number): VenueMarket {
  if (m.tradeType !== "clob") throw new Error(`Limitless market ${m.slug} trades as ${m.tradeType}: only CLOB markets have order books`);
  const minSize = m.settings?.minSize === undefined ? LIMITLESS_LOT : parseRaw(m.settings.minSize, "settings.minSize");
  return {
    venueMarketId: m.slug,
    title: m.title,
    outcomeIds: { YES: m.tokens.yes, NO: m.tokens.no },
    status: resolutionStatus(limitlessResolution(m)),
    closeTime: new Date(m.expirationTimestamp).toISOString(),
    tickSize: LIMITLESS_TICK,
    // a minimum off the lot grid could never be met exactly: round it up to the lot
    minOrderShares: ((minSize + LIMITLESS_LOT - 1n) / LIMITLESS_LOT) * LIMITLESS_LOT,
    lotShares: LIMITLESS_LOT,
    feeModel: limitlessFeeModel(m.feeRateBps ?? rankBps),
    volume: m.volume === undefined ? 0n : parseRaw(m.volume, "volume"),
  };
}

/** One side of a book as levels by price, sizes at one price added up, empty levels left out. */
export function levelMap(entries: readonly LimitlessOrderbookEntry[], field: string): LevelMap {
  const map: LevelMap = new Map();
  // named once a side, not once a level: a stream reads thousands of levels a second
  const priceField = `${field}[].price`;
  const sizeField = `${field}[].size`;
  for (const e of entries) {
    const price = parsePrice(e.price, priceField);
    const size = parseRaw(e.size, sizeField);
    if (size > 0n) map.set(price, (map.get(price) ?? 0n) + size);
  }
  return map;
}

export function parseOrderbook(book: LimitlessOrderbook): { bids: LevelMap; asks: LevelMap } {
  if (!Array.isArray(book?.bids) || !Array.isArray(book?.asks)) throw new TypeError("orderbook needs bids and asks arrays");
  return { bids: levelMap(book.bids, "bids"), asks: levelMap(book.asks, "asks") };
}

/**
 * The fills of one taker order (a buy or a sell, `side`) from its matches, each match once however
 * often the venue repeats it, and the order's `execution.totalsRaw`.
 *
 * A buy pays its fee in the contracts it buys: the venue withholds `contractsFee` of the
 * `contractsGross` matched. Its fills are the contracts delivered, each match less its part of the
 * contracts withheld, at the match's price, with the USDC value of that part as the fee
 * (netOfWithheld), so the fills' notional plus fees is exactly `usdGross`, what the venue took. The
 * totals must agree with the matches (contracts matched, USDC taken, net = gross − fee, no USDC fee),
 * else the answer is refused: a wrong count of shares would mint position tokens the venue does not hold.
 * A buy at a rate of 0 may come without totals (nothing is withheld). A sell's fee is USDC: the
 * totals' `usdFee` (what the venue applied, `effectiveFeeBps`, at most the signed ceiling), shared out
 * over its matches by their notional, so the proceeds are exactly `usdNet`, what the venue paid; totals that
 * disagree with the matches are refused as a buy's are. A sell without totals is charged the fee at the
 * signed rate, split by feesPerFill (which must see each match once): at most what the venue paid.
 */
export function fillsFromMatches(
  matches: readonly LimitlessMatch[],
  venueOrderId: string,
  clientOrderId: string,
  side: TradeSide,
  model: FeeModel,
  totals: LimitlessTotals | undefined,
): VenueFill[] {
  const trades = uniqueTrades(
    matches.map((m, i) => ({ tradeId: m.id, price: parsePrice(m.price, `makerMatches[${i}].price`), shares: parseRaw(m.matchedSize, `makerMatches[${i}].matchedSize`) })),
  );
  const fill = (t: (typeof trades)[number], shares: ShareMicro, fee: bigint): VenueFill => ({ tradeId: t.tradeId, venueOrderId, clientOrderId, side, price: t.price, shares, fee });
  if (side === "sell" || (totals === undefined && !feeInShares(model, side))) {
    const fees = side === "sell" ? sellFees(trades, model, totals) : feesPerFill(model, trades);
    return trades.map((t, i) => fill(t, t.shares, fees[i]!));
  }
  if (totals === undefined) throw new TypeError("a buy's answer has no execution.totalsRaw: the contracts withheld as its fee are not known");
  const withheld = boughtTotals(totals, trades);
  const net = netOfWithheld(trades, withheld);
  return trades.map((t, i) => fill(t, net[i]!.shares, net[i]!.fee));
}

/** An order as `POST /orders` and `GET /orders/{id}` answer it: the order, its matches and their `execution`. */
export interface LimitlessOrderAnswer {
  makerMatches?: LimitlessMatch[];
  execution?: LimitlessExecution;
}

/** The settlement stage of an order whose matches failed to settle for good (SDK 1.1.0 `Execution.settlementStatus`). */
export const SETTLEMENT_FAILED = "FAILED";

/**
 * The fills of an order from the venue's answer (fillsFromMatches of its matches and totals), or none
 * once its settlement FAILED: those matches never settled, so nothing was bought or sold (as a FAILED
 * trade on Polymarket is no fill). Matched, mined, confirmed or retrying, the matches are its fills.
 */
export function orderFills(answer: LimitlessOrderAnswer, venueOrderId: string, clientOrderId: string, side: TradeSide, model: FeeModel): VenueFill[] {
  if (answer.execution?.settlementStatus === SETTLEMENT_FAILED) return [];
  return fillsFromMatches(answer.makerMatches ?? [], venueOrderId, clientOrderId, side, model, answer.execution?.totalsRaw);
}

/** SDK 1.1.0 `ExecutionTotalsRaw`: raw 6-decimal integer strings; gross before the fee, fee, net after it. */
export interface LimitlessTotals {
  contractsGross: string;
  contractsFee: string;
  contractsNet: string;
  usdGross: string;
  usdFee: string;
  usdNet: string;
}

/** The contracts a buy's totals say were withheld, once they agree with its matches; throws when they do not. */
function boughtTotals(totals: LimitlessTotals, matched: readonly Level[]): ShareMicro {
  const t = (field: keyof LimitlessTotals) => parseRaw(totals[field], `execution.totalsRaw.${field}`);
  const contracts = matched.reduce((s, l) => s + l.shares, 0n);
  const paid = matched.reduce((s, l) => s + notional(l.price, l.shares), 0n);
  const fee = t("contractsFee");
  const disagree = (what: string) => new RangeError(`execution.totalsRaw disagrees with the matches: ${what}`);
  if (t("contractsGross") !== contracts) throw disagree(`contractsGross ${totals.contractsGross}, matched ${contracts}`);
  if (fee > contracts || t("contractsNet") !== contracts - fee) throw disagree(`contractsNet ${totals.contractsNet} is not ${totals.contractsGross} − ${totals.contractsFee}`);
  if (t("usdGross") !== paid) throw disagree(`usdGross ${totals.usdGross}, the matches' notional ${paid}`);
  if (t("usdFee") !== 0n || t("usdNet") !== paid) throw disagree(`a buy with a USDC fee (usdFee ${totals.usdFee}, usdNet ${totals.usdNet})`);
  return fee;
}

/**
 * A sell's USDC fee on each of its matches (each once): its totals' `usdFee`, what the venue applied, shared out by
 * notional; without totals, the fee at the signed rate split by feesPerFill.
 */
function sellFees(matched: readonly Level[], model: FeeModel, totals: LimitlessTotals | undefined): Micro[] {
  return totals === undefined ? feesPerFill(model, matched) : shareOut(soldTotals(totals, matched), matched.map((t) => notional(t.price, t.shares)));
}

/** The USDC fee a sell's totals say the venue took, once they agree with its matches; throws when they do not. */
function soldTotals(totals: LimitlessTotals, matched: readonly Level[]): Micro {
  const t = (field: keyof LimitlessTotals) => parseRaw(totals[field], `execution.totalsRaw.${field}`);
  const contracts = matched.reduce((s, l) => s + l.shares, 0n);
  const paid = matched.reduce((s, l) => s + proceedsOf(l.price, l.shares), 0n);
  const fee = t("usdFee");
  const disagree = (what: string) => new RangeError(`execution.totalsRaw disagrees with the sell's matches: ${what}`);
  if (t("contractsGross") !== contracts || t("contractsFee") !== 0n || t("contractsNet") !== contracts) throw disagree(`contracts ${totals.contractsGross} − ${totals.contractsFee} = ${totals.contractsNet}, matched ${contracts}`);
  if (t("usdGross") !== paid) throw disagree(`usdGross ${totals.usdGross}, the matches' proceeds ${paid}`);
  if (fee > paid || t("usdNet") !== paid - fee) throw disagree(`usdNet ${totals.usdNet} is not ${totals.usdGross} − ${totals.usdFee}`);
  return fee;
}

/** The side of an order as Limitless writes it, 0 BUY and 1 SELL (the EIP-712 `side`). */
export function orderSide(side: unknown): TradeSide {
  if (side !== 0 && side !== 1) throw new RangeError(`order side must be 0 (BUY) or 1 (SELL), got ${JSON.stringify(side)}`);
  return side === 0 ? "buy" : "sell";
}

/**
 * The `execution` summary Limitless returns with an order (SDK 1.1.0 `Execution`): only the taker-delay
 * outcome is read. `DELAYED` means the venue accepted the order but holds it for the market's taker
 * delay until `eligibleAt`, so it has not met the book yet.
 */
export interface LimitlessExecution {
  settlementStatus: string;
  eligibleAt?: string;
  /** What the order's matches came to (assumed on `GET /orders/{id}` as on the create answer). */
  totalsRaw?: LimitlessTotals;
}

/** When an order the venue holds for a taker delay meets the book (`eligibleAt`, or "" if not named); undefined when it is not held. */
export function takerDelayUntil(execution: LimitlessExecution | undefined): string | undefined {
  return execution?.settlementStatus === "DELAYED" ? (execution.eligibleAt ?? "") : undefined;
}

/**
 * One entry of the account's history (`GET /portfolio/history`, the SDK's `HistoryEntry`): trades,
 * but also splits, merges, conversions and claims. `matchId` and `orderId` are **assumed** fields: the
 * documented entry names neither the match nor the order a trade belongs to.
 */
export interface LimitlessHistoryEntry {
  /** Unix seconds. */
  blockTimestamp: number;
  market?: { slug: string; [field: string]: unknown };
  outcomeIndex?: number;
  /** Shares traded, raw 6-decimal units. */
  outcomeTokenAmount?: string;
  outcomeTokenAmounts?: string[];
  outcomeTokenPrice?: number | string;
  /** USDC traded, raw 6-decimal units. */
  collateralAmount?: string;
  /** Buy, Sell, Limit Buy, Limit Sell, Market Buy, Market Sell, Split, Merge, Convert, Claim. */
  strategy?: string;
  transactionHash?: string;
  /** The match, as `makerMatches[].id` names it when the order is placed. */
  matchId?: string;
  /** The account's order the match filled. */
  orderId?: string;
}

/** A page of `GET /portfolio/history?cursor=&limit=`; `nextCursor` is null on the last page. */
export interface LimitlessHistoryPage {
  data: LimitlessHistoryEntry[];
  nextCursor: string | null;
}

/**
 * Whether a history entry bought or sold, as its `strategy` says ("Buy", "Limit Sell", "Market Sell"…).
 */
export function historySide(entry: LimitlessHistoryEntry): TradeSide {
  return /sell/i.test(entry.strategy ?? "") ? "sell" : "buy";
}

/**
 * The account's order book trades from its history entries, in the order given, each once. The
 * listing names no fee: each order's fee is split over its trades as over its fills, so a trade carries
 * the fee its fill did, from the order's `totals` (its `execution.totalsRaw`: what the venue applied, which
 * may be below the signed rate): a buy's trades deliver their contracts less the contracts the venue
 * withheld from the order (`contractsFee`), split as its fills split it (netOfWithheld); a sell's pay its
 * `usdFee` shared out by notional (sellFees, the signed rate without totals). The listing does not carry
 * the client order id.
 */
export function tradesFromHistory(
  entries: readonly LimitlessHistoryEntry[],
  feeModel: (slug: string) => FeeModel,
  totals: (venueOrderId: string) => LimitlessTotals | undefined,
): VenueFill[] {
  const trades = uniqueTrades(
    entries.flatMap((e, i) => {
      if (e.matchId === undefined) return [];
      if (e.orderId === undefined || e.market === undefined) throw new TypeError(`history[${i}]: a trade needs its orderId and market`);
      return [{ tradeId: e.matchId, venueOrderId: e.orderId, slug: e.market.slug, side: historySide(e), price: parsePrice(e.outcomeTokenPrice, `history[${i}].outcomeTokenPrice`), shares: parseRaw(e.outcomeTokenAmount, `history[${i}].outcomeTokenAmount`) }];
    }),
  );
  const byOrder = new Map<string, typeof trades>();
  for (const t of trades) byOrder.set(t.venueOrderId, [...(byOrder.get(t.venueOrderId) ?? []), t]);
  const priced = new Map<string, { shares: ShareMicro; fee: bigint }>();
  for (const group of byOrder.values()) {
    const model = feeModel(group[0]!.slug);
    if (feeInShares(model, group[0]!.side)) {
      const orderTotals = totals(group[0]!.venueOrderId);
      if (orderTotals === undefined) throw new TypeError(`order ${group[0]!.venueOrderId}: a buy's answer has no execution.totalsRaw: the contracts withheld as its fee are not known`);
      const net = netOfWithheld(group, parseRaw(orderTotals.contractsFee, "execution.totalsRaw.contractsFee"));
      group.forEach((t, i) => priced.set(t.tradeId, net[i]!));
    } else {
      const split = group[0]!.side === "sell" ? sellFees(group, model, totals(group[0]!.venueOrderId)) : feesPerFill(model, group);
      group.forEach((t, i) => priced.set(t.tradeId, { shares: t.shares, fee: split[i]! }));
    }
  }
  return trades.map((t) => ({ tradeId: t.tradeId, venueOrderId: t.venueOrderId, clientOrderId: "", side: t.side, price: t.price, ...priced.get(t.tradeId)! }));
}
