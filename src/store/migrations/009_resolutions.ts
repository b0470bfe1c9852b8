import { type Kysely, type Migration } from "kysely";

/*
 * How events ended (event_resolutions, one row per event once the venues or an operator decided it)
 * and the redemptions of their positions (redemptions, one row per holder and token, keyed by the id the
 * Vault redeems it under, so the chain pays each at most once and recovery can ask it by that key).
 * Kysely<any> on purpose, as in 001.
 */
export const resolutions: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable("event_resolutions")
      .addColumn("event_id", "text", (c) => c.primaryKey())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("outcome", "text")
      .addColumn("decided_by", "text", (c) => c.notNull())
      .addColumn("venue_reports", "text", (c) => c.notNull())
      .addColumn("decided_at", "text", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("redemptions")
      .addColumn("key", "text", (c) => c.primaryKey())
      .addColumn("event_id", "text", (c) => c.notNull())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("address", "text", (c) => c.notNull())
      .addColumn("outcome", "text", (c) => c.notNull())
      .addColumn("token_id", "text", (c) => c.notNull())
      .addColumn("shares", "bigint", (c) => c.notNull())
      .addColumn("payout", "bigint", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("tx_hash", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("redemptions_status_idx").on("redemptions").columns(["status", "event_id"]).execute();
    await db.schema.createIndex("redemptions_account_idx").on("redemptions").columns(["account_id", "created_at"]).execute();
  },

  async down(db: Kysely<any>): Promise<void> {
    for (const table of ["redemptions", "event_resolutions"]) await db.schema.dropTable(table).execute();
  },
};
