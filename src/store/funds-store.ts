// The Store port's part for money in and out: withdrawals, deposits, faucet drips and the chain scan cursor,
// in the same portable SQL as the rest of KyselyStore (which delegates here).
import type { Kysely } from "kysely";
import {
  DEPOSIT_ENTERED_FROM,
  OPEN_DEPOSIT_STATUSES,
  OPEN_WITHDRAWAL_STATUSES,
  WITHDRAWAL_ENTERED_FROM,
} from "../domain/funds-status.ts";
import { activity } from "./activity.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { depositFromRow, depositToRow, int64, ROWS_PER_INSERT, withdrawalFromRow, withdrawalToRow, type Database } from "./rows.ts";
import type { Store } from "./store.ts";

type FundsMethods =
  | "insertWithdrawal"
  | "withdrawal"
  | "withdrawalByClientId"
  | "listWithdrawals"
  | "withdrawalsInStatus"
  | "updateWithdrawal"
  | "reopenWithdrawal"
  | "claimWithdrawal"
  | "renewWithdrawalLeases"
  | "releaseWithdrawal"
  | "insertDeposits"
  | "depositsInStatus"
  | "updateDeposit"
  | "claimDeposit"
  | "renewDepositLeases"
  | "releaseDeposit"
  | "recordFaucetDrip"
  | "faucetDrips"
  | "chainCursor"
  | "setChainCursor"
  | "raiseChainCursor"
  | "activity";

/** The tables whose rows an instance leases while it works on them, with the same id, status and lease columns (typed as the first). */
type Leased = "withdrawals" | "deposits";

export class FundsStore implements Pick<Store, FundsMethods> {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly nowIso: () => string,
  ) {}

  insertWithdrawal: Store["insertWithdrawal"] = async (w, lease) => {
    // Insert-then-select, as for orders: the unique index arbitrates concurrent retries across instances.
    const inserted = await this.db
      .insertInto("withdrawals")
      .values({ ...withdrawalToRow(w), lease_owner: lease?.owner ?? null, lease_until: lease?.until ?? null })
      .onConflict((oc) => oc.columns(["account_id", "client_withdrawal_id"]).where("client_withdrawal_id", "is not", null).doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted) return { created: true, withdrawal: withdrawalFromRow(inserted) };
    return { created: false, withdrawal: (await this.withdrawalByClientId(w.accountId, w.clientWithdrawalId!))! };
  };

  withdrawal: Store["withdrawal"] = async (id) => {
    const row = await this.db.selectFrom("withdrawals").selectAll().where("id", "=", id).executeTakeFirst();
    return row && withdrawalFromRow(row);
  };

  withdrawalByClientId: Store["withdrawalByClientId"] = async (accountId, clientWithdrawalId) => {
    const row = await this.db
      .selectFrom("withdrawals")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("client_withdrawal_id", "=", clientWithdrawalId)
      .executeTakeFirst();
    return row && withdrawalFromRow(row);
  };

  listWithdrawals: Store["listWithdrawals"] = async (accountId, opts) => {
    if (!Number.isInteger(opts.limit) || opts.limit < 1) throw new RangeError("limit must be a positive integer");
    let query = this.db.selectFrom("withdrawals").selectAll().where("account_id", "=", accountId);
    if (opts.cursor !== null) {
      const after = decodeCursor(opts.cursor);
      query = query.where((eb) => eb(eb.refTuple("created_at", "id"), "<", eb.tuple(after.createdAt, after.id)));
    }
    const rows = await query.orderBy("created_at", "desc").orderBy("id", "desc").limit(opts.limit + 1).execute();
    const data = rows.slice(0, opts.limit).map(withdrawalFromRow);
    const last = data[data.length - 1];
    return { data, nextCursor: rows.length > opts.limit && last ? encodeCursor(last) : null };
  };

  withdrawalsInStatus: Store["withdrawalsInStatus"] = async (statuses) => {
    if (statuses.length === 0) return [];
    const rows = await this.db.selectFrom("withdrawals").selectAll().where("status", "in", [...statuses]).orderBy("created_at").orderBy("id").execute();
    return rows.map(withdrawalFromRow);
  };

  updateWithdrawal: Store["updateWithdrawal"] = async (id, from, patch, owner) => {
    checkTransition("withdrawal", id, from, patch.status, WITHDRAWAL_ENTERED_FROM);
    if (from.length === 0) return undefined;
    let query = this.db.updateTable("withdrawals").where("id", "=", id).where("status", "in", [...from]);
    if (owner !== undefined) query = query.where("lease_owner", "=", owner);
    const row = await query
      .set({
        updated_at: this.nowIso(),
        ...(patch.status !== undefined && { status: patch.status }),
        ...(patch.txHash !== undefined && { tx_hash: patch.txHash }),
        ...(patch.errorCode !== undefined && { error_code: patch.errorCode }),
        ...(patch.errorMessage !== undefined && { error_message: patch.errorMessage }),
      })
      .returningAll()
      .executeTakeFirst();
    return row && withdrawalFromRow(row);
  };

  reopenWithdrawal: Store["reopenWithdrawal"] = async (id, lease) => {
    const row = await this.db
      .updateTable("withdrawals")
      .where("id", "=", id)
      .where("status", "=", "failed")
      .where("error_code", "=", "chain_unavailable")
      .set({ status: "pending", error_code: null, error_message: null, lease_owner: lease.owner, lease_until: lease.until, updated_at: this.nowIso() })
      .returningAll()
      .executeTakeFirst();
    return row && withdrawalFromRow(row);
  };

  claimWithdrawal: Store["claimWithdrawal"] = (id, lease, now) => this.claim("withdrawals", OPEN_WITHDRAWAL_STATUSES, id, lease, now);

  renewWithdrawalLeases: Store["renewWithdrawalLeases"] = (ids, lease) => this.renew("withdrawals", ids, lease);

  releaseWithdrawal: Store["releaseWithdrawal"] = (id, owner) => this.release("withdrawals", id, owner);

  insertDeposits: Store["insertDeposits"] = async (deposits) => {
    for (let i = 0; i < deposits.length; i += ROWS_PER_INSERT) {
      await this.db
        .insertInto("deposits")
        .values(deposits.slice(i, i + ROWS_PER_INSERT).map(depositToRow))
        .onConflict((oc) =>
          oc
            .column("id")
            .doUpdateSet((eb) => ({ status: "detected", block: eb.ref("excluded.block"), error_message: null, updated_at: eb.ref("excluded.updated_at") }))
            .where("deposits.status", "=", "dropped"),
        )
        .execute();
    }
  };

  depositsInStatus: Store["depositsInStatus"] = async (statuses) => {
    if (statuses.length === 0) return [];
    const rows = await this.db.selectFrom("deposits").selectAll().where("status", "in", [...statuses]).orderBy("block").orderBy("id").execute();
    return rows.map(depositFromRow);
  };

  updateDeposit: Store["updateDeposit"] = async (id, from, patch, owner) => {
    checkTransition("deposit", id, from, patch.status, DEPOSIT_ENTERED_FROM);
    if (from.length === 0) return undefined;
    let query = this.db.updateTable("deposits").where("id", "=", id).where("status", "in", [...from]);
    if (owner !== undefined) query = query.where("lease_owner", "=", owner);
    const row = await query
      .set({
        updated_at: this.nowIso(),
        ...(patch.status !== undefined && { status: patch.status }),
        ...(patch.accountId !== undefined && { account_id: patch.accountId }),
        ...(patch.amount !== undefined && { amount: patch.amount }),
        ...(patch.fromAddress !== undefined && { from_address: patch.fromAddress }),
        ...(patch.creditTx !== undefined && { credit_tx: patch.creditTx }),
        ...(patch.creditBlock !== undefined && { credit_block: patch.creditBlock }),
        ...(patch.creditBlockHash !== undefined && { credit_block_hash: patch.creditBlockHash }),
        ...(patch.errorMessage !== undefined && { error_message: patch.errorMessage }),
      })
      .returningAll()
      .executeTakeFirst();
    return row && depositFromRow(row);
  };

  claimDeposit: Store["claimDeposit"] = (id, lease, now) => this.claim("deposits", OPEN_DEPOSIT_STATUSES, id, lease, now);

  renewDepositLeases: Store["renewDepositLeases"] = (ids, lease) => this.renew("deposits", ids, lease);

  releaseDeposit: Store["releaseDeposit"] = (id, owner) => this.release("deposits", id, owner);

  recordFaucetDrip: Store["recordFaucetDrip"] = async (d) => {
    await this.db
      .insertInto("faucet_drips")
      .values({ key: d.key, tx_hash: d.txHash, account_id: d.accountId, amount: d.amount, created_at: d.createdAt })
      .onConflict((oc) => oc.columns(["key", "tx_hash"]).doNothing())
      .execute();
  };

  faucetDrips: Store["faucetDrips"] = async (accountId) => {
    const rows = await this.db.selectFrom("faucet_drips").selectAll().where("account_id", "=", accountId).orderBy("created_at", "desc").execute();
    return rows.map((r) => ({ key: r.key, txHash: r.tx_hash, accountId: r.account_id, amount: int64(r.amount, "faucet_drips.amount"), createdAt: r.created_at }));
  };

  chainCursor: Store["chainCursor"] = async (name) => {
    const row = await this.db.selectFrom("chain_cursors").select(["block", "hash"]).where("name", "=", name).executeTakeFirst();
    return row && { block: int64(row.block, "chain_cursors.block"), hash: row.hash };
  };

  setChainCursor: Store["setChainCursor"] = async (name, cursor) => {
    const at = this.nowIso();
    await this.db
      .insertInto("chain_cursors")
      .values({ name, block: cursor.block, hash: cursor.hash, updated_at: at })
      .onConflict((oc) => oc.column("name").doUpdateSet({ block: cursor.block, hash: cursor.hash, updated_at: at }))
      .execute();
  };

  raiseChainCursor: Store["raiseChainCursor"] = async (name, cursor) => {
    const at = this.nowIso();
    await this.db
      .insertInto("chain_cursors")
      .values({ name, block: cursor.block, hash: cursor.hash, updated_at: at })
      .onConflict((oc) => oc.column("name").doUpdateSet({ block: cursor.block, hash: cursor.hash, updated_at: at }).where("chain_cursors.block", "<", cursor.block))
      .execute();
  };

  activity: Store["activity"] = (accountId, opts) => activity(this.db, accountId, opts);

  private async claim(table: Leased, open: readonly string[], id: string, lease: { owner: string; until: string }, now: string): Promise<boolean> {
    const r = await this.db
      .updateTable(table as "withdrawals")
      .set({ lease_owner: lease.owner, lease_until: lease.until })
      .where("id", "=", id)
      .where("status", "in", [...open])
      .where((eb) => eb.or([eb("lease_owner", "is", null), eb("lease_owner", "=", lease.owner), eb("lease_until", "<", now)]))
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  private async renew(table: Leased, ids: readonly string[], lease: { owner: string; until: string }): Promise<void> {
    if (ids.length === 0) return;
    await this.db
      .updateTable(table as "withdrawals")
      .set({ lease_until: lease.until })
      .where("id", "in", [...ids])
      .where("lease_owner", "=", lease.owner)
      .execute();
  }

  private async release(table: Leased, id: string, owner: string): Promise<void> {
    await this.db
      .updateTable(table as "withdrawals")
      .set({ lease_owner: null, lease_until: null })
      .where("id", "=", id)
      .where("lease_owner", "=", owner)
      .execute();
  }
}

/** A patch that sets a status must come from states its state machine allows: anything else is a bug, not a race. */
function checkTransition<S extends string>(what: string, id: string, from: readonly S[], to: S | undefined, enteredFrom: Readonly<Record<S, readonly S[]>>): void {
  if (to === undefined) return;
  const wrong = from.filter((f) => !enteredFrom[to].includes(f));
  if (wrong.length > 0) throw new Error(`${what} ${id}: no transition from ${wrong.join(", ")} to ${to}`);
}
