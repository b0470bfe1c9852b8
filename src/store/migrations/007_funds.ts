import type { Kysely, Migration } from "kysely";

/*
 * Money in and out of an account (DESIGN §12): withdrawals to an external address, each idempotent by
 * (account, client_withdrawal_id) like orders and leased like them while an instance executes or recovers
 * it; deposits, one row per USDC transfer into a deposit address, keyed by its transaction hash and log
 * index; the dev faucet's drips, as movements to list; how far the chain was scanned for deposits; and a
 * key's withdrawal address allowlist. Kysely<any> on purpose, as in 001.
 */
export const funds: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable("withdrawals")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
      .addColumn("client_withdrawal_id", "text")
      .addColumn("request_hash", "text", (c) => c.notNull())
      .addColumn("amount", "bigint", (c) => c.notNull())
      .addColumn("to_address", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("tx_hash", "text")
      .addColumn("error_code", "text")
      .addColumn("error_message", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("lease_owner", "text")
      .addColumn("lease_until", "text")
      .execute();
    // The idempotency key: its partial predicate must be repeated in every ON CONFLICT that targets it.
    await db.schema
      .createIndex("withdrawals_client_id_uq")
      .on("withdrawals")
      .columns(["account_id", "client_withdrawal_id"])
      .unique()
      .where("client_withdrawal_id", "is not", null)
      .execute();
    await db.schema.createIndex("withdrawals_account_created_idx").on("withdrawals").columns(["account_id", "created_at", "id"]).execute();
    await db.schema.createIndex("withdrawals_status_idx").on("withdrawals").column("status").execute();

    await db.schema
      .createTable("deposits")
      // `<tx hash>:<log index>`: the transfer, as the chain names it.
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
      .addColumn("amount", "bigint", (c) => c.notNull())
      .addColumn("from_address", "text", (c) => c.notNull())
      .addColumn("tx_hash", "text", (c) => c.notNull())
      .addColumn("log_index", "bigint", (c) => c.notNull())
      .addColumn("block", "bigint", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("credit_tx", "text")
      .addColumn("error_message", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("lease_owner", "text")
      .addColumn("lease_until", "text")
      .execute();
    await db.schema.createIndex("deposits_account_created_idx").on("deposits").columns(["account_id", "created_at", "id"]).execute();
    await db.schema.createIndex("deposits_status_idx").on("deposits").column("status").execute();

    await db.schema
      .createTable("faucet_drips")
      .addColumn("key", "text", (c) => c.notNull())
      .addColumn("tx_hash", "text", (c) => c.notNull())
      .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
      .addColumn("amount", "bigint", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("faucet_drips_pk", ["key", "tx_hash"])
      .execute();
    await db.schema.createIndex("faucet_drips_account_idx").on("faucet_drips").columns(["account_id", "created_at"]).execute();

    await db.schema
      .createTable("chain_cursors")
      .addColumn("name", "text", (c) => c.primaryKey())
      .addColumn("block", "bigint", (c) => c.notNull())
      .addColumn("hash", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();

    await db.schema.alterTable("api_keys").addColumn("withdrawal_allowlist", "text").execute();
  },

  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable("api_keys").dropColumn("withdrawal_allowlist").execute();
    for (const table of ["chain_cursors", "faucet_drips", "deposits", "withdrawals"]) await db.schema.dropTable(table).execute();
  },
};
