import type { MarketCatalog } from "../../src/markets/catalog.ts";
import type { ChildOrder, Venue, VenueMarket } from "../../src/venues/venue.ts";

/** The first of the catalog's markets on `venue` that the venue has loaded open. */
export function openMarket(venue: Venue, catalog: MarketCatalog): VenueMarket {
  const listing = catalog
    .events()
    .flatMap((e) => e.listings)
    .find((l) => l.venue === venue.id && venue.market(l.venueMarketId)?.status === "open");
  if (!listing) throw new Error(`${venue.id} has no open market of the catalog loaded`);
  return venue.market(listing.venueMarketId)!;
}

/**
 * A buy of YES, of the market's minimum, on openMarket, limited `ticks` ticks above the best ask so that it takes what
 * is offered there; its client id is `name` made unique by the process and the time, and it expires 30 s after `now`.
 */
export function takingChild(venue: Venue, catalog: MarketCatalog, { name, ticks = 2n, now = Date.now() }: { name: string; ticks?: bigint; now?: number }): ChildOrder {
  const m = openMarket(venue, catalog);
  const best = venue.book(m.venueMarketId, "YES")!.asks[0]!;
  return {
    clientOrderId: `${name}-${process.pid}-${Date.now()}`,
    venueMarketId: m.venueMarketId,
    outcome: "YES",
    side: "buy",
    limitPrice: best.price + ticks * m.tickSize,
    shares: m.minOrderShares,
    expiresAt: now + 30_000,
  };
}
