import { OPEN_DEPOSIT_STATUSES, OPEN_WITHDRAWAL_STATUSES } from "../domain/funds-status.ts";
import { formatMicro } from "../domain/money.ts";
import { depositId, placesInTransactions } from "../funds/chain-ids.ts";
import type { AccountRecord, DepositRecord, WithdrawalRecord } from "../store/store.ts";
import type { Hex32, Ledger, UsdcTransfer } from "../vault/vault.ts";

/** What the audit of money in and out reads, beside the order path's input. */
export interface FundsAuditInput {
  withdrawals: readonly WithdrawalRecord[];
  deposits: readonly DepositRecord[];
  accounts: readonly AccountRecord[];
  ledger: Ledger;
  /** The on-chain id of a withdrawal. */
  withdrawalId(id: string): Hex32;
  /** The on-chain key of a deposit. */
  depositKey(d: DepositRecord): Hex32;
  /**
   * The USDC transfers into deposit addresses up to where the deposit watcher says it scanned; undefined before
   * it scanned at all.
   */
  depositTransfers: readonly UsdcTransfer[] | undefined;
}

export interface Checks {
  check(name: string, description: string, run: (bad: (what: string) => void) => void): void;
  /** An invariant that cannot be checked from what the audit could read, and why. */
  skip(name: string, description: string, why: string): void;
}

const same = (a: string | null, b: string) => a !== null && a.toLowerCase() === b.toLowerCase();

/** The invariants of withdrawals and deposits (DESIGN §12): each paid or credited exactly once, as the store says. */
export function checkFundsInvariants(input: FundsAuditInput, { check, skip }: Checks): void {
  const { withdrawals, deposits, ledger } = input;
  const addressOf = new Map(input.accounts.map((a) => [a.id, a.address.toLowerCase()]));
  const byWithdrawalId = new Map(withdrawals.map((w) => [input.withdrawalId(w.id).toLowerCase(), w]));
  const byDepositKey = new Map(deposits.map((d) => [input.depositKey(d).toLowerCase(), d]));

  check("withdrawals_finished", "every withdrawal was confirmed or failed", (bad) => {
    for (const w of withdrawals) if (w.status !== "confirmed" && w.status !== "failed") bad(`${w.id} is ${w.status}`);
  });

  check("withdrawals_paid_once", "each confirmed withdrawal was paid by exactly one transaction, of its amount to its address, and nothing else was paid", (bad) =>
    doneOnce(bad, {
      verb: "paid",
      records: byWithdrawalId,
      events: ledger.withdrawnTo,
      idOf: (p) => p.withdrawalId,
      done: (w) => w.status === "confirmed",
      open: (w) => OPEN_WITHDRAWAL_STATUSES.includes(w.status),
      stray: (p) => `payout ${p.withdrawalId} of ${formatMicro(p.amount)} USDC to ${p.to} belongs to no withdrawal`,
      differs: (w, p) =>
        p.amount !== w.amount || !same(w.toAddress, p.to) || !same(addressOf.get(w.accountId) ?? null, p.client)
          ? `${w.id} asked ${formatMicro(w.amount)} USDC to ${w.toAddress}; the chain paid ${formatMicro(p.amount)} from ${p.client} to ${p.to}`
          : !same(w.txHash, p.txHash)
            ? `${w.id}'s tx_hash ${w.txHash} is not the transaction that paid it (${p.txHash})`
            : undefined,
    }),
  );

  check("one_withdrawal_per_client_id", "one withdrawal per client_withdrawal_id of an account", (bad) => {
    const seen = new Set<string>();
    for (const w of withdrawals) {
      if (w.clientWithdrawalId === null) continue;
      const key = `${w.accountId}/${w.clientWithdrawalId}`;
      if (seen.has(key)) bad(`${key} names more than one withdrawal`);
      seen.add(key);
    }
  });

  check("deposits_finished", "every deposit stored was credited, or is no longer on chain", (bad) => {
    for (const d of deposits) if (d.status !== "credited" && d.status !== "dropped") bad(`${d.id} is ${d.status}`);
  });

  check("deposits_credited_once", "each credited deposit was credited by exactly one transaction, of its amount to its account, and nothing else was credited", (bad) =>
    doneOnce(bad, {
      verb: "credited",
      records: byDepositKey,
      events: ledger.depositCredits,
      idOf: (c) => c.key,
      done: (d) => d.status === "credited",
      open: (d) => OPEN_DEPOSIT_STATUSES.includes(d.status),
      stray: (c) => `credit ${c.key} of ${formatMicro(c.amount)} USDC to ${c.client} belongs to no deposit`,
      differs: (d, c) =>
        c.amount !== d.amount || !same(addressOf.get(d.accountId) ?? null, c.client)
          ? `${d.id} of ${formatMicro(d.amount)} USDC was credited ${formatMicro(c.amount)} to ${c.client}`
          : !same(d.creditTx, c.txHash)
            ? `${d.id}'s credit tx ${d.creditTx} is not the transaction that credited it (${c.txHash})`
            : undefined,
    }),
  );

  const transfers = input.depositTransfers;
  if (transfers === undefined) {
    skip("deposits_found", "every transfer into a deposit address is a stored deposit", "the deposit watcher has not scanned the chain yet");
  } else {
    check("deposits_found", "every transfer into a deposit address, up to where the watcher scanned, is a stored deposit of its account, not dropped unless it moved 0 USDC", (bad) => {
      const stored = new Map(deposits.map((d) => [d.id, d]));
      const accountOf = new Map(input.accounts.map((a) => [a.address.toLowerCase(), a.id]));
      const places = placesInTransactions(transfers);
      for (const [i, t] of transfers.entries()) {
        const d = stored.get(depositId(t.txHash, places[i]!));
        if (!d) bad(`transfer ${t.txHash}:${t.logIndex} of ${formatMicro(t.amount)} USDC to ${t.to} is no stored deposit`);
        else if (d.amount !== t.amount || d.accountId !== accountOf.get(t.to.toLowerCase())) bad(`deposit ${d.id} differs from its transfer`);
        else if (d.status === "dropped" && t.amount > 0n) bad(`deposit ${d.id} of ${formatMicro(t.amount)} USDC is dropped, yet its transfer is on chain: the USDC sits at ${t.to}, credited to no one`);
      }
    });
  }

  check("vault_usdc", "the USDC the Vault holds backs every client's available and locked balance", (bad) => {
    const owed = ledger.balances.reduce((s, b) => s + b.available + b.locked, 0n);
    if (ledger.vaultUsdc < owed) bad(`the Vault holds ${formatMicro(ledger.vaultUsdc)} USDC against ${formatMicro(owed)} owed to its clients`);
  });
}

/**
 * The chain did each record's once-per-id call exactly once when the store says it was done (`done`), never when it
 * says it ended otherwise, and at most once while it is `open`; every such event belongs to a record. `records` are keyed by on-chain id, lower case.
 */
function doneOnce<R extends { id: string; status: string }, E extends { txHash: string }>(
  bad: (what: string) => void,
  o: {
    verb: string;
    records: ReadonlyMap<string, R>;
    events: readonly E[];
    idOf(e: E): string;
    done(r: R): boolean;
    /** In progress, between its two steps: what the chain did of it is not yet the store's, and `*_finished` reports it. */
    open(r: R): boolean;
    stray(e: E): string;
    /** What differs between the record and its event, if anything. */
    differs(r: R, e: E): string | undefined;
  },
): void {
  const eventsOf = new Map<string, E[]>();
  for (const e of o.events) {
    const key = o.idOf(e).toLowerCase();
    eventsOf.set(key, [...(eventsOf.get(key) ?? []), e]);
    if (!o.records.has(key)) bad(o.stray(e));
  }
  for (const [key, r] of o.records) {
    const found = eventsOf.get(key) ?? [];
    if (o.open(r)) {
      if (found.length > 1) bad(`${r.id} was ${o.verb} ${found.length} times`);
    } else if (!o.done(r)) {
      if (found.length > 0) bad(`${r.id} is ${r.status} but was ${o.verb} on chain`);
    } else if (found.length !== 1) bad(`${r.id} was ${o.verb} ${found.length} times`);
    else {
      const why = o.differs(r, found[0]!);
      if (why !== undefined) bad(why);
    }
  }
}
