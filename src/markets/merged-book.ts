import { feeAdjustedPrice } from "../domain/fees.ts";
import { microToNumber, type PriceMicro } from "../domain/money.ts";
import type { Level, Outcome } from "../domain/types.ts";
import type { BookSnapshot, Venue, VenueMarket } from "../venues/venue.ts";
import type { VenueQuote } from "../router/index.ts";
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
 * Markets that no longer trade have no book by design and are neither.
 */
export function freshBooks(
  event: UnifiedEvent,
  outcome: Outcome,
  venues: readonly Venue[],
  now: number,
): { fresh: FreshBook[]; stale: string[] } {
  const fresh: FreshBook[] = [];
  const stale: string[] = [];
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

/** One event's books from every fresh venue, merged into the price record of `GET /v1/prices/{event_id}`. */
export function mergeBooks(
  event: UnifiedEvent,
  outcome: Outcome,
  venues: readonly Venue[],
  opts: { depth: number; now: number },
): PriceRecord {
  if (!Number.isInteger(opts.depth) || opts.depth < 1) throw new RangeError("depth must be a positive integer");
  const { fresh, stale } = freshBooks(event, outcome, venues, opts.now);
  const bids = mergeSide(fresh, "bids", opts.depth);
  const asks = mergeSide(fresh, "asks", opts.depth);

  let best: { venue: string; price: PriceMicro; adjusted: PriceMicro } | undefined;
  for (const f of fresh) {
    const top = f.book.asks[0];
    if (!top) continue;
    const adjusted = feeAdjustedPrice(f.market.feeModel, top);
    const better =
      !best ||
      adjusted < best.adjusted ||
      (adjusted === best.adjusted && (top.price < best.price || (top.price === best.price && f.venue.id < best.venue)));
    if (better) best = { venue: f.venue.id, price: top.price, adjusted };
  }

  const bestBid = bids[0]?.level.price;
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

/** The router's input for buying `outcome` of an event: every fresh venue's full ask side in exact units, its measured latency and its queue. */
export function venueQuotes(event: UnifiedEvent, outcome: Outcome, venues: readonly Venue[], now: number): VenueQuote[] {
  return freshBooks(event, outcome, venues, now).fresh.map(({ venue, market, book }) => ({
    venue: venue.id,
    venueMarketId: market.venueMarketId,
    asks: book.asks.map((l) => ({ price: l.price, shares: l.shares })),
    feeModel: market.feeModel,
    tickSize: market.tickSize,
    minOrderShares: market.minOrderShares,
    lotShares: market.lotShares,
    latencyMs: venue.latency().p50Ms,
    queueDelayMs: venue.queueDelayMs?.(),
  }));
}
