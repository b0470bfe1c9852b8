import { sql, type Kysely, type Migration } from "kysely";

/*
 * A deposit's place among its transaction's transfers into deposit addresses, and its id made of it instead of the
 * log index: a reorganisation that mined a transaction again at another log index made its transfer a second
 * deposit, credited twice. The deposits stored so far are every transfer of their transactions into deposit
 * addresses, so a deposit's place is how many of its transaction's come before it. `log_index` stays what the
 * Vault key of each was made of. Kysely<any> on purpose, as in 001.
 */
export const depositPlaces: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable("deposits").addColumn("place", "bigint", (c) => c.notNull().defaultTo(0)).execute();
    await db
      .updateTable("deposits")
      .set({ place: sql`(SELECT count(*) FROM deposits AS earlier WHERE earlier.tx_hash = deposits.tx_hash AND earlier.log_index < deposits.log_index)` })
      .execute();
    // Through another form first: a deposit's new id may be another's old one until that one is renamed too.
    await db.updateTable("deposits").set({ id: sql`tx_hash || '#' || CAST(place AS TEXT)` }).execute();
    await db.updateTable("deposits").set({ id: sql`replace(id, '#', ':')` }).execute();
  },

  async down(db: Kysely<any>): Promise<void> {
    await db.updateTable("deposits").set({ id: sql`tx_hash || '#' || CAST(log_index AS TEXT)` }).execute();
    await db.updateTable("deposits").set({ id: sql`replace(id, '#', ':')` }).execute();
    await db.schema.alterTable("deposits").dropColumn("place").execute();
  },
};
