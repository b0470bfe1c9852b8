import { isDeepStrictEqual } from "node:util";
import type { Clock, Outcome } from "../domain/types.ts";
import type { Unsubscribe, Venue } from "../venues/venue.ts";
import type { MarketCatalog } from "./catalog.ts";
import { freshBooks, mergeBooks, type OrderSide, type PriceRecord } from "./merged-book.ts";
import { BoundedMap } from "../domain/bounded-map.ts";

/**
 * How long a record is served without a tick. A venue going down, or its market closing, comes with no
 * tick: this bounds how late a record tells of it.
 */
const RECHECK_MS = 250;
/**
 * A page is built again at most this often, however often books tick. The venues' streams bring on the
 * order of a thousand book updates a second, in bursts; a page of fifty events built after each one it
 * sees cost a few milliseconds each time, tens of times a second under load. Its best bids and asks are
 * then at most this late; an event's own record (GET /v1/prices) still follows every tick.
 */
const PAGE_MS = 100;
/** Pages kept at most: queries are the clients' to choose. */
const MEMOS = 1_000;
/**
 * Records kept at most, the most recently built: an event's record is kept per outcome, depth (1–500) and
 * side, which a client chooses, so up to 2,000 an event.
 */
const RECORDS = 4_096;

interface Kept<T> {
  version: number;
  until: number;
  value: T;
}

interface KeptPage<T> extends Kept<T> {
  builtAt: number;
}

/**
 * The merged books of the catalog's events, kept as the venues tick instead of merged on every read: a
 * record is built once per version of its event's books (any of its listings ticking moves it) and the
 * same object is served until the next tick, until one of its books passes the venue's freshness bound,
 * or for RECHECK_MS at most. The same object, so the HTTP layer can keep its serialised bytes beside it.
 */
export class PriceBoard {
  /** Every tick of any book: what a page of many events depends on. */
  private ticks = 0;
  private readonly versions = new Map<string, number>();
  private readonly eventsOf = new Map<string, string[]>();
  private readonly records = new BoundedMap<string, Kept<PriceRecord>>(RECORDS);
  private readonly memos = new BoundedMap<string, KeptPage<unknown>>(MEMOS);
  private readonly unsubscribe: Unsubscribe[];

  constructor(
    catalog: MarketCatalog,
    private readonly venues: readonly Venue[],
    private readonly clock: Clock,
  ) {
    for (const e of catalog.events()) {
      for (const l of e.listings) {
        const key = `${l.venue}\u0000${l.venueMarketId}`;
        this.eventsOf.set(key, [...(this.eventsOf.get(key) ?? []), e.eventId]);
      }
    }
    this.unsubscribe = venues.map((v) =>
      v.onBook((u) => {
        this.ticks++;
        for (const id of this.eventsOf.get(`${u.venue}\u0000${u.venueMarketId}`) ?? []) this.versions.set(id, (this.versions.get(id) ?? 0) + 1);
      }),
    );
  }

  /** mergeBooks' record of the event now. */
  prices(event: Parameters<typeof mergeBooks>[0], outcome: Outcome, depth: number, side: OrderSide = "buy"): PriceRecord {
    const now = this.clock.now();
    const version = this.versions.get(event.eventId) ?? 0;
    const key = `${event.eventId}\u0000${outcome}\u0000${depth}\u0000${side}`;
    const kept = this.records.get(key);
    if (kept !== undefined && kept.version === version && now < kept.until) return kept.value;
    const value = mergeBooks(event, outcome, this.venues, { depth, now, side });
    // Until the first of its books grows stale: then the record leaves it out.
    const until = freshBooks(event, outcome, this.venues, now).fresh.reduce((t, f) => Math.min(t, f.book.updatedAt + f.venue.freshnessMs + 1), now + RECHECK_MS);
    this.records.delete(key);
    this.records.set(key, { version, until, value });
    return value;
  }

  /**
   * `build()`'s value (a page of many events' records), kept until any book ticks (and it is PAGE_MS
   * old), or for RECHECK_MS at most; then built again, but the kept object is still served if the new one
   * is equal to it (a tick deep in a book leaves a page of best bids and asks as it was, and its bytes
   * with it).
   */
  memo<T>(key: string, build: () => T): T {
    const now = this.clock.now();
    const kept = this.memos.get(key) as KeptPage<T> | undefined;
    if (kept !== undefined && now < kept.until && (kept.version === this.ticks || now < kept.builtAt + PAGE_MS)) return kept.value;
    const built = build();
    const value = kept !== undefined && isDeepStrictEqual(built, kept.value) ? kept.value : built;
    this.memos.delete(key);
    this.memos.set(key, { version: this.ticks, builtAt: now, until: now + RECHECK_MS, value });
    return value;
  }

  stop(): void {
    for (const u of this.unsubscribe) u();
  }
}
