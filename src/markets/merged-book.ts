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
  const tagged = (side: "bids" | "asks") => fresh.flatMap((f) => f.book[side].map((l) => ({ ...l, venue: f.venue.id })));
  const byVenue = (a: { venue: string }, b: { venue: string }) => (a.venue < b.venue ? -1 : a.venue > b.venue ? 1 : 0);
  const bids = tagged("bids").sort((a, b) => (a.price === b.price ? byVenue(a, b) : a.price > b.price ? -1 : 1));
  const asks = tagged("asks").sort((a, b) => (a.price === b.price ? byVenue(a, b) : a.price < b.price ? -1 : 1));
  const entry = (l: Level & { venue: string }): BookEntry => [microToNumber(l.price), microToNumber(l.shares), l.venue];

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

  const bestBid = bids[0]?.price;
  const bestAsk = asks[0]?.price;
  const newest = fresh.reduce<number | undefined>((t, f) => (t === undefined || f.book.updatedAt > t ? f.book.updatedAt : t), undefined);
  return {
    event_id: event.eventId,
    outcome,
    best_execution: best
      ? { venue: best.venue, price: microToNumber(best.price), fee_adjusted_price: microToNumber(best.adjusted) }
      : null,
    orderbook: { bids: bids.slice(0, opts.depth).map(entry), asks: asks.slice(0, opts.depth).map(entry) },
    spread: {
      best_bid: bestBid === undefined ? null : microToNumber(bestBid),
      best_ask: bestAsk === undefined ? null : microToNumber(bestAsk),
      spread: bestBid === undefined || bestAsk === undefined ? null : microToNumber(bestAsk - bestBid),
    },
    updated_at: newest === undefined ? null : new Date(newest).toISOString(),
    stale_venues: stale,
  };
}

/** The router's input for buying `outcome` of an event: every fresh venue's full ask side in exact units, and its measured latency. */
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
  }));
}
