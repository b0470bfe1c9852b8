import { OPEN_STATUSES } from "../domain/order-status.ts";
import type { Clock } from "../domain/types.ts";
import type { FillRecord, OrderLeg, OrderPatch, OrderRecord, Store } from "../store/store.ts";
import type { Venue } from "../venues/venue.ts";
import { MinedDeep } from "../vault/mined-deep.ts";
import { refusedByVault, type Hex32, type TxRef, type Vault } from "../vault/vault.ts";
import { learnOutcome, type ChildOutcome } from "./child-outcome.ts";
import { OpenHolds, type ExpiredHold, type OpenHold } from "./open-holds.ts";
import { chainOrderId, childOrder, fillRecord, nothingFilled, settledOnChain, type Checkpoint, type Hold, type Log, type OrderService } from "./service.ts";

export interface ReconcileDeps {
  store: Store;
  vault: Vault;
  venues: ReadonlyMap<string, Venue>;
  clock: Clock;
  log: Log;
  checkpoint?: (step: Checkpoint, orderId: string) => void;
  /** As OrderDeps.finished, for the orders recovery finishes, and a closed sell whose escrow the sweep returns or its client expires. */
  finished?: (order: OrderRecord) => void;
  /** Blocks under which the operator's transactions are final (0 or none: at once); DEPOSIT_CONFIRMATIONS. */
  confirmations?: number;
}

/** A routing order whose lock or escrow went back whole, none of its fills known, and whose venues reported fills after: the operator's. */
const FILLED_LATE = "A venue reported the order's fills only after its lock was released; nothing was charged and the locked USDC was released.";
const FILLED_LATE_SELL = "A venue reported the order's fills only after its escrow was returned; no share was sold and the escrowed shares were returned.";
/** An order recovery finds `pending` or `locked`: the server stopped, or the request left it there, a step before routing failed (OrderService.submit). */
const UNROUTED = "The order was interrupted before it was routed (the server stopped, or the chain or the store did not answer); the locked USDC was released.";
const UNROUTED_SELL = "The order was interrupted before it was routed (the server stopped, or the chain or the store did not answer); the escrowed shares were returned.";
/** An unrouted order whose lock or escrow was expired past its deadline (`expire`, a sell's `expireEscrow` by its client) before recovery released it. */
const UNROUTED_EXPIRED = "The order was not routed before its lock's deadline (the server stopped, or the chain or the store did not answer), and its lock was expired; the locked USDC was released.";
const UNROUTED_EXPIRED_SELL = "The order was not routed before its escrow's deadline (the server stopped, or the chain or the store did not answer), and its client expired the escrow; the escrowed shares were returned.";
const UNANSWERED = "A venue did not tell what became of the order before its lock's deadline; the locked USDC was released.";
const UNANSWERED_SELL = "A venue did not tell what became of the order before its escrow's deadline; the escrowed shares were returned.";
/** What an order says whose lock or escrow, recorded landed, a reorganisation removed from the chain: nothing is held, charged or sold. */
const removed = (order: Pick<OrderRecord, "side">): string =>
  order.side === "sell"
    ? "The order's escrow is no longer on the chain (a reorganisation removed it); no share was sold and the position is whole."
    : "The order's lock is no longer on the chain (a reorganisation removed it); nothing was charged.";
/** What an order says whose lock or escrow the client expired, every venue having answered by then: which answer came too late is not known. */
const LATE = "The order was not settled before its lock's deadline (a venue, the chain or the server did not answer in time); the locked USDC was released.";
const LATE_SELL = "The order was not settled before its escrow's deadline (a venue, the chain or the server did not answer in time); the escrowed shares were returned.";
/** How an order ends whose lock or escrow went back whole, released or expired, past its deadline with a venue's answer missing. */
const unansweredEnd = (order: OrderRecord, releaseTx: string): OrderPatch => ({
  status: "failed",
  releaseTx,
  errorCode: "venue_unavailable",
  errorMessage: order.side === "sell" ? UNANSWERED_SELL : UNANSWERED,
});
/** What a settled order records, logged as its removed settlement is settled again. */
const recordedOf = (order: OrderRecord) => ({
  order_id: order.id,
  side: order.side,
  spent: order.spent.toString(),
  proceeds: order.proceeds.toString(),
  shares: order.filledShares.toString(),
  removed_tx: order.settleTx,
});
/**
 * What a settled order records whose lock or escrow, its settlement removed by a reorganisation, went back whole
 * (`releaseTx`: the sweep's release once the Vault refused to settle it again, or its client's expiry): its fills stay,
 * the operator's to carry; its client was charged nothing (credited nothing, a sell) and holds what it held before.
 */
const unsettled = (order: Pick<OrderRecord, "side">, releaseTx: string): OrderPatch => ({
  releaseTx,
  errorCode: "chain_unavailable",
  errorMessage:
    order.side === "sell"
      ? "The order's settlement was removed from the chain by a reorganisation and could not be made again; no share was sold, and the escrowed shares were returned."
      : "The order's settlement was removed from the chain by a reorganisation and could not be made again; nothing was charged, no share was minted, and the locked USDC was released.",
});
/** What a settled order records whose lock or escrow, its settlement removed by a reorganisation, a second one removed too. */
const removedTwice = (order: Pick<OrderRecord, "side">): string =>
  order.side === "sell"
    ? "The order's settlement, then its escrow, were removed from the chain by reorganisations; no share was sold and the position is whole."
    : "The order's settlement, then its lock, were removed from the chain by reorganisations; nothing was charged and no share was minted.";
/** What an order closed with no lock recorded records of a lock or escrow of its id that landed after, which the sweep releases. */
const lateHold = (x: OpenHold): OrderPatch => ({
  ...(x.kind === "lock" ? { locked: x.amount } : { escrowed: x.shares, sotTokenId: x.tokenId.toString() }),
  lockTx: x.lockTx,
  errorMessage:
    x.kind === "lock"
      ? "The order's lock landed on the chain after the order was closed; the locked USDC was released."
      : "The order's escrow landed on the chain after the order was closed; the escrowed shares were returned.",
});
/** What such an order records of one its deadline ended. */
const expiredEnd = (x: ExpiredHold): OrderPatch => ({
  ...lateHold(x),
  releaseTx: x.releaseTx,
  errorMessage:
    x.kind === "lock"
      ? "The order's lock landed on the chain after the order was closed, and was expired past its deadline; the locked USDC was released."
      : "The order's escrow landed on the chain after the order was closed, and its client expired it past its deadline; the escrowed shares were returned.",
});
/** How far this server's clock may run behind the chain's before a lock's deadline is first read from the chain after it passed. */
const CHAIN_CLOCK_MARGIN_MS = 10 * 60_000;

/**
 * Finishes every order not in a terminal state that no one is executing: the recovery path, run at
 * start-up and then periodically. The chain and the venues are asked what happened; nothing is
 * guessed, and an order they cannot answer for yet is left for the next pass. One pass at a time:
 * a pass asked for while one runs joins it.
 */
export class Reconciler {
  private running: Promise<number> | undefined;
  private sweeping: Promise<number> | undefined;
  private readonly holds: OpenHolds;
  /** The orders the sweep recorded holding a lock or escrow the chain no longer has, nothing pending: gone once what was mined then is deep. */
  private readonly gone: MinedDeep;
  /** The child orders (by client order id) whose venue this process already warned is not configured or cannot answer: warned once, not at every pass, and forgotten once recovery finishes its order. */
  private readonly warned = new Set<string>();

  constructor(
    private readonly svc: OrderService,
    private readonly d: ReconcileDeps,
  ) {
    this.holds = new OpenHolds(d.vault);
    this.gone = new MinedDeep(d.vault, d.confirmations ?? 0);
  }

  /** Runs a pass over the open orders last updated at least `minAgeMs` ago; resolves to how many it finished. */
  pass(minAgeMs: number): Promise<number> {
    this.running ??= this.run(minAgeMs).finally(() => (this.running = undefined));
    return this.running;
  }

  /**
   * Releases every lock, and returns every escrow, still open on chain whose order is finished, or
   * unknown to the store: the operator's way out for a lock or an escrow that landed after its order
   * was closed. Open orders are read after the chain, so an order whose lock or escrow the chain shows
   * was already stored, and is left to its own path. An order rejected with nothing released may be
   * run again by its client's retry (Store.reopenOrder), which takes a lock or escrow of its id the
   * chain holds for its own: before its release, such an order is recorded holding it, with the
   * transaction that made it, a compare-and-set from `rejected` that a retry's reopening excludes, so
   * the retry answers it as it stands and never runs on a hold being released; a failed order recorded with no lock (a
   * reorganisation removed it) is recorded holding the lock that landed again so too. A release of such an order whose
   * answer was lost is recorded from the chain at the next sweep. The chain is read from
   * where the last sweep stopped (OpenHolds). A hold whose order is settled (a reorganisation removed its settlement,
   * and the node did not mine it again) is settled again for what the order records, not released (settleAgain). One
   * sweep at a time: a sweep asked for while one runs joins it. Returns how many it released.
   */
  sweepLocks(): Promise<number> {
    this.sweeping ??= this.sweep().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweep(): Promise<number> {
    const { store, vault, log } = this.d;
    await this.recordReleases();
    await this.recordSettlements();
    const { open: held, expired } = await this.holds.read();
    await this.recordExpiries(expired);
    if (held.length === 0) return 0;
    const open = new Set((await store.ordersInStatus(OPEN_STATUSES)).map((o) => chainOrderId(o.id).toLowerCase()));
    const stranded = held.filter((x) => !open.has(x.orderId.toLowerCase()));
    if (stranded.length === 0) return 0;
    // Read in one query, after the open orders: a rejected order the list above took for closed may have been reopened since.
    const orders = new Map((await store.ordersInStatus([...OPEN_STATUSES, "rejected"])).map((o) => [chainOrderId(o.id).toLowerCase(), o]));
    let ended: Map<string, OrderRecord> | undefined;
    let released = 0;
    for (const x of stranded) {
      const order = orders.get(x.orderId.toLowerCase());
      if (order && OPEN_STATUSES.includes(order.status)) continue;
      try {
        // An order that closed after the chain was read had its settlement or release land first: asked again, its hold has ended.
        const state = x.kind === "lock" ? await vault.lockState(x.orderId) : await vault.escrowState(x.orderId);
        if (state.kind !== "locked" && state.kind !== "escrowed") continue;
        // Neither open nor rejected, the order may be settled or failed: those are read then, once a sweep.
        const closed = order ?? (ended ??= await this.endedOrders()).get(x.orderId.toLowerCase());
        const settled = closed?.status === "filled" || closed?.status === "partially_filled" ? closed : undefined;
        if (settled && (await this.settleAgain(settled))) continue;
        // A failed order recorded with no lock (a reorganisation removed it, then the node mined it again) records it as a rejected one.
        const closing = closed && (closed.status === "rejected" || closed.status === "failed") && closed.releaseTx === null ? await this.closeForRetries(closed, x) : undefined;
        if (closing === false) continue;
        const tx = await (x.kind === "lock" ? vault.release(x.orderId) : vault.releaseEscrow(x.orderId));
        released++;
        log.warn({ chain_order_id: x.orderId, client: x.client, held: x.kind === "lock" ? `${x.amount} micro-USDC` : `${x.shares} micro-shares`, release_tx: tx.txHash }, "released a lock or escrow whose order is not open");
        if (closing) await store.updateOrder(closing.id, [closing.status], { releaseTx: tx.txHash });
        // A settled order's release (the Vault refused to settle it again) is recorded on it too, as its client's expiry is.
        if (settled) await store.recordUnsettled(settled.id, settled.status, unsettled(settled, tx.txHash));
        // Shares an escrow returned are the holder's again: a resolved event's redemptions are planned again to take them.
        if (x.kind === "escrow" && closed) this.d.finished?.(closed);
      } catch (err) {
        log.warn({ chain_order_id: x.orderId, err }, "could not release a stranded lock or escrow; the next sweep tries again");
      }
    }
    return released;
  }

  /** The settled (`filled`, `partially_filled`) and failed orders by chain order id. */
  private async endedOrders(): Promise<Map<string, OrderRecord>> {
    return new Map((await this.d.store.ordersInStatus(["filled", "partially_filled", "failed"])).map((o) => [chainOrderId(o.id).toLowerCase(), o]));
  }

  /**
   * Settles again, for what the order records, the lock or escrow of a settled order that the chain holds open: its
   * settlement, answered done once its batch logged, a reorganisation removed and the node did not mine it again. The order's
   * `settle_tx` becomes the new settlement's, the transaction whose logs now hold its Settled (SellSettled) event; one whose
   * answer was lost is read from the chain at the next sweeps (recordSettlements). A refusal is read from the chain too: a
   * hold another settlement ended first is recorded as it ended (recordEnding); one the node never ran (not sent, or refused
   * by the node) is sent again at the next sweep. False, logged as an error, when the Vault contract refuses it and still
   * holds the hold: the sweep then releases the lock (returns the escrow) as any other, the client
   * paying nothing for the shares its order records, and the operator carries what the venues filled.
   */
  private async settleAgain(order: OrderRecord): Promise<boolean> {
    // Recorded with no settlement before it is sent: what the chain does is read at the next sweeps, whatever stops this one.
    if (order.settleTx !== null) await this.d.store.updateOrder(order.id, [order.status], { settleTx: null });
    let tx: TxRef;
    try {
      tx = await this.svc.settleHold(order);
    } catch (err) {
      // Not sent, or refused by the node: the Vault never ran it, and the next sweep sends it again.
      if (!refusedByVault(err)) throw err;
      // Refused: another settlement may have landed first (the removed one, mined again), or its client expired the hold.
      const hold = await this.svc.holdOf(order);
      if (await this.recordEnding(order, hold)) return true;
      if (hold.kind !== "held") throw err;
      this.d.log.error({ ...recordedOf(order), err }, "the Vault refused to settle again a settled order whose settlement a reorganisation removed; its lock or escrow is released and the operator carries its fills");
      return false;
    }
    await this.recordSettlement(order, tx.txHash);
    return true;
  }

  /**
   * Records `settleTx`, the transaction that settled again the order's lock or escrow, as the order's `settle_tx`. A buy's
   * shares, minted again, are told as finished: a resolved event's redemptions are planned again to take them.
   */
  private async recordSettlement(order: OrderRecord, settleTx: Hex32): Promise<void> {
    this.d.log.warn({ ...recordedOf(order), settle_tx: settleTx }, "settled again a settled order's lock or escrow whose settlement a reorganisation removed");
    await this.d.store.updateOrder(order.id, [order.status], { settleTx });
    if (order.side === "buy") this.d.finished?.(order);
  }

  /**
   * Records how the chain ended the lock or escrow of a settled order the sweep settles again: settled, by whichever
   * settlement landed first (the sweep's, or the removed one mined again: a transaction mined again keeps its hash), its
   * transaction the order's `settle_tx`; released (its client's expiry), its `release_tx`, logged as an error, the operator carrying its
   * fills, and the shares an escrow returned told as finished, as when the sweep returns them. False while the chain
   * holds it, or holds none.
   */
  private async recordEnding(order: OrderRecord, hold: Hold): Promise<boolean> {
    if (hold.kind === "settled") await this.recordSettlement(order, hold.txHash);
    else if (hold.kind === "released") {
      await this.d.store.recordUnsettled(order.id, order.status, unsettled(order, hold.txHash));
      this.d.log.error({ ...recordedOf(order), release_tx: hold.txHash }, "a settled order's lock or escrow the sweep settled again was released instead; the operator carries its fills");
      if (order.side === "sell") this.d.finished?.(order);
    } else return false;
    return true;
  }

  /**
   * Records the transaction that ended each lock or escrow a sweep settled again (its order recorded with no `settle_tx`
   * before the settlement was sent: Store.resettling), its answer lost, its store write failed or the server stopped:
   * once the settlement lands, the chain no longer holds the hold, so no sweep reads it again, and the order would name
   * no settlement. One the chain still holds is left to the sweep (its settlement may still land); one released (its
   * client's expiry) is recorded as its `release_tx`, logged as an error: the operator carries its fills. One the chain no
   * longer has at all (a second reorganisation removed the lock or escrow) is recorded holding none once it can no longer
   * land (strandedHoldGone).
   */
  private async recordSettlements(): Promise<void> {
    for (const order of [...(await this.d.store.resettling("filled")), ...(await this.d.store.resettling("partially_filled"))]) {
      try {
        const hold = await this.svc.holdOf(order);
        if (hold.kind === "none") {
          await this.strandedHoldGone(order);
          continue;
        }
        this.gone.forget(order.id);
        await this.recordEnding(order, hold);
      } catch (err) {
        this.d.log.warn({ order_id: order.id, err }, "could not record the settlement of a settled order's lock or escrow; the next sweep tries again");
      }
    }
  }

  /**
   * Records the release of each hold an earlier sweep recorded its rejected (or failed) order holding and released, its answer lost
   * (unknown, or the sweep stopped before the store's write): the chain no longer holds it, so no sweep reads it again,
   * and the order would show its lock or escrow with no release for good. Its release is the ending the chain names, the
   * sweep's own or its client's expiry; the shares an escrow returned are told as finished, as when the sweep returns them.
   * A hold the chain no longer has at all (a reorganisation removed it) is recorded gone once it can no longer land (strandedHoldGone).
   */
  private async recordReleases(): Promise<void> {
    const { store, log } = this.d;
    for (const order of [...(await store.closedHolding("rejected")), ...(await store.closedHolding("failed"))]) {
      try {
        const state = await this.svc.holdOf(order);
        if (state.kind === "none") {
          await this.strandedHoldGone(order);
          continue;
        }
        this.gone.forget(order.id);
        if (state.kind !== "released") continue;
        await store.updateOrder(order.id, [order.status], { releaseTx: state.txHash });
        if (order.side === "sell") this.d.finished?.(order);
      } catch (err) {
        log.warn({ order_id: order.id, err }, "could not record the release of a stranded lock or escrow; the next sweep tries again");
      }
    }
  }

  /**
   * Records a rejected (or failed) order the sweep recorded holding a lock or escrow that a reorganisation then removed as holding
   * none, with no transaction, once it can no longer land: no operator transaction pending, read again still not there,
   * and every operator transaction mined then `confirmations` deep (its nonce taken). Nothing was held, nothing is owed;
   * a sell's shares are its holder's again, told as finished. The order is then as one closed before its lock landed.
   * A settled order being settled again (Store.resettling) is recorded so too, `chain_unavailable`, its position book moved
   * back in the same write (Store.recordUnsettled), logged as an error: the operator carries its fills.
   */
  private async strandedHoldGone(order: OrderRecord): Promise<void> {
    if ((await this.d.vault.pendingTransactions()) > 0 || (await this.svc.holdOf(order)).kind !== "none" || !(await this.gone.deep(order.id))) return;
    const none: OrderPatch = { ...(order.side === "sell" ? { escrowed: 0n } : { locked: 0n }), lockTx: null };
    const settled = order.status === "filled" || order.status === "partially_filled";
    if (settled) this.d.log.error(recordedOf(order), "a reorganisation removed the lock or escrow of a settled order whose settlement one had removed; the operator carries its fills");
    const done = settled
      ? await this.d.store.recordUnsettled(order.id, order.status, { ...none, errorCode: "chain_unavailable", errorMessage: removedTwice(order) })
      : await this.d.store.updateOrder(order.id, [order.status], { ...none, errorMessage: removed(order) });
    this.gone.forget(order.id);
    if (done && order.side === "sell") this.d.finished?.(done);
  }

  /**
   * Records on a rejected order with no lock recorded the lock or escrow of its id that landed after it closed and that its
   * deadline ended (`expire`, a sell's `expireEscrow` by its client) before any sweep recorded it: no sweep ran meanwhile
   * (the server stopped), or none could read it. The order would show no lock, and its
   * client's retry would reopen it on an id the Vault has spent. It is recorded as closeForRetries records a hold, with its
   * ending as its `release_tx` (a compare-and-set that a retry's reopening excludes); a failed order recorded with no lock
   * (its lock or escrow landed again after a reorganisation had removed it) the same way. The shares an escrow returned
   * are told as finished, a failed sell's too.
   */
  private async recordExpiries(expired: readonly ExpiredHold[]): Promise<void> {
    if (expired.length === 0) return;
    const { store, log } = this.d;
    const closed = new Map((await store.ordersInStatus(["rejected", "failed"])).map((o) => [chainOrderId(o.id).toLowerCase(), o]));
    for (const x of expired) {
      const order = closed.get(x.orderId.toLowerCase());
      // A failed order recorded with no lock (a reorganisation removed it, then the node mined it again) records it as a rejected one;
      // not one recovery recorded released (its lock's transaction not found: Vault.heldBy), whose message says how it ended.
      if (!order || order.lockTx !== null || order.releaseTx !== null) continue;
      try {
        const ended = await store.recordStrandedHold(order.id, expiredEnd(x));
        if (ended && x.kind === "escrow") this.d.finished?.(ended);
      } catch (err) {
        log.warn({ order_id: order.id, err }, "could not record a stranded lock or escrow its deadline ended; the next start reads it again");
      }
    }
  }

  /**
   * Records a rejected (or failed) order holding the lock or escrow of its id that landed after it was closed, with the
   * transaction that made it as OpenHolds read it (`lockTx`), before the sweep releases it: no longer reopenable, its client's
   * retry answers it as it stands, its id spent; a release whose answer is lost is then recorded by recordReleases. False
   * when the order moved on first (a retry reopened it: the hold is its own now, or the retry took it over and released it,
   * the order rejected again with its own answer).
   */
  private async closeForRetries(order: OrderRecord, x: OpenHold): Promise<OrderRecord | false> {
    return (await this.d.store.recordStrandedHold(order.id, lateHold(x))) ?? false;
  }

  /** Resolves once no pass is running: what shutdown awaits. */
  async idle(): Promise<void> {
    while (this.running) await this.running.catch(() => undefined);
  }

  private async run(minAgeMs: number): Promise<number> {
    const open = await this.d.store.ordersInStatus(OPEN_STATUSES);
    this.d.log.debug({ open: open.length }, "reconciliation pass");
    let finished = 0;
    const owner = this.svc.lease().owner;
    for (const listed of open) {
      if (this.svc.inFlight.has(listed.id)) continue;
      const now = this.d.clock.now();
      if (now - Date.parse(listed.updatedAt) < minAgeMs) continue;
      // Another instance executing or recovering the order holds its lease: it is theirs until it runs out.
      if (!(await this.d.store.claimOrder(listed.id, this.svc.lease(), new Date(now).toISOString()))) continue;
      this.svc.recovering.add(listed.id);
      try {
        // The list was read when the pass began: since then this process may have moved the order on
        // (locked → routing, fills stored, its settlement's answer lost). Only the order as it stands now,
        // read under the lease, says what recovery may do: a lock released on the list's word would
        // strand fills the venues made.
        const order = await this.d.store.order(listed.id);
        if (!order || !OPEN_STATUSES.includes(order.status) || this.d.clock.now() - Date.parse(order.updatedAt) < minAgeMs) continue;
        if (!(await this.reconcileOne(order))) continue;
        finished++;
        for (const leg of order.legs) this.warned.delete(leg.clientOrderId);
      } catch (e) {
        this.d.log.warn({ order_id: listed.id, err: e }, "reconciliation failed; will retry");
      } finally {
        this.svc.recovering.delete(listed.id);
        await this.d.store.releaseOrder(listed.id, owner);
      }
    }
    return finished;
  }

  private async reconcileOne(order: OrderRecord): Promise<boolean> {
    return order.status === "routing" ? this.reconcileRouting(order) : this.reconcileUnrouted(order);
  }

  /**
   * No child order is sent before `routing` is persisted, so the venues hold nothing of a pending or
   * locked order: its lock (a buy) or escrow (a sell), if it landed, is released whole. A locked order
   * carrying an error was refused (OrderService.unwind records the refusal before its release): it ends
   * rejected with that refusal, the answer its request would have given; else it fails interrupted.
   */
  private async reconcileUnrouted(order: OrderRecord): Promise<boolean> {
    const { vault, log } = this.d;
    const hold = await this.svc.holdOf(order);
    const sell = order.side === "sell";
    const expired = hold.kind === "released" && hold.expired;
    const unrouted = expired ? (sell ? UNROUTED_EXPIRED_SELL : UNROUTED_EXPIRED) : sell ? UNROUTED_SELL : UNROUTED;
    const interrupted = order.errorCode === null ? ({ status: "failed", errorCode: "order_interrupted", errorMessage: unrouted } as const) : ({ status: "rejected" } as const);
    // A lock or escrow whose answer was lost is recorded with the transaction that made it, as the chain logged it.
    const held = async (amount: bigint): Promise<OrderPatch> => ({
      ...(sell ? { escrowed: amount } : { locked: amount }),
      lockTx: order.lockTx ?? (await vault.heldBy(chainOrderId(order.id))),
    });
    const from = ["pending", "locked"] as const;
    switch (hold.kind) {
      case "held": {
        const tx = await this.svc.releaseHold(order);
        await this.finish(order, from, { ...(await held(hold.amount)), releaseTx: tx.txHash, ...interrupted });
        break;
      }
      case "released":
        await this.finish(order, from, { ...(await held(sell ? order.shares : order.amount)), releaseTx: hold.txHash, ...interrupted });
        break;
      case "none":
        // A lock or escrow whose answer was lost may still be on its way: only when no operator transaction
        // is pending can it no longer land. It is read again after that, for one that landed meanwhile.
        if ((await vault.pendingTransactions()) > 0 || (await this.svc.holdOf(order)).kind !== "none") return false;
        // A lock or escrow recorded `locked` landed: a reorganisation removed it (the request may have run on, its release
        // refused for want of it). A `pending` order's was never taken, or its answer lost: the server stopped, or the
        // request left it here, as UNROUTED. The order is shown as it now is: none, and no transaction.
        await this.finish(order, from, {
          status: "rejected",
          ...(sell ? { escrowed: 0n } : { locked: 0n }),
          lockTx: null,
          errorCode: "order_interrupted",
          errorDetails: null,
          errorMessage:
            order.status === "locked"
              ? removed(order)
              : sell
                ? "The order was interrupted before its escrow was taken (the server stopped, or the chain or the store did not answer); nothing was escrowed."
                : "The order was interrupted before its lock was taken (the server stopped, or the chain or the store did not answer); nothing was locked.",
        });
        break;
      case "settled":
        log.error({ order_id: order.id, status: order.status }, "an order never routed was settled on chain; left for an operator");
        return false;
    }
    log.info({ order_id: order.id, side: order.side, hold: hold.kind }, "interrupted order closed");
    return true;
  }

  /**
   * Learns the outcome of every child order (cancelling what is still open), stores the fills, then
   * settles on them, or records the settlement or release the chain already made.
   */
  private async reconcileRouting(order: OrderRecord): Promise<boolean> {
    const { store, clock, log } = this.d;
    const fills: FillRecord[] = [];
    let unanswered: string | undefined;
    for (const leg of order.legs) {
      const outcome = await this.outcomeOf(order, leg);
      if (!outcome.final) {
        if (this.farFromDeadline(order)) return false;
        // Near the deadline every other child order is asked about too: what they filled is the order's.
        unanswered ??= outcome.why;
        continue;
      }
      fills.push(...outcome.fills.map((f) => fillRecord(order.id, leg, f, clock)));
    }
    if (unanswered !== undefined) return this.unanswered(order, unanswered, fills);
    this.d.checkpoint?.("reconcile.outcomes", order.id);
    await store.insertFills(fills);
    this.d.checkpoint?.("reconcile.fills.stored", order.id);

    const hold = await this.svc.holdOf(order);
    const orderLog = log.child({ order_id: order.id });
    const stored = await store.fills(order.id);
    switch (hold.kind) {
      case "held":
        this.d.checkpoint?.("reconcile.settle.sent", order.id);
        await this.svc.settle(order, stored, orderLog);
        break;
      case "settled": {
        // The settlement landed but was not recorded: record what the chain did, with its transaction.
        await this.finish(order, ["routing"], settledOnChain(order, hold, stored, orderLog));
        break;
      }
      case "released": {
        // Released with nothing filled: the settlement's release, its answer lost, as the order flow records it.
        if (stored.length === 0 && !hold.expired) {
          await this.finish(order, ["routing"], nothingFilled(order, hold.txHash));
          break;
        }
        if (stored.length > 0) log.error({ order_id: order.id, fills: stored.length, expired: hold.expired }, "the lock or escrow was released although venues filled; the operator carries the fills");
        // Expired by the client: its deadline passed before the order was settled, a venue's answer, the chain or the server late.
        // Else the settlement's release, none of the fills known then: the settlement takes every fill stored before it.
        const late = { ...unansweredEnd(order, hold.txHash), errorMessage: order.side === "sell" ? LATE_SELL : LATE };
        await this.finish(order, ["routing"], hold.expired ? late : { status: "failed", releaseTx: hold.txHash, errorCode: "order_interrupted", errorMessage: order.side === "sell" ? FILLED_LATE_SELL : FILLED_LATE });
        break;
      }
      case "none":
        if (!(await this.holdGone(order, stored))) return false;
        break;
    }
    log.info({ order_id: order.id, side: order.side, hold: hold.kind, fills: fills.length }, "routing order reconciled");
    return true;
  }

  /** What became of one of the order's child orders, as its venue tells it: not final while the venue is not configured or cannot answer. */
  private async outcomeOf(order: OrderRecord, leg: OrderLeg): Promise<ChildOutcome> {
    const { venues, log } = this.d;
    const venue = venues.get(leg.venue);
    if (!venue) {
      this.warnOnce(leg, { order_id: order.id, venue: leg.venue }, "a child order's venue is not configured; the order waits for it");
      return { final: false, why: `${leg.venue} is not configured` };
    }
    try {
      const outcome = await learnOutcome(venue, childOrder(order, leg), this.svc.outcomeRules);
      if (!outcome.final) log.debug({ order_id: order.id, why: outcome.why }, "order waits for a venue's answer");
      return outcome;
    } catch (e) {
      this.warnOnce(leg, { order_id: order.id, venue: leg.venue, err: e }, "a venue could not tell what became of a child order; the order waits for it");
      return { final: false, why: e instanceof Error ? e.message : String(e) };
    }
  }

  /** Warns of a child order whose venue cannot answer the first time a pass finds it so: recovery asks again every pass, for up to a day. */
  private warnOnce(leg: OrderLeg, o: object, msg: string): void {
    if (this.warned.has(leg.clientOrderId)) return;
    this.warned.add(leg.clientOrderId);
    this.d.log.warn(o, msg);
  }

  /**
   * Whether the order's lock or escrow is still far from its deadline as the order's creation puts it, less a margin for
   * this server's clock: nothing can end the hold before then. Every lock or escrow of the order's id was sent after the
   * order was created, so its block, from which the Vault counts the deadline, is no earlier; `locked_at` may be hours
   * later than that block (a retry's take-over of its first attempt's hold, landed again: OrderService.hold).
   */
  private farFromDeadline(order: OrderRecord): boolean {
    return this.d.clock.now() < Date.parse(order.createdAt) + this.d.vault.info().lockTtlSeconds * 1000 - CHAIN_CLOCK_MARGIN_MS;
  }

  /**
   * The chain's time in unix seconds, as a lock's deadline is judged: its latest block's, or, on a chain that mined
   * no block for a while (the embedded chain mines only when a transaction is sent), this server's clock less the
   * margin it may run ahead of the chain's: the block that would mine a transaction now is no earlier.
   */
  private async chainTime(): Promise<number> {
    return Math.max(await this.d.vault.blockTime(), Math.floor((this.d.clock.now() - CHAIN_CLOCK_MARGIN_MS) / 1000));
  }

  /**
   * An order whose venue has not told what became of a child order waits, its USDC locked (a buy) or its
   * shares escrowed (a sell), until the Vault's deadline on the lock or escrow (a day: far past any child
   * order's expiry) has passed, after which the chain lets anyone `expire` the lock, or the client
   * `expireEscrow` the escrow. Then it is settled on the fills its other child orders reported (`answered`,
   * stored with those stored before), or, with none, its lock is released, or its escrow returned, whole and it
   * fails; a lock or an escrow the client already expired ends it failed too, and one the chain shows settled is
   * recorded as the chain settled it. What the unanswered child may have filled is the operator's
   * (docs/decisions.md). Nothing ends the hold before its deadline (the chain refuses the client's `expire`
   * until then), so it is called only near the deadline (farFromDeadline); from there the chain's time decides (chainTime).
   */
  private async unanswered(order: OrderRecord, why: string, answered: FillRecord[]): Promise<boolean> {
    const { store, log } = this.d;
    const hold = await this.svc.holdOf(order);
    const past = hold.kind === "held" && (await this.chainTime()) > hold.deadline;
    if (hold.kind === "held" && !past) return false;
    await store.insertFills(answered);
    const stored = await store.fills(order.id);
    if (hold.kind === "none") return this.holdGone(order, stored, why);
    if (hold.kind === "settled") {
      // Settled on fills stored while every venue still answered, the settlement's answer lost: the chain's amounts are the order's.
      await this.finish(order, ["routing"], settledOnChain(order, hold, stored, log.child({ order_id: order.id })));
      return true;
    }
    log.error({ order_id: order.id, side: order.side, why, fills: stored.length }, "a venue never told what a routing order's child order filled before its lock's or escrow's deadline; the operator carries any fill of it");
    if (past && stored.length > 0) await this.svc.settle(order, stored, log.child({ order_id: order.id }));
    else {
      const releaseTx = hold.kind === "released" ? hold.txHash : (await this.svc.releaseHold(order)).txHash;
      await this.finish(order, ["routing"], unansweredEnd(order, releaseTx));
    }
    return true;
  }

  /**
   * A routing order whose lock or escrow the chain does not hold: a reorganisation removed the transaction that
   * made it. Once no operator transaction is pending, and it is read again still not there, it can no longer land,
   * and nothing can be settled: the order fails, nothing charged and no share sold. What its child orders filled
   * (`fills`, and any fill of a child order whose venue never answered, `why`) is the operator's, logged as an error.
   * A lock or escrow that lands after all is released by sweepLocks, its order no longer open.
   */
  private async holdGone(order: OrderRecord, fills: readonly FillRecord[], why?: string): Promise<boolean> {
    const { vault, log } = this.d;
    if ((await vault.pendingTransactions()) > 0 || (await this.svc.holdOf(order)).kind !== "none") return false;
    const sell = order.side === "sell";
    if (fills.length > 0 || why !== undefined) {
      log.error({ order_id: order.id, side: order.side, fills: fills.length, why }, "a routing order's lock or escrow is no longer on chain; the operator carries the fills of its child orders");
    }
    // Nothing is held: the order shows no lock (or escrow), its transaction, nor a movement of the account's money.
    await this.finish(order, ["routing"], {
      status: "failed",
      ...(sell ? { escrowed: 0n } : { locked: 0n }),
      lockTx: null,
      errorCode: "chain_unavailable",
      errorMessage: removed(order),
    });
    return true;
  }

  private async finish(order: OrderRecord, from: readonly OrderRecord["status"][], patch: OrderPatch): Promise<void> {
    const done = await this.d.store.updateOrder(order.id, from, patch, this.svc.lease().owner);
    if (done) this.d.finished?.(done);
    else this.d.log.warn({ order_id: order.id }, "the order moved on while being reconciled");
  }
}
