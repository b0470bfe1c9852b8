import { createHash } from "node:crypto";
import { keccak256, toHex } from "viem";
import { AppError, type ErrorCode } from "../domain/errors.ts";
import { formatMicro, notional } from "../domain/money.ts";
import type { Clock, OrderIntent } from "../domain/types.ts";
import type { UnifiedEvent } from "../markets/catalog.ts";
import type { Plan, Refusal, VenueQuote, PlanRequest } from "../router/index.ts";
import type { FillRecord, OrderLeg, OrderPatch, OrderRecord, Store } from "../store/store.ts";
import type { ChildOrder, PlaceResult, Venue, VenueFill } from "../venues/venue.ts";
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
  log: { info(o: object, msg: string): void; warn(o: object, msg: string): void; error(o: object, msg: string): void };
  /** How often, and how long, to ask a venue about a child order whose outcome is unknown before leaving it to reconciliation. */
  reconcileAttempts?: number;
  reconcileDelayMs?: number;
}

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
 * What an order's fills come to. The client is charged what the fills cost, never more than it locked:
 * the vault refuses a larger settlement, which would leave the order unsettled for good. Plans never
 * exceed the lock; should a venue's rounding ever do so, the operator carries the excess, and says so.
 */
export function settlement(
  order: Pick<OrderRecord, "id" | "locked">,
  fills: readonly FillRecord[],
  log: Pick<OrderDeps["log"], "error">,
): Required<Pick<OrderPatch, "spent" | "fees" | "filledShares" | "routedTo">> {
  const cost = costOf(fills);
  if (cost > order.locked) log.error({ order_id: order.id, cost: cost.toString(), locked: order.locked.toString() }, "fills cost more than the lock; charging the lock");
  return {
    spent: cost > order.locked ? order.locked : cost,
    fees: fills.reduce((s, f) => s + f.fee, 0n),
    filledShares: fills.reduce((s, f) => s + f.shares, 0n),
    routedTo: largestVenue(fills),
  };
}

/** What fills cost, fees included, in micro-USDC. */
function costOf(fills: readonly Pick<FillRecord, "price" | "shares" | "fee">[]): bigint {
  return fills.reduce((s, f) => s + notional(f.price, f.shares) + f.fee, 0n);
}

/**
 * The order use-case: validate → idempotency → plan → lock → route → execute → settle or release.
 * Each transition is persisted before the next step starts, so that start-up can finish any order
 * a crash interrupted (see reconcile.ts).
 */
export class OrderService {
  /** Orders this process is executing right now; the reconciler leaves them alone. */
  readonly inFlight = new Set<string>();

  constructor(private readonly d: OrderDeps) {}

  async submit(who: Submitter, body: unknown, idempotencyKey: string | undefined): Promise<OrderRecord> {
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
    const inserted = await this.d.store.insertOrder(record);
    if (!inserted.created) {
      if (inserted.order.requestHash !== record.requestHash) {
        throw new AppError("idempotency_conflict", `client_order_id ${JSON.stringify(clientOrderId)} was already used for a different order.`, {
          order_id: inserted.order.id,
        });
      }
      return inserted.order;
    }
    this.inFlight.add(record.id);
    try {
      return await this.execute(record, event, who.address);
    } finally {
      this.inFlight.delete(record.id);
    }
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

  private async execute(order: OrderRecord, event: UnifiedEvent, address: Address): Promise<OrderRecord> {
    const first = this.d.plan(planRequest(order), this.d.quotes(event, order.outcome));
    if (first.kind === "refusal") return this.reject(order, first.code, first.message);

    const chainId = chainOrderId(order.id);
    try {
      const lock = await this.d.vault.lock(chainId, address, order.amount);
      order = await this.update(order.id, { status: "locked", locked: order.amount, lockTx: lock.txHash });
    } catch (e) {
      // The vault dry-runs every transaction, so a lock beyond the available balance is refused by name
      // and nothing is sent: no balance read is needed before it.
      if (e instanceof VaultTxError && e.reason === "InsufficientAvailable") {
        const { available } = await this.d.vault.balanceOf(address);
        return this.reject(order, "insufficient_funds", `The vault holds ${formatMicro(available)} USDC available; the order needs ${formatMicro(order.amount)}.`);
      }
      // Any other failure may still have locked (or may yet): the order stays `pending` until the chain
      // says, here or in reconciliation.
      const state = await this.d.vault.lockState(chainId);
      if (state.kind !== "locked") throw e;
      order = await this.update(order.id, { status: "locked", locked: state.amount });
    }

    // Re-plan on the books as they are now: the reference price is taken at the moment of routing.
    const routed = this.d.plan(planRequest(order), this.d.quotes(event, order.outcome));
    if (routed.kind === "refusal") {
      const release = await this.d.vault.release(chainId);
      return this.finish(order.id, { status: "rejected", releaseTx: release.txHash, errorCode: routed.code, errorMessage: routed.message });
    }
    // Orders routed at the same moment plan on the same books, so a leg can find its levels taken by
    // the time it arrives. What is left of the budget is routed again on the books as they are then,
    // within the limit price of the first routing, for a few rounds.
    const listings = new Map(event.listings.map((l) => [l.venue, l.venueMarketId]));
    const sotTokenId = this.d.tokenId(order.eventId, order.outcome).toString();
    const fills: FillRecord[] = [];
    let legs: OrderLeg[] = [];
    let plan: Plan = routed;
    let complete = false;
    for (let round = 1; ; round++) {
      const sent = plan.legs.map((leg) => ({
        venue: leg.venue,
        clientOrderId: childOrderId(order.id, leg.venue, round),
        venueMarketId: listings.get(leg.venue) ?? leg.venueMarketId,
        limitPrice: leg.limitPrice,
        shares: leg.shares,
      }));
      legs = [...legs, ...sent];
      order = await this.update(order.id, { status: "routing", legs, sotTokenId });
      const { filled, unknown } = await this.placeRound(order, sent);
      fills.push(...filled);
      if (unknown.length > 0) {
        // Never guess: the order stays `routing` until reconciliation learns what the venues did.
        this.d.log.warn({ order_id: order.id, venues: unknown }, "child order outcome unknown; left to reconciliation");
        return order;
      }
      if (filled.reduce((n, f) => n + f.shares, 0n) >= plan.shares) {
        complete = true;
        break;
      }
      if (round === ROUTING_ROUNDS) break;
      const next = this.d.plan(
        { ...planRequest(order), amount: order.amount - costOf(fills), timeInForce: "IOC", limitPrice: routed.limitPrice },
        this.d.quotes(event, order.outcome),
      );
      if (next.kind === "refusal") {
        // What is left is too little for any venue's minimum: the order took all it could.
        complete = next.code === "order_too_small";
        break;
      }
      plan = next;
    }
    return this.settle(order, fills, complete);
  }

  /** Sends one round of child orders at once and stores what they filled. */
  private async placeRound(order: OrderRecord, legs: readonly OrderLeg[]): Promise<{ filled: FillRecord[]; unknown: string[] }> {
    const results = await Promise.all(legs.map(async (leg) => ({ venue: leg.venue, result: await this.placeAndConfirm(leg.venue, childOrder(order, leg)) })));
    const filled: FillRecord[] = [];
    const unknown: string[] = [];
    for (const { venue, result } of results) {
      if (result.kind === "unknown") unknown.push(venue);
      else if (result.kind === "rejected") this.d.log.warn({ order_id: order.id, venue, reason: result.reason }, "venue refused a child order");
      else filled.push(...result.fills.map((f) => fillRecord(order.id, venue, f, this.d.clock)));
    }
    await this.d.store.insertFills(filled);
    return { filled, unknown };
  }

  /** Settles what filled (minting the SOT) and releases the rest; or releases everything when nothing filled. */
  async settle(order: OrderRecord, fills: readonly FillRecord[], complete: boolean): Promise<OrderRecord> {
    const chainId = chainOrderId(order.id);
    const shares = fills.reduce((s, f) => s + f.shares, 0n);
    if (shares === 0n) {
      const release = await this.d.vault.release(chainId);
      return this.finish(order.id, {
        status: "failed",
        releaseTx: release.txHash,
        errorCode: "all_venues_failed",
        errorMessage: "No venue filled any part of the order; the locked USDC was released.",
      });
    }
    const settled = settlement(order, fills, this.d.log);
    const tokenId = this.d.tokenId(order.eventId, order.outcome);
    const tx = await this.d.vault.settle(chainId, settled.spent, { tokenId, shares });
    return this.finish(order.id, { ...settled, status: complete ? "filled" : "partially_filled", sotTokenId: tokenId.toString(), settleTx: tx.txHash });
  }

  /** Places a child order; an unknown outcome is asked about a few times before it is left to reconciliation. */
  private async placeAndConfirm(venueId: string, child: ChildOrder): Promise<PlaceResult> {
    const venue = this.d.venues.get(venueId);
    if (!venue) return { kind: "rejected", reason: `venue ${venueId} is not configured` };
    let result: PlaceResult;
    try {
      result = await venue.place(child);
    } catch (e) {
      result = { kind: "unknown", reason: String(e) };
    }
    const attempts = this.d.reconcileAttempts ?? 3;
    for (let i = 0; i < attempts && result.kind === "unknown"; i++) {
      await sleep(this.d.reconcileDelayMs ?? 200);
      try {
        const status = await venue.status(child.clientOrderId, child);
        if (status.kind === "not_found") result = { kind: "rejected", reason: "the venue has no such order" };
        else if (status.kind === "done") {
          result = status.fills.length > 0
            ? { kind: "filled", venueOrderId: status.venueOrderId, fills: status.fills }
            : { kind: "rejected", reason: "the venue filled nothing" };
        }
      } catch (e) {
        this.d.log.warn({ venue: venueId, err: String(e) }, "venue status failed");
      }
    }
    return result;
  }

  private async reject(order: OrderRecord, code: ErrorCode | string, message: string): Promise<OrderRecord> {
    return this.finish(order.id, { status: "rejected", errorCode: code, errorMessage: message });
  }

  private async finish(id: string, patch: OrderPatch): Promise<OrderRecord> {
    const o = await this.update(id, patch);
    this.d.log.info({ order_id: id, status: o.status, spent: o.spent.toString(), error: o.errorCode }, "order finished");
    return o;
  }

  private update(id: string, patch: OrderPatch): Promise<OrderRecord> {
    return this.d.store.updateOrder(id, patch);
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
  return { clientOrderId: leg.clientOrderId, venueMarketId: leg.venueMarketId, outcome: order.outcome, side: "buy", limitPrice: leg.limitPrice, shares: leg.shares };
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
