import { sql, type Kysely, type Migration } from "kysely";

/*
 * The rejected orders holding a lock or escrow with no release recorded, which the stranded-hold sweep reads at every
 * recovery tick (Store.closedHolding). Along orders_status_idx it read every order ever rejected, and sorted them, to
 * find the few it wants: at 100,000 rejected orders 20-40 ms a sweep on SQLite, on the event loop, and a sequential scan
 * of 30-60 ms on PostgreSQL; 0.2 ms and an index scan with this index. It holds those orders alone, in the order the
 * sweep reads them, and leads with status, constant in it: SQLite without statistics costs a scan of a partial index as
 * one of the table, and kept orders_status_idx over an index of (created_at, id) alone. Both match the query's bound
 * status against the index's (SQLite plans the statement again with the value bound). Kysely<any> on purpose, as in 001.
 */
export const rejectedHolding: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createIndex("orders_rejected_holding_idx")
      .on("orders")
      .columns(["status", "created_at", "id"])
      .where("status", "=", "rejected")
      .where(sql.ref("lock_tx"), "is not", null)
      .where(sql.ref("release_tx"), "is", null)
      .execute();
  },

  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropIndex("orders_rejected_holding_idx").execute();
  },
};
