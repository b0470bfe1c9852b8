import { afterEach, describe, expect, it, vi } from "vitest";
import { AppError } from "../../domain/errors.ts";
import { MarketCatalog } from "../../markets/catalog.ts";
import type { ChildOrder } from "../venue.ts";
import { PolymarketVenue, type PolymarketVenueOptions } from "./polymarket-venue.ts";
import { startPolymarketSim, type PolymarketSim } from "./sim/index.ts";

const catalog = MarketCatalog.load();
const running: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of running.splice(0).reverse()) await r.stop();
});

async function setup(extra: Partial<PolymarketVenueOptions> = {}) {
  const sim = await startPolymarketSim({ catalog, seed: 9, latencyScale: 0, tickMs: 50 });
  running.push(sim);
  const options: PolymarketVenueOptions = {
    baseUrl: sim.url,
    wsUrl: sim.wsUrl,
    credentials: sim.credentials,
    catalog,
    freshnessMs: 600,
    requestTimeoutMs: 400,
    retryBackoffMs: 20,
    reconnect: { initialMs: 50, maxMs: 400 },
    ...extra,
  };
  const venue = new PolymarketVenue(options);
  await venue.start();
  running.push(venue);
  return { sim, venue, options };
}

let seq = 0;
function buy(venue: PolymarketVenue): ChildOrder {
  const listing = catalog.events().find((e) => e.status === "open" && e.listings.some((l) => l.venue === venue.id))!.listings.find((l) => l.venue === venue.id)!;
  const m = venue.market(listing.venueMarketId)!;
  const best = venue.book(m.venueMarketId, "YES")!.asks[0]!;
  return { clientOrderId: `pm-test-${++seq}`, venueMarketId: m.venueMarketId, outcome: "YES", side: "buy", limitPrice: best.price + m.tickSize, shares: m.minOrderShares };
}

describe("PolymarketVenue", () => {
  it("finds an order placed before a restart from the child order, and says why it cannot without it", async () => {
    const { venue, options } = await setup();
    const order = buy(venue);
    const placed = await venue.place(order);
    expect(placed.kind).toBe("filled");
    const restarted = new PolymarketVenue(options);
    await restarted.markets();
    await expect(restarted.status(order.clientOrderId)).rejects.toBeInstanceOf(AppError);
    expect(await restarted.status(order.clientOrderId, order)).toEqual(await venue.status(order.clientOrderId));
  });

  it("after a lost acknowledgement, placing the same order again returns the fill that happened, not a second one", async () => {
    const { sim, venue } = await setup();
    const order = buy(venue);
    sim.faults.set({ ackLost: true });
    expect((await venue.place(order)).kind).toBe("unknown");
    sim.faults.reset();
    const again = await venue.place(order);
    expect(again.kind).toBe("filled");
    expect(await venue.status(order.clientOrderId)).toMatchObject({ kind: "done", fills: again.kind === "filled" ? again.fills : [] });
  });

  it("does not call a persistent server error a rejection: the order may have been taken", async () => {
    const { sim, venue } = await setup();
    sim.faults.set({ serverErrors: 100 });
    const r = await venue.place(buy(venue));
    expect(r).toMatchObject({ kind: "unknown", reason: expect.stringMatching(/^venue_error/) });
  });

  it("refuses definitely when told to wait longer than it may, and when the venue is unreachable", async () => {
    const { sim, venue } = await setup({ maxRetryAfterMs: 500 });
    sim.faults.set({ rateLimit: { count: 1, retryAfterSeconds: 30 } });
    expect(await venue.place(buy(venue))).toMatchObject({ kind: "rejected", reason: expect.stringMatching(/^rate_limited/) });
    const order = buy(venue);
    await sim.stop();
    // let the client see its pooled connections close: a request written to one of those is "lost" (unknown), not refused
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await venue.place(order)).toMatchObject({ kind: "rejected", reason: expect.stringMatching(/^venue_unreachable/) });
    expect(venue.health().state).toBe("down");
  });

  it("describes where it points and its stream, for the health endpoint", async () => {
    const { sim, venue } = await setup();
    await vi.waitFor(() => expect(venue.describe()).toMatchObject({ adapter: "polymarket-clob", baseUrl: sim.url, wsUrl: sim.wsUrl, stream: { state: "open", connections: 1 } }));
  });

  it("serves fault switches on the simulator's admin routes", async () => {
    const { sim } = await setup();
    const res = await fetch(`${sim.url}/_sim/faults`, { method: "POST", body: JSON.stringify({ latencyMs: 5, partialFills: true }) });
    expect(await res.json()).toMatchObject({ latencyMs: 5, partialFills: true, timeout: false });
    expect((await fetch(`${sim.url}/_sim/faults`, { method: "POST", body: JSON.stringify({ nonsense: 1 }) })).status).toBe(400);
    await fetch(`${sim.url}/_sim/faults/reset`, { method: "POST" });
    expect(sim.faults.switches.partialFills).toBe(false);
  });
});
