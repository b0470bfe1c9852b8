import { createHash } from "node:crypto";
import { ONE } from "../domain/money.ts";
import { OUTCOMES } from "../domain/types.ts";
import type { CatalogChange, NewProposal, ProposalMember, ProposalRecord } from "../store/store.ts";
import type { VenueMarket } from "../venues/venue.ts";
import type { MarketCatalog } from "./catalog.ts";
import { proposeMatches, suggestEventId, type MatchOptions, type MatchResult } from "./matching.ts";

/** A market a venue lists and the catalog does not. */
export interface DiscoveredMarket {
  venue: string;
  market: VenueMarket;
}

/**
 * Matches the venues' unlisted open markets against each other and against the catalog's open
 * events, and turns the proposals into records to store: each with an id derived from what it
 * proposes, so proposing the same match again finds the same record (and its decision).
 */
export function matchDiscovered(discovered: readonly DiscoveredMarket[], catalog: MarketCatalog, opts: MatchOptions): { result: MatchResult; proposals: NewProposal[] } {
  const open = discovered.filter((d) => d.market.status === "open");
  const byKey = new Map(open.map((d) => [`${d.venue}\u0000${d.market.venueMarketId}`, d.market]));
  const result = proposeMatches(
    open.map((d) => ({ venue: d.venue, venueMarketId: d.market.venueMarketId, title: d.market.title, closeTime: d.market.closeTime, outcomes: OUTCOMES })),
    catalog
      .events()
      .filter((e) => e.status === "open")
      .map((e) => ({ eventId: e.eventId, title: e.title, closeTime: e.closeTime, outcomes: e.outcomes, venues: e.listings.map((l) => l.venue) })),
    opts,
  );
  const suggested = new Set<string>();
  const proposals = result.proposals.map((p): NewProposal => {
    const members: ProposalMember[] = p.members.map((m) => {
      const market = byKey.get(`${m.venue}\u0000${m.venueMarketId}`)!;
      return { venue: m.venue, venueMarketId: m.venueMarketId, title: market.title, closeTime: market.closeTime, outcomeIds: { ...market.outcomeIds } };
    });
    const target = p.kind === "add_listing" ? catalog.get(p.eventId)! : undefined;
    const title = target?.title ?? members[0]!.title;
    const eventId = target?.eventId ?? suggestEventId(title, (id) => catalog.get(id) !== undefined || suggested.has(id));
    suggested.add(eventId);
    const what = `${p.kind}\u0000${target?.eventId ?? ""}\u0000${members.map((m) => `${m.venue}\u0000${m.venueMarketId}`).join("\u0000")}`;
    const id = `prop_${createHash("sha256").update(what).digest("hex").slice(0, 12)}`;
    return { id, kind: p.kind, eventId, title, score: p.score, reason: p.reason, members };
  });
  return { result, proposals };
}

/**
 * What accepting a proposal writes. A new event takes its title from the proposal (or the person's),
 * closes with its earliest member, and is anchored at an even price: its books come from the venues.
 */
export function acceptedChange(p: ProposalRecord, opts: { eventId?: string; title?: string }): CatalogChange {
  const listings = p.members.map((m) => ({ venue: m.venue, venueMarketId: m.venueMarketId, outcomeIds: { ...m.outcomeIds }, tickSize: null, feeRatePpm: null }));
  if (p.kind === "add_listing") return { kind: "add_listings", eventId: p.eventId, listings };
  const closeTime = p.members.map((m) => m.closeTime).sort()[0]!;
  return {
    kind: "new_event",
    event: {
      eventId: opts.eventId ?? p.eventId,
      title: opts.title ?? p.title,
      description: `Matched across venues (proposal ${p.id}): ${p.members.map((m) => `${m.venue} "${m.title}"`).join(", ")}.`,
      status: "open",
      closeTime,
      resolution: null,
      basePrice: ONE / 2n,
      listings,
    },
  };
}
