import { createHash } from "node:crypto";
import { keccak256, toHex } from "viem";
import { AppError } from "../domain/errors.ts";
import { formatMicro, notional } from "../domain/money.ts";
import type { Clock, OrderIntent } from "../domain/types.ts";
import type { UnifiedEvent } from "../markets/catalog.ts";
import type { Plan, Refusal, VenueQuote, PlanRequest } from "../router/index.ts";
import type { FillRecord, Lease, OrderLeg, OrderPatch, OrderRecord, OrderStatus, Store } from "../store/store.ts";
import type { ChildOrder, Venue, VenueFill } from "../venues/venue.ts";
import { learnOutcome, outcomeOfPlacement, type ChildOutcome, type OutcomeRules } from "./child-outcome.ts";
import { VaultTxError, type Address, type Hex32, type Vault } from "../vault/vault.ts";
import { validateOrder, type OrderLimits } from "./validate.ts";
import { largestVenue } from "./view.ts";

export interface OrderDeps {
  store: Store;
  vault: Vault;
  venues: ReadonlyMap<string, Venue>;
  event(eventId: string): UnifiedEvent | undefined;
  quotes(event: UnifiedEvent, outcome: OrderIntent["outcome"]): VenueQuote[];
  plan(req: PlanRequest, quotes: readonly VenueQuote[]): Plan | Refusal;
  tokenId(eventId: string, outcome: OrderIntent["outcome"]): bigint;
  clock: Clock;
  newOrderId(): string;
  limits: OrderLimits;
  log: Log;
  /** How long a child order stays valid at its venue (its expiry); default 30 s. */
  childOrderTtlMs?: number;
  /** See OutcomeRules.expirySkewMs; default 20 s. */
  expirySkewMs?: number;
  /** How often, and how long, to ask a venue about a child order whose outcome is unknown before leaving it to reconciliation. */
  reconcileAttempts?: number;
  reconcileDelayMs?: number;
  /** This process among the instances sharing the store: it holds the lease of each order it executes or recovers. */
  instanceId: string;
  /** How long a lease lasts unless renewed (default 30 s): how soon another instance recovers the orders of one that died. */
  leaseMs?: number;
  /**
   * Told as the order flow, or its recovery, passes each step boundary, with the order's id: the fault
   * suite's switch that kills the process there, and the step timers of /metrics. It only watches.
   */
  checkpoint?: (step: Checkpoint, orderId: string) => void;
}

export interface Log {
  debug(o: object, msg: string): void;
  info(o: object, msg: string): void;
  warn(o: object, msg: string): void;
  error(o: object, msg: string): void;
  /** A logger whose every line also carries `bindings`: one per order carries its order_id (and its request's request_id). */
  child(bindings: Record<string, unknown>): Log;
}

/** The step boundaries of the order flow and of its recovery, in the order an order passes them. */
export const CHECKPOINTS = [
  "order.inserted",
  "order.lock.sent",
  "order.locked",
  "order.routing",
  "order.placed",
  "order.fills.stored",
  "order.settle.sent",
  "order.finished",
  "reconcile.outcomes",
  "reconcile.fills.stored",
  "reconcile.settle.sent",
  "redeem.stored",
  "redeem.sent",
  "redeem.landed",
] as const;
export type Checkpoint = (typeof CHECKPOINTS)[number];

export interface Submitter {
  accountId: string;
  address: Address;
}

/** The on-chain id of an order: keccak256 of its public id, so the chain and the store name the same order. */
export function chainOrderId(orderId: string): Hex32 {
  return keccak256(toHex(orderId));
}

/** Routing rounds of one order: the first plan, and re-routes of what the books no longer held when its legs arrived. */
const ROUTING_ROUNDS = 3;

/** The id of an order's child order on one venue in one routing round; deterministic so that a retry or a reconciliation finds it. */
export function childOrderId(orderId: string, venue: string, round = 1): string {
  return round === 1 ? `${orderId}-${venue}` : `${orderId}-${venue}-${round}`;
}

/**
 * What an order's fills come to. The client is charged exactly what the fills cost. Plans keep the
 * worst case of every child order within the lock, so the cost never exceeds it; were it ever to, the
 * vault would refuse the larger settlement for good, so the lock is charged, the operator carries the
 * excess, it is logged as an error and `crossfill audit` reports the order.
 */
export function settlement(
  order: Pick<OrderRecord, "id" | "locked" | "legs">,
  fills: readonly FillRecord[],
  log: Pick<Log, "error">,
): Required<Pick<OrderPatch, "spent" | "fees" | "filledShares" | "routedTo">> & { status: "filled" | "partially_filled" } {
  const cost = costOf(fills);
  if (cost > order.locked) log.error({ cost: cost.toString(), locked: order.locked.toString() }, "fills cost more than the lock; charging the lock");
  const filledShares = fills.reduce((s, f) => s + f.shares, 0n);
  return {
    spent: cost > order.locked ? order.locked : cost,
    fees: fills.reduce((s, f) => s + f.fee, 0n),
    filledShares,
    routedTo: largestVenue(fills),
    status: filledShares >= plannedShares(order) ? "filled" : "partially_filled",
  };
}

/** The shares the order was routed for: its first round's child orders. Later rounds only re-route what those missed. */
function plannedShares(order: Pick<OrderRecord, "legs">): bigint {
  return order.legs.filter((l) => l.round === 1).reduce((s, l) => s + l.shares, 0n);
}

/** What fills cost, fees included, in micro-USDC. */
export function costOf(fills: readonly Pick<FillRecord, "price" | "shares" | "fee">[]): bigint {
  return fills.reduce((s, f) => s + notional(f.price, f.shares) + f.fee, 0n);
}

/** A write that found the order already moved on by another writer: this one stops and leaves the order to it. */
class OrderMovedOn extends Error {
  constructor(id: string, from: readonly string[]) {
    super(`order ${id} is no longer ${from.join(" or ")}`);
  }
}

/**
 * The order use-case: validate → idempotency → plan → lock → route → execute → settle or release.
 * Each transition is persisted, as a compare-and-set from the states it may leave, before the next
 * step starts, so that recovery (reconcile.ts) can finish any order a crash or a fault interrupted.
 * Once funds may have moved, a failure answers the order as it stands, for recovery to finish, never an error.
 */
export class OrderService {
  /** Orders this process is executing right now; the reconciler leaves them alone. */
  readonly inFlight = new Set<string>();

  constructor(private readonly d: OrderDeps) {}

  get outcomeRules(): OutcomeRules {
    return { clock: this.d.clock, expirySkewMs: this.d.expirySkewMs ?? 20_000 };
  }

  /** `log` is the request's: the order's lines then carry its request_id as well as its order_id. */
  async submit(who: Submitter, body: unknown, idempotencyKey: string | undefined, log: Log = this.d.log): Promise<OrderRecord> {
    const { intent, clientOrderId } = validateOrder(body, idempotencyKey, this.d.limits);
    const event = this.tradableEvent(intent);

    const now = new Date(this.d.clock.now()).toISOString();
    const record: OrderRecord = {
      id: this.d.newOrderId(),
      accountId: who.accountId,
      clientOrderId,
      requestHash: requestHash(intent),
      ...intent,
      status: "pending",
      locked: 0n,
      spent: 0n,
      fees: 0n,
      filledShares: 0n,
      routedTo: null,
      legs: [],
      sotTokenId: null,
      lockTx: null,
      settleTx: null,
      releaseTx: null,
      errorCode: null,
      errorMessage: null,
      createdAt: now,
      updatedAt: now,
    };
    const inserted = await this.d.store.insertOrder(record, this.lease());
    if (!inserted.created) {
      if (inserted.order.requestHash !== record.requestHash) {
        throw new AppError("idempotency_conflict", `client_order_id ${JSON.stringify(clientOrderId)} was already used for a different order.`, {
          order_id: inserted.order.id,
        });
      }
      return inserted.order;
    }
    this.inFlight.add(record.id);
    const orderLog = log.child({ order_id: record.id });
    try {
      this.d.checkpoint?.("order.inserted", record.id);
      return await this.execute(record, event, who.address, orderLog);
    } catch (e) {
      orderLog.error({ err: e }, "order interrupted; recovery will finish it");
      return (await this.d.store.order(record.id))!;
    } finally {
      this.inFlight.delete(record.id);
    }
  }

  /** A lease of this instance starting now. */
  lease(): Lease {
    return { owner: this.d.instanceId, until: new Date(this.d.clock.now() + (this.d.leaseMs ?? 30_000)).toISOString() };
  }

  /** Extends the leases of the orders this process is executing: called more often than a lease lasts. */
  renewLeases(): Promise<void> {
    return this.d.store.renewLeases([...this.inFlight], this.lease());
  }

  /** Plans an order on the books as they are now, exactly as submit() would, storing, locking and sending nothing. */
  quote(body: unknown): { intent: OrderIntent; plan: Plan } {
    const { intent } = validateOrder(body, undefined, this.d.limits);
    const result = this.d.plan(planRequest(intent), this.d.quotes(this.tradableEvent(intent), intent.outcome));
    if (result.kind === "refusal") throw new AppError(result.code, result.message, result.details);
    return { intent, plan: result };
  }

  private tradableEvent(intent: OrderIntent): UnifiedEvent {
    const event = this.d.event(intent.eventId);
    if (!event) throw new AppError("unknown_event", `No event has the id ${JSON.stringify(intent.eventId)}.`, { market_id: intent.eventId });
    if (event.status !== "open") throw new AppError("market_closed", `The event ${event.eventId} is ${event.status}.`, { status: event.status });
    if (!event.outcomes.includes(intent.outcome)) {
      throw new AppError("invalid_request", `outcome must be one of ${event.outcomes.join(", ")}`, { fields: { outcome: "is not an outcome of this event" } });
    }
    return event;
  }

  private async execute(order: OrderRecord, event: UnifiedEvent, address: Address, log: Log): Promise<OrderRecord> {
    const first = this.d.plan(planRequest(order), this.d.quotes(event, order.outcome));
    if (first.kind === "refusal") return this.finish(order.id, ["pending"], { status: "rejected", errorCode: first.code, errorMessage: first.message }, log);

    const chainId = chainOrderId(order.id);
    try {
      this.d.checkpoint?.("order.lock.sent", order.id);
      const lock = await this.d.vault.lock(chainId, address, order.amount);
      this.d.checkpoint?.("order.locked", order.id);
      order = await this.update(order.id, ["pending"], { status: "locked", locked: order.amount, lockTx: lock.txHash });
    } catch (e) {
      if (!(e instanceof VaultTxError)) throw e;
      // The vault dry-runs every transaction, so a lock beyond the available balance is refused by name
      // and nothing is sent: no balance read is needed before it.
      if (e.reason === "InsufficientAvailable") {
        const { available } = await this.d.vault.balanceOf(address);
        return this.finish(order.id, ["pending"], {
          status: "rejected",
          errorCode: "insufficient_funds",
          errorMessage: `The vault holds ${formatMicro(available)} USDC available; the order needs ${formatMicro(order.amount)}.`,
        }, log);
      }
      if (e.outcome === "reverted") {
        return this.finish(order.id, ["pending"], { status: "rejected", errorCode: "chain_unavailable", errorMessage: `Nothing was locked: ${e.message}` }, log);
      }
      // The lock may have landed, or may yet: the chain decides, here or in recovery, never a timer.
      const state = await this.d.vault.lockState(chainId);
      if (state.kind !== "locked") {
        log.warn({ err: e }, "lock outcome unknown; left to recovery");
        return order;
      }
      order = await this.update(order.id, ["pending"], { status: "locked", locked: state.amount });
    }

    // Re-plan on the books as they are now: the reference price is taken at the moment of routing.
    const routed = this.d.plan(planRequest(order), this.d.quotes(event, order.outcome));
    if (routed.kind === "refusal") {
      const release = await this.d.vault.release(chainId);
      return this.finish(order.id, ["locked"], { status: "rejected", releaseTx: release.txHash, errorCode: routed.code, errorMessage: routed.message }, log);
    }
    // Orders routed at the same moment plan on the same books, so a leg can find its levels taken by
    // the time it arrives. What is left of the budget is routed again on the books as they are then,
    // within the limit price of the first routing, for a few rounds; each round's worst case stays
    // within what the fills so far left of the lock.
    const listings = new Map(event.listings.map((l) => [l.venue, l.venueMarketId]));
    const sotTokenId = this.d.tokenId(order.eventId, order.outcome).toString();
    let plan: Plan = routed;
    for (let round = 1; ; round++) {
      const expiresAt = this.d.clock.now() + (this.d.childOrderTtlMs ?? 30_000);
      const sent: OrderLeg[] = plan.legs.map((leg) => ({
        venue: leg.venue,
        clientOrderId: childOrderId(order.id, leg.venue, round),
        venueMarketId: listings.get(leg.venue) ?? leg.venueMarketId,
        limitPrice: leg.limitPrice,
        shares: leg.shares,
        round,
        expiresAt,
      }));
      order = await this.update(order.id, ["locked", "routing"], { status: "routing", legs: [...order.legs, ...sent], sotTokenId });
      this.d.checkpoint?.("order.routing", order.id);
      const unknown = await this.placeRound(order, sent, log);
      if (unknown.length > 0) {
        // Never guess: the order stays `routing` until recovery learns what the venues did.
        log.warn({ venues: unknown }, "child order outcome unknown; left to recovery");
        return order;
      }
      const fills = await this.d.store.fills(order.id);
      if (fills.reduce((n, f) => n + f.shares, 0n) >= plannedShares(order) || round === ROUTING_ROUNDS) break;
      const next = this.d.plan(
        { ...planRequest(order), amount: order.locked - costOf(fills), timeInForce: "IOC", limitPrice: routed.limitPrice },
        this.d.quotes(event, order.outcome),
      );
      if (next.kind === "refusal") break;
      plan = next;
    }
    return this.settle(order, log);
  }

  /** Sends one round of child orders at once, stores what they filled, and names the venues whose outcome is unknown. */
  private async placeRound(order: OrderRecord, legs: readonly OrderLeg[], log: Log): Promise<string[]> {
    const outcomes = await Promise.all(legs.map(async (leg) => ({ leg, outcome: await this.placeAndLearn(leg.venue, childOrder(order, leg), log) })));
    this.d.checkpoint?.("order.placed", order.id);
    await this.d.store.insertFills(outcomes.flatMap(({ leg, outcome }) => (outcome.final ? outcome.fills.map((f) => fillRecord(order.id, leg.venue, f, this.d.clock)) : [])));
    this.d.checkpoint?.("order.fills.stored", order.id);
    return outcomes.filter(({ outcome }) => !outcome.final).map(({ leg }) => leg.venue);
  }

  /**
   * Settles the order on its stored fills, each venue trade counted once: spends what they cost,
   * releases the rest and mints the SOT, in one transaction; or releases everything when nothing filled.
   * Recovery calls it too, for a routing order whose lock is still open. `log` carries the order's id.
   */
  async settle(order: OrderRecord, log: Log): Promise<OrderRecord> {
    const chainId = chainOrderId(order.id);
    const fills = await this.d.store.fills(order.id);
    const shares = fills.reduce((s, f) => s + f.shares, 0n);
    this.d.checkpoint?.("order.settle.sent", order.id);
    if (shares === 0n) {
      const release = await this.d.vault.release(chainId);
      return this.finish(order.id, ["routing"], {
        status: "failed",
        releaseTx: release.txHash,
        errorCode: "all_venues_failed",
        errorMessage: "No venue filled any part of the order; the locked USDC was released.",
      }, log);
    }
    const settled = settlement(order, fills, log);
    const tokenId = this.d.tokenId(order.eventId, order.outcome);
    const tx = await this.d.vault.settle(chainId, settled.spent, { tokenId, shares });
    return this.finish(order.id, ["routing"], { ...settled, sotTokenId: tokenId.toString(), settleTx: tx.txHash }, log);
  }

  /** Places a child order and learns its outcome; an unknown one is asked about a few times before it is left to recovery. */
  private async placeAndLearn(venueId: string, child: ChildOrder, log: Log): Promise<ChildOutcome> {
    const venue = this.d.venues.get(venueId);
    if (!venue) return { final: true, fills: [] };
    const rules = this.outcomeRules;
    let outcome: ChildOutcome;
    try {
      const result = await venue.place(child);
      if (result.kind === "rejected") log.warn({ client_order_id: child.clientOrderId, venue: venueId, reason: result.reason }, "venue refused a child order");
      outcome = await outcomeOfPlacement(venue, child, result, rules);
    } catch (e) {
      log.warn({ client_order_id: child.clientOrderId, venue: venueId, err: e }, "placing a child order failed; its outcome is unknown");
      outcome = { final: false, why: e instanceof Error ? e.message : String(e) };
    }
    const attempts = this.d.reconcileAttempts ?? 3;
    for (let i = 0; i < attempts && !outcome.final; i++) {
      await sleep(this.d.reconcileDelayMs ?? 200);
      try {
        outcome = await learnOutcome(venue, child, rules);
      } catch (e) {
        log.warn({ client_order_id: child.clientOrderId, venue: venueId, err: e }, "venue status failed");
      }
    }
    return outcome;
  }

  private async finish(id: string, from: readonly OrderStatus[], patch: OrderPatch, log: Log): Promise<OrderRecord> {
    const o = await this.update(id, from, patch);
    this.d.checkpoint?.("order.finished", id);
    log.info({ status: o.status, spent: o.spent.toString(), error: o.errorCode }, "order finished");
    return o;
  }

  private async update(id: string, from: readonly OrderStatus[], patch: OrderPatch): Promise<OrderRecord> {
    const o = await this.d.store.updateOrder(id, from, patch, this.d.instanceId);
    if (!o) throw new OrderMovedOn(id, from);
    return o;
  }
}

function planRequest(o: Pick<OrderRecord, "amount" | "maxSlippage" | "strategy" | "timeInForce">): PlanRequest {
  return { amount: o.amount, maxSlippage: o.maxSlippage, strategy: o.strategy, timeInForce: o.timeInForce };
}

/** Hash of what the order asks for, so a retry with the same idempotency key can be told from a conflicting one. */
function requestHash(i: OrderIntent): string {
  const canonical = [i.eventId, i.outcome, i.side, i.amount, i.maxSlippage, i.strategy, i.timeInForce].join("\n");
  return createHash("sha256").update(canonical).digest("hex");
}

/** The order a leg sends to its venue. */
export function childOrder(order: Pick<OrderRecord, "outcome">, leg: OrderLeg): ChildOrder {
  return {
    clientOrderId: leg.clientOrderId,
    venueMarketId: leg.venueMarketId,
    outcome: order.outcome,
    side: "buy",
    limitPrice: leg.limitPrice,
    shares: leg.shares,
    expiresAt: leg.expiresAt,
  };
}

export function fillRecord(orderId: string, venue: string, f: VenueFill, clock: Clock): FillRecord {
  return {
    orderId,
    venue,
    venueOrderId: f.venueOrderId,
    tradeId: f.tradeId,
    clientOrderId: f.clientOrderId,
    price: f.price,
    shares: f.shares,
    fee: f.fee,
    createdAt: new Date(clock.now()).toISOString(),
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
