import { sql, type Kysely, type Migration } from "kysely";

/*
 * When each order's lock was recorded: GET /v1/activity lists a `lock` at that time. It listed it at the order's
 * creation, before the lock landed (a lock whose answer was lost is recorded by recovery, minutes later), so a lock
 * appeared behind movements listed before it, where a client reading the newest entries never looks. The orders
 * already locked keep their creation time, the best they have. Kysely<any> on purpose, as in 001.
 */
export const lockTimes: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable("orders").addColumn("locked_at", "text").execute();
    await db.updateTable("orders").set({ locked_at: sql.ref("created_at") }).where("locked", ">", 0).execute();
    await db.schema.createIndex("orders_account_locked_idx").on("orders").columns(["account_id", "locked_at"]).execute();
  },

  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropIndex("orders_account_locked_idx").execute();
    await db.schema.alterTable("orders").dropColumn("locked_at").execute();
  },
};
