import { feeAdjustedPrice, sellFeeAdjustedPrice } from "../domain/fees.ts";
import { microToNumber, type PriceMicro, type ShareMicro } from "../domain/money.ts";
import type { Level, Outcome } from "../domain/types.ts";
import type { BookSnapshot, TradeSide, Venue, VenueMarket } from "../venues/venue.ts";
import { leastLegAsk, leastLegBid, type SellQuote, type VenueQuote } from "../router/index.ts";
import type { UnifiedEvent } from "./catalog.ts";

/** `[price, size, venue]`, as the SPEC shapes a book entry. */
export type BookEntry = [number, number, string];

/** The SPEC's price record with crossfill's extras, ready to serialise. */
export interface PriceRecord {
  event_id: string;
  outcome: Outcome;
  best_execution: { venue: string; price: number; fee_adjusted_price: number } | null;
  orderbook: { bids: BookEntry[]; asks: BookEntry[] };
  spread: { best_bid: number | null; best_ask: number | null; spread: number | null };
  updated_at: string | null;
  stale_venues: string[];
}

export interface FreshBook {
  venue: Venue;
  market: VenueMarket;
  book: BookSnapshot;
}

/**
 * The books of an event's listings that can be trusted now. A listing whose venue is missing or
 * down, or whose book is missing or older than the venue's freshness bound, is named in `stale`.
 * Markets that no longer trade have no book by design and are neither; nor has any listing of an event
 * that no longer trades (closed, resolved or disputed: no order is taken on it), whatever its venues show.
 */
export function freshBooks(
  event: UnifiedEvent,
  outcome: Outcome,
  venues: readonly Venue[],
  now: number,
): { fresh: FreshBook[]; stale: string[] } {
  const fresh: FreshBook[] = [];
  const stale: string[] = [];
  if (event.status !== "open") return { fresh, stale };
  for (const listing of event.listings) {
    const venue = venues.find((v) => v.id === listing.venue);
    const market = venue?.market(listing.venueMarketId);
    if (venue && market && market.status !== "open") continue;
    const book = venue?.book(listing.venueMarketId, outcome);
    if (!venue || !market || !book || venue.health().state === "down" || now - book.updatedAt > venue.freshnessMs) {
      stale.push(listing.venue);
      continue;
    }
    fresh.push({ venue, market, book });
  }
  return { fresh, stale: stale.sort() };
}

/**
 * The side of an order a price record is for: `buy` (the default) names the venue whose best ask
 * costs least after fees; `sell` orders the bids by what a seller nets per share after fees and
 * names the venue whose best bid nets most.
 */
export type OrderSide = "buy" | "sell";

/** One event's books from every fresh venue, merged into the price record of `GET /v1/prices/{event_id}`. */
export function mergeBooks(
  event: UnifiedEvent,
  outcome: Outcome,
  venues: readonly Venue[],
  opts: { depth: number; now: number; side?: OrderSide },
): PriceRecord {
  if (!Number.isInteger(opts.depth) || opts.depth < 1) throw new RangeError("depth must be a positive integer");
  const { fresh, stale } = freshBooks(event, outcome, venues, opts.now);
  const side = opts.side ?? "buy";
  const bids = side === "sell" ? netBids(fresh, opts.depth) : mergeSide(fresh, "bids", opts.depth);
  const asks = mergeSide(fresh, "asks", opts.depth);
  const best = bestExecution(fresh, side);

  const bestBid = fresh.reduce<PriceMicro | undefined>((b, f) => {
    const top = f.book.bids[0]?.price;
    return top !== undefined && (b === undefined || top > b) ? top : b;
  }, undefined);
  const bestAsk = asks[0]?.level.price;
  const newest = fresh.reduce<number | undefined>((t, f) => (t === undefined || f.book.updatedAt > t ? f.book.updatedAt : t), undefined);
  return {
    event_id: event.eventId,
    outcome,
    best_execution: best
      ? { venue: best.venue, price: microToNumber(best.price), fee_adjusted_price: microToNumber(best.adjusted) }
      : null,
    orderbook: { bids: bids.map((b) => b.entry), asks: asks.map((a) => a.entry) },
    spread: {
      best_bid: bestBid === undefined ? null : microToNumber(bestBid),
      best_ask: bestAsk === undefined ? null : microToNumber(bestAsk),
      spread: bestBid === undefined || bestAsk === undefined ? null : microToNumber(bestAsk - bestBid),
    },
    updated_at: newest === undefined ? null : new Date(newest).toISOString(),
    stale_venues: stale,
  };
}

/**
 * What selling a share of `outcome` nets now: the best bid across the fresh venues after its venue's fee
 * (the `best_execution.fee_adjusted_price` of the sell side's record), in exact units; null with no bid
 * that nets anything.
 */
export function markPrice(event: UnifiedEvent, outcome: Outcome, venues: readonly Venue[], now: number): PriceMicro | null {
  return bestExecution(freshBooks(event, outcome, venues, now).fresh, "sell")?.adjusted ?? null;
}

interface Best {
  venue: string;
  price: PriceMicro;
  adjusted: PriceMicro;
}

/**
 * The venue whose best ask costs least after its fee (buy), or whose best bid nets most after it
 * (sell); ties to the better price, then the venue's name. A sell's prices count negated, so that
 * lower is better for both. A venue's best ask or bid is the one its least order reaches, as the
 * router's reference takes it (router/buy.ts `leastLegAsk`; router/sell.ts `leastLegBid`, for a holder
 * of every share its bids take): a top level smaller than the venue's minimum order is no trade alone.
 * A best bid whose fee takes all it pays (one contract at 0.005 on Kalshi pays a cent) is no sale alone,
 * so it is never named. Each level is priced taken alone (DESIGN.md §3), where the router prices what its
 * shares add to an order (fees.ts `marginalBid`).
 */
function bestExecution(fresh: readonly FreshBook[], side: OrderSide): Best | undefined {
  const sign = side === "sell" ? -1n : 1n;
  let best: Best | undefined;
  for (const f of fresh) {
    const top =
      side === "sell"
        ? leastLegBid({ ...rules(f, "sell"), bids: f.book.bids, inventory: f.book.bids.reduce((s, l) => s + l.shares, 0n) })
        : leastLegAsk({ ...rules(f, "buy"), asks: f.book.asks });
    if (!top) continue;
    const adjusted = side === "sell" ? sellFeeAdjustedPrice(f.market.feeModel, top) : feeAdjustedPrice(f.market.feeModel, top);
    if (side === "sell" && adjusted <= 0n) continue;
    const better =
      !best ||
      sign * adjusted < sign * best.adjusted ||
      (adjusted === best.adjusted && (sign * top.price < sign * best.price || (top.price === best.price && f.venue.id < best.venue)));
    if (better) best = { venue: f.venue.id, price: top.price, adjusted };
  }
  return best;
}

/**
 * The `depth` bids across venues that net a seller the most per share after their venue's fee for
 * taking the whole level, best first; ties to the higher price, then the venue's name. A small level
 * can net less than a larger one below it (a fee rounded up per order weighs more on it), so the
 * bids are sorted, not merged.
 */
function netBids(fresh: readonly FreshBook[], depth: number): { level: Level; entry: BookEntry }[] {
  const all = fresh.flatMap((f) => f.book.bids.map((level) => ({ level, venue: f.venue.id, net: sellFeeAdjustedPrice(f.market.feeModel, level) })));
  all.sort((a, b) =>
    a.net !== b.net ? (a.net > b.net ? -1 : 1) : a.level.price !== b.level.price ? (a.level.price > b.level.price ? -1 : 1) : a.venue < b.venue ? -1 : a.venue > b.venue ? 1 : 0,
  );
  return all.slice(0, depth).map(({ level, venue }) => ({ level, entry: [microToNumber(level.price), microToNumber(level.shares), venue] }));
}

/**
 * The best `depth` levels of one side across venues, best first, ties by venue name. Each venue's side
 * is already sorted best first (the Venue port's contract), so this merges them instead of sorting.
 */
function mergeSide(fresh: readonly FreshBook[], side: "bids" | "asks", depth: number): { level: Level; entry: BookEntry }[] {
  const next = fresh.map(() => 0);
  const out: { level: Level; entry: BookEntry }[] = [];
  while (out.length < depth) {
    let pick = -1;
    let best: Level | undefined;
    for (let i = 0; i < fresh.length; i++) {
      const level = fresh[i]!.book[side][next[i]!];
      if (!level) continue;
      const wins =
        best === undefined ||
        (side === "bids" ? level.price > best.price : level.price < best.price) ||
        (level.price === best.price && fresh[i]!.venue.id < fresh[pick]!.venue.id);
      if (wins) [pick, best] = [i, level];
    }
    if (best === undefined) break;
    next[pick]!++;
    out.push({ level: best, entry: [microToNumber(best.price), microToNumber(best.shares), fresh[pick]!.venue.id] });
  }
  return out;
}

/**
 * Child orders already planned onto a venue (by its id) and not yet placed there: they will queue before
 * any order planned now, so the venue's queue delay counts them (Venue.queueDelayMs).
 */
export type QueuedAhead = (venueId: string) => number;

/** A fresh venue's market's trading rules and fees for a side, as the router reads them; its latency and queue unmeasured. */
function rules({ venue, market }: FreshBook, side: TradeSide) {
  return {
    venue: venue.id,
    venueMarketId: market.venueMarketId,
    feeModel: market.feeModel,
    tickSize: market.tickSize,
    minOrderShares: market.minOrderShares,
    lotShares: side === "sell" ? (market.sellLotShares ?? market.lotShares) : market.lotShares,
    minOrderAmount: market.minOrderAmount?.[side],
    latencyMs: undefined,
  };
}

/** What the router reads of a fresh venue's market, whichever side it routes: its rules, fees, measured latency and queue. */
function routing(f: FreshBook, ahead: QueuedAhead, side: TradeSide) {
  return { ...rules(f, side), latencyMs: f.venue.latency().p50Ms, queueDelayMs: f.venue.queueDelayMs?.(ahead(f.venue.id)) };
}

/** The router's input for buying `outcome` of an event: every fresh venue's full ask side in exact units (its book's own, not a copy), with its routing(). */
export function venueQuotes(event: UnifiedEvent, outcome: Outcome, venues: readonly Venue[], now: number, ahead: QueuedAhead): VenueQuote[] {
  return freshBooks(event, outcome, venues, now).fresh.map((f) => ({ ...routing(f, ahead, "buy"), asks: f.book.asks }));
}

/**
 * The router's input for selling `outcome` of an event: every fresh venue's full bid side in exact
 * units, with its routing() and the shares of the outcome the operator holds there (`inventory`, by
 * venue id; a venue missing from it holds none).
 */
export function sellQuotes(event: UnifiedEvent, outcome: Outcome, venues: readonly Venue[], now: number, inventory: ReadonlyMap<string, ShareMicro>, ahead: QueuedAhead): SellQuote[] {
  return freshBooks(event, outcome, venues, now).fresh.map((f) => ({
    ...routing(f, ahead, "sell"),
    bids: f.book.bids,
    inventory: inventory.get(f.venue.id) ?? 0n,
  }));
}
