import { expect, vi } from "vitest";
import type { MarketCatalog } from "../../src/markets/catalog.ts";
import type { KalshiSim } from "../../src/venues/kalshi/sim/kalshi-sim.ts";
import { kalshiAuthHeaders } from "../../src/venues/kalshi/signing.ts";
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

/** `n` orders of one contract each taken on a market straight through the simulator's API, as the account's other trading. */
export async function tradeOn(sim: KalshiSim, ticker: string, n: number, now: number): Promise<void> {
  const path = `${new URL(sim.url).pathname}/portfolio/events/orders`;
  for (let i = 0; i < n; i++) {
    const body = { ticker, client_order_id: `other-${i}-${now}`, side: i % 2 ? "bid" : "ask", price: i % 2 ? "0.9900" : "0.0100", count: "1.00", time_in_force: "immediate_or_cancel", self_trade_prevention_type: "taker_at_cross" };
    const res = await fetch(`${sim.url}/portfolio/events/orders`, { method: "POST", headers: { "content-type": "application/json", ...kalshiAuthHeaders(sim.credentials.keyId, sim.credentials.privateKeyPem, now, "POST", path) }, body: JSON.stringify(body) });
    expect(res.status).toBe(201);
  }
}

/** The GET requests a venue sends from now on: each one's path without its query, and how many fills or orders its answer lists. */
export function readsOf(venue: Venue): () => Promise<{ path: string; listed: number }[]> {
  const send = vi.spyOn(venue as unknown as { send: (method: string, path: string) => Promise<{ body?: { fills?: unknown[]; orders?: unknown[] } }> }, "send");
  return async () => {
    const answers = await Promise.all(send.mock.results.map((r) => r.value as Promise<{ body?: { fills?: unknown[]; orders?: unknown[] } }>));
    return send.mock.calls.flatMap(([method, path], i) => (method === "GET" ? [{ path: path.split("?")[0]!, listed: (answers[i]!.body?.fills ?? answers[i]!.body?.orders ?? []).length }] : []));
  };
}
