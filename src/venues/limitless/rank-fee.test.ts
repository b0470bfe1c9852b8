import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliveredShares } from "../../domain/fees.ts";
import { ONE } from "../../domain/money.ts";
import { MarketCatalog } from "../../markets/catalog.ts";
import { LIMITLESS_SIM_FEE_PPM } from "../simulated/profiles.ts";
import { LimitlessVenue } from "./limitless-venue.ts";
import { startLimitlessSim, type LimitlessSim } from "./sim/limitless-sim.ts";
import { LIMITLESS_DEFAULT_RANK_FEE_BPS, rankFeeBps } from "./wire.ts";

const catalog = MarketCatalog.load();

describe("The Limitless account's rank fee rate", () => {
  it("is the profile's rank.feeRateBps, or 300 where it states none, as SDK 1.1.0 signs", () => {
    expect(rankFeeBps({ id: 1, rank: { feeRateBps: 50 } })).toBe(50);
    expect(rankFeeBps({ id: 1, rank: {} })).toBe(LIMITLESS_DEFAULT_RANK_FEE_BPS);
    expect(rankFeeBps({ id: 1 })).toBe(300);
  });
});

describe("Limitless markets whose records state no feeRateBps, as SDK 1.1.0's Market has none", () => {
  let sim: LimitlessSim;
  let venue: LimitlessVenue;
  beforeAll(async () => {
    sim = await startLimitlessSim({ catalog, seed: 5, latencyScale: 0, tickMs: 40, marketsWithoutFeeRate: true });
    venue = new LimitlessVenue({ baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 2_000, startTimeoutMs: 300 });
    await venue.start();
  });
  afterAll(async () => {
    await venue.stop();
    await sim.stop();
  });

  it("load with the account's rank rate, and the venue takes an order signed with it", async () => {
    const open = catalog.events().find((e) => e.status === "open" && e.listings.some((l) => l.venue === venue.id))!;
    const slug = open.listings.find((l) => l.venue === venue.id)!.venueMarketId;
    const m = venue.market(slug)!;
    expect(m.feeModel).toEqual({ kind: "limitless", ratePpm: LIMITLESS_SIM_FEE_PPM });
    // Room above the ask: the simulator's book ticks every 40 ms, and what is tested is the fee rate the order is signed with.
    const room = venue.book(slug, "YES")!.asks[0]!.price + 20n * m.tickSize;
    const limitPrice = room < ONE ? room : ONE - m.tickSize;
    const placed = await venue.place({ clientOrderId: `rank-fee-${Date.now()}`, venueMarketId: slug, outcome: "YES", side: "buy", limitPrice, shares: deliveredShares(m.feeModel, m.minOrderShares * 10n), expiresAt: Date.now() + 60_000 });
    // a buy asks for the shares it delivers: those left once the venue withholds its fee in contracts
    expect(placed.kind === "rejected" ? placed.reason : placed.kind).toMatch(/^(filled|partial)$/);
  });
});
