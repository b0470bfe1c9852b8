import { PostgresAdapter, sql, type Kysely, type Migration } from "kysely";

/** An order's statuses while it is open (OPEN_STATUSES when this migration was written: a migration never changes). */
export const OPEN = sql.raw(`('pending', 'locked', 'routing')`);

/** Adds a fill of the order `o` to its market's inventory row of `venue`: a buy's adds, a finished sell's takes off. */
export const ADD_FILL = sql`
  INSERT INTO venue_inventory (event_id, outcome, venue, shares)
  SELECT o.event_id, o.outcome, NEW.venue, CASE WHEN o.side = 'buy' THEN NEW.shares ELSE -NEW.shares END
  FROM orders o
  WHERE o.id = NEW.order_id AND (o.side = 'buy' OR o.status NOT IN ${OPEN})
  ON CONFLICT (event_id, outcome, venue) DO UPDATE SET shares = venue_inventory.shares + excluded.shares`;

/** Takes a sell's fills off its market's inventory when it finishes (while open, its child orders count instead). */
export const SELL_FINISHED = sql`
  INSERT INTO venue_inventory (event_id, outcome, venue, shares)
  SELECT NEW.event_id, NEW.outcome, f.venue, -SUM(f.shares)
  FROM fills f
  WHERE f.order_id = NEW.id
  GROUP BY f.venue
  ON CONFLICT (event_id, outcome, venue) DO UPDATE SET shares = venue_inventory.shares + excluded.shares`;

export const SELL_FINISHES = sql`NEW.side = 'sell' AND OLD.status IN ${OPEN} AND NEW.status NOT IN ${OPEN}`;

/*
 * What the operator's account holds on each venue of each market (Store.venueInventory, read by every sell and
 * its quote), kept by the database as fills are stored and sells finish, instead of summed from every fill of
 * the market at each read (~1–2 µs an order of the market's history, on the event loop with SQLite). Triggers, so
 * that the sum moves in the statement that moves it, whichever instance or tool wrote it. The audit sums the
 * fills again and compares. Kysely<any> on purpose, as in 001.
 */
export const venueInventory: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.createIndex("orders_market_idx").on("orders").columns(["event_id", "outcome", "status"]).execute();
    await db.schema
      .createTable("venue_inventory")
      .addColumn("event_id", "text", (c) => c.notNull())
      .addColumn("outcome", "text", (c) => c.notNull())
      .addColumn("venue", "text", (c) => c.notNull())
      .addColumn("shares", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("venue_inventory_pk", ["event_id", "outcome", "venue"])
      .execute();
    if (onPostgres(db)) {
      await sql`CREATE FUNCTION venue_inventory_add_fill() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${ADD_FILL}; RETURN NULL; END $$`.execute(db);
      await sql`CREATE TRIGGER venue_inventory_add_fill AFTER INSERT ON fills FOR EACH ROW EXECUTE FUNCTION venue_inventory_add_fill()`.execute(db);
      await sql`CREATE FUNCTION venue_inventory_sell_finished() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${SELL_FINISHED}; RETURN NULL; END $$`.execute(db);
      await sql`CREATE TRIGGER venue_inventory_sell_finished AFTER UPDATE OF status ON orders FOR EACH ROW WHEN (${SELL_FINISHES}) EXECUTE FUNCTION venue_inventory_sell_finished()`.execute(db);
    } else {
      await sql`CREATE TRIGGER venue_inventory_add_fill AFTER INSERT ON fills FOR EACH ROW BEGIN ${ADD_FILL}; END`.execute(db);
      await sql`CREATE TRIGGER venue_inventory_sell_finished AFTER UPDATE OF status ON orders FOR EACH ROW WHEN ${SELL_FINISHES} BEGIN ${SELL_FINISHED}; END`.execute(db);
    }
    // What the fills stored so far come to.
    await sql`
      INSERT INTO venue_inventory (event_id, outcome, venue, shares)
      SELECT o.event_id, o.outcome, f.venue, SUM(CASE WHEN o.side = 'buy' THEN f.shares ELSE -f.shares END)
      FROM fills f JOIN orders o ON o.id = f.order_id
      WHERE o.side = 'buy' OR o.status NOT IN ${OPEN}
      GROUP BY o.event_id, o.outcome, f.venue`.execute(db);
  },

  async down(db: Kysely<any>): Promise<void> {
    if (onPostgres(db)) {
      await sql`DROP FUNCTION venue_inventory_sell_finished CASCADE`.execute(db);
      await sql`DROP FUNCTION venue_inventory_add_fill CASCADE`.execute(db);
    } else {
      await sql`DROP TRIGGER venue_inventory_sell_finished`.execute(db);
      await sql`DROP TRIGGER venue_inventory_add_fill`.execute(db);
    }
    await db.schema.dropTable("venue_inventory").execute();
    await db.schema.dropIndex("orders_market_idx").execute();
  },
};

/** Triggers are written in each database's own language. */
export function onPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
