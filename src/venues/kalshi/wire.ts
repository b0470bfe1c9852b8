import type { FeeModel } from "../../domain/fees.ts";
import { ceilScaled, ONE, parseMicro, type PriceMicro, type ShareMicro } from "../../domain/money.ts";
import type { Level, Outcome } from "../../domain/types.ts";
import { resolutionStatus, type BookSides, type VenueMarket, type VenueResolution } from "../venue.ts";

/** The fields of Kalshi's Market object that crossfill reads (trade API v2, fixed-point `_dollars` / `_fp` fields). */
export interface KalshiMarket {
  ticker: string;
  event_ticker: string;
  /** `binary` (YES pays $1 or nothing) or `scalar` (YES pays the market's settlement value, from 0 to $1). */
  market_type: string;
  title?: string;
  yes_sub_title: string;
  status: string;
  close_time: string;
  result: string;
  volume_fp: string;
  notional_value_dollars: string;
  price_level_structure: string;
  price_ranges: { start: string; end: string; step: string }[];
  /** Counts in 0.01 contracts accepted (docs.kalshi.com, fixed_point_migration); not in kalshi-typescript 3.30.0's Market. */
  fractional_trading_enabled?: boolean;
}

/** `[price_dollars, count_fp]` pairs: bids only, YES and NO each their own side. */
export interface KalshiOrderbookFp {
  yes_dollars: [string, string][];
  no_dollars: [string, string][];
}

/** Kalshi's general taker fee rate; a series' `fee_multiplier` scales it (0.5 on some index series). */
export const KALSHI_TAKER_RATE_PPM = 70_000n;

/** Price levels keyed by price in micro-USDC, count in micro-contracts: the state a WebSocket book is kept in. */
export type LevelMap = Map<PriceMicro, ShareMicro>;

export function parseDollars(value: unknown, field: string): PriceMicro {
  return parseMicro(value, field);
}

export function parseCount(value: unknown, field: string): ShareMicro {
  return parseMicro(value, field);
}

/** A signed fixed-point count such as an orderbook delta's `delta_fp` ("-50.00"). */
export function parseSignedCount(value: unknown, field: string): bigint {
  if (typeof value === "string" && value.startsWith("-")) return -parseMicro(value.slice(1), field);
  return parseMicro(value, field);
}

/** Dollars with 4 decimals, the precision Kalshi's requests accept ("0.5600"). */
export function formatDollars(micro: PriceMicro): string {
  return formatFixed(micro, 4);
}

/** A contract count with the 2 decimals of Kalshi's `_fp` fields ("10.00"). */
export function formatCount(micro: ShareMicro): string {
  return formatFixed(micro, 2);
}

function formatFixed(micro: bigint, decimals: number): string {
  const unit = 10n ** BigInt(6 - decimals);
  if (micro < 0n || micro % unit !== 0n) throw new RangeError(`${micro} micro-units do not fit ${decimals} decimals`);
  const whole = micro / ONE;
  const frac = ((micro % ONE) / unit).toString().padStart(decimals, "0");
  return `${whole}.${frac}`;
}

/**
 * A market's resolution from its `status` and `result` (docs.kalshi.com, Market Lifecycle): `active`
 * trades; `finalized` has paid out ("Settlement complete. Positions have been paid out"), to `result`
 * `yes` or `no`, or to neither (a voided market's `void`, assumed to show here as on a Settlement).
 * Everything else trades no more and has paid nothing: `initialized`, `inactive`, `closed`, and
 * `determined`, `disputed` and `amended`, whose result is known but whose settlement timer still runs.
 */
export function kalshiResolution(m: Pick<KalshiMarket, "status" | "result">): VenueResolution {
  if (m.status === "active") return { state: "open" };
  if (m.status !== "finalized") return { state: "closed" };
  if (m.result === "yes") return { state: "resolved", outcome: "YES" };
  return m.result === "no" ? { state: "resolved", outcome: "NO" } : { state: "voided" };
}

/**
 * Fee model of a series from its `fee_type` and `fee_multiplier`. Only the quadratic schedules are
 * modelled; maker fees do not concern crossfill, which only takes. The multiplier is read exactly, however many
 * decimals it has, and a rate that is not whole ppm (a multiplier with more than 4 decimals) is rounded up: quotes,
 * plans and locks never state less than the venue charges.
 */
export function kalshiFeeModel(feeType: string, feeMultiplier: unknown): FeeModel {
  if (!feeType.startsWith("quadratic")) throw new Error(`Kalshi fee_type ${feeType} is not supported`);
  return { kind: "kalshi", ratePpm: ceilScaled(feeMultiplier, KALSHI_TAKER_RATE_PPM, "fee_multiplier") };
}

/** A series' fee schedule, as `GET /series/{series_ticker}` states it (`series.fee_type`, `series.fee_multiplier`). */
export interface KalshiSeriesFee {
  fee_type: string;
  fee_multiplier: number;
}

/**
 * An event's fee override, as `GET /events` and `GET /events/{event_ticker}` state it (kalshi-typescript 3.30.0
 * `EventData`): null or absent where the event keeps its series' fee.
 */
export interface KalshiEventFee {
  fee_type_override?: string | null;
  fee_multiplier_override?: number | null;
}

/** A change Kalshi has scheduled to a series' fee (`GET /series/fee_changes`: kalshi-typescript 3.30.0 `SeriesFeeChange`). */
export interface KalshiSeriesFeeChange extends KalshiSeriesFee {
  id: string;
  series_ticker: string;
  scheduled_ts: string;
}

/** A change Kalshi has scheduled to an event's override (`GET /events/fee_changes`: `EventFeeChange`); a null field clears the override. */
export interface KalshiEventFeeChange extends KalshiEventFee {
  id: string;
  event_ticker: string;
  series_ticker: string;
  scheduled_ts: string;
}

/** A series' fee out of a record that states it (the series, or a change to it). */
export function seriesFee(s: KalshiSeriesFee): KalshiSeriesFee {
  return { fee_type: s.fee_type, fee_multiplier: s.fee_multiplier };
}

/** An event's override out of a record that states it (the event, or a change to it). */
export function eventFee(e: KalshiEventFee): KalshiEventFee {
  return { fee_type_override: e.fee_type_override, fee_multiplier_override: e.fee_multiplier_override };
}

/** When a scheduled change applies, in ms since the epoch; undefined where its `scheduled_ts` is not a time. */
export function scheduledAt(c: { scheduled_ts: unknown }): number | undefined {
  const at = typeof c.scheduled_ts === "string" ? Date.parse(c.scheduled_ts) : NaN;
  return Number.isNaN(at) ? undefined : at;
}

/**
 * The fee a market is charged: its event's override where there is one, else its series' fee. Each field
 * stands on its own: `fee_type_override` "takes precedence over the series-level fee for this event's
 * markets" and `fee_multiplier_override` is "paired with" it (`EventData`), and a null one "falls back to
 * the parent series'" fee structure or multiplier (`EventFeeChange`), so an override of one field keeps
 * the series' other.
 */
export function kalshiMarketFeeModel(series: KalshiSeriesFee, event: KalshiEventFee): FeeModel {
  return kalshiFeeModel(event.fee_type_override ?? series.fee_type, event.fee_multiplier_override ?? series.fee_multiplier);
}

/** The series a market belongs to: the first dash-separated part of its ticker (KXBTCD-26DEC31-T150000 → KXBTCD). */
export function seriesOf(ticker: string): string {
  return ticker.split("-")[0]!;
}

/** One range of a market's price grid: the YES prices from `start` to `end`, `step` apart from `start`. */
export interface PriceRange {
  start: PriceMicro;
  end: PriceMicro;
  step: PriceMicro;
}

const CENT = 10_000n;
/** Where a market states no `price_ranges`: whole cents. */
const CENT_GRID: PriceRange[] = [{ start: 0n, end: ONE, step: CENT }];

/**
 * A market's price grid (`price_ranges`): one range on `linear_cent` and `deci_cent` markets, several on
 * `tapered_deci_cent` ones (0.001 steps below 0.10 and above 0.90, 0.01 between: docs.kalshi.com,
 * fixed_point_migration).
 */
export function priceRanges(m: Pick<KalshiMarket, "price_ranges">): PriceRange[] {
  if (m.price_ranges.length === 0) return CENT_GRID;
  return m.price_ranges.map((r, i) => {
    const range = { start: parseDollars(r.start, `price_ranges[${i}].start`), end: parseDollars(r.end, `price_ranges[${i}].end`), step: parseDollars(r.step, `price_ranges[${i}].step`) };
    if (range.step <= 0n) throw new Error(`price_ranges[${i}].step is not positive`);
    return range;
  });
}

/** Whether Kalshi takes an order at this YES price: on the step of a range that holds it. */
export function onPriceGrid(yesPrice: PriceMicro, ranges: readonly PriceRange[]): boolean {
  return yesPrice > 0n && yesPrice < ONE && ranges.some((r) => yesPrice >= r.start && yesPrice <= r.end && (yesPrice - r.start) % r.step === 0n);
}

/**
 * A Kalshi market as the Venue port states it. Prices may be quoted on a finer grid near 0 and 1
 * (tapered structures): the tick it states is the coarsest step, valid across the range, and the
 * adapter checks an order's price against the market's ranges (onPriceGrid). Only a `binary` market is one: a
 * `scalar` one pays its YES holders a settlement value anywhere from 0 to $1, no outcome of a question.
 */
export function toVenueMarket(m: KalshiMarket, feeModel: FeeModel): VenueMarket {
  if (m.market_type !== "binary") throw new Error(`Kalshi market_type ${String(m.market_type)} is not binary`);
  const ranges = priceRanges(m);
  const tick = ranges.reduce((a, r) => (r.step > a ? r.step : a), 0n);
  // every price whole cents and every contract whole: each fill's notional is whole cents (fees.ts, worstFee)
  const wholeCents = m.fractional_trading_enabled !== true && ranges.every((r) => r.start % CENT === 0n && r.step % CENT === 0n);
  return {
    venueMarketId: m.ticker,
    title: m.title ?? m.yes_sub_title,
    outcomeIds: { YES: "yes", NO: "no" },
    status: resolutionStatus(kalshiResolution(m)),
    closeTime: new Date(m.close_time).toISOString(),
    tickSize: tick,
    minOrderShares: ONE,
    lotShares: ONE,
    feeModel: wholeCents && feeModel.kind === "kalshi" ? { ...feeModel, wholeCents } : feeModel,
    // contracts traded times their $1 notional: Kalshi states volume in contracts, not dollars
    volume: (parseCount(m.volume_fp, "volume_fp") * parseDollars(m.notional_value_dollars, "notional_value_dollars")) / ONE,
  };
}

/** The `wholeCents` mark of a market's fee model, to keep on another fee for the same market. */
export function wholeCentsOf(model: FeeModel): { wholeCents?: true } {
  return model.kind === "kalshi" && model.wholeCents ? { wholeCents: true } : {};
}

export function levelMap(pairs: readonly (readonly [unknown, unknown])[], field: string): LevelMap {
  const map: LevelMap = new Map();
  // named once a side, not once a level: a stream reads thousands of levels a second
  const priceField = `${field}[][0]`;
  const countField = `${field}[][1]`;
  for (const [price, count] of pairs) {
    const p = parseDollars(price, priceField);
    const c = parseCount(count, countField);
    if (c > 0n) map.set(p, (map.get(p) ?? 0n) + c);
  }
  return map;
}

/**
 * Both outcomes' books from Kalshi's bids-only book. A NO bid at q is an offer to sell YES at 1 − q
 * (the two make one $1 contract), so YES asks are the NO bids flipped, and NO asks the YES bids flipped.
 */
export function kalshiSides(yes: LevelMap, no: LevelMap): Record<Outcome, BookSides> {
  const yesBids = descending(yes);
  const noBids = descending(no);
  const flipped = (opposite: Level[]): Level[] => opposite.map((l) => ({ price: ONE - l.price, shares: l.shares }));
  return { YES: { bids: yesBids, asks: flipped(noBids) }, NO: { bids: noBids, asks: flipped(yesBids) } };
}

function descending(levels: LevelMap): Level[] {
  return [...levels]
    .filter(([, shares]) => shares > 0n)
    .sort(([a], [b]) => (a > b ? -1 : a < b ? 1 : 0))
    .map(([price, shares]) => ({ price, shares }));
}
