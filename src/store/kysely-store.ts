import { DEFAULT_MIGRATION_TABLE, sql, type Kysely, type Transaction } from "kysely";
import { ENTERED_FROM, OPEN_STATUSES, RETRIED_REJECTIONS } from "../domain/order-status.ts";
import type { Micro, ShareMicro } from "../domain/money.ts";
import { applyMove, positionBook, type PositionBook, type PositionMove } from "../domain/pnl.ts";
import type { Clock, Outcome } from "../domain/types.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { FundsStore } from "./funds-store.ts";
import { MIGRATIONS, migrateToLatest } from "./migrations/migrate.ts";
import { QueryShapes, type Slots } from "./query-shapes.ts";
import {
  accountFromRow,
  accountToRow,
  apiKeyFromRow,
  apiKeyToRow,
  catalogEventFromRows,
  catalogEventToRow,
  catalogListingToRow,
  decodeLegs,
  fillFromRow,
  fillToRow,
  int64,
  orderFromRow,
  orderPatchToRow,
  orderToRow,
  positionFromRow,
  proposalFromRow,
  redemptionFromRow,
  redemptionToRow,
  resolutionFromRow,
  resolutionToRow,
  ROWS_PER_INSERT,
  sessionFromRow,
  type Database,
} from "./rows.ts";
import type {
  AcceptResult,
  AccountRecord,
  ApiKeyRecord,
  CatalogChange,
  ChainDeploymentRecord,
  CatalogEventRecord,
  CatalogListingRecord,
  ChildContent,
  EventResolutionRecord,
  FillRecord,
  Lease,
  NewApiKeyRecord,
  NewProposal,
  NonceKey,
  OrderPatch,
  OrderRecord,
  OrderStatus,
  Page,
  PositionRecord,
  ProposalRecord,
  ProposalStatus,
  RedemptionRecord,
  SessionRecord,
  Store,
} from "./store.ts";

/**
 * The Store port over any Kysely database of the crossfill schema. Only SQL that SQLite and
 * PostgreSQL both accept is used (ON CONFLICT, RETURNING, row-value comparison), so each backend
 * only supplies a dialect. Timestamps are ISO-8601 strings from `Date.prototype.toISOString`, whose
 * fixed width makes text order the same as time order.
 */
/** How a database tells that another connection may have changed API keys: SQLite's data_version, PostgreSQL's notifications. */
export interface KeyChanges {
  /** Moves when another connection may have changed a key; undefined while that cannot be known. */
  version(): number | undefined;
  /**
   * Tells the other connections, in the transaction `db` that changed a key: told as it commits, so a change
   * committed is always told, and one rolled back never is.
   */
  announce(db: Kysely<Database>): Promise<void>;
  close(): Promise<void>;
}

/** Addresses looked up in one query: well within SQLite's and PostgreSQL's limits on a statement's parameters. */
const ADDRESSES_PER_QUERY = 500;

export class KyselyStore implements Store {
  /** Keys this connection changed: another connection's changes are keyChanges'. */
  private ownKeyChanges = 0;
  private readonly funds: FundsStore;
  /** The queries of every order's steps, each built and compiled once per shape. */
  private readonly shaped: QueryShapes<Database>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly keyChanges: KeyChanges,
    /** What the backend runs beside its connections (SQLite's checkpointer), stopped before they close. */
    private readonly background?: { stop(): Promise<void> },
  ) {
    this.funds = new FundsStore(db, () => this.nowIso());
    this.shaped = new QueryShapes(db);
  }

  // Withdrawals, deposits, faucet drips, the chain scan cursor and the activity: funds-store.ts.
  insertWithdrawal: Store["insertWithdrawal"] = (...a) => this.funds.insertWithdrawal(...a);
  withdrawal: Store["withdrawal"] = (...a) => this.funds.withdrawal(...a);
  withdrawalByClientId: Store["withdrawalByClientId"] = (...a) => this.funds.withdrawalByClientId(...a);
  listWithdrawals: Store["listWithdrawals"] = (...a) => this.funds.listWithdrawals(...a);
  withdrawalsInStatus: Store["withdrawalsInStatus"] = (...a) => this.funds.withdrawalsInStatus(...a);
  updateWithdrawal: Store["updateWithdrawal"] = (...a) => this.funds.updateWithdrawal(...a);
  reopenWithdrawal: Store["reopenWithdrawal"] = (...a) => this.funds.reopenWithdrawal(...a);
  claimWithdrawal: Store["claimWithdrawal"] = (...a) => this.funds.claimWithdrawal(...a);
  renewWithdrawalLeases: Store["renewWithdrawalLeases"] = (...a) => this.funds.renewWithdrawalLeases(...a);
  releaseWithdrawal: Store["releaseWithdrawal"] = (...a) => this.funds.releaseWithdrawal(...a);
  insertDeposits: Store["insertDeposits"] = (...a) => this.funds.insertDeposits(...a);
  depositsInStatus: Store["depositsInStatus"] = (...a) => this.funds.depositsInStatus(...a);
  updateDeposit: Store["updateDeposit"] = (...a) => this.funds.updateDeposit(...a);
  claimDeposit: Store["claimDeposit"] = (...a) => this.funds.claimDeposit(...a);
  renewDepositLeases: Store["renewDepositLeases"] = (...a) => this.funds.renewDepositLeases(...a);
  releaseDeposit: Store["releaseDeposit"] = (...a) => this.funds.releaseDeposit(...a);
  recordFaucetDrip: Store["recordFaucetDrip"] = (...a) => this.funds.recordFaucetDrip(...a);
  faucetDrips: Store["faucetDrips"] = (...a) => this.funds.faucetDrips(...a);
  chainCursor: Store["chainCursor"] = (...a) => this.funds.chainCursor(...a);
  setChainCursor: Store["setChainCursor"] = (...a) => this.funds.setChainCursor(...a);
  raiseChainCursor: Store["raiseChainCursor"] = (...a) => this.funds.raiseChainCursor(...a);
  activity: Store["activity"] = (...a) => this.funds.activity(...a);

  async migrate(): Promise<void> {
    await migrateToLatest(this.db);
  }

  async made(): Promise<boolean> {
    const tables = await this.db.introspection.getTables({ withInternalKyselyTables: true });
    if (!tables.some((t) => t.name === DEFAULT_MIGRATION_TABLE)) return false;
    // Another application's, which migrates with Kysely too, names none of crossfill's migrations; one in another
    // PostgreSQL schema than crossfill's tables go to is not there to read (42P01, undefined_table).
    const first = Object.keys(MIGRATIONS)[0]!;
    const applied = await sql<{ name: string }>`SELECT name FROM ${sql.table(DEFAULT_MIGRATION_TABLE)} WHERE name = ${first}`.execute(this.db).catch((e: unknown) => {
      if ((e as { code?: unknown }).code === "42P01") return { rows: [] };
      throw e;
    });
    return applied.rows.length > 0;
  }

  async close(): Promise<void> {
    await this.keyChanges.close();
    await this.background?.stop();
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

  async accounts(): Promise<AccountRecord[]> {
    const rows = await this.db.selectFrom("accounts").selectAll().orderBy("created_at").orderBy("id").execute();
    return rows.map(accountFromRow);
  }

  async accountsByAddress(addresses: readonly string[]): Promise<AccountRecord[]> {
    const wanted = [...new Set(addresses.map((a) => a.toLowerCase()))];
    const found: AccountRecord[] = [];
    for (let i = 0; i < wanted.length; i += ADDRESSES_PER_QUERY) {
      const rows = await this.db.selectFrom("accounts").selectAll().where(sql<string>`lower(address)`, "in", wanted.slice(i, i + ADDRESSES_PER_QUERY)).execute();
      found.push(...rows.map(accountFromRow));
    }
    return found;
  }

  async setPasswordHash(id: string, hash: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const r = await trx.updateTable("accounts").set({ password_hash: hash }).where("id", "=", id).executeTakeFirst();
      if (r.numUpdatedRows === 0n) throw new Error(`account ${id} does not exist`);
      // The sessions opened with the old password end with it: a password set anew shuts out whoever had it.
      await trx.deleteFrom("sessions").where("account_id", "=", id).execute();
    });
  }

  async insertApiKey(k: NewApiKeyRecord): Promise<ApiKeyRecord> {
    const key: ApiKeyRecord = { ...k, withdrawalAllowlist: k.withdrawalAllowlist ?? null, createdAt: this.nowIso(), lastUsedAt: null, revokedAt: null };
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
    return this.db.transaction().execute(async (trx) => {
      const result = await trx.updateTable("api_keys").set({ revoked_at: at }).where("api_key", "=", apiKey).where("revoked_at", "is", null).executeTakeFirst();
      this.ownKeyChanges++;
      // A revocation committed with its notification failing would leave the other instances using the key.
      await this.keyChanges.announce(trx);
      return result.numUpdatedRows > 0n;
    });
  }

  apiKeysVersion(): string | undefined {
    const theirs = this.keyChanges.version();
    return theirs === undefined ? undefined : `${this.ownKeyChanges}:${theirs}`;
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

  async insertOrder(o: OrderRecord, lease?: Lease): Promise<{ created: true; order: OrderRecord } | { created: false; order: OrderRecord }> {
    // Insert-then-select rather than select-then-insert: the unique index arbitrates concurrent
    // retries, across connections and server instances alike.
    const row = { ...orderToRow(o), lease_owner: lease?.owner ?? null, lease_until: lease?.until ?? null };
    const {
      rows: [inserted],
    } = await this.shaped.run(
      `insertOrder ${Object.keys(row)}`,
      (slot) =>
        this.db
          .insertInto("orders")
          .values(slotsOf(slot, row))
          .onConflict((oc) => oc.columns(["account_id", "client_order_id"]).where("client_order_id", "is not", null).doNothing())
          .returningAll(),
      row,
    );
    if (inserted) return { created: true, order: orderFromRow(inserted) };
    const existing = await this.db
      .selectFrom("orders")
      .selectAll()
      .where("account_id", "=", o.accountId)
      .where("client_order_id", "=", o.clientOrderId)
      .executeTakeFirstOrThrow();
    return { created: false, order: orderFromRow(existing) };
  }

  async updateOrder(id: string, from: readonly OrderStatus[], patch: OrderPatch, owner?: string): Promise<OrderRecord | undefined> {
    if (patch.status !== undefined) {
      const allowed = ENTERED_FROM[patch.status];
      const wrong = from.filter((f) => !allowed.includes(f));
      if (wrong.length > 0) throw new Error(`order ${id}: no transition from ${wrong.join(", ")} to ${patch.status}`);
    }
    if (from.length === 0) return undefined;
    if (patch.status !== "filled" && patch.status !== "partially_filled") return this.writeOrder(this.db, id, from, patch, owner);
    return this.db.transaction().execute(async (trx) => {
      const order = await this.writeOrder(trx, id, from, patch, owner);
      if (order !== undefined && order.filledShares > 0n && order.sotTokenId !== null) {
        const move: PositionMove =
          order.side === "sell" ? { kind: "sell", shares: order.filledShares, proceeds: order.proceeds } : { kind: "buy", shares: order.filledShares, cost: order.spent };
        await this.movePosition(trx, order, order.sotTokenId, move, order.updatedAt);
      }
      return order;
    });
  }

  async recordUnsettled(id: string, status: OrderStatus, patch: OrderPatch): Promise<OrderRecord | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const order = await this.writeOrder(trx, id, [status], patch, undefined, true);
      if (order !== undefined && order.filledShares > 0n && order.sotTokenId !== null) await this.rebookPosition(trx, order, order.sotTokenId, order.updatedAt);
      return order;
    });
  }

  async recordStrandedHold(id: string, patch: OrderPatch): Promise<OrderRecord | undefined> {
    return this.writeOrder(this.db, id, ["rejected", "failed"], patch, undefined, true);
  }

  /** The compare-and-set of updateOrder, on `on` (the store's connections or a transaction); `unreleased`: only while release_tx is empty. */
  private async writeOrder(on: Kysely<Database>, id: string, from: readonly OrderStatus[], patch: OrderPatch, owner: string | undefined, unreleased = false): Promise<OrderRecord | undefined> {
    const updatedAt = patch.updatedAt ?? this.nowIso();
    // A lock, or a sell's escrow, is recorded once: recovery writing it again with its release keeps the time it was first recorded.
    const held = patch.locked !== undefined || patch.escrowed !== undefined;
    const set = { ...orderPatchToRow(patch), updated_at: updatedAt, ...(held ? { locked_at: updatedAt } : {}) };
    const values: Record<string, unknown> = { ...set, "(id)": id, "(owner)": owner };
    from.forEach((f, i) => (values[`(from ${i})`] = f));
    const {
      rows: [row],
    } = await this.shaped.run(
      `updateOrder ${Object.keys(set)} from ${from.length}${owner === undefined ? "" : " owner"}${unreleased ? " unreleased" : ""}`,
      (slot) => {
        const query = this.db
          .updateTable("orders")
          .set({ ...slotsOf(slot, set), ...("locked_at" in set ? { locked_at: sql<string>`COALESCE(locked_at, ${slot("locked_at")})` } : {}) })
          .where("id", "=", slot("(id)"))
          .where(
            "status",
            "in",
            from.map((_, i) => slot(`(from ${i})`)),
          );
        const owned = owner === undefined ? query : query.where("lease_owner", "=", slot("(owner)"));
        return (unreleased ? owned.where("release_tx", "is", null) : owned).returningAll();
      },
      values,
      on,
    );
    return row && orderFromRow(row);
  }

  /**
   * Takes one move into a position's book, inside the transaction that stores what made it. The upsert
   * locks the position's row (PostgreSQL) until the transaction ends, so moves of one position from
   * several connections are taken in one at a time, each on the book the last one left.
   */
  private async movePosition(
    trx: Transaction<Database>,
    position: { accountId: string; eventId: string; outcome: Outcome },
    sotTokenId: string,
    move: PositionMove,
    at: string,
  ): Promise<void> {
    const key = { account_id: position.accountId, event_id: position.eventId, outcome: position.outcome };
    // A buy into a book that is not short adds its shares and cost (applyMove): one statement, the common case.
    if (move.kind === "buy") {
      const bought = { ...key, sot_token_id: sotTokenId, shares: move.shares, cost: move.cost, realized: 0n, exits: 0n, updated_at: at };
      const { rows } = await this.shaped.run(
        "buyIntoPosition",
        (slot) =>
          this.db
            .insertInto("positions")
            .values(slotsOf(slot, bought))
            .onConflict((oc) =>
              oc
                .columns(["account_id", "event_id", "outcome"])
                .doUpdateSet((eb) => ({
                  shares: eb("positions.shares", "+", eb.ref("excluded.shares")),
                  cost: eb("positions.cost", "+", eb.ref("excluded.cost")),
                  updated_at: eb.ref("excluded.updated_at"),
                }))
                .where("positions.shares", ">=", 0n),
            )
            .returning("account_id"),
        bought,
        trx,
      );
      if (rows.length > 0) return;
    }
    const held = await this.lockPosition(trx, position, sotTokenId, at);
    await this.writePosition(trx, position, applyMove(held.book, move), held.exits + (move.kind === "buy" ? 0n : 1n));
  }

  /** The position's book, its row made if it has none, locked (PostgreSQL) until the transaction ends: movePosition's read. */
  private async lockPosition(trx: Transaction<Database>, position: { accountId: string; eventId: string; outcome: Outcome }, sotTokenId: string, at: string): Promise<PositionRecord> {
    const empty = { account_id: position.accountId, event_id: position.eventId, outcome: position.outcome, sot_token_id: sotTokenId, shares: 0n, cost: 0n, realized: 0n, exits: 0n, updated_at: at };
    const {
      rows: [row],
    } = await this.shaped.run(
      "positionForMove",
      (slot) =>
        this.db
          .insertInto("positions")
          .values(slotsOf(slot, empty))
          .onConflict((oc) => oc.columns(["account_id", "event_id", "outcome"]).doUpdateSet((eb) => ({ updated_at: eb.ref("excluded.updated_at") })))
          .returningAll(),
      empty,
      trx,
    );
    return positionFromRow(row!);
  }

  /**
   * Folds the position's book again from the moves the store keeps, as migration 013 folded them (by the time of their last
   * update, then order id or redemption key): its settled orders with shares filled but those whose settlement a
   * reorganisation removed and whose lock or escrow went back whole (no settle_tx, a release_tx) or is gone too (no settle_tx,
   * holding none), and its redemptions redeemed.
   */
  private async rebookPosition(trx: Transaction<Database>, position: { accountId: string; eventId: string; outcome: Outcome }, sotTokenId: string, at: string): Promise<void> {
    await this.lockPosition(trx, position, sotTokenId, at);
    const orders = await trx
      .selectFrom("orders")
      .select(["id", "side", "filled_shares", "spent", "proceeds", "updated_at"])
      .where("account_id", "=", position.accountId)
      .where("event_id", "=", position.eventId)
      .where("outcome", "=", position.outcome)
      .where("status", "in", ["filled", "partially_filled"])
      .where("filled_shares", ">", 0n)
      .where("sot_token_id", "is not", null)
      .where((eb) => eb.or([eb("settle_tx", "is not", null), eb.and([eb("release_tx", "is", null), eb.or([eb("locked", ">", 0n), eb("escrowed", ">", 0n)])])]))
      .execute();
    const redemptions = await trx
      .selectFrom("redemptions")
      .select(["key", "shares", "payout", "updated_at"])
      .where("account_id", "=", position.accountId)
      .where("event_id", "=", position.eventId)
      .where("outcome", "=", position.outcome)
      .where("status", "=", "redeemed")
      .execute();
    const moves: { at: string; ref: string; move: PositionMove }[] = [
      ...orders.map((o) => {
        const shares = int64(o.filled_shares, "orders.filled_shares");
        const move: PositionMove = o.side === "sell" ? { kind: "sell", shares, proceeds: int64(o.proceeds, "orders.proceeds") } : { kind: "buy", shares, cost: int64(o.spent, "orders.spent") };
        return { at: o.updated_at, ref: o.id, move };
      }),
      ...redemptions.map((r) => ({ at: r.updated_at, ref: r.key, move: { kind: "redeem", shares: int64(r.shares, "redemptions.shares"), payout: int64(r.payout, "redemptions.payout") } as const })),
    ].sort((a, b) => (a.at !== b.at ? (a.at < b.at ? -1 : 1) : a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
    await this.writePosition(trx, position, positionBook(moves.map((m) => m.move)), BigInt(moves.filter((m) => m.move.kind !== "buy").length));
  }

  /** Writes the position's book and its count of sells and redemptions taken in, its row locked by lockPosition. */
  private async writePosition(trx: Transaction<Database>, position: { accountId: string; eventId: string; outcome: Outcome }, book: PositionBook, exits: bigint): Promise<void> {
    const key = { account_id: position.accountId, event_id: position.eventId, outcome: position.outcome };
    const moved = { shares: book.shares, cost: book.cost, realized: book.realized, exits };
    await this.shaped.run(
      "movePosition",
      (slot) =>
        this.db
          .updateTable("positions")
          .set(slotsOf(slot, moved))
          .where("account_id", "=", slot("account_id"))
          .where("event_id", "=", slot("event_id"))
          .where("outcome", "=", slot("outcome")),
      { ...moved, ...key },
      trx,
    );
  }

  async claimOrder(id: string, lease: Lease, now: string): Promise<boolean> {
    const r = await this.db
      .updateTable("orders")
      .set({ lease_owner: lease.owner, lease_until: lease.until })
      .where("id", "=", id)
      .where("status", "in", [...OPEN_STATUSES])
      .where((eb) => eb.or([eb("lease_owner", "is", null), eb("lease_owner", "=", lease.owner), eb("lease_until", "<", now)]))
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  async reopenOrder(id: string, lease: Lease): Promise<OrderRecord | undefined> {
    const row = await this.db
      .updateTable("orders")
      .where("id", "=", id)
      .where("status", "=", "rejected")
      .where("error_code", "in", [...RETRIED_REJECTIONS])
      .where("lock_tx", "is", null)
      .where("release_tx", "is", null)
      // Its first attempt's recovery recorded it holding nothing (locked or escrowed 0), with a time: the lock its retry takes is dated anew.
      .set({ status: "pending", error_code: null, error_message: null, error_details: null, locked_at: null, lease_owner: lease.owner, lease_until: lease.until, updated_at: this.nowIso() })
      .returningAll()
      .executeTakeFirst();
    return row && orderFromRow(row);
  }

  async renewLeases(ids: readonly string[], lease: Lease): Promise<void> {
    if (ids.length === 0) return;
    await this.db.updateTable("orders").set({ lease_until: lease.until }).where("id", "in", [...ids]).where("lease_owner", "=", lease.owner).execute();
  }

  async releaseOrder(id: string, owner: string): Promise<void> {
    await this.db.updateTable("orders").set({ lease_owner: null, lease_until: null }).where("id", "=", id).where("lease_owner", "=", owner).execute();
  }

  async order(id: string): Promise<OrderRecord | undefined> {
    const {
      rows: [row],
    } = await this.shaped.run("order", (slot) => this.db.selectFrom("orders").selectAll().where("id", "=", slot("id")), { id });
    return row && orderFromRow(row);
  }

  async orderByClientId(accountId: string, clientOrderId: string): Promise<OrderRecord | undefined> {
    const row = await this.db.selectFrom("orders").selectAll().where("account_id", "=", accountId).where("client_order_id", "=", clientOrderId).executeTakeFirst();
    return row && orderFromRow(row);
  }

  async venueInventory(eventId: string, outcome: Outcome): Promise<Map<string, ShareMicro>> {
    const inventory = new Map<string, ShareMicro>();
    const add = (venue: string, shares: ShareMicro) => inventory.set(venue, (inventory.get(venue) ?? 0n) + shares);
    // The fills of buys, and of sells that finished, as the database keeps them (migration 012's triggers);
    // an open sell's child orders count whole, below.
    const held = await this.db.selectFrom("venue_inventory").select(["venue", "shares"]).where("event_id", "=", eventId).where("outcome", "=", outcome).execute();
    for (const r of held) add(r.venue, int64(r.shares, "venue_inventory.shares"));
    const selling = await this.db
      .selectFrom("orders")
      .select("legs")
      .where("event_id", "=", eventId)
      .where("outcome", "=", outcome)
      .where("side", "=", "sell")
      .where("status", "in", [...OPEN_STATUSES])
      .execute();
    for (const r of selling) for (const leg of decodeLegs(r.legs)) add(leg.venue, -leg.shares);
    return inventory;
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

  async positions(accountId?: string): Promise<PositionRecord[]> {
    let query = this.db.selectFrom("positions").selectAll();
    if (accountId !== undefined) query = query.where("account_id", "=", accountId);
    const rows = await query.orderBy("account_id").orderBy("event_id").orderBy("outcome").execute();
    return rows.map(positionFromRow);
  }

  async closedHolding(status: "rejected" | "failed"): Promise<OrderRecord[]> {
    const rows = await this.db
      .selectFrom("orders")
      .selectAll()
      .where("status", "=", status)
      .where("lock_tx", "is not", null)
      .where("release_tx", "is", null)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map(orderFromRow);
  }

  async resettling(status: "filled" | "partially_filled"): Promise<OrderRecord[]> {
    const rows = await this.db
      .selectFrom("orders")
      .selectAll()
      .where("status", "=", status)
      .where("settle_tx", "is", null)
      .where("release_tx", "is", null)
      .where((eb) => eb.or([eb("locked", ">", 0n), eb("escrowed", ">", 0n)]))
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map(orderFromRow);
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

  async eventResolutions(): Promise<EventResolutionRecord[]> {
    const rows = await this.db.selectFrom("event_resolutions").selectAll().orderBy("event_id").execute();
    return rows.map(resolutionFromRow);
  }

  async decideEvent(r: EventResolutionRecord): Promise<EventResolutionRecord> {
    await this.db
      .insertInto("event_resolutions")
      .values(resolutionToRow(r))
      .onConflict((oc) => {
        const first = oc.column("event_id");
        if (r.decidedBy !== "operator") return first.doNothing();
        const { event_id: _, ...decision } = resolutionToRow(r);
        return first.doUpdateSet(decision).where("event_resolutions.status", "=", "disputed");
      })
      .execute();
    const row = await this.db.selectFrom("event_resolutions").selectAll().where("event_id", "=", r.eventId).executeTakeFirstOrThrow();
    return resolutionFromRow(row);
  }

  async childOrderVenues(eventId: string): Promise<string[]> {
    const rows = await this.db.selectFrom("orders").select("legs").where("event_id", "=", eventId).execute();
    return [...new Set(rows.flatMap((r) => decodeLegs(r.legs).map((l) => l.venue)))].sort();
  }

  async holders(eventId: string): Promise<{ accountId: string; address: string }[]> {
    const rows = await this.db
      .selectFrom("orders")
      .innerJoin("accounts", "accounts.id", "orders.account_id")
      .select(["accounts.id", "accounts.address"])
      .distinct()
      .where("orders.event_id", "=", eventId)
      .where("orders.filled_shares", ">", 0n)
      .orderBy("accounts.id")
      .execute();
    return rows.map((r) => ({ accountId: r.id, address: r.address }));
  }

  async insertRedemptions(rs: readonly RedemptionRecord[]): Promise<void> {
    for (let i = 0; i < rs.length; i += ROWS_PER_INSERT) {
      await this.db
        .insertInto("redemptions")
        .values(rs.slice(i, i + ROWS_PER_INSERT).map(redemptionToRow))
        .onConflict((oc) => oc.column("key").doNothing())
        .execute();
    }
  }

  async redemptions(filter: { status?: RedemptionRecord["status"]; eventId?: string } = {}): Promise<RedemptionRecord[]> {
    let q = this.db.selectFrom("redemptions").selectAll();
    if (filter.status !== undefined) q = q.where("status", "=", filter.status);
    if (filter.eventId !== undefined) q = q.where("event_id", "=", filter.eventId);
    const rows = await q.orderBy("created_at").orderBy("key").execute();
    return rows.map(redemptionFromRow);
  }

  async replanRedemption(key: string, shares: ShareMicro, payout: Micro, at: string): Promise<void> {
    await this.db.updateTable("redemptions").set({ shares, payout, updated_at: at }).where("key", "=", key).where("status", "=", "pending").execute();
  }

  async markRedeemed(key: string, made: { shares: ShareMicro; payout: Micro; txHash: string }, at: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const [marked] = await trx
        .updateTable("redemptions")
        .set({ status: "redeemed", shares: made.shares, payout: made.payout, tx_hash: made.txHash, updated_at: at })
        .where("key", "=", key)
        .where("status", "<>", "redeemed")
        .returningAll()
        .execute();
      if (marked) {
        const r = redemptionFromRow(marked);
        await this.movePosition(trx, r, r.tokenId, { kind: "redeem", shares: r.shares, payout: r.payout }, at);
      }
    });
  }

  async insertFills(fills: FillRecord[]): Promise<void> {
    if (fills.length === 0) return;
    const rows = fills.map(fillToRow);
    const values: Record<string, unknown> = {};
    rows.forEach((r, i) => Object.entries(r).forEach(([k, v]) => (values[`${i} ${k}`] = v)));
    await this.shaped.run(
      `insertFills ${rows.length} ${Object.keys(rows[0]!)}`,
      (slot) =>
        this.db
          .insertInto("fills")
          .values(rows.map((r, i) => slotsOf(slot, r, `${i} `)))
          .onConflict((oc) => oc.columns(["venue", "trade_id", "client_order_id"]).doNothing()),
      values,
    );
  }

  async fills(orderId: string): Promise<FillRecord[]> {
    const { rows } = await this.shaped.run(
      "fills",
      (slot) => this.db.selectFrom("fills").selectAll().where("order_id", "=", slot("orderId")).orderBy("created_at").orderBy("venue").orderBy("trade_id"),
      { orderId },
    );
    return rows.map(fillFromRow);
  }

  async allFills(): Promise<FillRecord[]> {
    const rows = await this.db.selectFrom("fills").selectAll().orderBy("order_id").orderBy("venue").orderBy("trade_id").execute();
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

  async seedCatalog(events: readonly CatalogEventRecord[]): Promise<number> {
    const at = this.nowIso();
    return this.db.transaction().execute(async (trx) => {
      let inserted = 0;
      for (const e of events) {
        const row = await trx
          .insertInto("catalog_events")
          .values(catalogEventToRow(e, at))
          .onConflict((oc) => oc.column("event_id").doNothing())
          .returning("event_id")
          .executeTakeFirst();
        if (!row) continue;
        inserted++;
        await insertListings(trx, e.eventId, e.listings, 0n);
      }
      return inserted;
    });
  }

  async catalogEvents(): Promise<CatalogEventRecord[]> {
    const events = await this.db.selectFrom("catalog_events").selectAll().orderBy("event_id").execute();
    const listings = await this.db.selectFrom("catalog_listings").selectAll().orderBy("event_id").orderBy("position").execute();
    const byEvent = new Map<string, typeof listings>();
    for (const l of listings) byEvent.set(l.event_id, [...(byEvent.get(l.event_id) ?? []), l]);
    return events.map((e) => catalogEventFromRows(e, byEvent.get(e.event_id) ?? []));
  }

  async saveProposals(proposals: readonly NewProposal[]): Promise<ProposalRecord[]> {
    if (proposals.length === 0) return [];
    const at = this.nowIso();
    await this.db.transaction().execute(async (trx) => {
      for (const p of proposals) {
        const fresh = {
          kind: p.kind,
          event_id: p.eventId,
          title: p.title,
          score_ppm: BigInt(Math.round(p.score * 1e6)),
          reason: p.reason,
          members: JSON.stringify(p.members),
        };
        await trx
          .insertInto("proposals")
          .values({ id: p.id, ...fresh, status: "proposed", created_at: at, decided_at: null })
          .onConflict((oc) => oc.column("id").doUpdateSet(fresh).where("proposals.status", "=", "proposed"))
          .execute();
      }
    });
    const rows = await this.db.selectFrom("proposals").selectAll().where("id", "in", proposals.map((p) => p.id)).execute();
    const byId = new Map(rows.map((r) => [r.id, proposalFromRow(r)]));
    return proposals.map((p) => byId.get(p.id)!);
  }

  async proposal(id: string): Promise<ProposalRecord | undefined> {
    const row = await this.db.selectFrom("proposals").selectAll().where("id", "=", id).executeTakeFirst();
    return row && proposalFromRow(row);
  }

  async listProposals(status?: ProposalStatus): Promise<ProposalRecord[]> {
    let query = this.db.selectFrom("proposals").selectAll();
    if (status !== undefined) query = query.where("status", "=", status);
    const rows = await query.orderBy("score_ppm", "desc").orderBy("id").execute();
    return rows.map(proposalFromRow);
  }

  async acceptProposal(id: string, change: CatalogChange, at: string): Promise<AcceptResult> {
    return this.db.transaction().execute(async (trx): Promise<AcceptResult> => {
      const row = await trx.selectFrom("proposals").selectAll().where("id", "=", id).executeTakeFirst();
      if (!row) return { kind: "not_found" };
      if (row.status !== "proposed") return { kind: "already_decided", proposal: proposalFromRow(row) };
      const eventId = change.kind === "new_event" ? change.event.eventId : change.eventId;
      const listings = change.kind === "new_event" ? change.event.listings : change.listings;
      const existing = await trx.selectFrom("catalog_listings").select(["venue", "position"]).where("event_id", "=", eventId).execute();
      if (change.kind === "new_event") {
        if (await trx.selectFrom("catalog_events").select("event_id").where("event_id", "=", eventId).executeTakeFirst()) {
          return { kind: "conflict", reason: `the catalog already has an event ${eventId}` };
        }
      } else if (!(await trx.selectFrom("catalog_events").select("event_id").where("event_id", "=", eventId).executeTakeFirst())) {
        return { kind: "conflict", reason: `the catalog has no event ${eventId}` };
      }
      for (const l of listings) {
        if (existing.some((x) => x.venue === l.venue)) return { kind: "conflict", reason: `${eventId} is already listed on ${l.venue}` };
        const taken = await trx
          .selectFrom("catalog_listings")
          .select("event_id")
          .where("venue", "=", l.venue)
          .where("venue_market_id", "=", l.venueMarketId)
          .executeTakeFirst();
        if (taken) return { kind: "conflict", reason: `${l.venue} market ${l.venueMarketId} is already listed under ${taken.event_id}` };
      }
      if (change.kind === "new_event") await trx.insertInto("catalog_events").values(catalogEventToRow(change.event, at)).execute();
      const next = existing.reduce((max, x) => (x.position >= max ? x.position + 1n : max), 0n);
      await insertListings(trx, eventId, listings, next);
      const accepted = await trx
        .updateTable("proposals")
        .set({ status: "accepted", decided_at: at, ...(change.kind === "new_event" ? { event_id: eventId, title: change.event.title } : {}) })
        .where("id", "=", id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { kind: "accepted", proposal: proposalFromRow(accepted) };
    });
  }

  async rejectProposal(id: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable("proposals")
      .set({ status: "rejected", decided_at: at })
      .where("id", "=", id)
      .where("status", "=", "proposed")
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async rememberSignature(apiKey: string, signature: string, expiresAt: number): Promise<boolean> {
    // An expired row is not yet purged but no longer counts: the upsert takes it over. A live row
    // makes the WHERE false, so nothing is written and the count says "replay".
    const result = await this.shaped.run(
      "rememberSignature",
      (slot) =>
        this.db
          .insertInto("replay_signatures")
          .values({ api_key: slot("apiKey"), signature: slot("signature"), expires_at: slot("expiresAt") })
          .onConflict((oc) =>
            oc
              .columns(["api_key", "signature"])
              .doUpdateSet({ expires_at: (eb) => eb.ref("excluded.expires_at") })
              .where("replay_signatures.expires_at", "<=", slot("now")),
          ),
      { apiKey, signature, expiresAt: BigInt(expiresAt), now: BigInt(this.clock.now()) },
    );
    return result.numAffectedRows === 1n;
  }

  async signatureSeen(apiKey: string, signature: string): Promise<boolean> {
    const row = await this.db
      .selectFrom("replay_signatures")
      .select("expires_at")
      .where("api_key", "=", apiKey)
      .where("signature", "=", signature)
      .where("expires_at", ">", BigInt(this.clock.now()))
      .executeTakeFirst();
    return row !== undefined;
  }

  async purgeSignatures(before: number): Promise<void> {
    await this.db.deleteFrom("replay_signatures").where("expires_at", "<", BigInt(before)).execute();
  }

  async chainDeployment(chainId: number): Promise<{ deployment: ChainDeploymentRecord | undefined; claim: Lease | undefined }> {
    const r = await this.db.selectFrom("chain_deployments").selectAll().where("chain_id", "=", BigInt(chainId)).executeTakeFirst();
    const recorded = r && r.usdc !== null && r.vault !== null && r.sot !== null && r.block !== null && r.build !== null;
    return {
      deployment: recorded ? { usdc: r.usdc!, vault: r.vault!, sot: r.sot!, block: int64(r.block, "chain_deployments.block"), build: r.build! } : undefined,
      claim: r?.claimed_by != null && r.claimed_until !== null ? { owner: r.claimed_by, until: r.claimed_until } : undefined,
    };
  }

  async claimChainDeployment(chainId: number, replacing: string | null, claim: Lease, now: string): Promise<boolean> {
    const id = BigInt(chainId);
    if (replacing === null) {
      // The first claim on a chain creates its row; the primary key lets one of several inserts through.
      const inserted = await this.db
        .insertInto("chain_deployments")
        .values({ chain_id: id, claimed_by: claim.owner, claimed_until: claim.until })
        .onConflict((oc) => oc.column("chain_id").doNothing())
        .executeTakeFirst();
      if (inserted.numInsertedOrUpdatedRows === 1n) return true;
    }
    const r = await this.db
      .updateTable("chain_deployments")
      .set({ claimed_by: claim.owner, claimed_until: claim.until })
      .where("chain_id", "=", id)
      .where("vault", replacing === null ? "is" : "=", replacing)
      .where((eb) => eb.or([eb("claimed_by", "is", null), eb("claimed_by", "=", claim.owner), eb("claimed_until", "<", now)]))
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  async finishChainDeployment(chainId: number, owner: string, deployment?: ChainDeploymentRecord): Promise<boolean> {
    const r = await this.db
      .updateTable("chain_deployments")
      .set({ ...(deployment ?? {}), claimed_by: null, claimed_until: null })
      .where("chain_id", "=", BigInt(chainId))
      .where("claimed_by", "=", owner)
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  async reserveNonces(key: NonceKey, floor: number, count: number, at: string): Promise<number> {
    const from = BigInt(floor);
    const n = BigInt(count);
    // An upsert is one statement: PostgreSQL holds the row's lock from reading handed_out to writing it
    // (a concurrent reservation waits, then reads the new value), SQLite its single writer's lock.
    const {
      rows: [row],
    } = await this.shaped.run(
      "reserveNonces",
      (slot) =>
        this.db
          .insertInto("chain_nonces")
          .values({ chain_id: slot("chainId"), genesis: slot("genesis"), operator: slot("operator"), handed_out: slot("upTo"), reserved_at: slot("at") })
          .onConflict((oc) =>
            oc.columns(["chain_id", "genesis", "operator"]).doUpdateSet({
              handed_out: sql<bigint>`CASE WHEN chain_nonces.handed_out > ${slot("from")} THEN chain_nonces.handed_out ELSE ${slot("from")} END + ${slot("n")}`,
              reserved_at: slot("at"),
            }),
          )
          .returning("handed_out"),
      { chainId: BigInt(key.chainId), genesis: key.genesis, operator: key.operator, upTo: from + n, at, from, n },
    );
    if (row === undefined) throw new Error("reserving nonces returned no row");
    return Number(int64(row.handed_out, "chain_nonces.handed_out") - n);
  }

  async noncesReserved(key: NonceKey): Promise<{ next: number; at: string } | undefined> {
    const row = await this.db
      .selectFrom("chain_nonces")
      .select(["handed_out", "reserved_at"])
      .where("chain_id", "=", BigInt(key.chainId))
      .where("genesis", "=", key.genesis)
      .where("operator", "=", key.operator)
      .executeTakeFirst();
    return row && { next: Number(int64(row.handed_out, "chain_nonces.handed_out")), at: row.reserved_at };
  }

  async reserveChildExpiry(c: ChildContent, clientOrderId: string, fromSecond: number, at: string): Promise<number> {
    const content = { venue: c.venue, venue_market_id: c.venueMarketId, outcome: c.outcome, side: c.side, limit_price: c.limitPrice, shares: c.shares };
    for (;;) {
      // The seconds taken read first, so one insert usually does; an insert that meets a second taken
      // meanwhile (another caller's) inserts nothing, and the seconds are read again.
      const taken = await this.db
        .selectFrom("child_expiries")
        .select("expiry_second")
        .where((eb) => eb.and(content))
        .where("expiry_second", ">=", BigInt(fromSecond))
        .orderBy("expiry_second")
        .execute();
      let second = BigInt(fromSecond);
      for (const r of taken) if (int64(r.expiry_second, "child_expiries.expiry_second") === second) second++;
      const inserted = await this.db
        .insertInto("child_expiries")
        .values({ ...content, expiry_second: second, client_order_id: clientOrderId, reserved_at: at })
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      if (inserted.numInsertedOrUpdatedRows === 1n) return Number(second);
    }
  }

  private nowIso(): string {
    return new Date(this.clock.now()).toISOString();
  }
}

async function insertListings(trx: Transaction<Database>, eventId: string, listings: readonly CatalogListingRecord[], first: bigint): Promise<void> {
  if (listings.length === 0) return;
  await trx
    .insertInto("catalog_listings")
    .values(listings.map((l, i) => catalogListingToRow(eventId, l, first + BigInt(i))))
    .execute();
}

/** A row whose every value is the slot of its column's name (with `prefix`), for a query built once per shape (QueryShapes). */
function slotsOf<R extends object>(slot: Slots, row: R, prefix = ""): R {
  return Object.fromEntries(Object.keys(row).map((k) => [k, slot(prefix + k)])) as R;
}
