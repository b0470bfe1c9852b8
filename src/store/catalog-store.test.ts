import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { STORE_BACKENDS, type TestStoreDatabase } from "../../test/helpers/stores.ts";
import { MarketCatalog } from "../markets/catalog.ts";
import { loadCatalog, toRecord } from "../markets/catalog-db.ts";
import type { CatalogEventRecord, NewProposal, Store } from "./store.ts";

let db: TestStoreDatabase;
let store: Store;

const seed = MarketCatalog.load();

const event = (eventId: string, listings: CatalogEventRecord["listings"]): CatalogEventRecord => ({
  eventId,
  title: `Question ${eventId}?`,
  description: "D",
  status: "open",
  closeTime: "2027-03-17T18:00:00.000Z",
  resolution: null,
  basePrice: 500_000n,
  listings,
});
const listing = (venue: string, venueMarketId: string) => ({ venue, venueMarketId, outcomeIds: { YES: `${venueMarketId}-y`, NO: `${venueMarketId}-n` }, tickSize: null, feeRatePpm: null });

const proposal = (id: string, over: Partial<NewProposal> = {}): NewProposal => ({
  id,
  kind: "new_event",
  eventId: "fed-cut-2027-03",
  title: "Fed rate cut in March 2027?",
  score: 0.987654,
  reason: "words 3/3 shared",
  members: [
    { venue: "kalshi-sim", venueMarketId: "KXFEDCUT-27MAR", title: "Fed rate cut in March 2027?", closeTime: "2027-03-17T19:00:00.000Z", outcomeIds: { YES: "yes", NO: "no" } },
    { venue: "polymarket-sim", venueMarketId: "0xfed", title: "Will the Fed cut rates in March 2027?", closeTime: "2027-03-17T18:00:00.000Z", outcomeIds: { YES: "1", NO: "2" } },
  ],
  ...over,
});

describe.each(STORE_BACKENDS)("$name store", (backend) => {
  beforeEach(async () => {
    db = await backend.create();
    store = await db.open({ now: () => Date.parse("2026-11-22T10:00:00Z") });
    await store.migrate();
  });

  afterEach(async () => {
    await store.close();
    await db.drop();
  });

  describe("the catalog in the store", () => {
    it("is seeded from the catalog file once: a second seeding inserts nothing, and the events come back exactly", async () => {
      expect(await store.seedCatalog(seed.events().map(toRecord))).toBe(seed.events().length);
      expect(await store.seedCatalog(seed.events().map(toRecord))).toBe(0);
      const loaded = await loadCatalog(store);
      expect(loaded.events()).toEqual(seed.events());
    });

    it("keeps an event's listings in the order they were added, tick and fee overrides included", async () => {
      const withOverrides = event("e-1", [{ ...listing("polymarket-sim", "0x1"), tickSize: 1_000n }, { ...listing("kalshi-sim", "KX-1"), feeRatePpm: 35_000n }]);
      await store.seedCatalog([withOverrides]);
      expect(await store.catalogEvents()).toEqual([withOverrides]);
    });

    it("keeps its integer columns exact beyond 2^53", async () => {
      const beyond = 2n ** 53n + 1n;
      const big = { ...event("e-big", [{ ...listing("polymarket-sim", "0x1"), tickSize: beyond, feeRatePpm: 2n ** 63n - 1n }]), basePrice: beyond + 2n };
      await store.seedCatalog([big]);
      expect(await store.catalogEvents()).toEqual([big]);
    });
  });

  describe("match proposals", () => {
    it("are stored once per id; proposing again updates an undecided one and never reopens a decided one", async () => {
      const [first] = await store.saveProposals([proposal("prop_a")]);
      expect(first).toMatchObject({ id: "prop_a", status: "proposed", score: 0.987654, decidedAt: null, createdAt: "2026-11-22T10:00:00.000Z" });
      await store.saveProposals([proposal("prop_a", { score: 0.9, reason: "again" })]);
      expect(await store.proposal("prop_a")).toMatchObject({ score: 0.9, reason: "again", status: "proposed" });
      expect(await store.rejectProposal("prop_a", "2026-11-22T11:00:00.000Z")).toBe(true);
      expect(await store.rejectProposal("prop_a", "2026-11-22T12:00:00.000Z")).toBe(false);
      const [again] = await store.saveProposals([proposal("prop_a", { score: 0.5 })]);
      expect(again).toMatchObject({ status: "rejected", score: 0.9, decidedAt: "2026-11-22T11:00:00.000Z" });
    });

    it("list best first, optionally by status", async () => {
      await store.saveProposals([proposal("prop_low", { score: 0.7 }), proposal("prop_high", { score: 0.99 })]);
      await store.rejectProposal("prop_low", "2026-11-22T11:00:00.000Z");
      expect((await store.listProposals()).map((p) => p.id)).toEqual(["prop_high", "prop_low"]);
      expect((await store.listProposals("rejected")).map((p) => p.id)).toEqual(["prop_low"]);
    });

    it("accepting writes the new event and marks the proposal, once", async () => {
      await store.saveProposals([proposal("prop_a")]);
      const created = event("fed-cut-2027-03", [listing("kalshi-sim", "KXFEDCUT-27MAR"), listing("polymarket-sim", "0xfed")]);
      const result = await store.acceptProposal("prop_a", { kind: "new_event", event: created }, "2026-11-22T11:00:00.000Z");
      expect(result).toMatchObject({ kind: "accepted", proposal: { status: "accepted", decidedAt: "2026-11-22T11:00:00.000Z" } });
      expect(await store.catalogEvents()).toEqual([created]);
      expect(await store.acceptProposal("prop_a", { kind: "new_event", event: created }, "2026-11-22T12:00:00.000Z")).toMatchObject({ kind: "already_decided" });
      expect(await store.acceptProposal("prop_missing", { kind: "new_event", event: created }, "2026-11-22T12:00:00.000Z")).toEqual({ kind: "not_found" });
    });

    it("accepting a listing appends it to the existing event", async () => {
      await store.seedCatalog([event("e-1", [listing("polymarket-sim", "0x1")])]);
      await store.saveProposals([proposal("prop_b", { kind: "add_listing", eventId: "e-1" })]);
      const result = await store.acceptProposal("prop_b", { kind: "add_listings", eventId: "e-1", listings: [listing("kalshi-sim", "KX-1")] }, "2026-11-22T11:00:00.000Z");
      expect(result.kind).toBe("accepted");
      expect((await store.catalogEvents())[0]!.listings.map((l) => l.venueMarketId)).toEqual(["0x1", "KX-1"]);
    });

    it("refuses a change that conflicts with the catalog and writes nothing, the proposal staying undecided", async () => {
      await store.seedCatalog([event("e-1", [listing("polymarket-sim", "0x1")])]);
      await store.saveProposals([proposal("prop_c")]);
      const conflicts = [
        { kind: "new_event" as const, event: event("e-1", [listing("kalshi-sim", "KX-9")]) },
        { kind: "new_event" as const, event: event("e-2", [listing("kalshi-sim", "KX-9"), listing("polymarket-sim", "0x1")]) },
        { kind: "add_listings" as const, eventId: "e-1", listings: [listing("polymarket-sim", "0x2")] },
        { kind: "add_listings" as const, eventId: "e-404", listings: [listing("kalshi-sim", "KX-9")] },
      ];
      for (const change of conflicts) {
        expect(await store.acceptProposal("prop_c", change, "2026-11-22T11:00:00.000Z")).toMatchObject({ kind: "conflict" });
      }
      expect((await store.catalogEvents()).map((e) => e.eventId)).toEqual(["e-1"]);
      expect(await store.proposal("prop_c")).toMatchObject({ status: "proposed" });
    });
  });
});
