import type { ErrorCode } from "./errors.ts";

/**
 * The order state machine of DESIGN §6. Every transition is a compare-and-set from the states an
 * order may leave for the next one, so no writer (a request, the reconciler, another instance) can
 * move an order backwards or sideways; but for Store.reopenOrder, which puts an order rejected with one of
 * RETRIED_REJECTIONS back to `pending` for its client's retry.
 */
export const ORDER_STATUSES = ["pending", "locked", "routing", "filled", "partially_filled", "rejected", "failed"] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
export const TERMINAL_STATUSES: readonly OrderStatus[] = ["filled", "partially_filled", "rejected", "failed"];
export const OPEN_STATUSES: readonly OrderStatus[] = ["pending", "locked", "routing"];

/**
 * What an order rejected before anything was locked or escrowed (no lock_tx, no release_tx) may be rejected with and still be run
 * again: a 5xx, "try again", not the order's final answer. Its client's retry under its client_order_id runs it
 * again under its same id; the Vault takes a lock or escrow of one id once, so the first's, should it land after all, is the retry's.
 */
export const RETRIED_REJECTIONS = ["chain_unavailable", "venue_unavailable", "order_interrupted"] as const satisfies readonly ErrorCode[];

/** The states an order may be in just before it moves to each state. */
export const ENTERED_FROM: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = {
  // Only Store.reopenOrder enters it from `rejected`: one of RETRIED_REJECTIONS its client sends again.
  pending: [],
  // The lock landed.
  locked: ["pending"],
  // Child orders are stored before they are sent; a later round adds its own.
  routing: ["locked", "routing"],
  filled: ["routing"],
  partially_filled: ["routing"],
  // Refused before anything was placed: nothing locked, or the lock released.
  rejected: ["pending", "locked"],
  // Interrupted with its funds released, or nothing filled.
  failed: ["pending", "locked", "routing"],
};

/**
 * Whether the client's retry under the order's client_order_id runs it again (Store.reopenOrder): rejected with one of
 * RETRIED_REJECTIONS before anything was locked or escrowed. A release says a hold was taken even without its lock_tx,
 * which a node of a pool behind the one that read the hold may not have found (Vault.heldBy).
 */
export function reopenable(o: { status: OrderStatus; lockTx: string | null; releaseTx: string | null; errorCode: string | null }): boolean {
  return o.status === "rejected" && o.lockTx === null && o.releaseTx === null && (RETRIED_REJECTIONS as readonly (string | null)[]).includes(o.errorCode);
}

export function isTerminal(s: OrderStatus): boolean {
  return TERMINAL_STATUSES.includes(s);
}
