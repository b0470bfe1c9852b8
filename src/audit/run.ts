import { DEPOSIT_STATUSES, WITHDRAWAL_STATUSES } from "../domain/funds-status.ts";
import { ORDER_STATUSES } from "../domain/order-status.ts";
import { chainWithdrawalId, depositKey } from "../funds/chain-ids.ts";
import { depositCursorName } from "../funds/deposits.ts";
import { chainOrderId } from "../orders/service.ts";
import type { AccountRecord, PositionRecord, Store } from "../store/store.ts";
import type { Address, Hex32, Ledger, UsdcTransfer, Vault } from "../vault/vault.ts";
import type { Venue, VenueFill } from "../venues/venue.ts";
import { checkInvariants, marketKey, type InvariantResult, type ResolvedHolding } from "./invariants.ts";

/** Printed as it is by `crossfill audit --json`: its keys are snake_case, as the API's. */
export interface AuditReport {
  ok: boolean;
  checked_at: string;
  orders: number;
  invariants: InvariantResult[];
}

/**
 * Reads the store, the chain and (when their history can be read) the venues, and checks every
 * invariant of the order path. `venues` undefined: their history is gone (simulators that ran inside
 * a stopped server), and the comparison with their trades is skipped, saying so.
 */
export async function audit(store: Store, vault: Vault, venues: readonly Venue[] | undefined, now: Date, examples?: number): Promise<AuditReport> {
  // Before the deposits: a running server's watcher stores what it scanned before it moves its cursor past it, so every
  // transfer under the cursor read first is among the deposits read after (read after them, a pass between the two reads
  // moved it past a transfer the audit's deposits lacked, reported as no stored deposit).
  const cursor = await store.chainCursor(depositCursorName(vault.info()));
  const [orders, fills, accounts, redemptions, positions, withdrawals, deposits] = await Promise.all([
    store.ordersInStatus(ORDER_STATUSES),
    store.allFills(),
    store.accounts(),
    store.redemptions(),
    store.positions(),
    store.withdrawalsInStatus(WITHDRAWAL_STATUSES),
    store.depositsInStatus(DEPOSIT_STATUSES),
  ]);
  // The chain after the store: a withdrawal, credit or settlement the store shows done landed before the store was told, so
  // the ledger read after has it (read at once, one paid and confirmed meanwhile was reported as never paid).
  const ledger = await vault.ledger();
  const markets = new Map(orders.map((o) => [marketKey(o), o]));
  const venueInventory = new Map(await Promise.all([...markets].map(async ([key, o]) => [key, await store.venueInventory(o.eventId, o.outcome)] as const)));
  const venueTrades = venues && new Map<string, VenueFill[]>(await Promise.all(venues.map(async (v) => [v.id, await v.trades()] as [string, VenueFill[]])));
  const invariants = checkInvariants({
    orders,
    fills,
    accounts,
    redemptions,
    resolvedHoldings: await resolvedHoldings(store, vault, accounts, positions),
    positions,
    ledger,
    chainId: chainOrderId,
    venueTrades,
    venueInventory,
    examples,
    withdrawals,
    deposits,
    withdrawalId: chainWithdrawalId,
    depositKey: (d) => depositKey(d.txHash as Hex32, d.logIndex),
    depositTransfers: cursor && (await scannedDeposits(cursor.block, vault, accounts, ledger)),
  });
  return { ok: invariants.every((i) => i.violations === null || i.violations === 0), checked_at: now.toISOString(), orders: orders.length, invariants };
}

/** What each position in a resolved event holds on chain. */
async function resolvedHoldings(store: Store, vault: Vault, accounts: readonly AccountRecord[], positions: readonly PositionRecord[]): Promise<ResolvedHolding[]> {
  const winners = new Map((await store.eventResolutions()).flatMap((r) => (r.status === "resolved" ? [[r.eventId, r.outcome] as const] : [])));
  const addressOf = new Map(accounts.map((a) => [a.id, a.address as Address]));
  const resolved = positions.filter((p) => winners.has(p.eventId));
  const balances = await vault.sotBalances(resolved.map((p) => ({ account: addressOf.get(p.accountId)!, tokenId: BigInt(p.sotTokenId) })));
  return resolved.map((p, i) => ({ accountId: p.accountId, eventId: p.eventId, outcome: p.outcome, winning: winners.get(p.eventId) === p.outcome, shares: balances[i]! }));
}

/** The USDC transfers into deposit addresses up to `scanned`, the block the deposit watcher says it scanned (and the ledger read). */
async function scannedDeposits(scanned: bigint, vault: Vault, accounts: readonly AccountRecord[], ledger: Ledger): Promise<UsdcTransfer[]> {
  const addresses = new Set(accounts.filter((a) => a.walletKeyEnc !== null).map((a) => a.address.toLowerCase()));
  const transfers = await vault.usdcTransfers(ledger.fromBlock, scanned < ledger.toBlock ? scanned : ledger.toBlock);
  return transfers.filter((t) => addresses.has(t.to.toLowerCase()));
}

/** The report as a person reads it: one line per invariant, with examples of what broke it. */
export function formatAudit(r: AuditReport): string {
  const lines = [`crossfill audit of ${r.orders} orders at ${r.checked_at}: ${r.ok ? "every invariant holds" : "VIOLATIONS FOUND"}`];
  for (const i of r.invariants) {
    const mark = i.violations === null ? "skip" : i.violations === 0 ? " ok " : "FAIL";
    lines.push(`[${mark}] ${i.name}: ${i.description}${i.violations ? ` (${i.violations} violations)` : ""}${i.skipped ? ` (skipped: ${i.skipped})` : ""}`);
    for (const e of i.examples) lines.push(`         ${e}`);
  }
  return lines.join("\n");
}
