import type { MarketStatus, Outcome } from "../domain/types.ts";

/** One venue's listing of a unified event: which of its markets, and which of its outcome ids is which outcome. */
export interface VenueListing {
  venue: string;
  venueMarketId: string;
}

/** A unified event: one real-world question, listed on one or more venues under their own ids. */
export interface UnifiedEvent {
  eventId: string;
  title: string;
  description: string;
  outcomes: Outcome[];
  status: MarketStatus;
  closeTime: string;
  resolution: Outcome | null;
  listings: VenueListing[];
}
