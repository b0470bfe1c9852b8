import { describeFeeModel } from "../domain/fees.ts";
import { microToNumber } from "../domain/money.ts";
import type { Venue, VenueMarket } from "../venues/venue.ts";
import type { UnifiedEvent, VenueListing } from "./catalog.ts";
import type { PriceRecord } from "./merged-book.ts";

/** A record of `GET /v1/markets`. */
export interface MarketRecord {
  event_id: string;
  title: string;
  description: string;
  outcomes: string[];
  status: string;
  close_time: string;
  resolution: string | null;
  venues: {
    venue: string;
    venue_market_id: string;
    outcome_ids: Record<string, string>;
    fee_model: Record<string, unknown>;
    tick_size: number;
    min_order_size: number;
  }[];
  best_bid: number | null;
  best_ask: number | null;
  volume_usdc: number;
}

/** The venue's market of a listing, when its venue is connected and knows it: what the listing's record shows. */
export function listedMarket(listing: VenueListing, venues: readonly Venue[]): VenueMarket | undefined {
  return venues.find((v) => v.id === listing.venue)?.market(listing.venueMarketId);
}

/**
 * One unified event as the markets listing shows it, with the best bid and ask of its merged YES book
 * (`yes`, as mergeBooks makes it). Trading rules and volume come from the venues themselves, so a listing
 * whose venue is not connected is left out rather than guessed.
 */
export function presentMarket(event: UnifiedEvent, venues: readonly Venue[], yes: PriceRecord): MarketRecord {
  const listed = event.listings.flatMap((l) => {
    const market = listedMarket(l, venues);
    return market ? [{ venue: l.venue, market }] : [];
  });
  return {
    event_id: event.eventId,
    title: event.title,
    description: event.description,
    outcomes: [...event.outcomes],
    status: event.status,
    close_time: event.closeTime,
    resolution: event.resolution,
    venues: listed.map(({ venue, market }) => ({
      venue,
      venue_market_id: market.venueMarketId,
      outcome_ids: { ...market.outcomeIds },
      fee_model: describeFeeModel(market.feeModel),
      tick_size: microToNumber(market.tickSize),
      min_order_size: microToNumber(market.minOrderShares),
    })),
    best_bid: yes.spread.best_bid,
    best_ask: yes.spread.best_ask,
    volume_usdc: microToNumber(listed.reduce((sum, { market }) => sum + market.volume, 0n)),
  };
}
