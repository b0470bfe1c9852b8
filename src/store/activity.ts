// GET /v1/activity: every movement of an account's money, newest first, from the tables that record each
// kind, as one UNION ALL query paginated like the orders. A new kind of movement is one more entry of SOURCES:
// a select of the same eight columns from the table that records it, whose table has an index on the account
// and the column it gives as `created_at`.
import { sql, type Kysely, type SelectQueryBuilder } from "kysely";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import type { Database } from "./rows.ts";
import { int64 } from "./rows.ts";
import type { ActivityRecord, Page } from "./store.ts";

interface ActivityRow {
  id: string;
  type: string;
  amount: bigint;
  tx_hash: string | null;
  status: string;
  reference: string;
  address: string | null;
  created_at: string;
}

type Source = (db: Kysely<Database>, accountId: string) => SelectQueryBuilder<Database, keyof Database, ActivityRow>;

/** `type:reference`, the entry's id: unique across every kind, and the cursor's tie-breaker. */
const entryId = (type: string, reference: string) => sql<string>`${type} || ${sql.ref(reference)}`;
const text = (value: string) => sql<string>`${value}`;
const none = sql<string | null>`NULL`;

const SOURCES: Source[] = [
  // USDC sent to the account's deposit address; tx_hash is the credit's, once there is one.
  (db, accountId) =>
    db
      .selectFrom("deposits")
      .where("account_id", "=", accountId)
      .select([
        entryId("deposit:", "id").as("id"),
        text("deposit").as("type"),
        "amount",
        "credit_tx as tx_hash",
        "status",
        "id as reference",
        sql<string | null>`from_address`.as("address"),
        "created_at",
      ]),
  (db, accountId) =>
    db
      .selectFrom("faucet_drips")
      .where("account_id", "=", accountId)
      .select([
        entryId("faucet:", "tx_hash").as("id"),
        text("faucet").as("type"),
        "amount",
        sql<string | null>`tx_hash`.as("tx_hash"),
        text("credited").as("status"),
        "key as reference",
        none.as("address"),
        "created_at",
      ]),
  (db, accountId) =>
    db
      .selectFrom("withdrawals")
      .where("account_id", "=", accountId)
      .select([
        entryId("withdrawal:", "id").as("id"),
        text("withdrawal").as("type"),
        "amount",
        "tx_hash",
        "status",
        "id as reference",
        sql<string | null>`to_address`.as("address"),
        "created_at",
      ]),
  // A buy moves money up to three times: its lock, then its settle (what it spent) and its release (what it did not
  // spend: the rest, given back by the settlement's transaction, or all of it), so that its lock is the two summed.
  (db, accountId) =>
    db
      .selectFrom("orders")
      .where("account_id", "=", accountId)
      .where("locked", ">", 0n)
      .select([entryId("lock:", "id").as("id"), text("lock").as("type"), "locked as amount", "lock_tx as tx_hash", "status", "id as reference", none.as("address"), sql<string>`locked_at`.as("created_at")]),
  (db, accountId) =>
    db
      .selectFrom("orders")
      .where("account_id", "=", accountId)
      .where("side", "=", "buy")
      .where("settle_tx", "is not", null)
      .select([entryId("settle:", "id").as("id"), text("settle").as("type"), "spent as amount", "settle_tx as tx_hash", "status", "id as reference", none.as("address"), "updated_at as created_at"]),
  (db, accountId) =>
    db
      .selectFrom("orders")
      .where("account_id", "=", accountId)
      .where("side", "=", "buy")
      .where((eb) => eb.or([eb("release_tx", "is not", null), eb.and([eb("settle_tx", "is not", null), eb("locked", ">", eb.ref("spent"))])]))
      .select([
        entryId("release:", "id").as("id"),
        text("release").as("type"),
        // A settled order whose settlement a reorganisation removed, released whole (no settle_tx), had nothing spent on chain.
        sql<bigint>`CASE WHEN settle_tx IS NULL THEN locked ELSE locked - spent END`.as("amount"),
        sql<string | null>`COALESCE(release_tx, settle_tx)`.as("tx_hash"),
        "status",
        "id as reference",
        none.as("address"),
        "updated_at as created_at",
      ]),
  // A sell credits its proceeds in the settlement that burned the shares it sold (a sell that sold nothing moved no money).
  (db, accountId) =>
    db
      .selectFrom("orders")
      .where("account_id", "=", accountId)
      .where("side", "=", "sell")
      .where("settle_tx", "is not", null)
      .select([entryId("sell:", "id").as("id"), text("sell").as("type"), "proceeds as amount", "settle_tx as tx_hash", "status", "id as reference", none.as("address"), "updated_at as created_at"]),
  // A resolved event's position paid out (a losing one: burned for 0); tx_hash once the chain redeemed it.
  (db, accountId) =>
    db
      .selectFrom("redemptions")
      .where("account_id", "=", accountId)
      .select([entryId("redemption:", "key").as("id"), text("redemption").as("type"), "payout as amount", "tx_hash", "status", "event_id as reference", none.as("address"), "created_at"]),
];

export async function activity(db: Kysely<Database>, accountId: string, opts: { limit: number; cursor: string | null }): Promise<Page<ActivityRecord>> {
  if (!Number.isInteger(opts.limit) || opts.limit < 1) throw new RangeError("limit must be a positive integer");
  const after = opts.cursor === null ? null : decodeCursor(opts.cursor);
  // Each kind's newest entries of the page, read along its table's index on (account, time), then merged: a page
  // costs the same however long the account's history (all of it unioned and sorted, 20 ms at 10,000 orders).
  const page = (source: Source) => {
    let q = db.selectFrom(source(db, accountId).as("entries")).selectAll();
    // The bound on the time alone lets the index start at the cursor; the pair breaks ties of one instant.
    if (after !== null) q = q.where("created_at", "<=", after.createdAt).where((eb) => eb(eb.refTuple("created_at", "id"), "<", eb.tuple(after.createdAt, after.id)));
    // Wrapped once more: SQLite takes no ORDER BY or LIMIT on a member of a UNION itself.
    return db.selectFrom(q.orderBy("created_at", "desc").orderBy("id", "desc").limit(opts.limit + 1).as("newest")).selectAll();
  };
  const [first, ...rest] = SOURCES.map(page);
  const all = rest.reduce((union, q) => union.unionAll(q), first!);
  const query = db.selectFrom(all.as("activity")).selectAll();
  const rows = await query.orderBy("created_at", "desc").orderBy("id", "desc").limit(opts.limit + 1).execute();
  const data = rows.slice(0, opts.limit).map(
    (r): ActivityRecord => ({
      id: r.id,
      type: r.type,
      amount: int64(r.amount, "activity.amount"),
      txHash: r.tx_hash,
      status: r.status,
      reference: r.reference,
      address: r.address,
      createdAt: r.created_at,
    }),
  );
  const last = data[data.length - 1];
  return { data, nextCursor: rows.length > opts.limit && last ? encodeCursor(last) : null };
}
