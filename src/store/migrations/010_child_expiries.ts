import { type Kysely, type Migration } from "kysely";

/*
 * The expiry seconds reserved for child orders on venues that find a child only by its content
 * (Venue.findsChildrenByContent, Opinion): one row per child, keyed by its content and expiry second,
 * so the key lets one insert through and no two children are alike in all of it, whichever instance
 * and clock made them. Kept, as the orders' legs are: a row is some 150 bytes. Kysely<any> on purpose, as in 001.
 */
export const childExpiries: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable("child_expiries")
      .addColumn("venue", "text", (c) => c.notNull())
      .addColumn("venue_market_id", "text", (c) => c.notNull())
      .addColumn("outcome", "text", (c) => c.notNull())
      .addColumn("side", "text", (c) => c.notNull())
      .addColumn("limit_price", "bigint", (c) => c.notNull())
      .addColumn("shares", "bigint", (c) => c.notNull())
      .addColumn("expiry_second", "bigint", (c) => c.notNull())
      .addColumn("client_order_id", "text", (c) => c.notNull())
      .addColumn("reserved_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("child_expiries_pk", ["venue", "venue_market_id", "outcome", "side", "limit_price", "shares", "expiry_second"])
      .execute();
  },

  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable("child_expiries").execute();
  },
};
