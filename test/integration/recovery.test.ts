import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sotTokenId } from "../../src/contracts/sot.ts";
import { ONE } from "../../src/domain/money.ts";
import { chainOrderId, childOrder, childOrderId } from "../../src/orders/service.ts";
import type { OrderLeg, OrderRecord } from "../../src/store/store.ts";
import type { Venue } from "../../src/venues/venue.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { orderRecord } from "../helpers/stores.ts";

// Each case leaves an order where a crash would have left it (its state persisted, its chain lock and
// venue orders real), then runs the reconciliation the server runs at start-up.
let s: TestServer;
beforeAll(async () => {
  // Child orders a venue does not know are final once their expiry passes by our clock: the simulators share it.
  // Recovery runs when a case calls it, never by the server's timer: a timed sweep would release a case's stranded lock before the case sweeps.
  s = await startTestServer({ EXPIRY_SKEW_MS: "0", RECONCILE_INTERVAL_MS: "3600000" });
});
afterAll(async () => s?.stop());

let n = 0;
async function interrupted(status: OrderRecord["status"], amount = 20_000_000n): Promise<{ order: OrderRecord; address: `0x${string}` }> {
  await s.client.account(); // the first authenticated request funds the account
  const account = (await s.crossfill.store.accountById(s.key.accountId))!;
  const now = new Date().toISOString();
  const order = orderRecord({
    id: `ord_crash${++n}${Date.now()}`,
    accountId: account.id,
    requestHash: "x",
    eventId: "fed-cut-2026-12",
    amount,
    maxSlippage: 50_000n,
    timeInForce: "IOC",
    status,
    locked: status === "pending" ? 0n : amount,
    createdAt: now,
    updatedAt: now,
  });
  await s.crossfill.store.insertOrder(order);
  return { order, address: account.address as `0x${string}` };
}

function reconcile() {
  return s.crossfill.reconciler.pass(0);
}

/** A child order of the order as it would have been stored before it was sent; `expiresIn` ms from now (negative: long expired). */
function legOf(order: OrderRecord, venue: string, limitPrice: bigint, shares: bigint, expiresIn = -60_000): OrderLeg {
  return { venue, clientOrderId: childOrderId(order.id, venue), venueMarketId: marketIds.get(venue)!, limitPrice, shares, round: 1, expiresAt: Date.now() + expiresIn };
}

/** A limit 20 ticks above the venue's best ask (capped below 1), so a book that ticks before the child order arrives still fills it. */
function takingLimit(venue: Venue): bigint {
  const m = venue.market(marketIds.get(venue.id)!)!;
  const room = venue.book(m.venueMarketId, "YES")!.asks[0]!.price + 20n * m.tickSize;
  return room < ONE ? room : ONE - m.tickSize;
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

  it("an order whose lock landed after its answer was lost is released, not left locked, and shows the lock's transaction", async () => {
    const { order, address } = await interrupted("pending");
    const before = await s.crossfill.vault.balanceOf(address);
    const lock = await s.crossfill.vault.lock(chainOrderId(order.id), address, order.amount);
    await reconcile();
    const after = await s.crossfill.store.order(order.id);
    expect(after).toMatchObject({ status: "failed", errorCode: "order_interrupted", locked: order.amount, lockTx: lock.txHash, releaseTx: expect.stringMatching(/^0x/) });
    expect(await s.crossfill.vault.balanceOf(address)).toEqual(before);
    // The account's activity lists the lock with the transaction that made it, and its release with the one that undid it.
    const moved = (await s.client.activity({ limit: 500 })).data.filter((a) => a.reference === order.id);
    expect(moved.map((a) => [a.type, a.amount_usdc, a.tx_hash])).toEqual([
      ["release", 20, after!.releaseTx],
      ["lock", 20, lock.txHash],
    ]);
  });

  it("an order that reached a venue is settled from the venue's own record of its fills", async () => {
    const { order, address } = await interrupted("routing");
    await s.crossfill.vault.lock(chainOrderId(order.id), address, order.amount);
    const venue = s.crossfill.venues.find((v) => v.id === "kalshi-sim")!;
    const leg = legOf(order, venue.id, takingLimit(venue), 3_000_000n, 30_000);
    await s.crossfill.store.updateOrder(order.id, ["routing"], { legs: [leg] });
    const placed = await venue.place(childOrder(order, leg));
    expect(placed.kind).toBe("filled");

    await reconcile();
    const after = (await s.crossfill.store.order(order.id))!;
    expect(after.status).toBe("filled");
    expect(after.filledShares).toBe(3_000_000n);
    expect(after.settleTx).toMatch(/^0x[0-9a-f]{64}$/);
    const fills = await s.crossfill.store.fills(order.id);
    expect(fills).toHaveLength(1);
    expect(after.spent).toBe(fills.reduce((sum, f) => sum + (f.price * f.shares) / 1_000_000n + f.fee, 0n));
    const balance = await s.crossfill.vault.balanceOf(address);
    expect(balance.locked).toBe(0n);
    expect(await s.crossfill.vault.sotBalance(address, BigInt(after.sotTokenId!))).toBeGreaterThanOrEqual(3_000_000n);
  });

  it("an order whose child orders never reached their venue is released as failed once they expired", async () => {
    const { order, address } = await interrupted("routing");
    await s.crossfill.vault.lock(chainOrderId(order.id), address, order.amount);
    await s.crossfill.store.updateOrder(order.id, ["routing"], { legs: [legOf(order, "kalshi-sim", 10_000n, 1_000_000n)] });
    await reconcile();
    expect(await s.crossfill.store.order(order.id)).toMatchObject({ status: "failed", errorCode: "all_venues_failed" });
    expect((await s.crossfill.vault.balanceOf(address)).locked).toBe(0n);
  });

  it("a child order the venue does not know yet keeps its order routing and its funds locked until it expires", async () => {
    const { order, address } = await interrupted("routing");
    await s.crossfill.vault.lock(chainOrderId(order.id), address, order.amount);
    // Expiring 5 s on, so the first pass comes before it even on a busy machine; the second once it has expired.
    const leg = legOf(order, "kalshi-sim", 10_000n, 1_000_000n, 5_000);
    await s.crossfill.store.updateOrder(order.id, ["routing"], { legs: [leg] });
    await reconcile();
    expect(await s.crossfill.store.order(order.id)).toMatchObject({ status: "routing" });
    expect((await s.crossfill.vault.balanceOf(address)).locked).toBe(order.amount);
    await new Promise((r) => setTimeout(r, leg.expiresAt - Date.now() + 100));
    await reconcile();
    expect(await s.crossfill.store.order(order.id)).toMatchObject({ status: "failed" });
    expect((await s.crossfill.vault.balanceOf(address)).locked).toBe(0n);
  });

  it("an order the chain already settled before the crash is recorded with the settlement's transaction, filled when its plan filled", async () => {
    const { order, address } = await interrupted("routing");
    const chainId = chainOrderId(order.id);
    await s.crossfill.vault.lock(chainId, address, order.amount);
    const venue = s.crossfill.venues.find((v) => v.id === "kalshi-sim")!;
    const leg = legOf(order, venue.id, takingLimit(venue), 2_000_000n, 30_000);
    await s.crossfill.store.updateOrder(order.id, ["routing"], { legs: [leg] });
    const placed = await venue.place(childOrder(order, leg));
    if (placed.kind !== "filled") throw new Error(`expected a fill, got ${placed.kind}`);
    const spent = placed.fills.reduce((sum, f) => sum + (f.price * f.shares) / 1_000_000n + f.fee, 0n);
    const settleTx = await s.crossfill.vault.settle(chainId, spent, { tokenId: 11n, shares: 2_000_000n });

    await reconcile();
    expect(await s.crossfill.store.order(order.id)).toMatchObject({ status: "filled", settleTx: settleTx.txHash, spent, filledShares: 2_000_000n, sotTokenId: "11" });
  });

  /** Flips a fault switch of a venue's simulator over its admin route. */
  async function simFaults(venueId: string, switches: Record<string, unknown>): Promise<void> {
    const venue = s.crossfill.venues.find((v) => v.id === venueId)!;
    const res = await fetch(new URL("/_sim/faults", venue.describe().baseUrl!), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(switches) });
    expect(res.status).toBe(200);
  }

  it("an order whose venue filled only part of its plan is settled as partially filled, never as filled", async () => {
    const { order, address } = await interrupted("routing");
    await s.crossfill.vault.lock(chainOrderId(order.id), address, order.amount);
    const venue = s.crossfill.venues.find((v) => v.id === "kalshi-sim")!;
    const leg = legOf(order, venue.id, takingLimit(venue), 4_000_000n, 30_000);
    await s.crossfill.store.updateOrder(order.id, ["routing"], { legs: [leg] });
    await simFaults("kalshi-sim", { partialFills: true });
    try {
      expect((await venue.place(childOrder(order, leg))).kind).toBe("partial");
    } finally {
      await simFaults("kalshi-sim", { partialFills: false });
    }
    await reconcile();
    expect(await s.crossfill.store.order(order.id)).toMatchObject({ status: "partially_filled", filledShares: 2_000_000n, settleTx: expect.stringMatching(/^0x/) });
  });

  it("a child order the venue left open is cancelled there, then the order is settled on what it filled", async () => {
    const { order, address } = await interrupted("routing");
    await s.crossfill.vault.lock(chainOrderId(order.id), address, order.amount);
    const venue = s.crossfill.venues.find((v) => v.id === "polymarket-sim")!;
    const leg = legOf(order, venue.id, takingLimit(venue), 10_000_000n, 30_000);
    await s.crossfill.store.updateOrder(order.id, ["routing"], { legs: [leg] });
    await simFaults("polymarket-sim", { resting: true });
    try {
      expect((await venue.place(childOrder(order, leg))).kind).toBe("open");
    } finally {
      await simFaults("polymarket-sim", { resting: false });
    }
    expect((await venue.status(leg.clientOrderId, childOrder(order, leg))).kind).toBe("open");
    await reconcile();
    // The resting fault fills half of what the buy spends; the asks may have moved since they were read, so the shares are the venue's.
    const done = await venue.status(leg.clientOrderId, childOrder(order, leg));
    expect(done.kind).toBe("done");
    const filled = done.kind === "done" ? done.fills.reduce((sum, f) => sum + f.shares, 0n) : 0n;
    expect(filled).toBeGreaterThan(0n);
    expect(filled).toBeLessThan(leg.shares);
    expect(await s.crossfill.store.order(order.id)).toMatchObject({ status: "partially_filled", filledShares: filled });
  });

  it("an order on a venue no longer configured waits for it, and every other order is still reconciled", async () => {
    const waiting = await interrupted("routing");
    await s.crossfill.vault.lock(chainOrderId(waiting.order.id), waiting.address, waiting.order.amount);
    await s.crossfill.store.updateOrder(waiting.order.id, ["routing"], { legs: [{ ...legOf(waiting.order, "kalshi-sim", 10_000n, 1_000_000n), venue: "gone-venue" }] });
    const other = await interrupted("pending");
    await reconcile();
    expect(await s.crossfill.store.order(waiting.order.id)).toMatchObject({ status: "routing" });
    expect(await s.crossfill.store.order(other.order.id)).toMatchObject({ status: "rejected" });
  });

  it("an order whose venue never answers is ended once its lock's deadline has passed: the lock released whole on chain, the order failed", async () => {
    const { order, address } = await interrupted("routing");
    const before = await s.crossfill.vault.balanceOf(address);
    await s.crossfill.vault.lock(chainOrderId(order.id), address, order.amount);
    await s.crossfill.store.updateOrder(order.id, ["routing"], { legs: [{ ...legOf(order, "kalshi-sim", 10_000n, 1_000_000n), venue: "gone-venue" }] });
    await reconcile();
    expect(await s.crossfill.store.order(order.id)).toMatchObject({ status: "routing" });
    const lock = await s.crossfill.vault.lockState(chainOrderId(order.id));
    if (lock.kind !== "locked") throw new Error(`the order's lock is ${lock.kind}`);
    // The server's clock and the chain's both past the deadline.
    const now = vi.spyOn(Date, "now").mockReturnValue(lock.deadline * 1000 + 1_000);
    const chainNow = vi.spyOn(s.crossfill.vault, "blockTime").mockResolvedValue(lock.deadline + 1);
    try {
      await reconcile();
    } finally {
      now.mockRestore();
      chainNow.mockRestore();
    }
    const after = await s.crossfill.store.order(order.id);
    expect(after).toMatchObject({ status: "failed", errorCode: "venue_unavailable", spent: 0n });
    expect(await s.crossfill.vault.lockState(chainOrderId(order.id))).toEqual({ kind: "released", txHash: after!.releaseTx, expired: false });
    // Nothing charged; the release gave the whole lock back (the pass also ends the order of the case before, on the same account).
    const balance = await s.crossfill.vault.balanceOf(address);
    expect(balance.available + balance.locked).toBe(before.available + before.locked);
    expect(balance.available).toBeGreaterThanOrEqual(before.available);
  });

  it("a sell whose venue never answers is ended once its escrow's deadline has passed: the shares returned whole on chain, the order failed", async () => {
    await s.client.account();
    const address = (await s.crossfill.store.accountById(s.key.accountId))!.address as `0x${string}`;
    const tokenId = sotTokenId("fed-cut-2026-12", "YES");
    // The client's position, minted as a buy's settlement mints it.
    const bought = chainOrderId(`ord_position${Date.now()}`);
    await s.crossfill.vault.lock(bought, address, 1_000_000n);
    await s.crossfill.vault.settle(bought, 1_000_000n, { tokenId, shares: 2_000_000n });
    const held = await s.crossfill.vault.sotBalance(address, tokenId);
    const now = new Date().toISOString();
    const sell = orderRecord({
      id: `ord_sellgone${++n}${Date.now()}`,
      accountId: s.key.accountId,
      eventId: "fed-cut-2026-12",
      side: "sell",
      amount: 0n,
      shares: 2_000_000n,
      status: "routing",
      escrowed: 2_000_000n,
      sotTokenId: tokenId.toString(),
      createdAt: now,
      updatedAt: now,
    });
    await s.crossfill.store.insertOrder(sell);
    await s.crossfill.vault.escrow(chainOrderId(sell.id), address, { tokenId, shares: 2_000_000n });
    await s.crossfill.store.updateOrder(sell.id, ["routing"], { legs: [{ ...legOf(sell, "kalshi-sim", 10_000n, 2_000_000n), venue: "gone-venue" }] });
    await reconcile();
    expect(await s.crossfill.store.order(sell.id)).toMatchObject({ status: "routing" });
    expect(await s.crossfill.vault.sotBalance(address, tokenId)).toBe(held - 2_000_000n);
    const escrow = await s.crossfill.vault.escrowState(chainOrderId(sell.id));
    if (escrow.kind !== "escrowed") throw new Error(`the order's escrow is ${escrow.kind}`);
    // The server's clock and the chain's both past the deadline.
    const later = vi.spyOn(Date, "now").mockReturnValue(escrow.deadline * 1000 + 1_000);
    const chainLater = vi.spyOn(s.crossfill.vault, "blockTime").mockResolvedValue(escrow.deadline + 1);
    try {
      await reconcile();
    } finally {
      later.mockRestore();
      chainLater.mockRestore();
    }
    const after = await s.crossfill.store.order(sell.id);
    expect(after).toMatchObject({ status: "failed", errorCode: "venue_unavailable", filledShares: 0n, proceeds: 0n });
    expect(await s.crossfill.vault.escrowState(chainOrderId(sell.id))).toEqual({ kind: "released", txHash: after!.releaseTx, expired: false });
    expect(await s.crossfill.vault.sotBalance(address, tokenId)).toBe(held);
  });

  it("releases a lock that landed after its order was closed, and leaves the locks of open orders alone", async () => {
    const closed = await interrupted("pending");
    await s.crossfill.store.updateOrder(closed.order.id, ["pending"], { status: "rejected", errorCode: "order_interrupted" });
    const before = await s.crossfill.vault.balanceOf(closed.address);
    await s.crossfill.vault.lock(chainOrderId(closed.order.id), closed.address, closed.order.amount);
    const open = await interrupted("locked");
    await s.crossfill.vault.lock(chainOrderId(open.order.id), open.address, open.order.amount);
    expect(await s.crossfill.reconciler.sweepLocks()).toBeGreaterThanOrEqual(1);
    expect(await s.crossfill.vault.lockState(chainOrderId(closed.order.id))).toMatchObject({ kind: "released" });
    expect(await s.crossfill.vault.lockState(chainOrderId(open.order.id))).toMatchObject({ kind: "locked" });
    expect((await s.crossfill.vault.balanceOf(closed.address)).available).toBe(before.available - open.order.amount);
    await reconcile();
  });

  it("sweeps the blocks since its last sweep, not the chain's history, and still finds each stranded lock", async () => {
    const reads = vi.spyOn(s.crossfill.vault, "holds");
    try {
      const stranded = async () => {
        const closed = await interrupted("pending", 1_000_000n);
        await s.crossfill.store.updateOrder(closed.order.id, ["pending"], { status: "rejected", errorCode: "order_interrupted" });
        await s.crossfill.vault.lock(chainOrderId(closed.order.id), closed.address, closed.order.amount);
        return chainOrderId(closed.order.id);
      };
      const first = await stranded();
      expect(await s.crossfill.reconciler.sweepLocks()).toBe(1);
      const second = await stranded();
      expect(await s.crossfill.reconciler.sweepLocks()).toBe(1);
      for (const id of [first, second]) expect(await s.crossfill.vault.lockState(id)).toMatchObject({ kind: "released" });
      // The start-up sweep read the history; since then each read begins the block after the one before it ended.
      const ranges = reads.mock.calls;
      expect(ranges.length).toBeGreaterThanOrEqual(2);
      expect(ranges[0]![0]).toBeGreaterThan(s.crossfill.vault.info().deployedAt);
      for (let i = 1; i < ranges.length; i++) expect(ranges[i]![0]).toBe(ranges[i - 1]![1] + 1n);
    } finally {
      reads.mockRestore();
    }
  });

  it("sends no release for a lock whose order ended between the sweep's read of the chain and its read of the store", async () => {
    const ending = await interrupted("pending", 1_000_000n);
    const chainId = chainOrderId(ending.order.id);
    await s.crossfill.vault.lock(chainId, ending.address, ending.order.amount);
    const store = s.crossfill.store;
    const openOrders = store.ordersInStatus.bind(store);
    // The order's own path releases its lock and closes it just as the sweep, having read the chain, reads the store.
    const reads = vi.spyOn(store, "ordersInStatus").mockImplementationOnce(async (statuses) => {
      await s.crossfill.vault.release(chainId);
      await store.updateOrder(ending.order.id, ["pending"], { status: "failed", errorCode: "order_interrupted" });
      return openOrders(statuses);
    });
    const releases = vi.spyOn(s.crossfill.vault, "release");
    try {
      expect(await s.crossfill.reconciler.sweepLocks()).toBe(0);
      expect(reads).toHaveBeenCalled();
      // The order's own release alone: the sweep asked the chain again and sent none.
      expect(releases).toHaveBeenCalledTimes(1);
    } finally {
      reads.mockRestore();
      releases.mockRestore();
    }
  });

  it("runs one pass, and one sweep, at a time: one asked for while one runs joins it", async () => {
    const first = s.crossfill.reconciler.pass(0);
    expect(s.crossfill.reconciler.pass(0)).toBe(first);
    const sweep = s.crossfill.reconciler.sweepLocks();
    expect(s.crossfill.reconciler.sweepLocks()).toBe(sweep);
    await Promise.all([first, sweep]);
  });
});
