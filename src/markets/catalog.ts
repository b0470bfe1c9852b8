import { readFileSync } from "node:fs";
import { AppError, invalidCursor, invalidFields } from "../domain/errors.ts";
import { ONE, parseMicro, type Ppm, type PriceMicro } from "../domain/money.ts";
import { MARKET_STATUSES, OUTCOMES, type MarketStatus, type Outcome } from "../domain/types.ts";

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

/** A listing as the catalog file states it: the venue's ids, and the market parameters that differ from the venue's defaults. */
export interface CatalogListing extends VenueListing {
  outcomeIds: Record<Outcome, string>;
  /** Set where the market's tick differs from the venue's usual one (Polymarket's 0.001 markets near 0 or 1). */
  tickSize?: PriceMicro;
  /** Set where the market's taker fee rate differs from the venue's usual one. */
  feeRatePpm?: Ppm;
}

export interface CatalogEvent extends UnifiedEvent {
  listings: CatalogListing[];
  /** The price around which every venue simulator walks its own mid, so the venues' books are close but not equal. */
  basePrice: PriceMicro;
}

export interface ListQuery {
  status?: MarketStatus;
  venue?: string;
  /** Words that must all appear (case-insensitive) in the event's id, title or description. */
  q?: string;
  limit?: number;
  /** Opaque: the `nextCursor` of the previous page; null or absent for the first page. */
  cursor?: string | null;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 500;

const KEBAB = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** Event ids are kebab-case: they appear in URLs and on the terminal as they are. */
export function isEventId(id: string): boolean {
  return KEBAB.test(id);
}

/** The unified event catalog: every event crossfill trades, and where each venue lists it. */
export class MarketCatalog {
  private readonly byId: Map<string, CatalogEvent>;
  /** Sorted by event id: the cursor is the last id of a page, so pages stay stable as events are added. */
  private readonly sorted: CatalogEvent[];
  /** Every venue some event lists, sorted: what `venue` may name. */
  private readonly venues: readonly string[];

  private constructor(events: CatalogEvent[]) {
    this.sorted = [...events].sort((a, b) => (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0));
    this.byId = new Map(this.sorted.map((e) => [e.eventId, e]));
    this.venues = [...new Set(events.flatMap((e) => e.listings.map((l) => l.venue)))].sort();
  }

  /** Loads the catalog file shipped beside this module, or another file of the same shape. */
  static load(path: string | URL = new URL("./events.json", import.meta.url)): MarketCatalog {
    return MarketCatalog.fromJson(JSON.parse(readFileSync(path, "utf8")));
  }

  /** Validates the whole document: a bad catalog stops start-up rather than serving a wrong market. */
  static fromJson(doc: unknown): MarketCatalog {
    const events = array(field(record(doc, "catalog"), "events", "catalog"), "catalog.events").map((e, i) =>
      parseEvent(e, `events[${i}]`),
    );
    return MarketCatalog.fromEvents(events);
  }

  /** A catalog of events already parsed (from the database): checks what holds across events, which no single row can. */
  static fromEvents(events: readonly CatalogEvent[]): MarketCatalog {
    const ids = new Set<string>();
    const venueIds = new Set<string>();
    for (const e of events) {
      if (!KEBAB.test(e.eventId)) throw new Error(`catalog: event_id ${e.eventId} is not kebab-case`);
      if (ids.has(e.eventId)) throw new Error(`catalog: duplicate event_id ${e.eventId}`);
      ids.add(e.eventId);
      if (e.listings.length === 0) throw new Error(`catalog: ${e.eventId} is listed on no venue`);
      if (new Set(e.listings.map((l) => l.venue)).size !== e.listings.length) throw new Error(`catalog: ${e.eventId} lists a venue twice`);
      for (const l of e.listings) {
        const key = `${l.venue}\u0000${l.venueMarketId}`;
        if (venueIds.has(key)) throw new Error(`catalog: ${l.venue} market ${l.venueMarketId} is listed under two events`);
        venueIds.add(key);
      }
    }
    return new MarketCatalog([...events]);
  }

  events(): readonly CatalogEvent[] {
    return this.sorted;
  }

  get(eventId: string): CatalogEvent | undefined {
    return this.byId.get(eventId);
  }

  /**
   * Records how an event ended (its venues or an operator decided it): from now on it reads as `status`
   * with `resolution`, so no order is accepted on it. An unknown event id is ignored: the decision was
   * made for a catalog this process does not serve.
   */
  decided(eventId: string, status: "resolved" | "disputed", resolution: Outcome | null): void {
    const event = this.byId.get(eventId);
    if (!event) return;
    const next = { ...event, status, resolution };
    this.byId.set(eventId, next);
    this.sorted[this.sorted.indexOf(event)] = next;
  }

  /** One event; an unknown id is the client's error, named as event_id (as the order service names it). */
  event(eventId: string): UnifiedEvent {
    const event = this.byId.get(eventId);
    if (!event) throw new AppError("unknown_event", `No event has the id ${JSON.stringify(eventId)}.`, { event_id: eventId });
    return event;
  }

  /**
   * A page of events. `shown` tells which listings the records show (presentMarket leaves out a listing
   * whose venue is not connected): `venue` matches only those, so that every event listed under it shows it.
   * A venue no event lists is refused: a misspelt one would list nothing without a word.
   */
  list(query: ListQuery = {}, shown: (listing: VenueListing) => boolean = () => true): Page<CatalogEvent> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
      throw invalid("limit", `must be an integer from 1 to ${MAX_PAGE_LIMIT}`);
    }
    if (query.venue && !this.venues.includes(query.venue)) throw invalid("venue", `must be one of ${this.venues.join(", ")}`);
    const after = query.cursor == null ? undefined : decodeCursor(query.cursor);
    const words = (query.q ?? "").toLowerCase().split(/\s+/).filter(Boolean);
    const data: CatalogEvent[] = [];
    let more = false;
    for (const e of this.sorted) {
      if (after !== undefined && e.eventId <= after) continue;
      if (query.status && e.status !== query.status) continue;
      if (query.venue && !e.listings.some((l) => l.venue === query.venue && shown(l))) continue;
      if (words.length > 0) {
        const text = `${e.eventId} ${e.title} ${e.description}`.toLowerCase();
        if (!words.every((w) => text.includes(w))) continue;
      }
      if (data.length === limit) {
        more = true;
        break;
      }
      data.push(e);
    }
    const last = data[data.length - 1];
    return { data, nextCursor: more && last ? encodeCursor(last.eventId) : null };
  }
}

/**
 * The events a venue simulator lists: the catalog's, and the venue's own markets (`own`, its data
 * file), which stand in for any catalog listing of the same market. A venue states its own markets
 * (wording, close time, price) whatever crossfill's catalog calls them once they are matched.
 */
export function simulatedVenueEvents(catalog: MarketCatalog, own: MarketCatalog, venue: string): CatalogEvent[] {
  const ownIds = new Set(own.events().flatMap((e) => e.listings.filter((l) => l.venue === venue).map((l) => l.venueMarketId)));
  const listsOwnMarket = (e: CatalogEvent) => e.listings.some((l) => l.venue === venue && ownIds.has(l.venueMarketId));
  return [...catalog.events().filter((e) => !listsOwnMarket(e)), ...own.events()];
}

function encodeCursor(afterId: string): string {
  return Buffer.from(JSON.stringify({ after: afterId }), "utf8").toString("base64url");
}

function decodeCursor(cursor: string): string {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    const after = (parsed as { after?: unknown } | null)?.after;
    if (typeof after === "string") return after;
  } catch {
    // falls through to the refusal below: a cursor the server did not make is the client's error
  }
  throw invalidCursor();
}

function invalid(name: string, why: string): AppError {
  return invalidFields("querystring", { [name]: why });
}

function parseEvent(raw: unknown, at: string): CatalogEvent {
  const o = record(raw, at);
  const eventId = text(field(o, "event_id", at), `${at}.event_id`);
  if (!KEBAB.test(eventId)) throw new Error(`catalog: ${at}.event_id ${eventId} is not kebab-case`);
  const outcomes = array(field(o, "outcomes", at), `${at}.outcomes`);
  if (outcomes.length !== OUTCOMES.length || !OUTCOMES.every((x, i) => outcomes[i] === x)) {
    throw new Error(`catalog: ${at}.outcomes must be ${JSON.stringify(OUTCOMES)}`);
  }
  const status = oneOf(field(o, "status", at), MARKET_STATUSES, `${at}.status`);
  const closeTime = text(field(o, "close_time", at), `${at}.close_time`);
  if (Number.isNaN(Date.parse(closeTime))) throw new Error(`catalog: ${at}.close_time is not a date`);
  const rawResolution = field(o, "resolution", at);
  const resolution = rawResolution === null ? null : oneOf(rawResolution, OUTCOMES, `${at}.resolution`);
  if ((status === "resolved") !== (resolution !== null)) {
    throw new Error(`catalog: ${at}.resolution must be set exactly when the event is resolved`);
  }
  const listings = array(field(o, "listings", at), `${at}.listings`).map((l, i) => parseListing(l, `${at}.listings[${i}]`));
  return {
    eventId,
    title: text(field(o, "title", at), `${at}.title`),
    description: text(field(o, "description", at), `${at}.description`),
    outcomes: [...OUTCOMES],
    status,
    closeTime: new Date(closeTime).toISOString(),
    resolution,
    basePrice: price(field(o, "base_price", at), `${at}.base_price`),
    listings,
  };
}

function parseListing(raw: unknown, at: string): CatalogListing {
  const o = record(raw, at);
  const ids = record(field(o, "outcome_ids", at), `${at}.outcome_ids`);
  const listing: CatalogListing = {
    venue: text(field(o, "venue", at), `${at}.venue`),
    venueMarketId: text(field(o, "venue_market_id", at), `${at}.venue_market_id`),
    outcomeIds: { YES: text(field(ids, "YES", at), `${at}.outcome_ids.YES`), NO: text(field(ids, "NO", at), `${at}.outcome_ids.NO`) },
  };
  if (o["tick_size"] !== undefined) {
    const tick = price(o["tick_size"], `${at}.tick_size`);
    if (ONE % tick !== 0n) throw new Error(`catalog: ${at}.tick_size must divide 1`);
    listing.tickSize = tick;
  }
  if (o["fee_rate"] !== undefined) {
    const rate = parseMicro(o["fee_rate"], `${at}.fee_rate`);
    if (rate >= ONE) throw new Error(`catalog: ${at}.fee_rate must be below 1`);
    listing.feeRatePpm = rate;
  }
  return listing;
}

function price(raw: unknown, at: string): PriceMicro {
  const p = parseMicro(raw, at);
  if (p <= 0n || p >= ONE) throw new Error(`catalog: ${at} must be strictly between 0 and 1`);
  return p;
}

function record(raw: unknown, at: string): Record<string, unknown> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new Error(`catalog: ${at} must be an object`);
  return raw as Record<string, unknown>;
}

function field(o: Record<string, unknown>, name: string, at: string): unknown {
  if (!(name in o)) throw new Error(`catalog: ${at}.${name} is missing`);
  return o[name];
}

function array(raw: unknown, at: string): unknown[] {
  if (!Array.isArray(raw)) throw new Error(`catalog: ${at} must be an array`);
  return raw;
}

function text(raw: unknown, at: string): string {
  if (typeof raw !== "string" || raw.trim() === "") throw new Error(`catalog: ${at} must be a non-empty string`);
  return raw;
}

function oneOf<T extends string>(raw: unknown, allowed: readonly T[], at: string): T {
  if (typeof raw !== "string" || !(allowed as readonly string[]).includes(raw)) {
    throw new Error(`catalog: ${at} must be one of ${allowed.join(", ")}`);
  }
  return raw as T;
}
