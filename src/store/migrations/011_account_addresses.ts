import { sql, type Kysely, type Migration } from "kysely";

/*
 * Accounts by address, whatever its case: the deposit watcher looks up the recipients of the USDC transfers
 * it reads (a few each pass) instead of reading every account. Kysely<any> on purpose, as in 001.
 */
export const accountAddresses: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.createIndex("accounts_address").on("accounts").expression(sql`lower(address)`).execute();
  },

  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropIndex("accounts_address").execute();
  },
};
