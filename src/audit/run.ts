import { ORDER_STATUSES } from "../domain/order-status.ts";
import { chainOrderId } from "../orders/service.ts";
import type { Store } from "../store/store.ts";
import type { Vault } from "../vault/vault.ts";
import type { Venue, VenueFill } from "../venues/venue.ts";
import { checkInvariants, type InvariantResult } from "./invariants.ts";

export interface AuditReport {
  ok: boolean;
  checkedAt: string;
  orders: number;
  invariants: InvariantResult[];
}

/**
 * Reads the store, the chain and (when their history can be read) the venues, and checks every
 * invariant of the order path. `venues` undefined: their history is gone (simulators that ran inside
 * a stopped server), and the comparison with their trades is skipped, saying so.
 */
export async function audit(store: Store, vault: Vault, venues: readonly Venue[] | undefined, now: Date): Promise<AuditReport> {
  const [orders, fills, accounts, redemptions, ledger] = await Promise.all([
    store.ordersInStatus(ORDER_STATUSES),
    store.allFills(),
    store.accounts(),
    store.redemptions(),
    vault.ledger(),
  ]);
  const venueTrades = venues && new Map<string, VenueFill[]>(await Promise.all(venues.map(async (v) => [v.id, await v.trades()] as [string, VenueFill[]])));
  const invariants = checkInvariants({ orders, fills, accounts, redemptions, ledger, chainId: chainOrderId, venueTrades });
  return { ok: invariants.every((i) => i.violations === null || i.violations === 0), checkedAt: now.toISOString(), orders: orders.length, invariants };
}

/** The report as a person reads it: one line per invariant, with examples of what broke it. */
export function formatAudit(r: AuditReport): string {
  const lines = [`crossfill audit of ${r.orders} orders at ${r.checkedAt}: ${r.ok ? "every invariant holds" : "VIOLATIONS FOUND"}`];
  for (const i of r.invariants) {
    const mark = i.violations === null ? "skip" : i.violations === 0 ? " ok " : "FAIL";
    lines.push(`[${mark}] ${i.name}: ${i.description}${i.violations ? ` (${i.violations} violations)` : ""}${i.skipped ? ` (skipped: ${i.skipped})` : ""}`);
    for (const e of i.examples) lines.push(`         ${e}`);
  }
  return lines.join("\n");
}
