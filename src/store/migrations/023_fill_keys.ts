import { sql, type Kysely, type Migration } from "kysely";
import { ADD_FILL, onPostgres, SELL_FINISHED, SELL_FINISHES } from "./012_venue_inventory.ts";

/*
 * A fill is one side of a venue's trade, keyed by the child order it filled as well: a venue's self-trade (two of
 * crossfill's own child orders, a resting one on one side, on both sides of one trade) has one trade id for both,
 * and under the key (venue, trade_id) the second side was dropped as the first reported again. SQLite cannot change
 * a table's primary key: the table is made again, with the index and the triggers of 012 that name it (dropped
 * first, so that nothing names a table that is gone). Kysely<any> on purpose, as in 001.
 */
async function keyFills(db: Kysely<any>, key: ("venue" | "trade_id" | "client_order_id")[]): Promise<void> {
  if (onPostgres(db)) {
    await sql`ALTER TABLE fills DROP CONSTRAINT fills_pk, ADD CONSTRAINT fills_pk PRIMARY KEY (${sql.join(key.map((c) => sql.ref(c)))})`.execute(db);
    return;
  }
  await sql`DROP TRIGGER venue_inventory_sell_finished`.execute(db);
  await sql`DROP TRIGGER venue_inventory_add_fill`.execute(db);
  await db.schema
    .createTable("fills_keyed")
    .addColumn("venue", "text", (c) => c.notNull())
    .addColumn("trade_id", "text", (c) => c.notNull())
    .addColumn("order_id", "text", (c) => c.notNull().references("orders.id"))
    .addColumn("venue_order_id", "text", (c) => c.notNull())
    .addColumn("client_order_id", "text", (c) => c.notNull())
    .addColumn("price", "bigint", (c) => c.notNull())
    .addColumn("shares", "bigint", (c) => c.notNull())
    .addColumn("fee", "bigint", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("fills_pk", key)
    .execute();
  await sql`INSERT INTO fills_keyed SELECT venue, trade_id, order_id, venue_order_id, client_order_id, price, shares, fee, created_at FROM fills`.execute(db);
  await db.schema.dropTable("fills").execute();
  await db.schema.alterTable("fills_keyed").renameTo("fills").execute();
  await db.schema.createIndex("fills_order_idx").on("fills").column("order_id").execute();
  await sql`CREATE TRIGGER venue_inventory_add_fill AFTER INSERT ON fills FOR EACH ROW BEGIN ${ADD_FILL}; END`.execute(db);
  await sql`CREATE TRIGGER venue_inventory_sell_finished AFTER UPDATE OF status ON orders FOR EACH ROW WHEN ${SELL_FINISHES} BEGIN ${SELL_FINISHED}; END`.execute(db);
}

export const fillKeys: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await keyFills(db, ["venue", "trade_id", "client_order_id"]);
  },

  async down(db: Kysely<any>): Promise<void> {
    await keyFills(db, ["venue", "trade_id"]);
  },
};
