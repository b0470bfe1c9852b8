import type { CatalogEventRecord, Store } from "../store/store.ts";
import { MarketCatalog, type CatalogEvent } from "./catalog.ts";

/**
 * The catalog crossfill trades is the database's: the repo's catalog file only seeds it (each seed
 * event is inserted once, when absent), and accepted match proposals add to it. Read once at start,
 * so an accepted proposal takes effect when the server next starts.
 */
export async function loadCatalog(store: Store, seed: MarketCatalog = MarketCatalog.load()): Promise<MarketCatalog> {
  await store.seedCatalog(seed.events().map(toRecord));
  return MarketCatalog.fromEvents((await store.catalogEvents()).map(fromRecord));
}

export function toRecord(e: CatalogEvent): CatalogEventRecord {
  return {
    eventId: e.eventId,
    title: e.title,
    description: e.description,
    status: e.status,
    closeTime: e.closeTime,
    resolution: e.resolution,
    basePrice: e.basePrice,
    listings: e.listings.map((l) => ({
      venue: l.venue,
      venueMarketId: l.venueMarketId,
      outcomeIds: { ...l.outcomeIds },
      tickSize: l.tickSize ?? null,
      feeRatePpm: l.feeRatePpm ?? null,
    })),
  };
}

export function fromRecord(r: CatalogEventRecord): CatalogEvent {
  return {
    eventId: r.eventId,
    title: r.title,
    description: r.description,
    outcomes: ["YES", "NO"],
    status: r.status,
    closeTime: r.closeTime,
    resolution: r.resolution,
    basePrice: r.basePrice,
    listings: r.listings.map((l) => ({
      venue: l.venue,
      venueMarketId: l.venueMarketId,
      outcomeIds: { ...l.outcomeIds },
      ...(l.tickSize === null ? {} : { tickSize: l.tickSize }),
      ...(l.feeRatePpm === null ? {} : { feeRatePpm: l.feeRatePpm }),
    })),
  };
}
