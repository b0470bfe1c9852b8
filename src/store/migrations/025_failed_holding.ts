import { sql, type Kysely, type Migration } from "kysely";

/*
 * The failed orders holding a lock or escrow with no release recorded, which the stranded-hold sweep reads at every
 * recovery tick (Store.closedHolding): a failed order whose lock a reorganisation removed, the lock landed again, is
 * recorded holding it before its release, as 024's rejected ones are. Along orders_status_idx the sweep would read every
 * order ever failed to find the few it wants; this index holds those alone, shaped as 024's for the same reasons.
 * Kysely<any> on purpose, as in 001.
 */
export const failedHolding: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createIndex("orders_failed_holding_idx")
      .on("orders")
      .columns(["status", "created_at", "id"])
      .where("status", "=", "failed")
      .where(sql.ref("lock_tx"), "is not", null)
      .where(sql.ref("release_tx"), "is", null)
      .execute();
  },

  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropIndex("orders_failed_holding_idx").execute();
  },
};
