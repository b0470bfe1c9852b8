import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../../test/helpers/postgres.ts";
import { orderRecord } from "../../../test/helpers/stores.ts";
import { openPostgresStore } from "../postgres/postgres-store.ts";
import { openSqliteStore } from "../sqlite/sqlite-store.ts";
import { accountToRow, fillToRow, orderToRow, redemptionToRow, type Database } from "../rows.ts";
import type { FillRecord, OrderRecord, Store } from "../store.ts";
import { MIGRATIONS } from "./migrate.ts";

/** A database of one backend, opened raw (to migrate it step by step) or as the store. */
const BACKENDS: { name: string; create(): Promise<{ raw(): Kysely<Database>; store(): Promise<Store>; drop(): Promise<void> }> }[] = [
  {
    name: "SQLite",
    async create() {
      const dir = mkdtempSync(join(tmpdir(), "crossfill-migrate-"));
      const file = join(dir, "crossfill.db");
      return {
        raw: () => new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(file) }) }),
        store: () => openSqliteStore(file),
        drop: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: "PostgreSQL",
    async create() {
      const db = await createTestDatabase();
      return {
        raw: () => new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: db.url }) }) }),
        store: () => openPostgresStore(db.url),
        drop: db.drop,
      };
    },
  },
];

/** An order's row as the migrations before 018 stored it: without planned_in_full (nor 019's dust_left, 022's error_details), and locked_at left to the migrations (016). */
function rowBefore018(o: OrderRecord): ReturnType<typeof orderToRow> {
  const row = orderToRow(o);
  delete row.planned_in_full;
  delete row.dust_left;
  delete row.error_details;
  delete row.locked_at;
  return row;
}

const fill = (orderId: string, venue: string, shares: bigint): FillRecord => ({
  orderId,
  venue,
  venueOrderId: `${orderId}-v`,
  tradeId: `${orderId}-${venue}`,
  clientOrderId: orderId,
  price: 500_000n,
  shares,
  fee: 0n,
  createdAt: "2026-12-01T00:00:00.000Z",
});

type Backend = (typeof BACKENDS)[number];

/**
 * A store of `backend` migrated to `from`, with account acc_1 and what `seed` writes, then migrated to the latest
 * version and opened as the store for `check`.
 */
async function afterMigration(backend: Backend, from: string, seed: (raw: Kysely<Database>) => Promise<void>, check: (store: Store) => Promise<void>): Promise<void> {
  const db = await backend.create();
  const raw = db.raw();
  try {
    const migrator = new Migrator({ db: raw, provider: { getMigrations: async () => MIGRATIONS } });
    expect((await migrator.migrateTo(from)).error).toBeUndefined();
    await raw.insertInto("accounts").values(accountToRow({ id: "acc_1", email: "a@example.com", address: "0x1", walletKeyEnc: null, passwordHash: null, fundedAt: null, createdAt: "2026-12-01T00:00:00.000Z" })).execute();
    await seed(raw);
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
  } finally {
    await raw.destroy();
  }
  const store = await db.store();
  try {
    await check(store);
  } finally {
    await store.close();
    await db.drop();
  }
}

const at = (second: number) => `2026-12-01T00:00:0${second}.000Z`;

describe.each(BACKENDS)("migration 012 on $name", (backend) => {
  it("counts the fills stored before it into each venue's inventory, as the store summed them", () =>
    afterMigration(
      backend,
      "011_account_addresses",
      async (raw) => {
        const order = (id: string, over: Parameters<typeof orderRecord>[0]) => raw.insertInto("orders").values(rowBefore018(orderRecord({ id, eventId: "e", ...over }))).execute();
        await order("b1", { status: "filled" });
        await order("b2", { status: "filled", outcome: "NO" });
        await order("s1", { side: "sell", status: "filled" });
        await order("s2", { side: "sell", status: "routing" });
        await raw.insertInto("fills").values([fill("b1", "p", 9_000_000n), fill("b1", "k", 2_000_000n), fill("b2", "p", 1_000_000n), fill("s1", "p", 3_000_000n), fill("s2", "k", 1_000_000n)].map(fillToRow)).execute();
      },
      async (store) => {
        // The open sell's fill counts once it finishes; until then its child orders would (it has none stored here).
        expect(await store.venueInventory("e", "YES")).toEqual(new Map([["p", 6_000_000n], ["k", 2_000_000n]]));
        expect(await store.venueInventory("e", "NO")).toEqual(new Map([["p", 1_000_000n]]));
        await store.updateOrder("s2", ["routing"], { status: "filled" });
        expect(await store.venueInventory("e", "YES")).toEqual(new Map([["p", 6_000_000n], ["k", 1_000_000n]]));
      },
    ));
});

/** Inserts filled orders of account acc_1 on event e, YES token 7 unless `over` says otherwise, each its own client order id. */
const filledOrder = (raw: Kysely<Database>) => (id: string, over: Parameters<typeof orderRecord>[0]) =>
  raw.insertInto("orders").values(rowBefore018(orderRecord({ id, clientOrderId: id, eventId: "e", sotTokenId: "7", status: "filled", ...over }))).execute();

describe.each(BACKENDS)("migration 013 on $name", (backend) => {
  it("books each position from the orders and redemptions stored before it, in the order they happened", () =>
    afterMigration(
      backend,
      "012_venue_inventory",
      async (raw) => {
        const order = filledOrder(raw);
        // Neither stored nor named in the order they settled in: the sell came between the two buys.
        await order("o1", { filledShares: 50_000_000n, spent: 30_000_000n, updatedAt: at(3) });
        await order("o3", { filledShares: 50_000_000n, spent: 20_000_000n, updatedAt: at(1) });
        await order("o2", { side: "sell", filledShares: 25_000_000n, proceeds: 15_000_000n, updatedAt: at(2) });
        await order("o4", { status: "routing", filledShares: 9_000_000n, updatedAt: at(4) });
        await order("o5", { status: "partially_filled", outcome: "NO", sotTokenId: "8", filledShares: 10_000_000n, spent: 4_000_000n, updatedAt: at(1) });
        const redemption = { key: "0x01", eventId: "e", accountId: "acc_1", address: "0x1", outcome: "NO" as const, tokenId: "8", shares: 10_000_000n, payout: 0n, txHash: "0xabc", createdAt: at(5) };
        await raw.insertInto("redemptions").values(redemptionToRow({ ...redemption, status: "redeemed", updatedAt: at(6) })).execute();
        await raw.insertInto("redemptions").values(redemptionToRow({ ...redemption, key: "0x02", outcome: "YES", tokenId: "7", status: "pending", updatedAt: at(6) })).execute();
      },
      async (store) => {
        // YES: bought 50 for 20, sold 25 for 15 (10 of cost off), bought 50 for 30; the pending redemption not yet.
        expect((await store.positions("acc_1")).map((p) => [p.outcome, p.sotTokenId, p.book, p.exits, p.updatedAt])).toEqual([
          ["NO", "8", { shares: 0n, cost: 0n, realized: -4_000_000n }, 1n, at(6)],
          ["YES", "7", { shares: 75_000_000n, cost: 40_000_000n, realized: 5_000_000n }, 1n, at(3)],
        ]);
      },
    ));
});

describe.each(BACKENDS)("migration 015 on $name", (backend) => {
  it("books again a position that took in a sell before the buy it sold, to the shares the orders leave", () =>
    afterMigration(
      backend,
      "014_activity_times",
      async (raw) => {
        const order = filledOrder(raw);
        // The sell was stored finished first; recovery finished the buy it sold afterwards.
        await order("s1", { side: "sell", filledShares: 4_000_000n, proceeds: 3_000_000n, updatedAt: at(1) });
        await order("b1", { filledShares: 10_000_000n, spent: 5_000_000n, updatedAt: at(2) });
        // What the book took off only the shares it held made of them: 10 shares for 5 USDC, 3 USDC realized.
        await raw
          .insertInto("positions")
          .values({ account_id: "acc_1", event_id: "e", outcome: "YES", sot_token_id: "7", shares: 10_000_000n, cost: 5_000_000n, realized: 3_000_000n, exits: 1n, updated_at: at(2) })
          .execute();
      },
      async (store) => {
        expect((await store.positions("acc_1")).map((p) => [p.book, p.exits, p.updatedAt])).toEqual([[{ shares: 6_000_000n, cost: 3_000_000n, realized: 1_000_000n }, 1n, at(2)]]);
      },
    ));
});

describe.each(BACKENDS)("migration 016 on $name", (backend) => {
  it("gives the locks stored before it their order's creation time in the activity", () =>
    afterMigration(
      backend,
      "015_short_position_books",
      async (raw) => {
        await raw
          .insertInto("orders")
          .values(rowBefore018(orderRecord({ id: "o1", status: "failed", locked: 5_000_000n, lockTx: "0xl", releaseTx: "0xr", createdAt: at(1), updatedAt: at(2) })))
          .execute();
      },
      async (store) => {
        expect((await store.activity("acc_1", { limit: 50, cursor: null })).data.map((e) => [e.id, e.createdAt])).toEqual([
          ["release:o1", at(2)],
          ["lock:o1", at(1)],
        ]);
      },
    ));
});

describe.each(BACKENDS)("migration 017 on $name", (backend) => {
  it("names each deposit stored before it by its place among its transaction's, keeping the log index its Vault key was made of", () =>
    afterMigration(
      backend,
      "016_lock_times",
      async (raw) => {
        // Two transfers of one transaction at log indices 2 and 5, one alone at 3, and two at 1 and 2 (the second's new id the first's old one).
        const deposit = (txHash: string, logIndex: number) => ({
          id: `${txHash}:${logIndex}`, account_id: "acc_1", amount: 1_000_000n, from_address: "0x2", tx_hash: txHash, log_index: BigInt(logIndex), block: 7n,
          status: "credited", credit_tx: "0xc", error_message: null, created_at: at(1), updated_at: at(1),
        });
        await (raw as Kysely<any>).insertInto("deposits").values([deposit("0xaa", 2), deposit("0xaa", 5), deposit("0xbb", 3), deposit("0xcc", 2), deposit("0xcc", 1)]).execute();
      },
      async (store) => {
        expect((await store.depositsInStatus(["credited"])).map((d) => [d.id, d.place, d.logIndex])).toEqual([
          ["0xaa:0", 0, 2],
          ["0xaa:1", 1, 5],
          ["0xbb:0", 0, 3],
          ["0xcc:0", 0, 1],
          ["0xcc:1", 1, 2],
        ]);
      },
    ));
});

describe.each(BACKENDS)("migration 018 on $name", (backend) => {
  it("keeps the orders stored before it to the rule they were stored under, filled once their fills reach the first round's plan", () => {
    const leg = { venue: "p", clientOrderId: "o1-p", venueMarketId: "m", limitPrice: 500_000n, shares: 4_000_000n, round: 1, expiresAt: 0 };
    return afterMigration(
      backend,
      "017_deposit_places",
      async (raw) => {
        await raw.insertInto("orders").values(rowBefore018(orderRecord({ id: "o1", timeInForce: "IOC", status: "routing", locked: 10_000_000n, legs: [leg] }))).execute();
      },
      async (store) => {
        expect(await store.order("o1")).toMatchObject({ status: "routing", plannedInFull: true, legs: [leg] });
        await store.insertOrder(orderRecord({ id: "o2", clientOrderId: "c2", plannedInFull: false }));
        expect((await store.order("o2"))?.plannedInFull).toBe(false);
        await store.updateOrder("o2", ["pending"], { status: "locked" });
        expect((await store.updateOrder("o2", ["locked"], { status: "routing", plannedInFull: true }))?.plannedInFull).toBe(true);
      },
    );
  });
});

describe.each(BACKENDS)("migration 019 on $name", (backend) => {
  it("keeps the orders stored before it to the rule they were stored under: no rest counted dust", () =>
    afterMigration(
      backend,
      "018_planned_in_full",
      async (raw) => {
        const row = orderToRow(orderRecord({ id: "o1", status: "routing" }));
        delete row.dust_left;
        delete row.error_details;
        await raw.insertInto("orders").values(row).execute();
      },
      async (store) => {
        expect((await store.order("o1"))?.dustLeft).toBe(false);
        expect((await store.updateOrder("o1", ["routing"], { dustLeft: true }))?.dustLeft).toBe(true);
      },
    ));
});

describe.each(BACKENDS)("migration 020 on $name", (backend) => {
  it("leaves the deposits credited before it without a credit block, and stores the block of a credit made after it", () =>
    afterMigration(
      backend,
      "019_dust_left",
      async (raw) => {
        await (raw as Kysely<any>)
          .insertInto("deposits")
          .values({
            id: "0xaa:0", account_id: "acc_1", amount: 1_000_000n, from_address: "0x2", tx_hash: "0xaa", place: 0n, log_index: 0n, block: 7n,
            status: "credited", credit_tx: "0xc", error_message: null, created_at: at(1), updated_at: at(1),
          })
          .execute();
      },
      async (store) => {
        expect((await store.depositsInStatus(["credited"])).map((d) => [d.id, d.creditTx, d.creditBlock, d.creditBlockHash])).toEqual([["0xaa:0", "0xc", null, null]]);
        await store.updateDeposit("0xaa:0", ["credited"], { creditBlock: 9n, creditBlockHash: "0xb9" });
        expect((await store.depositsInStatus(["credited"])).map((d) => [d.creditBlock, d.creditBlockHash])).toEqual([[9n, "0xb9"]]);
      },
    ));
});

describe.each(BACKENDS)("migration 021 on $name", (backend) => {
  it("gives the sells escrowed before 016 their order's creation time as their lock time, so recovery waits for the escrow's deadline without reading the chain", () =>
    afterMigration(
      backend,
      "020_credit_blocks",
      async (raw) => {
        const sell = (id: string, over: Parameters<typeof orderRecord>[0]) => {
          const row = orderToRow(orderRecord({ id, clientOrderId: id, side: "sell", amount: 0n, shares: 5_000_000n, createdAt: at(1), updatedAt: at(2), ...over }));
          delete row.error_details;
          return raw.insertInto("orders").values(row).execute();
        };
        await sell("o1", { status: "routing", escrowed: 5_000_000n, sotTokenId: "7" });
        await sell("o2", { status: "routing", escrowed: 5_000_000n, sotTokenId: "7", lockedAt: at(3) });
        await sell("o3", { status: "rejected" });
      },
      async (store) => {
        expect([(await store.order("o1"))?.lockedAt, (await store.order("o2"))?.lockedAt, (await store.order("o3"))?.lockedAt]).toEqual([at(1), at(3), null]);
      },
    ));
});

describe.each(BACKENDS)("migration 023 on $name", (backend) => {
  it("keeps the fills stored before it, and the inventory's triggers, and stores both sides of a self-trade after it", () =>
    afterMigration(
      backend,
      "022_error_details",
      async (raw) => {
        await filledOrder(raw)("b1", {});
        await raw.insertInto("orders").values(orderToRow(orderRecord({ id: "s1", clientOrderId: "s1", eventId: "e", side: "sell", status: "routing" }))).execute();
        await raw.insertInto("fills").values([fill("b1", "p", 9_000_000n)].map(fillToRow)).execute();
      },
      async (store) => {
        expect(await store.fills("b1")).toEqual([fill("b1", "p", 9_000_000n)]);
        // The sell's child order took, in one trade, what a child order of the buy sold it.
        await store.insertFills([{ ...fill("s1", "p", 4_000_000n), tradeId: "b1-p" }]);
        expect(await store.fills("s1")).toHaveLength(1);
        expect(await store.venueInventory("e", "YES")).toEqual(new Map([["p", 9_000_000n]]));
        await store.updateOrder("s1", ["routing"], { status: "filled" });
        expect(await store.venueInventory("e", "YES")).toEqual(new Map([["p", 5_000_000n]]));
      },
    ));
});
