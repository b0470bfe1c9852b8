import type { Kysely, Migration } from "kysely";

/*
 * Whether what an order's rounds left of it is dust (OrderRecord.dustLeft), 1 or 0: a later round refused as
 * `order_too_small` leaves the order `filled` though its last legs filled short. 0 for the orders stored before it,
 * which keep the rule they were stored under. Kysely<any> on purpose, as in 001.
 */
export const dustLeft: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable("orders").addColumn("dust_left", "bigint", (c) => c.notNull().defaultTo(0)).execute();
  },

  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable("orders").dropColumn("dust_left").execute();
  },
};
