import type { Kysely, Migration } from "kysely";

/** The child orders of an order, stored before they are sent so that reconciliation can find them at their venues. */
export const orderLegs: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable("orders").addColumn("legs", "text", (c) => c.notNull().defaultTo("[]")).execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable("orders").dropColumn("legs").execute();
  },
};
