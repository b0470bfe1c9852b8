import type { Kysely, Migration } from "kysely";

/*
 * Written against Kysely<any> on purpose: a migration is frozen in time and must not follow later
 * changes of the Database type. Only types both SQLite and PostgreSQL understand are used: `bigint`
 * is a 64-bit integer on both (SQLite gives it INTEGER affinity), timestamps are ISO-8601 text so
 * that they sort the same everywhere.
 */
export const initial: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable("accounts")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("email", "text", (c) => c.notNull().unique())
      .addColumn("address", "text", (c) => c.notNull())
      .addColumn("wallet_key_enc", "text")
      .addColumn("password_hash", "text")
      .addColumn("funded_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("api_keys")
      .addColumn("api_key", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("scopes", "text", (c) => c.notNull())
      .addColumn("secret_enc", "text", (c) => c.notNull())
      .addColumn("ip_allowlist", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("last_used_at", "text")
      .addColumn("revoked_at", "text")
      .execute();
    await db.schema.createIndex("api_keys_account_idx").on("api_keys").columns(["account_id", "created_at"]).execute();

    await db.schema
      .createTable("orders")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
      .addColumn("client_order_id", "text")
      .addColumn("request_hash", "text", (c) => c.notNull())
      .addColumn("event_id", "text", (c) => c.notNull())
      .addColumn("outcome", "text", (c) => c.notNull())
      .addColumn("side", "text", (c) => c.notNull())
      .addColumn("amount", "bigint", (c) => c.notNull())
      .addColumn("max_slippage", "bigint", (c) => c.notNull())
      .addColumn("strategy", "text", (c) => c.notNull())
      .addColumn("time_in_force", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("locked", "bigint", (c) => c.notNull())
      .addColumn("spent", "bigint", (c) => c.notNull())
      .addColumn("fees", "bigint", (c) => c.notNull())
      .addColumn("filled_shares", "bigint", (c) => c.notNull())
      .addColumn("routed_to", "text")
      .addColumn("sot_token_id", "text")
      .addColumn("lock_tx", "text")
      .addColumn("settle_tx", "text")
      .addColumn("release_tx", "text")
      .addColumn("error_code", "text")
      .addColumn("error_message", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    // The idempotency key: its partial predicate must be repeated in every ON CONFLICT that targets it.
    await db.schema
      .createIndex("orders_client_order_id_uq")
      .on("orders")
      .columns(["account_id", "client_order_id"])
      .unique()
      .where("client_order_id", "is not", null)
      .execute();
    await db.schema.createIndex("orders_account_created_idx").on("orders").columns(["account_id", "created_at", "id"]).execute();
    await db.schema.createIndex("orders_status_idx").on("orders").column("status").execute();

    await db.schema
      .createTable("fills")
      .addColumn("venue", "text", (c) => c.notNull())
      .addColumn("trade_id", "text", (c) => c.notNull())
      .addColumn("order_id", "text", (c) => c.notNull().references("orders.id"))
      .addColumn("venue_order_id", "text", (c) => c.notNull())
      .addColumn("client_order_id", "text", (c) => c.notNull())
      .addColumn("price", "bigint", (c) => c.notNull())
      .addColumn("shares", "bigint", (c) => c.notNull())
      .addColumn("fee", "bigint", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("fills_pk", ["venue", "trade_id"])
      .execute();
    await db.schema.createIndex("fills_order_idx").on("fills").column("order_id").execute();

    // No foreign key to api_keys: this is a cache that may equally live in Redis.
    await db.schema
      .createTable("replay_signatures")
      .addColumn("api_key", "text", (c) => c.notNull())
      .addColumn("signature", "text", (c) => c.notNull())
      .addColumn("expires_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("replay_signatures_pk", ["api_key", "signature"])
      .execute();
    await db.schema.createIndex("replay_signatures_expires_idx").on("replay_signatures").column("expires_at").execute();
  },

  async down(db: Kysely<any>): Promise<void> {
    for (const table of ["replay_signatures", "fills", "orders", "api_keys", "accounts"]) {
      await db.schema.dropTable(table).execute();
    }
  },
};
