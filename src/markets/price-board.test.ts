import { describe, expect, it } from "vitest";
import { createSimulatedVenues } from "../venues/simulated/index.ts";
import { MarketCatalog } from "./catalog.ts";
import { mergeBooks } from "./merged-book.ts";
import { PriceBoard } from "./price-board.ts";

const catalog = MarketCatalog.load();
const event = catalog.get("fed-cut-2026-12")!;

function setup() {
  const clock = { ms: 1_800_000_000_000, now: () => clock.ms };
  const venues = createSimulatedVenues(catalog, { seed: 3, latencyScale: 0, clock });
  return { clock, venues, board: new PriceBoard(catalog, venues, clock) };
}

describe("PriceBoard", () => {
  it("serves the same record until one of the event's books ticks, then the record a fresh merge makes", () => {
    const { clock, venues, board } = setup();
    const first = board.prices(event, "YES", 20);
    expect(first).toEqual(mergeBooks(event, "YES", venues, { depth: 20, now: clock.now() }));
    clock.ms += 100;
    expect(board.prices(event, "YES", 20)).toBe(first);

    for (const v of venues) v.tick();
    const after = board.prices(event, "YES", 20);
    expect(after).not.toBe(first);
    expect(JSON.stringify(after)).toBe(JSON.stringify(mergeBooks(event, "YES", venues, { depth: 20, now: clock.now() })));
    board.stop();
  });

  it("leaves a book out once it passes its venue's freshness bound, though nothing ticked", () => {
    const { clock, venues, board } = setup();
    // Listings on venues the simulated set does not hold are stale from the start.
    const listed = event.listings.map((l) => l.venue).sort();
    expect(board.prices(event, "YES", 5).stale_venues).toEqual(listed.filter((id) => !venues.some((v) => v.id === id)));
    clock.ms += Math.max(...venues.map((v) => v.freshnessMs)) + 1;
    const later = board.prices(event, "YES", 5);
    expect(later.stale_venues).toEqual(listed);
    expect(later).toEqual(mergeBooks(event, "YES", venues, { depth: 5, now: clock.now() }));
    board.stop();
  });

  it("keeps the records read most recently, however many depths and sides a client asks for", () => {
    const { board } = setup();
    const events = catalog.events().slice(0, 3);
    const first = board.prices(events[0]!, "YES", 1);
    // 3 events × 2 outcomes × 500 depths × 2 sides: more records than the board keeps.
    const asked = events.flatMap((e) => (["YES", "NO"] as const).flatMap((o) => (["buy", "sell"] as const).flatMap((side) => Array.from({ length: 500 }, (_, i) => [e, o, i + 1, side] as const))));
    expect(asked.length).toBeGreaterThan(4_096);
    const records = asked.map(([e, o, depth, side]) => board.prices(e, o, depth, side));
    const [e, o, depth, side] = asked.at(-1)!;
    expect(board.prices(e, o, depth, side)).toBe(records.at(-1));
    // The first was let go: read again, it is built again, equal to what it was.
    const again = board.prices(events[0]!, "YES", 1);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
    board.stop();
  });

  it("keeps a page until any book ticks, and after it while the page built again is equal", () => {
    const { clock, venues, board } = setup();
    let built = 0;
    const page = () => board.memo("page", () => ({ n: ++built }));
    const first = page();
    expect(page()).toBe(first);
    clock.ms += 100;
    venues[0]!.tick();
    expect(page()).toEqual({ n: 2 });

    const same = () => board.memo("same", () => ({ best_bid: 0.5 }));
    const kept = same();
    clock.ms += 100;
    venues[0]!.tick();
    expect(same()).toBe(kept);
    board.stop();
  });

  it("builds a page again at most every 100 ms, however often the books tick", () => {
    const { clock, venues, board } = setup();
    let built = 0;
    const page = () => board.memo("page", () => ({ n: ++built }));
    page();
    for (let ms = 0; ms < 1000; ms += 10) {
      for (const v of venues) v.tick();
      page();
      clock.ms += 10;
    }
    // At 0, 100, …, 900 ms: ten in the second.
    expect(built).toBe(10);
    board.stop();
  });
});
