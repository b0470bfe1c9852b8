import type { Kysely, Migration } from "kysely";

/*
 * The event catalog in the database, seeded from the catalog file and grown by accepted match
 * proposals. A venue market belongs to at most one event, and an event lists each venue at most
 * once: the primary key and the unique index say so, whatever the code above them does.
 * Kysely<any> on purpose, as in 001.
 */
export const catalog: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable("catalog_events")
      .addColumn("event_id", "text", (c) => c.primaryKey())
      .addColumn("title", "text", (c) => c.notNull())
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("close_time", "text", (c) => c.notNull())
      .addColumn("resolution", "text")
      .addColumn("base_price", "bigint", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("catalog_listings")
      .addColumn("venue", "text", (c) => c.notNull())
      .addColumn("venue_market_id", "text", (c) => c.notNull())
      .addColumn("event_id", "text", (c) => c.notNull().references("catalog_events.event_id"))
      .addColumn("position", "bigint", (c) => c.notNull())
      .addColumn("yes_id", "text", (c) => c.notNull())
      .addColumn("no_id", "text", (c) => c.notNull())
      .addColumn("tick_size", "bigint")
      .addColumn("fee_rate_ppm", "bigint")
      .addPrimaryKeyConstraint("catalog_listings_pk", ["venue", "venue_market_id"])
      .execute();
    await db.schema.createIndex("catalog_listings_event_venue_uq").on("catalog_listings").columns(["event_id", "venue"]).unique().execute();

    await db.schema
      .createTable("proposals")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("event_id", "text", (c) => c.notNull())
      .addColumn("title", "text", (c) => c.notNull())
      .addColumn("score_ppm", "bigint", (c) => c.notNull())
      .addColumn("reason", "text", (c) => c.notNull())
      .addColumn("members", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("decided_at", "text")
      .execute();
    await db.schema.createIndex("proposals_status_idx").on("proposals").columns(["status", "score_ppm"]).execute();
  },

  async down(db: Kysely<any>): Promise<void> {
    for (const table of ["proposals", "catalog_listings", "catalog_events"]) await db.schema.dropTable(table).execute();
  },
};
