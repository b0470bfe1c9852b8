import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcileOrders } from "../../src/orders/reconcile.ts";
import { chainOrderId, childOrder, childOrderId } from "../../src/orders/service.ts";
import { systemClock } from "../../src/domain/types.ts";
import type { OrderRecord } from "../../src/store/store.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

// Each case leaves an order where a crash would have left it (its state persisted, its chain lock and
// venue orders real), then runs the reconciliation the server runs at start-up.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.stop());

let n = 0;
async function interrupted(status: OrderRecord["status"], amount = 20_000_000n): Promise<{ order: OrderRecord; address: `0x${string}` }> {
  await s.client.account(); // the first authenticated request funds the account
  const account = (await s.crossfill.store.accountById(s.key.accountId))!;
  const now = new Date().toISOString();
  const order: OrderRecord = {
    id: `ord_crash${++n}${Date.now()}`,
    accountId: account.id,
    clientOrderId: null,
    requestHash: "x",
    eventId: "fed-cut-2026-12",
    outcome: "YES",
    side: "buy",
    amount,
    maxSlippage: 50_000n,
    strategy: "optimize_price",
    timeInForce: "IOC",
    status,
    locked: 0n,
    spent: 0n,
    fees: 0n,
    filledShares: 0n,
    routedTo: null,
    legs: [],
    sotTokenId: null,
    lockTx: null,
    settleTx: null,
    releaseTx: null,
    errorCode: null,
    errorMessage: null,
    createdAt: now,
    updatedAt: now,
  };
  await s.crossfill.store.insertOrder(order);
  return { order, address: account.address as `0x${string}` };
}

function reconcile() {
  const c = s.crossfill;
  return reconcileOrders(c.orders, { store: c.store, vault: c.vault, venues: new Map(c.venues.map((v) => [v.id, v])), clock: systemClock, log: { info() {}, warn() {}, error() {} } }, 0);
}

const marketIds = new Map<string, string>();
beforeAll(async () => {
  const p = await s.client.markets({ q: "fed", limit: 50 });
  for (const listing of p.data.find((m) => m.event_id === "fed-cut-2026-12")!.venues) marketIds.set(listing.venue, listing.venue_market_id);
});

describe("start-up reconciliation", () => {
  it("an order interrupted before its lock is closed as rejected, nothing locked", async () => {
    const { order } = await interrupted("pending");
    expect(await reconcile()).toBeGreaterThanOrEqual(1);
    expect(await s.crossfill.store.order(order.id)).toMatchObject({ status: "rejected", errorCode: "order_interrupted" });
  });

  it("an order locked on chain but never routed is released", async () => {
    const { order, address } = await interrupted("locked");
    const before = await s.crossfill.vault.balanceOf(address);
    await s.crossfill.vault.lock(chainOrderId(order.id), address, order.amount);
    expect((await s.crossfill.vault.balanceOf(address)).locked).toBe(order.amount);
    await reconcile();
    const after = await s.crossfill.store.order(order.id);
    expect(after).toMatchObject({ status: "failed", errorCode: "order_interrupted", releaseTx: expect.stringMatching(/^0x/) });
    expect(await s.crossfill.vault.balanceOf(address)).toEqual(before);
  });

  it("an order that reached a venue is settled from the venue's own record of its fills", async () => {
    const { order, address } = await interrupted("routing");
    await s.crossfill.vault.lock(chainOrderId(order.id), address, order.amount);
    const venue = s.crossfill.venues.find((v) => v.id === "kalshi-sim")!;
    const best = venue.book(marketIds.get("kalshi-sim")!, "YES")!.asks[0]!;
    const leg = { venue: venue.id, clientOrderId: childOrderId(order.id, venue.id), venueMarketId: marketIds.get("kalshi-sim")!, limitPrice: best.price, shares: 3_000_000n };
    await s.crossfill.store.updateOrder(order.id, { legs: [leg] });
    const placed = await venue.place(childOrder(order, leg));
    expect(placed.kind).toBe("filled");

    await reconcile();
    const after = (await s.crossfill.store.order(order.id))!;
    expect(after.status).toBe("filled");
    expect(after.filledShares).toBe(3_000_000n);
    expect(after.settleTx).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await s.crossfill.store.fills(order.id)).toHaveLength(1);
    const balance = await s.crossfill.vault.balanceOf(address);
    expect(balance.locked).toBe(0n);
    expect(await s.crossfill.vault.sotBalance(address, BigInt(after.sotTokenId!))).toBeGreaterThanOrEqual(3_000_000n);
  });

  it("an order whose child orders never reached their venue is released as failed", async () => {
    const { order, address } = await interrupted("routing");
    await s.crossfill.vault.lock(chainOrderId(order.id), address, order.amount);
    const leg = { venue: "kalshi-sim", clientOrderId: childOrderId(order.id, "kalshi-sim"), venueMarketId: marketIds.get("kalshi-sim")!, limitPrice: 10_000n, shares: 1_000_000n };
    await s.crossfill.store.updateOrder(order.id, { legs: [leg] });
    await reconcile();
    expect(await s.crossfill.store.order(order.id)).toMatchObject({ status: "failed", errorCode: "all_venues_failed" });
    expect((await s.crossfill.vault.balanceOf(address)).locked).toBe(0n);
  });
});
