import type { Kysely, Migration } from "kysely";

/*
 * Whether an order's first routing round planned the whole order (OrderRecord.plannedInFull), 1 or 0: an IOC order
 * whose plan covered only part of it (thin books, a sell capped by the venues' inventory) was `filled` once its fills
 * reached that part. The orders stored before it were told `filled` or `partially_filled` by their fills alone, and
 * keep that rule: 1. Kysely<any> on purpose, as in 001.
 */
export const plannedInFull: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable("orders").addColumn("planned_in_full", "bigint", (c) => c.notNull().defaultTo(1)).execute();
  },

  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable("orders").dropColumn("planned_in_full").execute();
  },
};
