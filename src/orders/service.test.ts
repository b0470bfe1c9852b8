import { pino } from "pino";
import { beforeEach, describe, expect, it } from "vitest";
import { OrderService, childOrderId, chainOrderId, type OrderDeps } from "./service.ts";
import { Reconciler } from "./reconcile.ts";
import { plan } from "../router/index.ts";
import { openSqliteStore } from "../store/sqlite/sqlite-store.ts";
import type { Store } from "../store/store.ts";
import type { UnifiedEvent } from "../markets/catalog.ts";
import type { VenueQuote } from "../router/index.ts";
import type { ChildOrder, ChildStatus, PlaceResult, Venue } from "../venues/venue.ts";
import { VaultTxError, type LockState, type Vault } from "../vault/vault.ts";

// The use-case over a real store, a venue that answers from a script, and a vault that records what it
// was asked to do: what a trader would see of an order whose first legs arrive after their levels are gone.
const EVENT: UnifiedEvent = {
  eventId: "evt",
  title: "t",
  description: "",
  outcomes: ["YES", "NO"],
  status: "open",
  closeTime: "2027-01-01T00:00:00Z",
  resolution: null,
  listings: [{ venue: "v", venueMarketId: "m" }],
};

const HASH = `0x${"ab".repeat(32)}` as const;

class Ledger {
  locks = new Map<string, { amount: bigint; state: LockState["kind"]; spent?: bigint }>();
  /** Makes the next vault call of this name throw, as a chain that went away mid-call would. */
  failNext: { settle?: Error; lock?: Error } = {};
  vault(): Vault {
    const tx = () => Promise.resolve({ txHash: HASH, blockNumber: 1n });
    const fail = (name: "settle" | "lock") => {
      const e = this.failNext[name];
      delete this.failNext[name];
      if (e) throw e;
    };
    return {
      balanceOf: async () => ({ available: 1_000_000_000n, locked: 0n }),
      lock: async (id, _a, amount) => (fail("lock"), this.locks.set(id, { amount, state: "locked" }), tx()),
      settle: async (id, spent) => (fail("settle"), this.locks.set(id, { ...this.locks.get(id)!, state: "settled", spent }), tx()),
      release: async (id) => (this.locks.set(id, { ...this.locks.get(id)!, state: "released" }), tx()),
      lockState: async (id): Promise<LockState> => {
        const l = this.locks.get(id);
        if (!l) return { kind: "none" };
        if (l.state === "locked") return { kind: "locked", amount: l.amount, deadline: 0 };
        if (l.state === "settled") return { kind: "settled", txHash: HASH, spent: l.spent!, shares: 0n, tokenId: 7n };
        return { kind: "released", txHash: HASH, expired: false };
      },
      pendingTransactions: async () => 0,
    } as Partial<Vault> as Vault;
  }
}

let store: Store;
let ledger: Ledger;
let asks: { price: bigint; shares: bigint }[];
let script: ((o: ChildOrder) => PlaceResult)[];
const sent: ChildOrder[] = [];

/** What the venue answers to status and cancel, by client order id; not_found when absent. */
let known: Map<string, ChildStatus>;
const cancelled: string[] = [];

/** A venue that places from the script and answers status and cancel from `known`. */
function scriptedVenue(): Venue {
  return {
    id: "v",
    place: async (o: ChildOrder) => (sent.push(o), script.shift()!(o)),
    status: async (id: string) => known.get(id) ?? { kind: "not_found" as const },
    cancel: async (id: string) => {
      cancelled.push(id);
      const st = known.get(id);
      if (!st || st.kind === "not_found") return { kind: "not_found" as const };
      const done = { ...st, kind: "done" as const };
      known.set(id, done);
      return done;
    },
  } as Partial<Venue> as Venue;
}

function service(over: Partial<OrderDeps> = {}): OrderService {
  const venue = scriptedVenue();
  const quote = (): VenueQuote => ({
    venue: "v",
    venueMarketId: "m",
    asks,
    feeModel: { kind: "polymarket", ratePpm: 0n, exponent: 1 },
    tickSize: 10_000n,
    minOrderShares: 1_000_000n,
    lotShares: 10_000n,
    latencyMs: 1,
  });
  return new OrderService({
    store,
    vault: ledger.vault(),
    venues: new Map([["v", venue]]),
    event: (id) => (id === "evt" ? EVENT : undefined),
    quotes: () => [quote()],
    plan,
    tokenId: () => 7n,
    clock: { now: () => Date.now() },
    newOrderId: () => `ord_${sent.length}_${Math.random().toString(36).slice(2)}`,
    limits: { maxOrder: 1_000_000_000n },
    log: pino({ level: "silent" }),
    reconcileDelayMs: 0,
    instanceId: "test",
    ...over,
  });
}

const fill = (o: ChildOrder, shares: bigint): PlaceResult => ({
  kind: "filled",
  venueOrderId: `vo-${o.clientOrderId}`,
  fills: [{ tradeId: `t-${o.clientOrderId}`, venueOrderId: `vo-${o.clientOrderId}`, clientOrderId: o.clientOrderId, side: o.side, price: o.limitPrice, shares, fee: 0n }],
});
const nothing = (): PlaceResult => ({ kind: "rejected", reason: "no_match" });

beforeEach(async () => {
  store = await openSqliteStore(":memory:");
  await store.migrate();
  await store.createAccount({ id: "acc", email: "a@example.com", address: "0x00000000000000000000000000000000000000aa", walletKeyEnc: null, passwordHash: null, fundedAt: null });
  ledger = new Ledger();
  sent.length = 0;
  cancelled.length = 0;
  known = new Map();
  asks = [{ price: 500_000n, shares: 100_000_000n }];
});

const who = { accountId: "acc", address: "0x00000000000000000000000000000000000000aa" as const };
const body = { market_id: "evt", outcome: "YES", side: "buy", amount_usdc: 10, max_slippage: 0.02 };

describe("routing rounds", () => {
  it("routes again what a leg found gone, under fresh ids, and fills the order", async () => {
    script = [nothing, (o) => fill(o, o.shares)];
    const order = await service().submit(who, body, undefined);
    expect(order.status).toBe("filled");
    expect(sent.map((o) => o.clientOrderId)).toEqual([childOrderId(order.id, "v"), childOrderId(order.id, "v", 2)]);
    expect(order.legs.map((l) => l.clientOrderId)).toEqual(sent.map((o) => o.clientOrderId));
    expect(order.filledShares).toBe(20_000_000n);
    expect(ledger.locks.get([...ledger.locks.keys()][0]!)).toMatchObject({ amount: 10_000_000n, state: "settled", spent: 10_000_000n });
  });

  it("routes only the rest of the budget after a partial fill, and keeps the first limit price", async () => {
    script = [(o) => fill(o, 8_000_000n), (o) => fill(o, o.shares)];
    const order = await service().submit(who, body, undefined);
    expect(sent[1]!.shares).toBe(12_000_000n); // (10 - 8 × 0.5) USDC at 0.5
    expect(order).toMatchObject({ status: "filled", filledShares: 20_000_000n, spent: 10_000_000n });
  });

  it("gives up after three rounds: what filled is settled as partially filled, the rest released by the settlement", async () => {
    script = [(o) => fill(o, 2_000_000n), nothing, nothing];
    const order = await service().submit(who, body, undefined);
    expect(sent).toHaveLength(3);
    expect(order).toMatchObject({ status: "partially_filled", filledShares: 2_000_000n, spent: 1_000_000n });
  });

  it("releases everything when no round fills anything", async () => {
    script = [nothing, nothing, nothing];
    const order = await service().submit(who, body, undefined);
    expect(order).toMatchObject({ status: "failed", errorCode: "all_venues_failed", spent: 0n });
    expect([...ledger.locks.values()][0]!.state).toBe("released");
  });
});

describe("money after the lock", () => {
  it("never charges more than the lock, even when the books moved and every share filled at its leg's limit", async () => {
    // Planned: 100 shares at 0.50 and 50 at 0.51; had all of them filled at 0.51 the lock would not have covered it.
    asks = [
      { price: 500_000n, shares: 100_000_000n },
      { price: 510_000n, shares: 100_000_000n },
    ];
    script = [(o) => fill(o, o.shares)];
    const order = await service().submit(who, { ...body, amount_usdc: "75.5", max_slippage: 0.05 }, undefined);
    expect(sent[0]!.limitPrice).toBe(510_000n);
    expect(order.status).toBe("filled");
    const cost = (sent[0]!.limitPrice * sent[0]!.shares) / 1_000_000n;
    expect(order.spent).toBe(cost);
    expect(order.spent).toBeLessThanOrEqual(order.locked);
    expect([...ledger.locks.values()][0]).toMatchObject({ state: "settled", spent: cost });
  });

  it("charges a trade the venue reported twice once", async () => {
    script = [
      (o) => {
        const f = fill(o, o.shares);
        return f.kind === "filled" ? { ...f, fills: [...f.fills, ...f.fills] } : f;
      },
    ];
    const order = await service().submit(who, body, undefined);
    expect(order).toMatchObject({ status: "filled", filledShares: 20_000_000n, spent: 10_000_000n });
    expect(await store.fills(order.id)).toHaveLength(1);
  });

  it("cancels a child order the venue left open, and settles on what it had filled", async () => {
    script = [
      (o) => {
        const { fills } = fill(o, 4_000_000n) as Extract<PlaceResult, { kind: "filled" }>;
        known.set(o.clientOrderId, { kind: "open", venueOrderId: `vo-${o.clientOrderId}`, fills });
        return { kind: "open", venueOrderId: `vo-${o.clientOrderId}`, fills };
      },
      nothing,
      nothing,
    ];
    const order = await service().submit(who, body, undefined);
    expect(cancelled).toEqual([childOrderId(order.id, "v")]);
    expect(order).toMatchObject({ status: "partially_filled", filledShares: 4_000_000n, spent: 2_000_000n });
  });

  it("leaves an order routing, its funds locked, while a child order whose answer was lost may still arrive", async () => {
    script = [() => ({ kind: "unknown", reason: "timeout" })];
    const order = await service().submit(who, body, undefined);
    expect(order.status).toBe("routing");
    expect([...ledger.locks.values()][0]!.state).toBe("locked");
    expect(order.legs[0]!.expiresAt).toBeGreaterThan(Date.now());
  });

  it("counts a lost child order as never placed once its expiry has passed at the venue", async () => {
    script = [() => ({ kind: "unknown", reason: "timeout" }), nothing, nothing];
    const order = await service({ childOrderTtlMs: 1_000, expirySkewMs: 0, reconcileAttempts: 2, reconcileDelayMs: 600 }).submit(who, body, undefined);
    expect(order).toMatchObject({ status: "failed", errorCode: "all_venues_failed" });
    expect([...ledger.locks.values()][0]!.state).toBe("released");
  });

  it("answers the order, still routing, when the settlement's outcome is unknown: recovery finishes it", async () => {
    script = [(o) => fill(o, o.shares)];
    ledger.failNext.settle = new Error("connection reset");
    const order = await service().submit(who, body, undefined);
    expect(order.status).toBe("routing");
    expect(await store.fills(order.id)).toHaveLength(1);
  });

  it("answers the order, still pending, when the lock's outcome is unknown and the chain holds no lock", async () => {
    script = [];
    ledger.failNext.lock = new VaultTxError("unknown", "Unknown", "Vault.lock: outcome unknown");
    const order = await service().submit(who, body, undefined);
    expect(order.status).toBe("pending");
    expect(sent).toHaveLength(0);
  });
});

describe("recovery", () => {
  it("settles an order on its fills when the open orders it listed have moved on since: a lock is never released under stored fills", async () => {
    script = [(o) => fill(o, o.shares)];
    ledger.failNext.settle = new VaultTxError("unknown", "Unknown", "Vault.settle: outcome unknown");
    const svc = service();
    const order = await svc.submit(who, body, undefined);
    expect(order.status).toBe("routing");
    const child = order.legs[0]!;
    known.set(child.clientOrderId, { kind: "done", venueOrderId: `vo-${child.clientOrderId}`, fills: (await store.fills(order.id)).map((f) => ({ ...f, side: "buy" as const })) });
    // The pass listed the order while it was still locked; by the time it reaches it, the order has
    // routed, its fills are stored and its settlement's answer was lost.
    const listedWhileLocked = { ...order, status: "locked" as const, legs: [] };
    const listing: Store = Object.create(store, { ordersInStatus: { value: async () => [listedWhileLocked] } });
    await new Reconciler(svc, { store: listing, vault: ledger.vault(), venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }) }).pass(0);
    expect(ledger.locks.get(chainOrderId(order.id))?.state).toBe("settled");
    expect((await store.order(order.id))?.status).toBe("filled");
  });
});
