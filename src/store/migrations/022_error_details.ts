import type { Kysely, Migration } from "kysely";

/*
 * What an order's error names beside its message (OrderRecord.errorDetails), as JSON: a refusal's limit and
 * reference, the balance short of the amount. Null for the orders stored before it, whose answers named none.
 * Kysely<any> on purpose, as in 001.
 */
export const errorDetails: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable("orders").addColumn("error_details", "text").execute();
  },

  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable("orders").dropColumn("error_details").execute();
  },
};
