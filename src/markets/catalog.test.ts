import { describe, expect, it } from "vitest";
import { AppError } from "../domain/errors.ts";
import { MarketCatalog, type CatalogEvent } from "./catalog.ts";

const catalog = MarketCatalog.load();
const VENUES = ["polymarket-sim", "kalshi-sim", "limitless-sim", "opinion-sim"];

function walk(query: Parameters<MarketCatalog["list"]>[0]): CatalogEvent[] {
  const seen: CatalogEvent[] = [];
  let cursor: string | null = null;
  do {
    const page = catalog.list({ ...query, cursor });
    expect(page.data.length).toBeLessThanOrEqual(query?.limit ?? 50);
    seen.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return seen;
}

const minimal = () => ({
  events: [
    {
      event_id: "a-b",
      title: "T",
      description: "D",
      outcomes: ["YES", "NO"],
      status: "open",
      close_time: "2027-01-01T00:00:00Z",
      resolution: null,
      base_price: "0.5",
      listings: [{ venue: "kalshi-sim", venue_market_id: "KX-A", outcome_ids: { YES: "yes", NO: "no" } }],
    },
  ],
});

describe("the catalog file", () => {
  it("holds at least 20 events, each on two or more of the simulated venues, in each venue's id style", () => {
    const events = catalog.events();
    expect(events.length).toBeGreaterThanOrEqual(20);
    expect(catalog.get("fed-cut-2026-12")).toBeDefined();
    for (const e of events) {
      expect(e.eventId).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(e.listings.length).toBeGreaterThanOrEqual(2);
      for (const l of e.listings) {
        expect(VENUES).toContain(l.venue);
        if (l.venue === "polymarket-sim") {
          expect(l.venueMarketId).toMatch(/^0x[0-9a-f]{64}$/);
          expect(l.outcomeIds.YES).toMatch(/^\d{60,78}$/);
          expect(l.outcomeIds.NO).toMatch(/^\d{60,78}$/);
        }
        if (l.venue === "kalshi-sim") {
          expect(l.venueMarketId).toMatch(/^[A-Z0-9]+(-[A-Z0-9.]+)+$/);
          expect(l.outcomeIds).toEqual({ YES: "yes", NO: "no" });
        }
        if (l.venue === "limitless-sim") expect(l.venueMarketId).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
        if (l.venue === "opinion-sim") {
          expect(l.venueMarketId).toMatch(/^[1-9]\d*$/);
          expect(l.outcomeIds.YES).toMatch(/^\d{60,78}$/);
        }
      }
    }
    expect(events.filter((e) => e.status === "open").length).toBeGreaterThan(events.length / 2);
    expect(events.some((e) => e.status === "closed")).toBe(true);
    expect(events.some((e) => e.status === "resolved" && e.resolution !== null)).toBe(true);
  });
});

describe("MarketCatalog.list", () => {
  it("walks every event exactly once through its pages", () => {
    const all = walk({ limit: 3 });
    expect(all.map((e) => e.eventId)).toEqual(catalog.events().map((e) => e.eventId));
    expect(new Set(all.map((e) => e.eventId)).size).toBe(all.length);
    expect(catalog.list({ limit: 500 }).nextCursor).toBeNull();
  });

  it("filters by status and by venue, across pages", () => {
    const closed = walk({ status: "closed", limit: 1 });
    expect(closed.length).toBeGreaterThan(0);
    expect(closed.every((e) => e.status === "closed")).toBe(true);
    const onLimitless = walk({ venue: "limitless-sim", limit: 4 });
    expect(onLimitless.map((e) => e.eventId)).toEqual(
      catalog.events().filter((e) => e.listings.some((l) => l.venue === "limitless-sim")).map((e) => e.eventId),
    );
  });

  it("refuses a venue no event lists (a typo, a venue id without its -sim) naming the venues it knows, rather than list nothing", () => {
    for (const venue of ["nowhere", "polymarket", "Kalshi-sim"]) {
      expect(() => catalog.list({ venue })).toThrow(
        expect.objectContaining({ code: "invalid_request", details: { fields: { venue: "must be one of kalshi-sim, limitless-sim, opinion-sim, polymarket-sim" } } }),
      );
    }
  });

  it("matches a venue only on the listings shown: an event whose listing there is not shown is not listed under it", () => {
    const shownMarket = catalog.events().find((e) => e.listings.some((l) => l.venue === "kalshi-sim"))!.listings.find((l) => l.venue === "kalshi-sim")!;
    const page = catalog.list({ venue: "kalshi-sim", limit: 500 }, (l) => l === shownMarket);
    expect(page.data.map((e) => e.eventId)).toEqual([catalog.events().find((e) => e.listings.includes(shownMarket))!.eventId]);
    expect(catalog.list({ limit: 500 }, () => false).data).toHaveLength(catalog.events().length);
  });

  it("searches title and description, case-insensitively, every word required", () => {
    const btc = walk({ q: "BITCOIN" }).map((e) => e.eventId);
    expect(btc).toContain("btc-above-150k-2026-12-31");
    expect(btc.every((id) => id.startsWith("btc-"))).toBe(true);
    expect(walk({ q: "fomc december" }).map((e) => e.eventId)).toEqual(["fed-cut-2026-12"]);
    expect(walk({ q: "bitcoin 150,000", status: "open" }).map((e) => e.eventId)).toEqual(["btc-above-150k-2026-12-31"]);
    expect(walk({ q: "zebra" })).toEqual([]);
  });

  it("refuses a cursor it did not make and a limit out of bounds", () => {
    for (const q of [{ cursor: "garbage!" }, { cursor: Buffer.from("[1]").toString("base64url") }, { limit: 0 }, { limit: 501 }, { limit: 1.5 }]) {
      expect(() => catalog.list(q)).toThrow(AppError);
    }
  });
});

describe("MarketCatalog lookups", () => {
  it("gets an event; an unknown id is unknown_event naming it as event_id, as GET /v1/prices answers it", () => {
    expect(catalog.get("nope")).toBeUndefined();
    expect(catalog.event("fed-cut-2026-12").listings.map((l) => l.venue).sort()).toEqual([...VENUES].sort());
    expect(() => catalog.event("nope")).toThrow(expect.objectContaining({ code: "unknown_event", message: 'No event has the id "nope".', details: { event_id: "nope" } }));
  });
});

describe("MarketCatalog.fromJson", () => {
  it("accepts a minimal document", () => {
    const c = MarketCatalog.fromJson(minimal());
    expect(c.get("a-b")).toMatchObject({ basePrice: 500_000n, closeTime: "2027-01-01T00:00:00.000Z" });
  });

  it.each<[string, RegExp, (d: ReturnType<typeof minimal>) => void]>([
    ["a duplicate event id", /duplicate event_id/, (d) => d.events.push({ ...d.events[0]!, listings: [{ ...d.events[0]!.listings[0]!, venue_market_id: "KX-B" }] })],
    ["a market listed under two events", /listed under two events/, (d) => d.events.push({ ...d.events[0]!, event_id: "c-d" })],
    ["an id that is not kebab-case", /kebab-case/, (d) => (d.events[0]!.event_id = "Fed_Cut")],
    ["an unknown status", /status must be one of/, (d) => (d.events[0]!.status = "live")],
    ["a base price of 1", /strictly between 0 and 1/, (d) => (d.events[0]!.base_price = "1")],
    ["a resolution on an open event", /resolution must be set exactly/, (d) => ((d.events[0] as { resolution: unknown }).resolution = "YES")],
    ["a bad close time", /close_time is not a date/, (d) => (d.events[0]!.close_time = "soon")],
    ["no listings", /listed on no venue/, (d) => (d.events[0]!.listings = [])],
    ["a listing without outcome ids", /outcome_ids is missing/, (d) => delete (d.events[0]!.listings[0] as { outcome_ids?: unknown }).outcome_ids],
    ["a tick that does not divide 1", /must divide 1/, (d) => ((d.events[0]!.listings[0] as Record<string, unknown>).tick_size = "0.03")],
  ])("refuses %s", (_, why, spoil) => {
    const doc = minimal();
    spoil(doc);
    expect(() => MarketCatalog.fromJson(doc)).toThrow(why);
  });
});
