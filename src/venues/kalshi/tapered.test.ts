import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ONE } from "../../domain/money.ts";
import { MarketCatalog } from "../../markets/catalog.ts";
import type { ChildOrder } from "../venue.ts";
import { KalshiVenue } from "./kalshi-venue.ts";
import { startKalshiSim, TAPERED_RANGES, type KalshiSim } from "./sim/kalshi-sim.ts";
import { onPriceGrid, priceRanges } from "./wire.ts";

const catalog = MarketCatalog.load();
/** Quoted near 0.04: its YES book lies in the low tail of a tapered grid, its NO book in the high one. */
const TAPERED = "KXTIMEPOY-26-AI";

describe("Kalshi's price grid", () => {
  it("takes a price on the step of the range that holds it: 0.001 in a tapered market's tails, 0.01 between", () => {
    const tapered = priceRanges({ price_ranges: TAPERED_RANGES });
    for (const [price, on] of [
      [43_000n, true],
      [957_000n, true],
      [100_000n, true],
      [505_000n, false],
      [500_000n, true],
      [0n, false],
      [ONE, false],
    ] as const) {
      expect(onPriceGrid(price, tapered), `${price}`).toBe(on);
    }
    expect(onPriceGrid(43_000n, priceRanges({ price_ranges: [] }))).toBe(false);
    expect(onPriceGrid(40_000n, priceRanges({ price_ranges: [] }))).toBe(true);
  });
});

describe("A tapered Kalshi market", () => {
  let sim: KalshiSim;
  let venue: KalshiVenue;
  let seq = 0;
  const order = (outcome: "YES" | "NO", limitPrice: bigint): ChildOrder => ({
    clientOrderId: `tapered-${++seq}`,
    venueMarketId: TAPERED,
    outcome,
    side: "buy",
    limitPrice,
    shares: 3n * ONE,
    expiresAt: Date.now() + 60_000,
  });
  /** An ask of an outcome off the cent grid, at a price only the tail's 0.001 step allows (the book quotes on it as it moves). */
  const offCentAsk = async (outcome: "YES" | "NO") => {
    const off = () => venue.book(TAPERED, outcome)?.asks.find((l) => l.price % 10_000n !== 0n);
    await vi.waitFor(() => expect(off()).toBeDefined(), { timeout: 5_000, interval: 20 });
    return off()!.price;
  };

  beforeAll(async () => {
    sim = await startKalshiSim({ catalog, seed: 3, latencyScale: 0, tickMs: 40, tapered: [TAPERED] });
    venue = new KalshiVenue({ baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 2_000 });
    await venue.start();
  });
  afterAll(async () => {
    await venue.stop();
    await sim.stop();
  });

  it("fills a buy of either outcome at a tail price off the cent grid", async () => {
    expect(venue.market(TAPERED)!.tickSize).toBe(10_000n);
    for (const outcome of ["YES", "NO"] as const) {
      const limit = await offCentAsk(outcome);
      expect(limit < 100_000n || limit > 900_000n).toBe(true);
      expect((await venue.place(order(outcome, limit))).kind).toBe("filled");
    }
  });

  it("refuses, without sending it, a price between the tails off the cent grid, as the venue does", async () => {
    const before = sim.exchange.trades().length;
    expect(await venue.place(order("YES", 505_000n))).toMatchObject({ kind: "rejected", reason: expect.stringMatching(/^invalid_order: /) });
    expect(sim.exchange.trades().length).toBe(before);
  });
});
