import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadMasterKey } from "../../src/auth/secrets.ts";
import type { Clock } from "../../src/domain/types.ts";
import { openStore } from "../../src/store/open-store.ts";
import { openPostgresStore } from "../../src/store/postgres/postgres-store.ts";
import { openSqliteStore } from "../../src/store/sqlite/sqlite-store.ts";
import type { OrderRecord, Store } from "../../src/store/store.ts";
import { createTestDatabase } from "./postgres.ts";

/** The SQLite database and master key a server's first start makes in `dataDir`, and leaves when stopped: the CLI's store commands make neither. */
export async function makeDataDirStore(dataDir: string): Promise<void> {
  await loadMasterKey({ env: undefined, dataDir });
  const store = await openStore({ dataDir, databaseUrl: undefined });
  await store.migrate();
  await store.close();
}

/** A fresh, empty database of one backend. */
export interface TestStoreDatabase {
  /** A new store on this database: call it twice for two connections, again after a close for a restart. Not migrated. */
  open(clock?: Clock): Promise<Store>;
  /** Removes the database. Close its stores first. */
  drop(): Promise<void>;
}

/** Every backend of the Store port, for store tests written once and run on each (`describe.each`). */
export const STORE_BACKENDS: { name: string; create(): Promise<TestStoreDatabase> }[] = [
  {
    name: "SQLite",
    async create() {
      const dataDir = mkdtempSync(join(tmpdir(), "crossfill-store-"));
      return {
        open: (clock) => openSqliteStore(join(dataDir, "crossfill.db"), { clock }),
        drop: async () => rmSync(dataDir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: "PostgreSQL",
    async create() {
      const db = await createTestDatabase();
      return { open: (clock) => openPostgresStore(db.url, { clock }), drop: db.drop };
    },
  },
];

/** An order as the store keeps it, for store tests: a pending FOK buy of 10 USDC of account acc_1, with `over` on top; one with USDC locked was locked when created, unless `over` says when. */
export function orderRecord(over: Partial<OrderRecord> = {}): OrderRecord {
  const record: OrderRecord = {
    id: "ord_1",
    accountId: "acc_1",
    clientOrderId: null,
    requestHash: "h",
    eventId: "e",
    outcome: "YES",
    side: "buy",
    amount: 10_000_000n,
    shares: 0n,
    maxSlippage: 10_000n,
    strategy: "optimize_price",
    timeInForce: "FOK",
    status: "pending",
    locked: 0n,
    spent: 0n,
    fees: 0n,
    filledShares: 0n,
    escrowed: 0n,
    proceeds: 0n,
    routedTo: null,
    legs: [],
    plannedInFull: true,
    dustLeft: false,
    sotTokenId: null,
    lockTx: null,
    settleTx: null,
    releaseTx: null,
    errorCode: null,
    errorMessage: null,
    errorDetails: null,
    createdAt: "2026-01-05T10:00:00.000Z",
    updatedAt: "2026-01-05T10:00:00.000Z",
    lockedAt: null,
    ...over,
  };
  return over.lockedAt === undefined && record.locked > 0n ? { ...record, lockedAt: record.createdAt } : record;
}
