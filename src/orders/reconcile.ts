import type { Clock } from "../domain/types.ts";
import type { OrderRecord, Store } from "../store/store.ts";
import type { Venue } from "../venues/venue.ts";
import type { Vault } from "../vault/vault.ts";
import { chainOrderId, childOrder, fillRecord, settlement, type OrderService } from "./service.ts";

export interface ReconcileDeps {
  store: Store;
  vault: Vault;
  venues: ReadonlyMap<string, Venue>;
  clock: Clock;
  log: { info(o: object, msg: string): void; warn(o: object, msg: string): void; error(o: object, msg: string): void };
}

const INTERRUPTED = "The server stopped while the order was in progress; the locked USDC was released.";

/**
 * Finishes every order not in a terminal state that no one is executing: the crash-recovery path,
 * run at start-up and then periodically. The chain and the venues are asked what happened; nothing
 * is guessed, and an order whose venue cannot answer yet is left for the next pass.
 * Returns how many orders were finished.
 */
export async function reconcileOrders(svc: OrderService, d: ReconcileDeps, minAgeMs: number): Promise<number> {
  const open = await d.store.ordersInStatus(["pending", "locked", "routing"]);
  let finished = 0;
  for (const order of open) {
    if (svc.inFlight.has(order.id)) continue;
    if (d.clock.now() - Date.parse(order.updatedAt) < minAgeMs) continue;
    try {
      if (await reconcileOne(svc, d, order)) finished++;
    } catch (e) {
      d.log.warn({ order_id: order.id, err: String(e) }, "reconciliation failed; will retry");
    }
  }
  return finished;
}

async function reconcileOne(svc: OrderService, d: ReconcileDeps, order: OrderRecord): Promise<boolean> {
  const chainId = chainOrderId(order.id);
  const lock = await d.vault.lockState(chainId);

  if (order.status !== "routing") {
    // No child order is placed before `routing` is persisted, so the venues hold nothing of this order.
    if (lock.kind === "locked") {
      const tx = await d.vault.release(chainId);
      await d.store.updateOrder(order.id, { status: "failed", locked: lock.amount, releaseTx: tx.txHash, errorCode: "order_interrupted", errorMessage: INTERRUPTED });
    } else {
      await d.store.updateOrder(order.id, {
        status: "rejected",
        errorCode: "order_interrupted",
        errorMessage: "The server stopped before the order's funds were locked; nothing was locked.",
      });
    }
    d.log.info({ order_id: order.id, lock: lock.kind }, "interrupted order closed");
    return true;
  }

  const fills = [];
  for (const leg of order.legs) {
    const venue = d.venues.get(leg.venue);
    if (!venue) throw new Error(`venue ${leg.venue} of order ${order.id} is not configured`);
    const status = await venue.status(leg.clientOrderId, childOrder(order, leg));
    if (status.kind === "open") return false;
    if (status.kind === "done") fills.push(...status.fills.map((f) => fillRecord(order.id, leg.venue, f, d.clock)));
  }
  await d.store.insertFills(fills);
  const stored = await d.store.fills(order.id);

  if (lock.kind === "locked") {
    await svc.settle(order, stored, true);
  } else {
    // The settle or release transaction landed but its result was not persisted: record what the chain did.
    await d.store.updateOrder(
      order.id,
      lock.kind === "settled"
        ? { ...settlement(order, stored, d.log), status: "partially_filled" }
        : { status: "failed", errorCode: "order_interrupted", errorMessage: INTERRUPTED },
    );
  }
  d.log.info({ order_id: order.id, lock: lock.kind, fills: stored.length }, "routing order reconciled");
  return true;
}
