import type { Kysely, Migration } from "kysely";

/**
 * Which instance executes or recovers an order, and until when: an instance that dies leaves its
 * lease to run out, and another one takes the order over; two never work on one order at once.
 */
export const orderLeases: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable("orders").addColumn("lease_owner", "text").execute();
    await db.schema.alterTable("orders").addColumn("lease_until", "text").execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable("orders").dropColumn("lease_until").execute();
    await db.schema.alterTable("orders").dropColumn("lease_owner").execute();
  },
};
