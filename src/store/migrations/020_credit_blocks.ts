import type { Kysely, Migration } from "kysely";

/*
 * The block a deposit's credit was mined in, by number and hash, stored when it is credited: a deep reorganisation
 * re-reads the receipt of a credit whose block the chain no longer has, not of every credit ever made. The deposits
 * credited before it have neither (NULL), and their receipts are read as before. Kysely<any> on purpose, as in 001.
 */
export const creditBlocks: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable("deposits").addColumn("credit_block", "bigint").execute();
    await db.schema.alterTable("deposits").addColumn("credit_block_hash", "text").execute();
  },

  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable("deposits").dropColumn("credit_block_hash").execute();
    await db.schema.alterTable("deposits").dropColumn("credit_block").execute();
  },
};
