import { CompiledQuery, DefaultQueryExecutor } from "kysely";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { orderRecord, STORE_BACKENDS, type TestStoreDatabase } from "../../test/helpers/stores.ts";
import { AppError } from "../domain/errors.ts";
import type { Clock } from "../domain/types.ts";
import { KeyCache } from "../auth/key-cache.ts";
import { authenticate, type AuthDeps } from "../auth/authenticate.ts";
import { storeReplayCache } from "../auth/replay-cache.ts";
import { encryptSecret } from "../auth/secrets.ts";
import { sign } from "../auth/hmac.ts";
import vectors from "../../test/fixtures/hmac-signing.json" with { type: "json" };
import type { EventResolutionRecord, FillRecord, OrderRecord, RedemptionRecord, Store } from "./store.ts";

const BEYOND_DOUBLE = 2n ** 53n + 1n;
const INT64_MAX = 2n ** 63n - 1n;

class TestClock implements Clock {
  constructor(public ms = Date.parse("2025-03-01T12:00:00.000Z")) {}
  now(): number {
    return this.ms;
  }
  iso(): string {
    return new Date(this.ms).toISOString();
  }
}

let db: TestStoreDatabase;
let clock: TestClock;
const open: Store[] = [];

async function openStore(): Promise<Store> {
  const store = await db.open(clock);
  open.push(store);
  await store.migrate();
  return store;
}

async function closeStore(store: Store): Promise<void> {
  open.splice(open.indexOf(store), 1);
  await store.close();
}

async function seedAccount(store: Store, id = "acc_1") {
  return store.createAccount({
    id,
    email: `${id}@example.com`,
    address: "0x00000000000000000000000000000000000000aa",
    walletKeyEnc: "enc:wallet",
    passwordHash: null,
    fundedAt: null,
  });
}

function order(over: Partial<OrderRecord> = {}): OrderRecord {
  return orderRecord({ clientOrderId: "client-1", requestHash: "hash-1", eventId: "evt_election", amount: BEYOND_DOUBLE, createdAt: clock.iso(), updatedAt: clock.iso(), ...over });
}

interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  Filter?: string;
  Plans?: PlanNode[];
}

/**
 * How the database would read `query`: SQLite's plan, or PostgreSQL's plan nodes (the table's statistics gathered
 * first, as autovacuum does), each with the index it reads along and what it filters out of what it read.
 */
async function readsOf(backend: string, executor: DefaultQueryExecutor, query: CompiledQuery): Promise<string[]> {
  const explain = <R>(sql: string) => executor.executeQuery<R>(CompiledQuery.raw(`${sql} ${query.sql}`, [...query.parameters]));
  if (backend === "SQLite") return (await explain<{ detail: string }>("EXPLAIN QUERY PLAN")).rows.map((r) => r.detail);
  await executor.executeQuery(CompiledQuery.raw("ANALYZE orders"));
  const nodes = (n: PlanNode): string[] => [
    [n["Node Type"], n["Index Name"] && `using ${n["Index Name"]}`, n.Filter && `filtering ${n.Filter}`].filter(Boolean).join(" "),
    ...(n.Plans ?? []).flatMap(nodes),
  ];
  const [plan] = (await explain<{ "QUERY PLAN": [{ Plan: PlanNode }] }>("EXPLAIN (FORMAT JSON)")).rows;
  return nodes(plan!["QUERY PLAN"][0].Plan);
}

function fill(over: Partial<FillRecord> = {}): FillRecord {
  return {
    orderId: "ord_1",
    venue: "polymarket",
    venueOrderId: "v-1",
    tradeId: "t-1",
    clientOrderId: "client-1",
    price: 550_000n,
    shares: BEYOND_DOUBLE,
    fee: INT64_MAX,
    createdAt: clock.iso(),
    ...over,
  };
}

// One body for every backend: the same Kysely queries must give the same answers on each.
describe.each(STORE_BACKENDS)("$name store", (backend) => {
  beforeEach(async () => {
    db = await backend.create();
    clock = new TestClock();
  });

  afterEach(async () => {
    for (const store of open.splice(0)) await store.close();
    await db.drop();
  });

  describe("schema", () => {
    it("re-running migrations on an existing database keeps its data", async () => {
      const first = await openStore();
      await seedAccount(first);
      await first.migrate();
      await closeStore(first);

      const again = await openStore();
      expect((await again.accountById("acc_1"))?.email).toBe("acc_1@example.com");
    });

    it("keeps every record across a restart", async () => {
      const store = await openStore();
      await seedAccount(store);
      await store.insertApiKey({ apiKey: "ck_1", accountId: "acc_1", name: "bot", scopes: ["read"], secretEnc: "enc", ipAllowlist: null });
      await store.insertOrder(order());
      await store.insertFills([fill()]);
      expect(await store.rememberSignature("ck_1", "sig", clock.now() + 30_000)).toBe(true);
      await closeStore(store);

      const reopened = await openStore();
      expect(await reopened.apiKey("ck_1")).toMatchObject({ name: "bot" });
      expect(await reopened.order("ord_1")).toEqual(order());
      expect(await reopened.fills("ord_1")).toEqual([fill()]);
      expect(await reopened.rememberSignature("ck_1", "sig", clock.now() + 30_000)).toBe(false);
    });

    it("refuses an order for an account that does not exist", async () => {
      const store = await openStore();
      await expect(store.insertOrder(order({ accountId: "nobody" }))).rejects.toThrow(/foreign key/i);
    });
  });

  describe("round trips", () => {
    it("returns accounts as created, found by id and by email", async () => {
      const store = await openStore();
      const created = await seedAccount(store);
      expect(created.createdAt).toBe(clock.iso());
      expect(await store.accountById("acc_1")).toEqual(created);
      expect(await store.accountByEmail("acc_1@example.com")).toEqual(created);
      expect(await store.accountById("missing")).toBeUndefined();
      expect(await store.accountByEmail("missing@example.com")).toBeUndefined();
    });

    it("returns API keys with their scopes and allowlist", async () => {
      const store = await openStore();
      await seedAccount(store);
      const open = await store.insertApiKey({ apiKey: "ck_a", accountId: "acc_1", name: "a", scopes: ["read", "trade"], secretEnc: "s1", ipAllowlist: null });
      clock.ms += 1;
      const fenced = await store.insertApiKey({ apiKey: "ck_b", accountId: "acc_1", name: "b", scopes: ["read"], secretEnc: "s2", ipAllowlist: ["10.0.0.1", "::1"] });
      expect(open).toMatchObject({ lastUsedAt: null, revokedAt: null, createdAt: "2025-03-01T12:00:00.000Z" });
      expect(await store.apiKey("ck_b")).toEqual(fenced);
      expect(await store.listApiKeys("acc_1")).toEqual([open, fenced]);
      expect(await store.listApiKeys("acc_other")).toEqual([]);
    });

    it("keeps every integer column of orders and fills exact beyond 2^53, up to the largest 64-bit integer", async () => {
      const store = await openStore();
      await seedAccount(store);
      const big = order({
        amount: INT64_MAX,
        maxSlippage: BEYOND_DOUBLE + 4n,
        locked: BEYOND_DOUBLE,
        spent: BEYOND_DOUBLE - 2n,
        fees: 2n ** 60n + 7n,
        filledShares: BEYOND_DOUBLE + 2n,
      });
      expect((await store.insertOrder(big)).order).toEqual(big);
      expect(await store.order("ord_1")).toEqual(big);
      expect(await store.ordersInStatus(["pending"])).toEqual([big]);
      const f = fill({ price: BEYOND_DOUBLE + 6n, shares: INT64_MAX, fee: BEYOND_DOUBLE });
      await store.insertFills([f]);
      expect(await store.fills("ord_1")).toEqual([f]);
    });

    it("keeps a sell's shares asked, shares escrowed and proceeds exact, and a buy's at 0", async () => {
      const store = await openStore();
      await seedAccount(store);
      const buy = order({ id: "ord_buy", clientOrderId: null });
      const sell = order({ side: "sell", amount: 0n, shares: BEYOND_DOUBLE });
      await store.insertOrder(buy);
      await store.insertOrder(sell);
      await store.updateOrder("ord_1", ["pending"], { status: "locked", escrowed: BEYOND_DOUBLE, lockTx: "0xescrow" });
      await store.updateOrder("ord_1", ["locked"], { status: "routing" });
      const done = await store.updateOrder("ord_1", ["routing"], { status: "partially_filled", filledShares: 5_000_000n, proceeds: INT64_MAX, settleTx: "0xsettle" });
      expect(done).toMatchObject({ side: "sell", amount: 0n, shares: BEYOND_DOUBLE, escrowed: BEYOND_DOUBLE, filledShares: 5_000_000n, proceeds: INT64_MAX, spent: 0n });
      expect(await store.order("ord_buy")).toEqual(buy);
      expect(buy).toMatchObject({ shares: 0n, escrowed: 0n, proceeds: 0n });
    });

    it("finds an account's order by its client_order_id, and no other account's", async () => {
      const store = await openStore();
      await seedAccount(store);
      await seedAccount(store, "acc_2");
      const mine = order();
      await store.insertOrder(mine);
      expect(await store.orderByClientId("acc_1", "client-1")).toEqual(mine);
      expect(await store.orderByClientId("acc_2", "client-1")).toBeUndefined();
      expect(await store.orderByClientId("acc_1", "client-2")).toBeUndefined();
    });

    it("counts each venue's inventory of an outcome: buys' fills less finished sells' fills less open sells' child orders", async () => {
      const store = await openStore();
      await seedAccount(store);
      const leg = (venue: string, shares: bigint, id: string) => ({ venue, clientOrderId: `${id}-${venue}`, venueMarketId: "m", limitPrice: 400_000n, shares, round: 1, expiresAt: 0 });
      const at = (id: string, venue: string, shares: bigint) => fill({ orderId: id, venue, tradeId: `${id}-${venue}-t`, shares });
      // Two buys on two venues, one of them still routing: its stored fills are held already.
      await store.insertOrder(order({ id: "b1", clientOrderId: null, status: "filled" }));
      await store.insertOrder(order({ id: "b2", clientOrderId: null, status: "routing" }));
      await store.insertOrder(order({ id: "b3", clientOrderId: null, status: "filled", outcome: "NO" }));
      await store.insertOrder(order({ id: "b4", clientOrderId: null, status: "filled", eventId: "evt_other" }));
      // A finished sell counts what it sold; an open one every share its child orders may sell.
      await store.insertOrder(order({ id: "s1", clientOrderId: null, side: "sell", status: "partially_filled", legs: [leg("p", 9_000_000n, "s1")] }));
      await store.insertOrder(order({ id: "s2", clientOrderId: null, side: "sell", status: "routing", legs: [leg("p", 2_000_000n, "s2"), leg("k", 1_000_000n, "s2")] }));
      await store.insertFills([
        at("b1", "p", 20_000_000n),
        at("b1", "k", 5_000_000n),
        at("b2", "k", 3_000_000n),
        at("b3", "p", 7_000_000n),
        at("b4", "p", 7_000_000n),
        at("s1", "p", 4_000_000n),
        at("s2", "p", 1_000_000n),
      ]);
      expect(await store.venueInventory("evt_election", "YES")).toEqual(new Map([["p", 14_000_000n], ["k", 7_000_000n]]));
      expect(await store.venueInventory("evt_election", "NO")).toEqual(new Map([["p", 7_000_000n]]));
      expect(await store.venueInventory("evt_none", "YES")).toEqual(new Map());

      // A fill stored again counts once; the open sell finishes, and its fills count instead of its child orders;
      // a fill of a finished sell stored late counts at once.
      await store.insertFills([at("b1", "p", 20_000_000n)]);
      expect(await store.updateOrder("s2", ["routing"], { status: "partially_filled" })).toBeDefined();
      expect(await store.venueInventory("evt_election", "YES")).toEqual(new Map([["p", 15_000_000n], ["k", 8_000_000n]]));
      await store.insertFills([at("s2", "k", 500_000n)]);
      expect(await store.venueInventory("evt_election", "YES")).toEqual(new Map([["p", 15_000_000n], ["k", 7_500_000n]]));
      // A buy that moves on changes nothing: its fills counted when they were stored.
      expect(await store.updateOrder("b2", ["routing"], { status: "filled" })).toBeDefined();
      expect(await store.venueInventory("evt_election", "YES")).toEqual(new Map([["p", 15_000_000n], ["k", 7_500_000n]]));
      // Kept by the database: the same after a restart.
      await closeStore(store);
      expect(await (await openStore()).venueInventory("evt_election", "YES")).toEqual(new Map([["p", 15_000_000n], ["k", 7_500_000n]]));
    });

    it("keeps an order's child orders, with amounts beyond 2^53 exact", async () => {
      const store = await openStore();
      await seedAccount(store);
      await store.insertOrder(order());
      const legs = [
        { venue: "kalshi-sim", clientOrderId: "ord_1-kalshi-sim", venueMarketId: "KX-1", limitPrice: 620_000n, shares: 2n ** 60n, round: 1, expiresAt: 1_800_000_030_000 },
        { venue: "polymarket-sim", clientOrderId: "ord_1-polymarket-sim-2", venueMarketId: "0xabc", limitPrice: 1n, shares: 5_000_000n, round: 2, expiresAt: 1_800_000_031_000 },
      ];
      await store.updateOrder("ord_1", ["pending"], { status: "locked" });
      await store.updateOrder("ord_1", ["locked"], { status: "routing", legs });
      expect((await store.order("ord_1"))?.legs).toEqual(legs);
    });

    it("updates an order, stamps updatedAt, and finds it by status", async () => {
      const store = await openStore();
      await seedAccount(store);
      const placed = (await store.insertOrder(order())).order;
      clock.ms += 5_000;
      const updated = await store.updateOrder("ord_1", ["pending"], { status: "locked", locked: BEYOND_DOUBLE, lockTx: "0xlock", errorCode: null });
      expect(updated).toEqual({ ...placed, status: "locked", locked: BEYOND_DOUBLE, lockTx: "0xlock", updatedAt: clock.iso(), lockedAt: clock.iso() });
      expect(await store.order("ord_1")).toEqual(updated);
      expect((await store.ordersInStatus(["locked", "routing"])).map((o) => o.id)).toEqual(["ord_1"]);
      expect(await store.ordersInStatus(["pending"])).toEqual([]);
      expect(await store.ordersInStatus([])).toEqual([]);
      expect(await store.updateOrder("ord_missing", ["pending"], { status: "failed" })).toBeUndefined();
    });

    it("moves an order only from the states it may leave: a second writer finds it moved on and writes nothing", async () => {
      const store = await openStore();
      await seedAccount(store);
      await store.insertOrder(order());
      await store.updateOrder("ord_1", ["pending"], { status: "locked", locked: 5n });
      const racing = await Promise.all([
        store.updateOrder("ord_1", ["locked"], { status: "rejected", errorCode: "a" }),
        store.updateOrder("ord_1", ["locked"], { status: "failed", errorCode: "b" }),
      ]);
      expect(racing.filter((o) => o !== undefined)).toHaveLength(1);
      const settled = (await store.order("ord_1"))!;
      expect(["rejected", "failed"]).toContain(settled.status);
      // A terminal order is never moved again, backwards or sideways.
      expect(await store.updateOrder("ord_1", ["locked", "routing"], { status: "routing" })).toBeUndefined();
      expect(await store.order("ord_1")).toEqual(settled);
      // The store refuses a transition the state machine does not have, whatever the row holds.
      await expect(store.updateOrder("ord_1", ["filled"], { status: "pending" })).rejects.toThrow(/no transition/);
    });

    it("leases an order to one instance at a time: another takes it only once the lease ran out, and the holder's writes stop when it lost it", async () => {
      const store = await openStore();
      await seedAccount(store);
      const at = (s: number) => new Date(clock.ms + s * 1000).toISOString();
      await store.insertOrder(order(), { owner: "a", until: at(30) });
      expect(await store.claimOrder("ord_1", { owner: "b", until: at(60) }, at(10))).toBe(false);
      expect(await store.claimOrder("ord_1", { owner: "a", until: at(60) }, at(10))).toBe(true);
      await store.renewLeases(["ord_1"], { owner: "a", until: at(90) });
      expect(await store.claimOrder("ord_1", { owner: "b", until: at(120) }, at(80))).toBe(false);
      // The lease ran out: b takes the order, and a's next write finds it gone.
      expect(await store.claimOrder("ord_1", { owner: "b", until: at(120) }, at(91))).toBe(true);
      expect(await store.updateOrder("ord_1", ["pending"], { status: "locked" }, "a")).toBeUndefined();
      expect(await store.updateOrder("ord_1", ["pending"], { status: "locked" }, "b")).toMatchObject({ status: "locked" });
      await store.renewLeases(["ord_1"], { owner: "a", until: at(500) });
      expect(await store.claimOrder("ord_1", { owner: "c", until: at(200) }, at(121))).toBe(true);
      await store.releaseOrder("ord_1", "c");
      expect(await store.claimOrder("ord_1", { owner: "d", until: at(200) }, at(122))).toBe(true);
      // A finished order is nobody's to take.
      await store.updateOrder("ord_1", ["locked"], { status: "failed" });
      expect(await store.claimOrder("ord_1", { owner: "e", until: at(999) }, at(998))).toBe(false);
    });
  });

  describe("accounts", () => {
    it("records once an account was funded, and keeps it across a restart", async () => {
      const store = await openStore();
      const created = await seedAccount(store);
      expect(created.fundedAt).toBeNull();
      const funded = await store.markAccountFunded(created.id, "2026-11-22T10:00:00.000Z");
      expect(funded).toEqual({ ...created, fundedAt: "2026-11-22T10:00:00.000Z" });
      await closeStore(store);
      const again = await openStore();
      expect((await again.accountById(created.id))?.fundedAt).toBe("2026-11-22T10:00:00.000Z");
    });

    it("finds accounts by address whatever its case, each once, past one query's worth of addresses", async () => {
      const store = await openStore();
      const address = (i: number) => `0x${"Ab".repeat(17)}${i.toString(16).padStart(6, "0")}`;
      for (let i = 0; i < 1_200; i++) {
        await store.createAccount({ id: `acc_${i}`, email: `${i}@example.com`, address: address(i), walletKeyEnc: null, passwordHash: null, fundedAt: null });
      }
      const asked = [address(3).toLowerCase(), address(3).toUpperCase().replace("0X", "0x"), address(1_199), `0x${"cd".repeat(20)}`];
      for (let i = 100; i < 1_100; i++) asked.push(address(i));
      const found = await store.accountsByAddress(asked);
      expect(found.map((a) => a.id).sort()).toEqual(["acc_3", "acc_1199", ...Array.from({ length: 1_000 }, (_, i) => `acc_${i + 100}`)].sort());
      expect(found.find((a) => a.id === "acc_3")).toEqual(await store.accountById("acc_3"));
      expect(await store.accountsByAddress([])).toEqual([]);
    });
  });

  describe("idempotent orders", () => {
    it("a retried clientOrderId returns the stored order instead of a second one", async () => {
      const store = await openStore();
      await seedAccount(store);
      const first = await store.insertOrder(order());
      const retry = await store.insertOrder(order({ id: "ord_2", requestHash: "hash-other", amount: 5n }));
      expect(first).toEqual({ created: true, order: order() });
      expect(retry).toEqual({ created: false, order: order() });
      expect(await store.order("ord_2")).toBeUndefined();
    });

    it("orders without a clientOrderId, or from another account, never collide", async () => {
      const store = await openStore();
      await seedAccount(store, "acc_1");
      await seedAccount(store, "acc_2");
      expect((await store.insertOrder(order({ id: "a", clientOrderId: null }))).created).toBe(true);
      expect((await store.insertOrder(order({ id: "b", clientOrderId: null }))).created).toBe(true);
      expect((await store.insertOrder(order({ id: "c" }))).created).toBe(true);
      expect((await store.insertOrder(order({ id: "d", accountId: "acc_2" }))).created).toBe(true);
    });

    it("concurrent attempts from two connections create exactly one order", async () => {
      const a = await openStore();
      const b = await openStore();
      await seedAccount(a);
      const attempts = Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).insertOrder(order({ id: `ord_${i}` })));
      const results = await Promise.all(attempts);
      const created = results.filter((r) => r.created);
      expect(created).toHaveLength(1);
      const winner = created[0]!.order.id;
      expect(results.every((r) => r.order.id === winner)).toBe(true);
      const page = await a.listOrders("acc_1", { limit: 100, cursor: null });
      expect(page.data.map((o) => o.id)).toEqual([winner]);
    });

    it("reopens an order rejected 5xx before anything was locked, once, leased to the retry's instance; no order rejected otherwise", async () => {
      const store = await openStore();
      await seedAccount(store);
      const first = order();
      await store.insertOrder(first, { owner: "a", until: clock.iso() });
      await store.insertOrder(order({ id: "ord_2", clientOrderId: "client-2" }), { owner: "a", until: clock.iso() });
      await store.insertOrder(order({ id: "ord_3", clientOrderId: "client-3" }), { owner: "a", until: clock.iso() });
      await store.updateOrder("ord_1", ["pending"], { status: "rejected", errorCode: "chain_unavailable", errorMessage: "Nothing was locked", errorDetails: { at: 1 } });
      await store.updateOrder("ord_2", ["pending"], { status: "rejected", errorCode: "insufficient_funds", errorMessage: "short" });
      // Locked, then released: its chain order id is spent, so it is not run again.
      await store.updateOrder("ord_3", ["pending"], { status: "locked", locked: 5n, lockTx: "0xlock" });
      await store.updateOrder("ord_3", ["locked"], { status: "rejected", releaseTx: "0xrelease", errorCode: "venue_unavailable", errorMessage: "none quotes" });
      // The same, its lock's transaction not found (Vault.heldBy through a node behind): its release says it was locked.
      await store.insertOrder(order({ id: "ord_4", clientOrderId: "client-4" }), { owner: "a", until: clock.iso() });
      await store.updateOrder("ord_4", ["pending"], { status: "locked", locked: 5n, lockTx: null });
      await store.updateOrder("ord_4", ["locked"], { status: "rejected", releaseTx: "0xrelease", errorCode: "order_interrupted", errorMessage: "too late" });
      clock.ms += 1_000;
      const until = new Date(clock.ms + 30_000).toISOString();
      expect(await store.reopenOrder("ord_1", { owner: "b", until })).toEqual({ ...first, updatedAt: clock.iso() });
      expect(await store.reopenOrder("ord_1", { owner: "c", until })).toBeUndefined();
      expect(await store.updateOrder("ord_1", ["pending"], { status: "locked" }, "a")).toBeUndefined();
      expect(await store.updateOrder("ord_1", ["pending"], { status: "locked" }, "b")).toMatchObject({ status: "locked" });
      expect(await store.claimOrder("ord_1", { owner: "c", until }, clock.iso())).toBe(false);
      expect(await store.reopenOrder("ord_2", { owner: "b", until })).toBeUndefined();
      expect(await store.reopenOrder("ord_3", { owner: "b", until })).toBeUndefined();
      expect(await store.reopenOrder("ord_4", { owner: "b", until })).toBeUndefined();
    });

    it("dates a reopened order's lock, in the order and in the account's activity, when its retry took it, not when its first attempt was rejected", async () => {
      const store = await openStore();
      await seedAccount(store);
      await store.insertOrder(order(), { owner: "a", until: clock.iso() });
      // Recovery rejects an order whose lock never landed as nothing locked: locked 0, no lock_tx.
      await store.updateOrder("ord_1", ["pending"], { status: "rejected", locked: 0n, lockTx: null, errorCode: "order_interrupted", errorMessage: "nothing was locked" });
      clock.ms += 3_600_000;
      await store.reopenOrder("ord_1", { owner: "b", until: new Date(clock.ms + 30_000).toISOString() });
      clock.ms += 1_000;
      const lockedAt = clock.iso();
      expect(await store.updateOrder("ord_1", ["pending"], { status: "locked", locked: 5n, lockTx: "0xlock" }, "b")).toMatchObject({ lockedAt });
      expect((await store.activity("acc_1", { limit: 50, cursor: null })).data.filter((e) => e.type === "lock")).toMatchObject([{ reference: "ord_1", createdAt: lockedAt }]);
    });
  });

  describe("listing orders", () => {
    it("walks every order exactly once, newest first, across pages", async () => {
      const store = await openStore();
      await seedAccount(store, "acc_1");
      await seedAccount(store, "acc_2");
      // Several orders share a timestamp, and they are inserted out of order, so the id tie-break matters.
      const expected: OrderRecord[] = [];
      for (let i = 0; i < 23; i++) {
        const createdAt = new Date(clock.ms + ((i * 7) % 9) * 1000).toISOString();
        expected.push(order({ id: `ord_${String((i * 5) % 23).padStart(2, "0")}`, clientOrderId: null, createdAt }));
      }
      for (const o of expected) await store.insertOrder(o);
      await store.insertOrder(order({ id: "other", accountId: "acc_2" }));
      expected.sort((x, y) => (x.createdAt === y.createdAt ? (x.id < y.id ? 1 : -1) : x.createdAt < y.createdAt ? 1 : -1));

      for (const limit of [1, 5, 23, 50]) {
        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page = await store.listOrders("acc_1", { limit, cursor });
          expect(page.data.length).toBeLessThanOrEqual(limit);
          expect(page.data.length).toBeGreaterThan(0);
          seen.push(...page.data.map((o) => o.id));
          cursor = page.nextCursor;
          pages++;
        } while (cursor !== null);
        expect(seen).toEqual(expected.map((o) => o.id));
        expect(pages).toBe(Math.ceil(23 / limit));
      }
    });

    it("an account without orders gets an empty last page", async () => {
      const store = await openStore();
      expect(await store.listOrders("acc_1", { limit: 10, cursor: null })).toEqual({ data: [], nextCursor: null });
    });

    it("refuses a cursor it did not issue", async () => {
      const store = await openStore();
      // The last two are a cursor's shape holding no time this server wrote: a page after them would be a guess.
      const made = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
      for (const cursor of ["not-a-cursor", made({ a: 1 }), made(["x", "ord_1"]), made(["2026-02-30T00:00:00.000Z", "ord_1"])]) {
        const failure = await store.listOrders("acc_1", { limit: 10, cursor }).catch((e: unknown) => e);
        expect(failure).toBeInstanceOf(AppError);
        expect(failure).toMatchObject({ code: "invalid_request" });
      }
    });
  });

  describe("the stranded-hold sweep's orders", () => {
    it.each(["rejected", "failed"] as const)("lists the %s orders holding a lock or escrow with no release, oldest first, read along an index of theirs alone however many orders were closed", async (status) => {
      const store = await openStore();
      await seedAccount(store);
      const at = (second: number) => new Date(clock.ms + second * 1000).toISOString();
      const closed = (id: string, over: Partial<OrderRecord> = {}) => store.insertOrder(order({ id, clientOrderId: null, status, createdAt: at(0), ...over }));
      await Promise.all(Array.from({ length: 1_000 }, (_, i) => closed(`ord_refused_${i}`)));
      await closed("ord_released", { locked: 10_000_000n, lockTx: "0xl", releaseTx: "0xr" });
      await store.insertOrder(order({ id: "ord_filled", clientOrderId: null, status: "filled", locked: 10_000_000n, lockTx: "0xl", settleTx: "0xs" }));
      await store.insertOrder(order({ id: "ord_other", clientOrderId: null, status: status === "rejected" ? "failed" : "rejected", locked: 10_000_000n, lockTx: "0xl" }));
      await closed("ord_held_2", { locked: 10_000_000n, lockTx: "0xl", createdAt: at(2) });
      await closed("ord_held_1", { side: "sell", escrowed: 5_000_000n, lockTx: "0xe", createdAt: at(1) });

      const run = vi.spyOn(DefaultQueryExecutor.prototype, "executeQuery");
      expect((await store.closedHolding(status)).map((o) => o.id)).toEqual(["ord_held_1", "ord_held_2"]);
      const [query] = run.mock.calls.at(-1)!;
      const executor = run.mock.contexts.at(-1) as DefaultQueryExecutor;
      run.mockRestore();
      // Along orders_status_idx (or a scan), every order ever closed so was read at every sweep, and sorted.
      expect(await readsOf(backend.name, executor, query)).toEqual(
        backend.name === "SQLite" ? [`SEARCH orders USING INDEX orders_${status}_holding_idx (status=?)`] : [`Index Scan using orders_${status}_holding_idx`],
      );
    });
  });

  it.each(["filled", "partially_filled"] as const)("lists the %s orders recorded with no settlement nor release, oldest first, read along an index of theirs alone however many orders were settled", async (status) => {
    const store = await openStore();
    await seedAccount(store);
    const at = (second: number) => new Date(clock.ms + second * 1000).toISOString();
    const settled = (id: string, over: Partial<OrderRecord> = {}) => store.insertOrder(order({ id, clientOrderId: null, status, locked: 10_000_000n, lockTx: "0xl", settleTx: "0xs", createdAt: at(0), ...over }));
    await Promise.all(Array.from({ length: 1_000 }, (_, i) => settled(`ord_settled_${i}`)));
    await settled("ord_released", { settleTx: null, releaseTx: "0xr" });
    await store.insertOrder(order({ id: "ord_rejected", clientOrderId: null, status: "rejected" }));
    await settled("ord_resettling_2", { settleTx: null, createdAt: at(2) });
    await settled("ord_resettling_1", { side: "sell", locked: 0n, escrowed: 5_000_000n, settleTx: null, createdAt: at(1) });
    // One whose lock a second reorganisation removed, recorded holding none: nothing left to settle.
    await settled("ord_gone", { locked: 0n, lockTx: null, settleTx: null, errorCode: "chain_unavailable" });

    const run = vi.spyOn(DefaultQueryExecutor.prototype, "executeQuery");
    expect((await store.resettling(status)).map((o) => o.id)).toEqual(["ord_resettling_1", "ord_resettling_2"]);
    const [query] = run.mock.calls.at(-1)!;
    const executor = run.mock.contexts.at(-1) as DefaultQueryExecutor;
    run.mockRestore();
    expect(await readsOf(backend.name, executor, query)).toEqual(
      backend.name === "SQLite"
        ? [`SEARCH orders USING INDEX orders_${status}_resettling_idx (status=?)`]
        : [`Index Scan using orders_${status}_resettling_idx filtering ((locked > '0'::bigint) OR (escrowed > '0'::bigint))`],
    );
  });

  describe("API keys", () => {
    it("revocation happens once and shows on the key", async () => {
      const store = await openStore();
      await seedAccount(store);
      await store.insertApiKey({ apiKey: "ck_1", accountId: "acc_1", name: "bot", scopes: ["trade"], secretEnc: "enc", ipAllowlist: null });
      expect(await store.revokeApiKey("ck_1", "2025-03-02T00:00:00.000Z")).toBe(true);
      expect(await store.revokeApiKey("ck_1", "2025-03-03T00:00:00.000Z")).toBe(false);
      expect(await store.revokeApiKey("ck_unknown", "2025-03-03T00:00:00.000Z")).toBe(false);
      expect((await store.apiKey("ck_1"))?.revokedAt).toBe("2025-03-02T00:00:00.000Z");
    });

    it("a revocation by another connection (the CLI, another instance) moves apiKeysVersion, so a key cache refuses the key", async () => {
      const [server, other] = [await openStore(), await openStore()];
      await seedAccount(server);
      await server.insertApiKey({ apiKey: "ck_1", accountId: "acc_1", name: "bot", scopes: ["read"], secretEnc: "enc", ipAllowlist: null });
      // PostgreSQL's is unknown until its notification connection listens, which the first read opens.
      server.apiKeysVersion();
      const before = await vi.waitFor(() => server.apiKeysVersion() ?? expect.fail("not listening yet"), { timeout: 5_000 });
      expect(server.apiKeysVersion()).toBe(before);
      const keys = new KeyCache(server, Buffer.alloc(32));
      expect((await keys.record("ck_1"))?.revokedAt).toBeNull();
      expect(keys.size).toBe(1);
      await other.revokeApiKey("ck_1", "2025-03-02T00:00:00.000Z");
      // SQLite's is read once per turn of the event loop; PostgreSQL delivers the notification as the
      // revocation commits, to another connection: a moment later.
      await vi.waitFor(() => expect(server.apiKeysVersion()).not.toBe(before), { timeout: 5_000, interval: 1 });
      expect((await keys.record("ck_1"))?.revokedAt).toBe("2025-03-02T00:00:00.000Z");
      const after = server.apiKeysVersion();
      await server.revokeApiKey("ck_1", "2025-03-03T00:00:00.000Z");
      expect(server.apiKeysVersion()).not.toBe(after);
    });

    it("a signed request with a key another instance has just revoked is refused, before the revocation's notification arrives", async () => {
      const [server, other] = [await openStore(), await openStore()];
      await seedAccount(server);
      const master = Buffer.alloc(32);
      const post = vectors.cases.find((c) => c.name === "post-order")!;
      await server.insertApiKey({ apiKey: "ck_1", accountId: "acc_1", name: "bot", scopes: ["read", "trade"], secretEnc: encryptSecret(master, vectors.secret), ipAllowlist: null });
      server.apiKeysVersion();
      await vi.waitFor(() => server.apiKeysVersion() ?? expect.fail("not listening yet"), { timeout: 5_000 });
      const deps: AuthDeps = { store: server, keys: new KeyCache(server, master), clock: { now: () => Number(post.timestamp) * 1000 }, replay: storeReplayCache(server) };
      const signed = (body: string) =>
        authenticate(
          {
            method: post.method,
            url: post.path,
            rawBody: Buffer.from(body),
            ip: "127.0.0.1",
            headers: { "x-api-key": "ck_1", "x-timestamp": post.timestamp, "x-signature": sign(vectors.secret, post.timestamp, post.method, post.path, body) },
          },
          { scope: "trade", signed: true },
          deps,
        );
      expect(await signed(post.body)).toMatchObject({ apiKey: "ck_1" });
      await other.revokeApiKey("ck_1", "2025-03-02T00:00:00.000Z");
      await expect(Promise.resolve().then(() => signed(`${post.body} `))).rejects.toMatchObject({ code: "key_revoked" });
    });

    it("touch records the latest use and never moves it backwards", async () => {
      const store = await openStore();
      await seedAccount(store);
      await store.insertApiKey({ apiKey: "ck_1", accountId: "acc_1", name: "bot", scopes: ["read"], secretEnc: "enc", ipAllowlist: null });
      await store.touchApiKey("ck_1", "2025-03-01T12:00:05.000Z");
      expect((await store.apiKey("ck_1"))?.lastUsedAt).toBe("2025-03-01T12:00:05.000Z");
      await store.touchApiKey("ck_1", "2025-03-01T12:00:01.000Z");
      expect((await store.apiKey("ck_1"))?.lastUsedAt).toBe("2025-03-01T12:00:05.000Z");
      await store.touchApiKey("ck_missing", "2025-03-01T12:00:09.000Z");
      expect(await store.apiKey("ck_missing")).toBeUndefined();
    });
  });

  describe("replay memory", () => {
    it("accepts a signature once per key until it expires", async () => {
      const store = await openStore();
      const expires = clock.now() + 30_000;
      expect(await store.rememberSignature("ck_1", "sig-a", expires)).toBe(true);
      expect(await store.rememberSignature("ck_1", "sig-a", expires)).toBe(false);
      expect(await store.rememberSignature("ck_1", "sig-b", expires)).toBe(true);
      expect(await store.rememberSignature("ck_2", "sig-a", expires)).toBe(true);
      expect([await store.signatureSeen("ck_1", "sig-a"), await store.signatureSeen("ck_1", "sig-c"), await store.signatureSeen("ck_3", "sig-a")]).toEqual([true, false, false]);

      clock.ms = expires;
      expect(await store.signatureSeen("ck_1", "sig-a")).toBe(false);
      expect(await store.rememberSignature("ck_1", "sig-a", clock.now() + 30_000)).toBe(true);
      expect(await store.rememberSignature("ck_1", "sig-a", clock.now() + 30_000)).toBe(false);
    });

    it("purge forgets signatures that expire before the given time, and only those", async () => {
      const store = await openStore();
      await store.rememberSignature("ck_1", "early", clock.now() + 10_000);
      await store.rememberSignature("ck_1", "late", clock.now() + 60_000);
      await store.purgeSignatures(clock.now() + 20_000);
      expect(await store.rememberSignature("ck_1", "early", clock.now() + 10_000)).toBe(true);
      expect(await store.rememberSignature("ck_1", "late", clock.now() + 60_000)).toBe(false);
    });
  });

  describe("chain records", () => {
    const deployment = { usdc: "0xu", vault: "0xv1", sot: "0xs", block: INT64_MAX, build: "0xb" };
    const until = (ms: number) => new Date(clock.now() + ms).toISOString();

    it("one claim at a time deploys on a chain; a claim run out is taken over and its late record refused", async () => {
      const store = await openStore();
      expect(await store.chainDeployment(1)).toEqual({ deployment: undefined, claim: undefined });
      expect(await store.claimChainDeployment(1, null, { owner: "a", until: until(60_000) }, clock.iso())).toBe(true);
      expect(await store.claimChainDeployment(1, null, { owner: "b", until: until(60_000) }, clock.iso())).toBe(false);
      expect(await store.chainDeployment(1)).toEqual({ deployment: undefined, claim: { owner: "a", until: until(60_000) } });
      // Another chain is another row.
      expect(await store.claimChainDeployment(2, null, { owner: "b", until: until(60_000) }, clock.iso())).toBe(true);

      clock.ms += 61_000;
      expect(await store.claimChainDeployment(1, null, { owner: "b", until: until(60_000) }, clock.iso())).toBe(true);
      expect(await store.finishChainDeployment(1, "a", deployment)).toBe(false);
      expect(await store.finishChainDeployment(1, "b", deployment)).toBe(true);
      expect(await store.chainDeployment(1)).toEqual({ deployment, claim: undefined });
      // Recorded: nobody claims a chain with nothing to replace any more.
      expect(await store.claimChainDeployment(1, null, { owner: "c", until: until(60_000) }, clock.iso())).toBe(false);
    });

    it("a recorded deployment is replaced under a claim naming it, and a claim given up leaves it as it was", async () => {
      const store = await openStore();
      await store.claimChainDeployment(1, null, { owner: "a", until: until(60_000) }, clock.iso());
      await store.finishChainDeployment(1, "a", deployment);
      expect(await store.claimChainDeployment(1, "0xother", { owner: "b", until: until(60_000) }, clock.iso())).toBe(false);
      expect(await store.claimChainDeployment(1, "0xv1", { owner: "b", until: until(60_000) }, clock.iso())).toBe(true);
      expect(await store.claimChainDeployment(1, "0xv1", { owner: "c", until: until(60_000) }, clock.iso())).toBe(false);
      expect(await store.finishChainDeployment(1, "b")).toBe(true);
      expect(await store.chainDeployment(1)).toEqual({ deployment, claim: undefined });
      expect(await store.claimChainDeployment(1, "0xv1", { owner: "c", until: until(60_000) }, clock.iso())).toBe(true);
      expect(await store.finishChainDeployment(1, "c", { ...deployment, vault: "0xv2", block: 7n })).toBe(true);
      expect((await store.chainDeployment(1)).deployment).toEqual({ ...deployment, vault: "0xv2", block: 7n });
    });

    it("nonces are reserved from the floor or past the last reservation, whichever is higher, per chain and operator", async () => {
      const store = await openStore();
      const key = { chainId: 31337, genesis: "0xg", operator: "0xop" };
      expect(await store.noncesReserved(key)).toBeUndefined();
      expect(await store.reserveNonces(key, 5, 3, clock.iso())).toBe(5);
      expect(await store.reserveNonces(key, 0, 2, clock.iso())).toBe(8);
      clock.ms += 1_000;
      expect(await store.reserveNonces(key, 20, 1, clock.iso())).toBe(20);
      expect(await store.noncesReserved(key)).toEqual({ next: 21, at: clock.iso() });
      expect(await store.reserveNonces({ ...key, genesis: "0xother" }, 0, 1, clock.iso())).toBe(0);
      expect(await store.reserveNonces({ ...key, operator: "0xother" }, 0, 1, clock.iso())).toBe(0);
    });

    it("reservations from several connections at once never overlap", async () => {
      const stores = [await openStore(), await openStore(), await openStore()];
      const key = { chainId: 1, genesis: "0xg", operator: "0xop" };
      const starts = await Promise.all(Array.from({ length: 60 }, (_, i) => stores[i % 3]!.reserveNonces(key, 0, 1 + (i % 4), clock.iso())));
      const taken = starts.flatMap((start, i) => Array.from({ length: 1 + (i % 4) }, (_, k) => start + k)).sort((a, b) => a - b);
      expect(taken).toEqual(Array.from({ length: taken.length }, (_, i) => i));
    });
  });

  describe("child order expiries", () => {
    const content = { venue: "opinion-sim", venueMarketId: "1207", outcome: "YES", side: "buy", limitPrice: 550_000n, shares: 5_000_000n } as const;
    const at = () => clock.iso();

    it("a content holds each expiry second once: the next free second from the one asked, kept across a restart", async () => {
      let store = await openStore();
      expect(await store.reserveChildExpiry(content, "c1", 1_000, at())).toBe(1_000);
      expect(await store.reserveChildExpiry(content, "c2", 1_000, at())).toBe(1_001);
      expect(await store.reserveChildExpiry(content, "c3", 999, at())).toBe(999);
      // Any difference in what the venue lists tells two children apart: each has its own seconds.
      for (const other of [{ venue: "x" }, { venueMarketId: "x" }, { outcome: "NO" }, { side: "sell" }, { limitPrice: 551_000n }, { shares: 5_010_000n }] as const) {
        expect(await store.reserveChildExpiry({ ...content, ...other }, "c4", 1_000, at())).toBe(1_000);
      }
      await closeStore(store);
      store = await openStore();
      // 999, 1000 and 1001 are held: a clock set back, or another instance, still gets a second of its own.
      expect(await store.reserveChildExpiry(content, "c5", 999, at())).toBe(1_002);
      expect(await store.reserveChildExpiry(content, "c6", 1_010, at())).toBe(1_010);
      expect(await store.reserveChildExpiry(content, "c7", 1_003, at())).toBe(1_003);
    });

    it("reservations from several connections at once never share a second", async () => {
      const stores = [await openStore(), await openStore(), await openStore()];
      const seconds = await Promise.all(Array.from({ length: 60 }, (_, i) => stores[i % 3]!.reserveChildExpiry(content, `c${i}`, 1_000, at())));
      expect(seconds.sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => 1_000 + i));
    });
  });

  describe("fills", () => {
    it("a fill reported twice by a venue is stored once, with its first values", async () => {
      const store = await openStore();
      await seedAccount(store);
      await store.insertOrder(order());
      const first = [fill({ tradeId: "t-1" }), fill({ tradeId: "t-2" })];
      await store.insertFills(first);
      await store.insertFills([fill({ tradeId: "t-2", shares: 1n }), fill({ tradeId: "t-3" }), fill({ tradeId: "t-1", venue: "kalshi" })]);
      await store.insertFills([]);
      const stored = await store.fills("ord_1");
      expect(stored).toHaveLength(4);
      expect(stored.find((f) => f.tradeId === "t-2" && f.venue === "polymarket")?.shares).toBe(BEYOND_DOUBLE);
      expect(await store.fills("ord_other")).toEqual([]);
    });

    it("stores both sides of a venue's self-trade, one trade id for two of crossfill's child orders, and counts both into the inventory", async () => {
      const store = await openStore();
      await seedAccount(store);
      await store.insertOrder(order({ side: "sell", status: "filled" }));
      await store.insertOrder(order({ id: "ord_2", clientOrderId: "client-2", requestHash: "hash-2", status: "filled" }));
      // One Opinion trade matched a resting child order of the sell ord_1 with a child order of the buy ord_2.
      const sides = [fill({ venue: "opinion", tradeId: "t-self", shares: 3_000_000n }), fill({ orderId: "ord_2", venue: "opinion", tradeId: "t-self", clientOrderId: "client-2", shares: 3_000_000n })];
      await store.insertFills(sides);
      await store.insertFills(sides);
      expect(await store.fills("ord_1")).toEqual([sides[0]]);
      expect(await store.fills("ord_2")).toEqual([sides[1]]);
      // The shares the buy took from the sell never left the operator's account on the venue.
      expect(await store.venueInventory("evt_election", "YES")).toEqual(new Map([["opinion", 0n]]));
    });
  });
  describe("resolutions and redemptions", () => {
    /** A pending redemption of acc_1's YES (token 7) in evt_1; a winning one pays its shares. */
    const r = (key: string, shares: bigint, payout = shares): RedemptionRecord => ({
      key,
      eventId: "evt_1",
      accountId: "acc_1",
      address: "0x00000000000000000000000000000000000000aa",
      outcome: "YES",
      tokenId: "7",
      shares,
      payout,
      status: "pending",
      txHash: null,
      createdAt: clock.iso(),
      updatedAt: clock.iso(),
    });
    const decided = (over: Partial<EventResolutionRecord> = {}): EventResolutionRecord => ({
      eventId: "evt_1",
      status: "disputed",
      outcome: null,
      decidedBy: "venues",
      venueReports: { polymarket: "YES", kalshi: "NO" },
      decidedAt: clock.iso(),
      ...over,
    });

    it("keeps the venues' first decision, lets an operator decide a disputed event once, and never decides a resolved one again", async () => {
      const store = await openStore();
      expect(await store.decideEvent(decided())).toEqual(decided());
      expect(await store.decideEvent(decided({ status: "resolved", outcome: "YES", venueReports: { polymarket: "YES", kalshi: "YES" } }))).toEqual(decided());
      const operator = decided({ status: "resolved", outcome: "NO", decidedBy: "operator" });
      expect(await store.decideEvent(operator)).toEqual(operator);
      expect(await store.decideEvent(decided({ status: "resolved", outcome: "YES", decidedBy: "operator" }))).toEqual(operator);
      expect(await store.eventResolutions()).toEqual([operator]);
    });

    it("stores each redemption key once, lists the pending ones and records the transaction that made them", async () => {
      const store = await openStore();
      await seedAccount(store);
      await store.insertRedemptions([r("0x01", BEYOND_DOUBLE), r("0x02", 5n), { ...r("0x03", 4n), eventId: "evt_2" }]);
      await store.insertRedemptions([r("0x01", 1n)]);
      expect((await store.redemptions({ status: "pending", eventId: "evt_1" })).map((x) => [x.key, x.shares])).toEqual([["0x01", BEYOND_DOUBLE], ["0x02", 5n]]);
      await store.markRedeemed("0x01", { shares: BEYOND_DOUBLE, payout: BEYOND_DOUBLE, txHash: "0xabc" }, clock.iso());
      expect((await store.redemptions({ status: "pending" })).map((x) => x.key)).toEqual(["0x02", "0x03"]);
      expect((await store.redemptions({ eventId: "evt_1" })).map((x) => [x.key, x.status, x.txHash])).toEqual([["0x01", "redeemed", "0xabc"], ["0x02", "pending", null]]);
      await store.markRedeemed("0x01", { shares: 1n, payout: 1n, txHash: "0xdef" }, clock.iso());
      expect((await store.redemptions({ eventId: "evt_1" })).map((x) => [x.key, x.status, x.txHash, x.shares])).toEqual([["0x01", "redeemed", "0xabc", BEYOND_DOUBLE], ["0x02", "pending", null, 5n]]);
    });

    it("stores the redemptions of an event with thousands of holders in one call, beyond a statement's parameter limit", async () => {
      const store = await openStore();
      await seedAccount(store);
      // 6,000 rows of 12 columns: past SQLite's 32,766 parameters and PostgreSQL's 65,535 in one statement.
      const many = Array.from({ length: 6_000 }, (_, i) => r(`0x${i.toString(16).padStart(4, "0")}`, BigInt(i + 1)));
      await store.insertRedemptions(many);
      expect((await store.redemptions({ status: "pending" })).length).toBe(6_000);
    });

    it("sets a pending redemption to the shares held now, and leaves a redeemed one as the chain made it", async () => {
      const store = await openStore();
      await seedAccount(store);
      await store.insertRedemptions([r("0x01", 10n), r("0x02", 8n, 0n), r("0x03", 5n)]);
      await store.replanRedemption("0x01", 6n, 6n, clock.iso());
      await store.replanRedemption("0x02", 3n, 0n, clock.iso());
      // Planned for 5, made on chain for 7 (the holder's shares when it was sent again): the store records the chain's.
      await store.markRedeemed("0x03", { shares: 7n, payout: 7n, txHash: "0xabc" }, clock.iso());
      await store.replanRedemption("0x03", 2n, 2n, clock.iso());
      expect((await store.redemptions()).map((x) => [x.key, x.status, x.shares, x.payout])).toEqual([
        ["0x01", "pending", 6n, 6n],
        ["0x02", "pending", 3n, 0n],
        ["0x03", "redeemed", 7n, 7n],
      ]);
    });

    it("names the accounts whose orders on an event filled as its holders", async () => {
      const store = await openStore();
      await seedAccount(store);
      await seedAccount(store, "acc_2");
      await store.insertOrder(order({ eventId: "evt_1", filledShares: 10n }));
      await store.insertOrder(order({ id: "ord_2", accountId: "acc_2", eventId: "evt_1", filledShares: 0n }));
      await store.insertOrder(order({ id: "ord_3", eventId: "evt_1", filledShares: 3n }));
      expect(await store.holders("evt_1")).toEqual([{ accountId: "acc_1", address: "0x00000000000000000000000000000000000000aa" }]);
      expect(await store.holders("evt_other")).toEqual([]);
    });

    it("names the venues any order on an event sent a child order to, filled or not", async () => {
      const store = await openStore();
      await seedAccount(store);
      const leg = (venue: string) => ({ venue, clientOrderId: `c-${venue}`, venueMarketId: "m", limitPrice: 500_000n, shares: 1n, round: 1, expiresAt: 0 });
      await store.insertOrder(order({ eventId: "evt_1", status: "rejected", legs: [leg("opinion-sim"), leg("kalshi-sim")] }));
      await store.insertOrder(order({ id: "ord_2", clientOrderId: "client-2", eventId: "evt_1", legs: [leg("kalshi-sim")] }));
      await store.insertOrder(order({ id: "ord_3", clientOrderId: "client-3", eventId: "evt_2", legs: [leg("limitless-sim")] }));
      expect(await store.childOrderVenues("evt_1")).toEqual(["kalshi-sim", "opinion-sim"]);
      expect(await store.childOrderVenues("evt_other")).toEqual([]);
    });
  });

  describe("position books", () => {
    const finish = (store: Store, id: string, patch: Partial<OrderRecord> & { status: "filled" | "partially_filled" }) => store.updateOrder(id, ["routing"], patch);
    const routing = (id: string, over: Partial<OrderRecord> = {}) => order({ id, clientOrderId: id, eventId: "evt_1", status: "routing", sotTokenId: "7", ...over });
    const booked = async (store: Store, accountId = "acc_1") => (await store.positions(accountId)).map((p) => [p.eventId, p.outcome, p.sotTokenId, p.book, p.exits]);

    it("books each position as its orders finish: a buy at its cost, a sell at the average cost of what was held", async () => {
      const store = await openStore();
      await seedAccount(store);
      await seedAccount(store, "acc_2");
      for (const o of [routing("b1"), routing("b2"), routing("s1", { side: "sell" }), routing("n1", { outcome: "NO", sotTokenId: "8" }), routing("x1", { accountId: "acc_2" })]) await store.insertOrder(o);
      await finish(store, "b1", { status: "filled", filledShares: 10_000_000n, spent: 4_000_000n });
      expect(await booked(store)).toEqual([["evt_1", "YES", "7", { shares: 10_000_000n, cost: 4_000_000n, realized: 0n }, 0n]]);
      await finish(store, "b2", { status: "partially_filled", filledShares: 10_000_000n, spent: 6_000_000n });
      await finish(store, "s1", { status: "filled", filledShares: 5_000_000n, proceeds: 3_000_000n });
      // 5 of 20 shares that cost 10 USDC: 2.5 USDC of cost off, 0.5 USDC realized.
      expect(await booked(store)).toEqual([["evt_1", "YES", "7", { shares: 15_000_000n, cost: 7_500_000n, realized: 500_000n }, 1n]]);
      // Nothing filled, or finished already: no move.
      await finish(store, "n1", { status: "partially_filled", filledShares: 0n });
      expect(await finish(store, "b1", { status: "filled", filledShares: 10_000_000n, spent: 4_000_000n })).toBeUndefined();
      await store.updateOrder("x1", ["routing"], { status: "failed" });
      expect(await booked(store)).toEqual([["evt_1", "YES", "7", { shares: 15_000_000n, cost: 7_500_000n, realized: 500_000n }, 1n]]);
      expect(await store.positions("acc_2")).toEqual([]);
      expect((await store.positions()).map((p) => p.accountId)).toEqual(["acc_1"]);
    });

    it("takes the exact share of a cost too large for a 64-bit product", async () => {
      const store = await openStore();
      await seedAccount(store);
      await store.insertOrder(routing("b1"));
      await store.insertOrder(routing("s1", { side: "sell" }));
      await finish(store, "b1", { status: "filled", filledShares: 3n * 2n ** 60n, spent: INT64_MAX });
      await finish(store, "s1", { status: "filled", filledShares: 2n ** 60n, proceeds: 0n });
      const removed = (INT64_MAX + 2n) / 3n;
      expect(await booked(store)).toEqual([["evt_1", "YES", "7", { shares: 2n ** 61n, cost: INT64_MAX - removed, realized: -removed }, 1n]]);
    });

    it("books the shares the orders leave when a sell finishes before the buy it sold, as a buy recovery finished late does", async () => {
      const store = await openStore();
      await seedAccount(store);
      for (const o of [routing("b1"), routing("s1", { side: "sell" })]) await store.insertOrder(o);
      await finish(store, "s1", { status: "filled", filledShares: 4_000_000n, proceeds: 3_000_000n });
      expect(await booked(store)).toEqual([["evt_1", "YES", "7", { shares: -4_000_000n, cost: 0n, realized: 3_000_000n }, 1n]]);
      await finish(store, "b1", { status: "filled", filledShares: 10_000_000n, spent: 5_000_000n });
      // The buy's 4 shares the sell took cost 2 USDC: 1 USDC realized; the 6 left cost 3.
      expect(await booked(store)).toEqual([["evt_1", "YES", "7", { shares: 6_000_000n, cost: 3_000_000n, realized: 1_000_000n }, 1n]]);
    });

    it("folds a position's book again without a settled order whose lock or escrow went back whole, once however often its release is recorded, or is no longer on the chain", async () => {
      const store = await openStore();
      await seedAccount(store);
      for (const o of [routing("b1", { locked: 10_000_000n }), routing("b2", { locked: 10_000_000n }), routing("s1", { side: "sell", escrowed: 5_000_000n })]) await store.insertOrder(o);
      await finish(store, "b1", { status: "filled", filledShares: 10_000_000n, spent: 4_000_000n });
      await finish(store, "b2", { status: "partially_filled", filledShares: 10_000_000n, spent: 6_000_000n });
      await finish(store, "s1", { status: "filled", filledShares: 5_000_000n, proceeds: 3_000_000n });
      // b2's settlement a reorganisation removed, its lock released whole: the book is b1's and s1's, 5 of 10 shares that cost 4 USDC sold for 3.
      const released = { settleTx: null, releaseTx: "0xr", errorCode: "chain_unavailable" } as const;
      expect(await store.recordUnsettled("b2", "partially_filled", released)).toMatchObject({ status: "partially_filled", filledShares: 10_000_000n, releaseTx: "0xr" });
      const bought = [["evt_1", "YES", "7", { shares: 5_000_000n, cost: 2_000_000n, realized: 1_000_000n }, 1n]];
      expect(await booked(store)).toEqual(bought);
      // A second sweep's record finds its release recorded: nothing written, the book moved once.
      expect(await store.recordUnsettled("b2", "partially_filled", { ...released, releaseTx: "0xr2" })).toBeUndefined();
      expect(await booked(store)).toEqual(bought);
      // s1's escrow a second reorganisation removed, recorded holding none: the book holds b1's alone.
      await store.recordUnsettled("s1", "filled", { settleTx: null, escrowed: 0n, lockTx: null, errorCode: "chain_unavailable" });
      expect(await booked(store)).toEqual([["evt_1", "YES", "7", { shares: 10_000_000n, cost: 4_000_000n, realized: 0n }, 0n]]);
    });

    it("takes a redemption's shares off once, for its payout, when the chain made it", async () => {
      const store = await openStore();
      await seedAccount(store);
      await store.insertOrder(routing("b1"));
      await finish(store, "b1", { status: "filled", filledShares: 10_000_000n, spent: 4_500_000n });
      const redemption: RedemptionRecord = {
        key: "0x01",
        eventId: "evt_1",
        accountId: "acc_1",
        address: "0x00000000000000000000000000000000000000aa",
        outcome: "YES",
        tokenId: "7",
        shares: 10_000_000n,
        payout: 10_000_000n,
        status: "pending",
        txHash: null,
        createdAt: clock.iso(),
        updatedAt: clock.iso(),
      };
      await store.insertRedemptions([redemption]);
      expect(await booked(store)).toEqual([["evt_1", "YES", "7", { shares: 10_000_000n, cost: 4_500_000n, realized: 0n }, 0n]]);
      await store.markRedeemed("0x01", { shares: 10_000_000n, payout: 10_000_000n, txHash: "0xabc" }, clock.iso());
      await store.markRedeemed("0x01", { shares: 10_000_000n, payout: 10_000_000n, txHash: "0xabc" }, clock.iso());
      expect(await booked(store)).toEqual([["evt_1", "YES", "7", { shares: 0n, cost: 0n, realized: 5_500_000n }, 1n]]);
    });

    // PostgreSQL runs them on several connections of the pool at once; SQLite, one after another on its one.
    it("takes in every order of one position that finish at once", async () => {
      const store = await openStore();
      await seedAccount(store);
      const ids = Array.from({ length: 40 }, (_, i) => `b${i}`);
      for (const id of ids) await store.insertOrder(routing(id));
      await Promise.all(ids.map((id, i) => finish(store, id, { status: "filled", filledShares: 1_000_000n, spent: 400_000n + BigInt(i) })));
      const spent = ids.reduce((sum, _, i) => sum + 400_000n + BigInt(i), 0n);
      expect(await booked(store)).toEqual([["evt_1", "YES", "7", { shares: 40_000_000n, cost: spent, realized: 0n }, 0n]]);
    });
  });
});
