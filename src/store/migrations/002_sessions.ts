import type { Kysely, Migration } from "kysely";

/*
 * Web terminal sessions. The row is keyed by a hash of the session id, never the id itself: a leaked
 * database (or backup) must not hand out live sessions. Kysely<any> on purpose, as in 001.
 */
export const sessions: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable("sessions")
      .addColumn("id_hash", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("sessions_expires_idx").on("sessions").column("expires_at").execute();
  },

  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable("sessions").execute();
  },
};
