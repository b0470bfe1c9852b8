import type { Kysely } from "kysely";
import { AppError } from "../domain/errors.ts";
import type { Clock } from "../domain/types.ts";
import { migrateToLatest } from "./migrations/migrate.ts";
import {
  accountFromRow,
  accountToRow,
  apiKeyFromRow,
  apiKeyToRow,
  fillFromRow,
  fillToRow,
  orderFromRow,
  orderPatchToRow,
  orderToRow,
  sessionFromRow,
  type Database,
} from "./rows.ts";
import type {
  AccountRecord,
  ApiKeyRecord,
  FillRecord,
  OrderPatch,
  OrderRecord,
  OrderStatus,
  Page,
  SessionRecord,
  Store,
} from "./store.ts";

/**
 * The Store port over any Kysely database of the crossfill schema. Only SQL that SQLite and
 * PostgreSQL both accept is used (ON CONFLICT, RETURNING, row-value comparison), so each backend
 * only supplies a dialect. Timestamps are ISO-8601 strings from `Date.prototype.toISOString`, whose
 * fixed width makes text order the same as time order.
 */
export class KyselyStore implements Store {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async migrate(): Promise<void> {
    await migrateToLatest(this.db);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  async createAccount(a: Omit<AccountRecord, "createdAt">): Promise<AccountRecord> {
    const account: AccountRecord = { ...a, createdAt: this.nowIso() };
    await this.db.insertInto("accounts").values(accountToRow(account)).execute();
    return account;
  }

  async accountById(id: string): Promise<AccountRecord | undefined> {
    const row = await this.db.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst();
    return row && accountFromRow(row);
  }

  async accountByEmail(email: string): Promise<AccountRecord | undefined> {
    const row = await this.db.selectFrom("accounts").selectAll().where("email", "=", email).executeTakeFirst();
    return row && accountFromRow(row);
  }

  async markAccountFunded(id: string, at: string): Promise<AccountRecord> {
    const row = await this.db.updateTable("accounts").set({ funded_at: at }).where("id", "=", id).returningAll().executeTakeFirst();
    if (!row) throw new Error(`account ${id} does not exist`);
    return accountFromRow(row);
  }

  async insertApiKey(k: Omit<ApiKeyRecord, "createdAt" | "lastUsedAt" | "revokedAt">): Promise<ApiKeyRecord> {
    const key: ApiKeyRecord = { ...k, createdAt: this.nowIso(), lastUsedAt: null, revokedAt: null };
    await this.db.insertInto("api_keys").values(apiKeyToRow(key)).execute();
    return key;
  }

  async apiKey(apiKey: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.selectFrom("api_keys").selectAll().where("api_key", "=", apiKey).executeTakeFirst();
    return row && apiKeyFromRow(row);
  }

  async listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("account_id", "=", accountId)
      .orderBy("created_at")
      .orderBy("api_key")
      .execute();
    return rows.map(apiKeyFromRow);
  }

  async revokeApiKey(apiKey: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable("api_keys")
      .set({ revoked_at: at })
      .where("api_key", "=", apiKey)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async touchApiKey(apiKey: string, at: string): Promise<void> {
    // Requests finish out of order across instances; a late writer must not move the time backwards.
    await this.db
      .updateTable("api_keys")
      .set({ last_used_at: at })
      .where("api_key", "=", apiKey)
      .where((eb) => eb.or([eb("last_used_at", "is", null), eb("last_used_at", "<", at)]))
      .execute();
  }

  async insertOrder(o: OrderRecord): Promise<{ created: true; order: OrderRecord } | { created: false; order: OrderRecord }> {
    // Insert-then-select rather than select-then-insert: the unique index arbitrates concurrent
    // retries, across connections and server instances alike.
    const inserted = await this.db
      .insertInto("orders")
      .values(orderToRow(o))
      .onConflict((oc) => oc.columns(["account_id", "client_order_id"]).where("client_order_id", "is not", null).doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted) return { created: true, order: orderFromRow(inserted) };
    const existing = await this.db
      .selectFrom("orders")
      .selectAll()
      .where("account_id", "=", o.accountId)
      .where("client_order_id", "=", o.clientOrderId)
      .executeTakeFirstOrThrow();
    return { created: false, order: orderFromRow(existing) };
  }

  async updateOrder(id: string, patch: OrderPatch): Promise<OrderRecord> {
    const row = await this.db
      .updateTable("orders")
      .set({ ...orderPatchToRow(patch), updated_at: patch.updatedAt ?? this.nowIso() })
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new AppError("order_not_found", `No order ${id}.`);
    return orderFromRow(row);
  }

  async order(id: string): Promise<OrderRecord | undefined> {
    const row = await this.db.selectFrom("orders").selectAll().where("id", "=", id).executeTakeFirst();
    return row && orderFromRow(row);
  }

  async listOrders(accountId: string, opts: { limit: number; cursor: string | null }): Promise<Page<OrderRecord>> {
    if (!Number.isInteger(opts.limit) || opts.limit < 1) throw new RangeError("limit must be a positive integer");
    let query = this.db.selectFrom("orders").selectAll().where("account_id", "=", accountId);
    if (opts.cursor !== null) {
      const after = decodeCursor(opts.cursor);
      query = query.where((eb) => eb(eb.refTuple("created_at", "id"), "<", eb.tuple(after.createdAt, after.id)));
    }
    // One row beyond the page tells whether another page exists without a COUNT.
    const rows = await query.orderBy("created_at", "desc").orderBy("id", "desc").limit(opts.limit + 1).execute();
    const data = rows.slice(0, opts.limit).map(orderFromRow);
    const last = data[data.length - 1];
    return { data, nextCursor: rows.length > opts.limit && last ? encodeCursor(last) : null };
  }

  async ordersInStatus(statuses: readonly OrderStatus[]): Promise<OrderRecord[]> {
    if (statuses.length === 0) return [];
    const rows = await this.db
      .selectFrom("orders")
      .selectAll()
      .where("status", "in", [...statuses])
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map(orderFromRow);
  }

  async insertFills(fills: FillRecord[]): Promise<void> {
    if (fills.length === 0) return;
    await this.db
      .insertInto("fills")
      .values(fills.map(fillToRow))
      .onConflict((oc) => oc.columns(["venue", "trade_id"]).doNothing())
      .execute();
  }

  async fills(orderId: string): Promise<FillRecord[]> {
    const rows = await this.db
      .selectFrom("fills")
      .selectAll()
      .where("order_id", "=", orderId)
      .orderBy("created_at")
      .orderBy("venue")
      .orderBy("trade_id")
      .execute();
    return rows.map(fillFromRow);
  }

  async insertSession(s: SessionRecord): Promise<void> {
    await this.db
      .insertInto("sessions")
      .values({ id_hash: s.idHash, account_id: s.accountId, created_at: s.createdAt, expires_at: s.expiresAt })
      .execute();
  }

  async session(idHash: string, now: string): Promise<SessionRecord | undefined> {
    const row = await this.db.selectFrom("sessions").selectAll().where("id_hash", "=", idHash).where("expires_at", ">", now).executeTakeFirst();
    return row && sessionFromRow(row);
  }

  async deleteSession(idHash: string): Promise<void> {
    await this.db.deleteFrom("sessions").where("id_hash", "=", idHash).execute();
  }

  async purgeSessions(before: string): Promise<void> {
    await this.db.deleteFrom("sessions").where("expires_at", "<=", before).execute();
  }

  async rememberSignature(apiKey: string, signature: string, expiresAt: number): Promise<boolean> {
    // An expired row is not yet purged but no longer counts: the upsert takes it over. A live row
    // makes the WHERE false, so nothing is written and the count says "replay".
    const result = await this.db
      .insertInto("replay_signatures")
      .values({ api_key: apiKey, signature, expires_at: BigInt(expiresAt) })
      .onConflict((oc) =>
        oc
          .columns(["api_key", "signature"])
          .doUpdateSet({ expires_at: (eb) => eb.ref("excluded.expires_at") })
          .where("replay_signatures.expires_at", "<=", BigInt(this.clock.now())),
      )
      .executeTakeFirst();
    return result.numInsertedOrUpdatedRows === 1n;
  }

  async purgeSignatures(before: number): Promise<void> {
    await this.db.deleteFrom("replay_signatures").where("expires_at", "<", BigInt(before)).execute();
  }

  private nowIso(): string {
    return new Date(this.clock.now()).toISOString();
  }
}

interface OrderCursor {
  createdAt: string;
  id: string;
}

function encodeCursor(o: OrderRecord): string {
  return Buffer.from(JSON.stringify([o.createdAt, o.id]), "utf8").toString("base64url");
}

function decodeCursor(cursor: string): OrderCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || typeof parsed[0] !== "string" || typeof parsed[1] !== "string") {
    throw new AppError("invalid_request", "cursor is not one this server returned", {
      fields: { cursor: "is not one this server returned" },
    });
  }
  return { createdAt: parsed[0], id: parsed[1] };
}
