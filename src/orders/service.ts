import { createHash } from "node:crypto";
import { toHex } from "viem";
import { keccak256 } from "../evm/keccak.ts";
import { AppError, type ErrorCode } from "../domain/errors.ts";
import { formatMicro, microToNumber, notional, proceedsOf, type ShareMicro } from "../domain/money.ts";
import { reopenable } from "../domain/order-status.ts";
import type { Clock, OrderIntent } from "../domain/types.ts";
import type { UnifiedEvent } from "../markets/catalog.ts";
import type { QueuedAhead } from "../markets/merged-book.ts";
import { sameQuotes, type Plan, type Refusal, type VenueQuote, type PlanRequest, type SellPlan, type SellQuote, type SellRequest } from "../router/index.ts";
import type { FillRecord, Lease, OrderLeg, OrderPatch, OrderRecord, OrderStatus, Store } from "../store/store.ts";
import type { ChildOrder, Venue, VenueFill } from "../venues/venue.ts";
import { learnOutcome, outcomeOfPlacement, type ChildOutcome, type OutcomeRules } from "./child-outcome.ts";
import { VaultTxError, type Address, type EscrowState, type Hex32, type LockState, type TxRef, type Vault } from "../vault/vault.ts";
import { QueuedChildren } from "./queued-children.ts";
import { validateOrder, type OrderLimits } from "./validate.ts";
import { largestVenue } from "./view.ts";

export interface OrderDeps {
  store: Store;
  vault: Vault;
  venues: ReadonlyMap<string, Venue>;
  event(eventId: string): UnifiedEvent | undefined;
  /** The router's input for buying `outcome`: each fresh venue's asks, its queue delay counting the child orders `ahead` of one planned now. */
  quotes(event: UnifiedEvent, outcome: OrderIntent["outcome"], ahead: QueuedAhead): VenueQuote[];
  plan(req: PlanRequest, quotes: readonly VenueQuote[]): Plan | Refusal;
  /** The router's input for selling `outcome`: each fresh venue's bids, capped by what the operator's account holds there (`inventory`, by venue id). */
  sellQuotes(event: UnifiedEvent, outcome: OrderIntent["outcome"], inventory: ReadonlyMap<string, ShareMicro>, ahead: QueuedAhead): SellQuote[];
  planSell(req: SellRequest, quotes: readonly SellQuote[]): SellPlan | Refusal;
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
  /** Told of each order this process finished (or recovery did), once it is stored: its holder's shares may have moved. */
  finished?: (order: OrderRecord) => void;
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
  "order.turns",
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
  order: Pick<OrderRecord, "id" | "locked" | "legs" | "plannedInFull" | "dustLeft">,
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
    status: statusOf(order, fills, filledShares),
  };
}

/**
 * A settled order's status: `filled` when what is left of the order is dust, the test a FOK plan passes:
 * a later round found the rest under every venue's minimum size (`dustLeft`), or its last round planned
 * all that the rounds before it left (`plannedInFull`) and `filledShares`, the order's, reach what the
 * rounds before it filled (`fills`, by child order) and that plan's shares.
 * Else `partially_filled`: an IOC order the books held only part of, or whose legs filled short of their
 * plan, when no later round bought or sold the rest.
 */
function statusOf(order: Pick<OrderRecord, "legs" | "plannedInFull" | "dustLeft">, fills: readonly Pick<FillRecord, "clientOrderId" | "shares">[], filledShares: bigint): "filled" | "partially_filled" {
  return order.dustLeft || (order.plannedInFull && lastRoundFilled(order, fills, filledShares)) ? "filled" : "partially_filled";
}

/** Whether `filledShares`, the order's, reach what the rounds before its last one filled (`fills`, by child order) and the shares its last round planned: its legs missed nothing. */
function lastRoundFilled(order: Pick<OrderRecord, "legs">, fills: readonly Pick<FillRecord, "clientOrderId" | "shares">[], filledShares: bigint): boolean {
  const round = order.legs.reduce((r, l) => Math.max(r, l.round), 1);
  const last = order.legs.filter((l) => l.round === round);
  const lastIds = new Set(last.map((l) => l.clientOrderId));
  const before = fills.filter((f) => !lastIds.has(f.clientOrderId)).reduce((s, f) => s + f.shares, 0n);
  const planned = last.reduce((s, l) => s + l.shares, 0n);
  return filledShares >= before + planned;
}

/**
 * What a sell's fills come to. The client is credited what the buyers paid, each fill's price × shares
 * rounded down to the micro-USDC, less the venues' fees: never less than 0, and never more than a share
 * pays (1 USDC a share), which the vault would refuse. Plans never sell beyond the escrow; were a venue
 * to, the escrow is burned whole and the operator carries the excess, logged as an error for
 * `crossfill audit` to report.
 */
export function sale(
  order: Pick<OrderRecord, "id" | "escrowed" | "legs" | "plannedInFull" | "dustLeft">,
  fills: readonly FillRecord[],
  log: Pick<Log, "error">,
): Required<Pick<OrderPatch, "proceeds" | "fees" | "filledShares" | "routedTo">> & { status: "filled" | "partially_filled" } {
  const sold = fills.reduce((s, f) => s + f.shares, 0n);
  if (sold > order.escrowed) log.error({ sold: sold.toString(), escrowed: order.escrowed.toString() }, "venues sold more than the escrow; burning the escrow");
  const filledShares = sold > order.escrowed ? order.escrowed : sold;
  const net = proceedsOfFills(fills);
  return {
    proceeds: net > filledShares ? filledShares : net,
    fees: fills.reduce((s, f) => s + f.fee, 0n),
    filledShares,
    routedTo: largestVenue(fills),
    status: statusOf(order, fills, filledShares),
  };
}

/**
 * What recovery records of an order whose settlement it found on chain: the chain's amounts, what the client
 * was charged or credited and the shares minted or burned. The settlement was made of the stored fills, so
 * the two agree; should a fill have been stored after the settlement was sent, the order still says what
 * the chain did, and the difference is logged as an error for `crossfill audit` to report.
 */
export function settledOnChain(
  order: Pick<OrderRecord, "id" | "locked" | "escrowed" | "legs" | "plannedInFull" | "dustLeft">,
  hold: Extract<Hold, { kind: "settled" }>,
  fills: readonly FillRecord[],
  log: Pick<Log, "error">,
): OrderPatch {
  const [fromFills, chain] =
    "sold" in hold
      ? [sale(order, fills, log), { proceeds: hold.proceeds, filledShares: hold.sold }]
      : [settlement(order, fills, log), { spent: hold.spent, filledShares: hold.shares }];
  const differs = Object.entries(chain).some(([k, v]) => fromFills[k as keyof typeof fromFills] !== v);
  if (differs) log.error({ chain: stringify(chain), fills: stringify(fromFills) }, "the chain settled the order for other amounts than its stored fills come to; recording the chain's");
  const status = statusOf(order, fills, chain.filledShares);
  const minted = "tokenId" in hold ? { sotTokenId: hold.tokenId.toString() } : {};
  return { ...fromFills, ...chain, ...minted, status, settleTx: hold.txHash };
}

/** What a routing order none of whose child orders filled records once `releaseTx` released its lock, or returned its escrow, whole. */
export function nothingFilled(order: Pick<OrderRecord, "side">, releaseTx: Hex32): OrderPatch {
  return {
    status: "failed",
    releaseTx,
    errorCode: "all_venues_failed",
    errorMessage: order.side === "sell" ? "No venue bought any part of the order; the escrowed shares were returned." : "No venue filled any part of the order; the locked USDC was released.",
  };
}

function stringify(o: object): Record<string, string> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));
}

/** What a sell's fills paid after the venues' fees, in micro-USDC, never below 0: the proceeds the client is credited. */
export function proceedsOfFills(fills: readonly Pick<FillRecord, "price" | "shares" | "fee">[]): bigint {
  const net = fills.reduce((s, f) => s + proceedsOf(f.price, f.shares) - f.fee, 0n);
  return net > 0n ? net : 0n;
}

/** What fills cost, fees included, in micro-USDC. */
export function costOf(fills: readonly Pick<FillRecord, "price" | "shares" | "fee">[]): bigint {
  return fills.reduce((s, f) => s + notional(f.price, f.shares) + f.fee, 0n);
}

/**
 * What the chain holds for an order, a buy's USDC lock or a sell's share escrow alike: `held` (micro-USDC
 * locked, or micro-shares escrowed, until the Vault's `deadline` in unix seconds), or ended by the
 * transaction that settled or released it.
 */
export type Hold = { kind: "none" } | { kind: "held"; amount: bigint; deadline: number } | (Extract<LockState | EscrowState, { kind: "settled" | "released" }>);

/** A write that found the order already moved on by another writer: this one stops and leaves the order to it. */
class OrderMovedOn extends Error {
  constructor(id: string, from: readonly string[]) {
    super(`order ${id} is no longer ${from.join(" or ")}`);
  }
}

/** Runs tasks one at a time per key, each after the one given before it has finished. */
class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const result = (this.tails.get(key) ?? Promise.resolve()).then(task);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
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
  /** Orders the reconciler holds the lease of while it recovers them: renewed with those in flight, however long a settlement takes. */
  readonly recovering = new Set<string>();
  /** Sells plan and store their child orders one at a time per event and outcome: what each may sell depends on the others'. */
  private readonly selling = new KeyedQueue();
  /** Child orders planned and not yet answered: the router reads each venue's queue with them ahead, and its books without their shares. */
  private readonly queued = new QueuedChildren();

  constructor(private readonly d: OrderDeps) {}

  get outcomeRules(): OutcomeRules {
    return { clock: this.d.clock, expirySkewMs: this.d.expirySkewMs ?? 20_000 };
  }

  /** `log` is the request's: the order's lines then carry its request_id as well as its order_id. */
  async submit(who: Submitter, body: unknown, idempotencyKey: string | undefined, log: Log = this.d.log): Promise<OrderRecord> {
    const { intent, clientOrderId } = validateOrder(body, idempotencyKey, this.d.limits);
    let event: UnifiedEvent;
    try {
      event = this.tradableEvent(intent);
    } catch (e) {
      // A retry of an order placed before its event closed (or left the catalog) gets that order back; of one
      // rejected "try again", the reason it can no longer run.
      const earlier = await this.earlier(who, clientOrderId, intent);
      if (earlier && !reopenable(earlier)) return earlier;
      throw e;
    }
    if (intent.side === "sell") {
      // A retry of a sell already placed gets that order back, even once its shares are sold; a new
      // sell of more than the position holds unlocked is refused before anything is stored.
      const earlier = await this.earlier(who, clientOrderId, intent);
      if (earlier && !reopenable(earlier)) return earlier;
      const held = await this.sharesHeld(who.address, intent);
      if (held < intent.shares) {
        // The same sell sent to another instance at once may have been stored, and escrowed the shares,
        // since the lookup above: that order is the answer, not the shares it took.
        const twin = await this.earlier(who, clientOrderId, intent);
        if (twin && !reopenable(twin)) return twin;
        // A retry of a sell whose first escrow a reorganisation removed, and that landed again, holds its shares there: it runs on that escrow.
        if (!twin) throw insufficientPosition(intent, held);
        const escrow = await this.holdOf(twin).catch((err: unknown) => {
          log.warn({ err }, "reading a sell's escrow from the chain failed");
          throw new AppError("chain_unavailable", "The order's escrow could not be read from the chain; nothing was changed. Try again.");
        });
        if (escrow.kind !== "held") throw insufficientPosition(intent, held);
      }
    }

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
      escrowed: 0n,
      proceeds: 0n,
      routedTo: null,
      legs: [],
      plannedInFull: false,
      dustLeft: false,
      sotTokenId: null,
      lockTx: null,
      settleTx: null,
      releaseTx: null,
      errorCode: null,
      errorMessage: null,
      errorDetails: null,
      createdAt: now,
      updatedAt: now,
      lockedAt: null,
    };
    const inserted = await this.d.store.insertOrder(record, this.lease());
    let order = record;
    if (!inserted.created) {
      const same = sameRequest(inserted.order, intent, clientOrderId!);
      // An order rejected 5xx before anything was locked was answered "try again": its retry runs it again, under its id.
      if (!reopenable(same)) return same;
      const reopened = await this.d.store.reopenOrder(same.id, this.lease());
      // Another instance took the same retry first: its order is the answer.
      if (!reopened) return (await this.d.store.order(same.id))!;
      order = reopened;
    }
    this.inFlight.add(order.id);
    const orderLog = log.child({ order_id: order.id });
    try {
      this.d.checkpoint?.("order.inserted", order.id);
      return await this.execute(order, event, who.address, orderLog);
    } catch (e) {
      orderLog.error({ err: e }, "order interrupted; recovery will finish it");
      this.returnTurns(order.id);
      // The order as it stands, or, when the store cannot tell, as this request stored it: funds may have moved.
      return (await this.d.store.order(order.id).catch(() => undefined)) ?? order;
    } finally {
      this.inFlight.delete(order.id);
      this.queued.forget(order.id);
    }
  }

  /**
   * Gives back the write turns an interrupted order took and did not spend (Venue.writeTurn): recovery
   * sends nothing with them, and the venues' queues would otherwise keep them. A turn spent by a
   * placement, or given back already, is not given back again.
   */
  private returnTurns(orderId: string): void {
    for (const [id, venue] of this.d.venues) for (let round = 1; round <= ROUTING_ROUNDS; round++) venue.returnTurn?.(childOrderId(orderId, id, round));
  }

  /** A lease of this instance starting now. */
  lease(): Lease {
    return { owner: this.d.instanceId, until: new Date(this.d.clock.now() + (this.d.leaseMs ?? 30_000)).toISOString() };
  }

  /** Extends the leases of the orders this process is executing or recovering: called more often than a lease lasts. */
  renewLeases(): Promise<void> {
    return this.d.store.renewLeases([...this.inFlight, ...this.recovering], this.lease());
  }

  /**
   * Plans an order on the books as they are now, exactly as submit() would, storing, locking and sending
   * nothing: a buy on the asks, a sell on the bids within the operator's inventory at each venue.
   */
  async quote(query: unknown): Promise<{ intent: OrderIntent; plan: Plan | SellPlan }> {
    const { intent } = validateOrder(query, undefined, this.d.limits, "querystring");
    const event = this.tradableEvent(intent);
    const result =
      intent.side === "sell"
        ? this.d.planSell(sellRequest(intent, intent.shares), this.sellQuotes(event, intent.outcome, await this.d.store.venueInventory(intent.eventId, intent.outcome)))
        : this.d.plan(planRequest(intent), this.buyQuotes(event, intent.outcome));
    if (result.kind === "refusal") throw new AppError(result.code, result.message, result.details);
    return { intent, plan: result };
  }

  /** The router's input for a buy: the venues' asks, queues counting the child orders planned ahead, less the shares held by child orders in flight. */
  private buyQuotes(event: UnifiedEvent, outcome: OrderIntent["outcome"]): VenueQuote[] {
    return this.queued.buyQuotes(this.d.quotes(event, outcome, this.queued.ahead), outcome);
  }

  /** The router's input for a sell: the venues' bids within `inventory`, as buyQuotes. */
  private sellQuotes(event: UnifiedEvent, outcome: OrderIntent["outcome"], inventory: ReadonlyMap<string, ShareMicro>): SellQuote[] {
    return this.queued.sellQuotes(this.d.sellQuotes(event, outcome, inventory, this.queued.ahead), outcome);
  }

  private tradableEvent(intent: OrderIntent): UnifiedEvent {
    const event = this.d.event(intent.eventId);
    if (!event) throw new AppError("unknown_event", `No event has the id ${JSON.stringify(intent.eventId)}.`, { event_id: intent.eventId });
    if (event.status !== "open") throw new AppError("market_closed", `The event ${event.eventId} is ${event.status}.`, { status: event.status });
    if (!event.outcomes.includes(intent.outcome)) {
      throw new AppError("invalid_request", `outcome must be one of ${event.outcomes.join(", ")}`, { fields: { outcome: "is not an outcome of this event" } });
    }
    return event;
  }

  /** The order stored under the request's client_order_id, if any, as sameRequest answers it. */
  private async earlier(who: Submitter, clientOrderId: string | null, intent: OrderIntent): Promise<OrderRecord | undefined> {
    if (clientOrderId === null) return undefined;
    const order = await this.d.store.orderByClientId(who.accountId, clientOrderId);
    return order && sameRequest(order, intent, clientOrderId);
  }

  /** The account's unlocked shares of the outcome: shares escrowed for its other sells are no longer in its balance. */
  private sharesHeld(address: Address, intent: Pick<OrderIntent, "eventId" | "outcome">): Promise<ShareMicro> {
    return this.d.vault.sotBalance(address, this.d.tokenId(intent.eventId, intent.outcome)).catch((err: unknown) => {
      this.d.log.warn({ err }, "reading a position from the chain failed");
      throw new AppError("chain_unavailable", "The position could not be read from the chain; nothing was escrowed. Try again.");
    });
  }

  private execute(order: OrderRecord, event: UnifiedEvent, address: Address, log: Log): Promise<OrderRecord> {
    return order.side === "sell" ? this.executeSell(order, event, address, log) : this.executeBuy(order, event, address, log);
  }

  private async executeBuy(order: OrderRecord, event: UnifiedEvent, address: Address, log: Log): Promise<OrderRecord> {
    const req = planRequest(order);
    const quoted = this.buyQuotes(event, order.outcome);
    const first = this.d.plan(req, quoted);
    if (first.kind === "refusal") return this.finish(order.id, ["pending"], { status: "rejected", errorCode: first.code, errorMessage: first.message, errorDetails: first.details ?? null }, log);

    order = await this.hold(order, address, log);
    if (order.status !== "locked") return order;

    // Plan on the books as they are now: the reference price is taken at the moment of routing. When
    // nothing the router reads moved meanwhile (books, shares held, queues), that is the first plan.
    const quotes = this.buyQuotes(event, order.outcome);
    const routed = sameQuotes(quoted, quotes) ? first : this.d.plan(req, quotes);
    if (routed.kind === "refusal") return this.unwind(order, routed, log);
    // Orders routed at the same moment plan on the same books, so a leg can find its levels taken by
    // the time it arrives. What its legs missed is routed again on the books as they are then, within
    // the limit price of the first routing, for a few rounds; each round's worst case stays within what
    // the fills so far left of the lock. What the rounds route is the amount while each round's plan
    // takes all that is left of it, else what that plan took (an IOC order the books held part of):
    // the rest of such an order is released, never bought later on books refilled meanwhile.
    let routable = order.locked;
    let inFull = true;
    return this.route(order, log, async (round, o, fills) => {
      const spent = costOf(fills);
      let planned: Plan;
      if (round === 1) planned = await this.atTurns(o, event, round, req, routed, quotes);
      else {
        const again = { ...planRequest(o), amount: routable > spent ? routable - spent : 0n, timeInForce: "IOC" as const, limitPrice: routed.limitPrice };
        const now = this.buyQuotes(event, o.outcome);
        const next = this.d.plan(again, now);
        if (next.kind === "refusal") return next;
        planned = await this.atTurns(o, event, round, again, next, now);
      }
      if (!planned.complete) routable = spent + planned.cost;
      inFull &&= planned.complete;
      return this.routeLegs(o, event, round, { legs: planned.legs, complete: inFull });
    });
  }

  /**
   * A round's buy plan as its legs leave their venues' write queues: each child order waits for its turn
   * (Venue.writeTurn), counted in its venue's queue and holding its shares meanwhile, and the round is then
   * planned again on the books as they are, within the same venues and the same limit price, so a child
   * that waited seconds behind a venue's write limit is not sent for levels gone meanwhile. When the
   * venues no longer hold the round's order (a FOK no longer fills whole there), it is the plan made before.
   * A venue the new plan leaves out gets its turn back. When nothing the new plan would read differs from
   * the quotes `planned` was made on (`plannedOn`: the same books, held shares and latencies, and no
   * queue at the plan's venues), `planned` is that plan: optimal over every venue quoted, it is so over
   * the venues it uses.
   */
  private async atTurns(order: OrderRecord, event: UnifiedEvent, round: number, req: PlanRequest, planned: Plan, plannedOn: readonly VenueQuote[]): Promise<Plan> {
    const venue = (id: string) => this.d.venues.get(id);
    const childId = (venueId: string) => childOrderId(order.id, venueId, round);
    this.queued.planned(order, planned.legs);
    const queued = planned.legs.filter((l) => venue(l.venue)?.writeTurn);
    if (queued.length === 0) return planned;
    // From its turn's request on, the venue's own queue counts a child order, no longer the service's.
    for (const l of queued) this.queued.placing(order.id, l.venue);
    await Promise.all(queued.map((l) => venue(l.venue)!.writeTurn!(childId(l.venue))));
    this.d.checkpoint?.("order.turns", order.id);
    const venues = new Set(planned.legs.map((l) => l.venue));
    this.queued.forget(order.id);
    // The queues behind this order's turns are not its own: a venue whose turn it holds sends it now.
    const quotes = this.buyQuotes(event, order.outcome).flatMap((q) => (!venues.has(q.venue) ? [] : [venue(q.venue)?.writeTurn ? { ...q, queueDelayMs: 0 } : q]));
    const now = sameQuotes(quotes, plannedOn.filter((q) => venues.has(q.venue))) ? planned : this.d.plan({ ...req, limitPrice: planned.limitPrice }, quotes);
    const sent = now.kind === "refusal" ? planned : now;
    this.queued.planned(order, sent.legs);
    for (const l of sent.legs) if (venue(l.venue)?.writeTurn) this.queued.placing(order.id, l.venue);
    for (const v of venues) if (!sent.legs.some((l) => l.venue === v)) venue(v)?.returnTurn?.(childId(v));
    return sent;
  }

  /**
   * A sell (DESIGN §12): plans on the venues' bids, each venue capped by what the operator's account
   * holds there, escrows the client's shares, routes the sell child orders in rounds as a buy routes,
   * then burns what sold and credits the proceeds, or returns the shares when nothing sold.
   */
  private async executeSell(order: OrderRecord, event: UnifiedEvent, address: Address, log: Log): Promise<OrderRecord> {
    const quoted = this.sellQuotes(event, order.outcome, await this.inventory(order));
    const first = this.d.planSell(sellRequest(order, order.shares), quoted);
    if (first.kind === "refusal") return this.finish(order.id, ["pending"], { status: "rejected", errorCode: first.code, errorMessage: first.message, errorDetails: first.details ?? null }, log);

    order = await this.hold(order, address, log);
    if (order.status !== "locked") return order;

    let limitPrice: bigint | undefined;
    // What the rounds sell: the escrow while each round's plan takes all that is left of it, else what that plan took, as a buy's rounds.
    let routable = order.shares;
    let inFull = true;
    return this.route(order, log, (round, o, fills) =>
      // Planning and storing the legs is one step per market, so two sells never plan on the same inventory.
      this.selling.run(`${o.eventId}\n${o.outcome}`, async () => {
        const sold = fills.reduce((n, f) => n + f.shares, 0n);
        const left = routable - sold;
        const req = round === 1 ? sellRequest(o, left) : { ...sellRequest(o, left), timeInForce: "IOC" as const, limitPrice };
        const quotes = this.sellQuotes(event, o.outcome, await this.inventory(o));
        // The first round sells the escrow: the first plan's, when nothing the router reads moved since.
        const planned = round === 1 && left === order.shares && sameQuotes(quoted, quotes) ? first : this.d.planSell(req, quotes);
        if (planned.kind === "refusal") return planned;
        limitPrice ??= planned.limitPrice;
        if (!planned.complete) routable = sold + planned.shares;
        inFull &&= planned.complete;
        this.queued.planned(o, planned.legs);
        return this.routeLegs(o, event, round, { legs: planned.legs, complete: inFull });
      }),
    );
  }

  /**
   * Locks a buy's USDC, or escrows a sell's shares, and moves the order to `locked`; answers the order
   * rejected when the vault refused (the balance or the position short: refused by name, since the vault
   * dry-runs every transaction and sends nothing it would revert), or still pending when the outcome is
   * unknown and the chain shows nothing yet, or it was refused as already taken and the chain cannot be read: the
   * chain decides, here or in recovery, never a timer. A lock or escrow of its id the chain holds already (its first
   * attempt's, landed again after a reorganisation) is the order's: run
   * while at least half the Vault's lockTtl is left to its deadline, else released and the order rejected
   * `order_interrupted` for good, as too late to route and settle (recovery waits for a venue's answer until then).
   */
  private async hold(order: OrderRecord, address: Address, log: Log): Promise<OrderRecord> {
    const chainId = chainOrderId(order.id);
    const sell = order.side === "sell";
    const sotTokenId = this.d.tokenId(order.eventId, order.outcome);
    const held = (amount: bigint): OrderPatch => (sell ? { escrowed: amount, sotTokenId: sotTokenId.toString() } : { locked: amount });
    try {
      this.d.checkpoint?.("order.lock.sent", order.id);
      const tx = sell ? await this.d.vault.escrow(chainId, address, { tokenId: sotTokenId, shares: order.shares }) : await this.d.vault.lock(chainId, address, order.amount);
      this.d.checkpoint?.("order.locked", order.id);
      return await this.update(order.id, ["pending"], { status: "locked", ...held(sell ? order.shares : order.amount), lockTx: tx.txHash });
    } catch (e) {
      if (!(e instanceof VaultTxError)) throw e;
      const refused = await this.refusal(order, address, e);
      if (refused) return this.finish(order.id, ["pending"], { status: "rejected", errorCode: refused.code, errorMessage: refused.message, errorDetails: refused.details ?? null }, log);
      // A refusal may be the Vault's AlreadyLocked (AlreadyEscrowed): a retry of an order whose first lock or escrow a
      // reorganisation removed finds it landed again. Any other refusal took nothing, so a chain that cannot be read
      // then holds nothing of this attempt; a hold the refusal names is there, and is left to recovery, as an unknown outcome is.
      const heldAlready = e.reason === "AlreadyLocked" || e.reason === "AlreadyEscrowed";
      const state = await this.holdOf(order).catch((err: unknown) => {
        if (e.outcome === "reverted" && !heldAlready) return { kind: "none" } as const;
        throw err;
      });
      if (e.outcome === "reverted" && state.kind === "none") {
        return this.finish(order.id, ["pending"], { status: "rejected", errorCode: "chain_unavailable", errorMessage: `Nothing was ${sell ? "escrowed" : "locked"}: ${e.message}` }, log);
      }
      if (state.kind !== "held") {
        log.warn({ err: e, hold: state.kind }, `${sell ? "escrow" : "lock"} outcome unknown, or its hold already ended; left to recovery`);
        return order;
      }
      // Landed though its answer was lost, or an earlier attempt's landed again: recorded with the transaction that made it, as the chain logged it.
      // Its transaction is for the record only: a search the node cannot answer (a pool's node without the block it is tied to) leaves it unnamed.
      const lockTx = await this.d.vault.heldBy(chainId).catch((err: unknown) => {
        log.warn({ err }, "could not search the chain for the transaction of a lock or escrow taken over; recorded without it");
        return null;
      });
      const locked = await this.update(order.id, ["pending"], { status: "locked", ...held(state.amount), lockTx });
      // The Vault counts the deadline from the hold's block, which an earlier attempt's may have landed in hours ago.
      if (state.deadline * 1000 - this.d.clock.now() >= (this.d.vault.info().lockTtlSeconds * 1000) / 2) return locked;
      const what = sell ? "escrow" : "lock";
      const message = `The order's ${what}, taken on the chain for an earlier attempt of it, has too little time left before its deadline (${new Date(state.deadline * 1000).toISOString()}) to route and settle the order; ${sell ? "the escrowed shares were returned" : "the locked USDC was released"}.`;
      log.warn({ deadline: state.deadline }, `the ${what} taken over has less than half its time to live left; released`);
      return this.unwind(locked, { code: "order_interrupted", message }, log);
    }
  }

  /** The client's side of a vault refusal, by the contract's error: its available USDC (a buy) or its position (a sell) short of the order. */
  private async refusal(order: OrderRecord, address: Address, e: VaultTxError): Promise<AppError | undefined> {
    if (e.reason === "InsufficientAvailable") {
      const { available } = await this.d.vault.balanceOf(address);
      return new AppError("insufficient_funds", `The vault holds ${formatMicro(available)} USDC available; the order needs ${formatMicro(order.amount)}.`, {
        available_usdc: microToNumber(available),
        amount_usdc: microToNumber(order.amount),
      });
    }
    // Another sell of the same position escrowed its shares first.
    if (e.reason === "InsufficientShares") return insufficientPosition(order, await this.sharesHeld(address, order));
    return undefined;
  }

  /** What the chain holds for the order: a buy's lock or a sell's escrow, read alike (recovery reads it too). */
  async holdOf(order: Pick<OrderRecord, "id" | "side">): Promise<Hold> {
    const chainId = chainOrderId(order.id);
    if (order.side === "sell") {
      const escrow = await this.d.vault.escrowState(chainId);
      return escrow.kind === "escrowed" ? { kind: "held", amount: escrow.shares, deadline: escrow.deadline } : escrow;
    }
    const lock = await this.d.vault.lockState(chainId);
    return lock.kind === "locked" ? { kind: "held", amount: lock.amount, deadline: lock.deadline } : lock;
  }

  /** Releases a buy's lock, or returns a sell's escrow, whole. */
  releaseHold(order: Pick<OrderRecord, "id" | "side">): Promise<TxRef> {
    const chainId = chainOrderId(order.id);
    return order.side === "sell" ? this.d.vault.releaseEscrow(chainId) : this.d.vault.release(chainId);
  }

  /**
   * What the operator's account holds on each venue for a sell to sell. The order's own child orders
   * of earlier rounds count as sold in the store's reckoning while it is open; each has its final answer
   * by the time the next round plans, so only what they filled is taken off again.
   */
  private async inventory(order: OrderRecord): Promise<Map<string, ShareMicro>> {
    const inventory = await this.d.store.venueInventory(order.eventId, order.outcome);
    if (order.legs.length === 0) return inventory;
    const add = (venue: string, shares: ShareMicro) => inventory.set(venue, (inventory.get(venue) ?? 0n) + shares);
    for (const leg of order.legs) add(leg.venue, leg.shares);
    for (const f of await this.d.store.fills(order.id)) add(f.venue, -f.shares);
    return inventory;
  }

  /** Stores a round's child orders, with the move to `routing`, before any is sent, and whether the round's plan fills what was left of the order. */
  private async routeLegs(order: OrderRecord, event: UnifiedEvent, round: number, plan: Pick<Plan | SellPlan, "legs" | "complete">): Promise<OrderRecord> {
    const listings = new Map(event.listings.map((l) => [l.venue, l.venueMarketId]));
    const expiresAt = this.d.clock.now() + (this.d.childOrderTtlMs ?? 30_000);
    const sent: OrderLeg[] = await Promise.all(
      plan.legs.map(async (leg) => {
        const child = {
          venue: leg.venue,
          clientOrderId: childOrderId(order.id, leg.venue, round),
          venueMarketId: listings.get(leg.venue) ?? leg.venueMarketId,
          limitPrice: leg.limitPrice,
          shares: leg.shares,
          round,
        };
        return { ...child, expiresAt: await this.childExpiry(order, child, expiresAt) };
      }),
    );
    const sotTokenId = this.d.tokenId(order.eventId, order.outcome).toString();
    return this.update(order.id, ["locked", "routing"], { status: "routing", legs: [...order.legs, ...sent], sotTokenId, plannedInFull: plan.complete });
  }

  /**
   * A child order's expiry: `expiresAt`, or on a venue that finds children by their content
   * (Venue.findsChildrenByContent) the first whole second from it on that no other child of the same
   * content holds, reserved in the store before the child is stored or sent. Later, never earlier: the
   * child lives at least its time to live, and "not found" is final only after the expiry it was sent
   * with, so a crash after sending finds the child by the second its leg stores.
   */
  private async childExpiry(order: OrderRecord, leg: Omit<OrderLeg, "expiresAt">, expiresAt: number): Promise<number> {
    if (!this.d.venues.get(leg.venue)?.findsChildrenByContent) return expiresAt;
    const content = { venue: leg.venue, venueMarketId: leg.venueMarketId, outcome: order.outcome, side: order.side, limitPrice: leg.limitPrice, shares: leg.shares };
    const second = await this.d.store.reserveChildExpiry(content, leg.clientOrderId, Math.ceil(expiresAt / 1000), new Date(this.d.clock.now()).toISOString());
    return second * 1000;
  }

  /**
   * Routes a locked order in rounds: `next` stores a round's legs (the order moves to `routing`), or
   * answers the router's refusal: the first round's unwinds the order, a later one ends the rounds, and
   * a later `order_too_small` marks what is left dust (`dustLeft`). Each round's legs are sent at once;
   * an unknown outcome leaves the order to recovery; then it settles on its stored fills.
   */
  private async route(
    order: OrderRecord,
    log: Log,
    next: (round: number, order: OrderRecord, fills: readonly FillRecord[]) => Promise<OrderRecord | Refusal>,
  ): Promise<OrderRecord> {
    let fills: FillRecord[] = [];
    for (let round = 1; round <= ROUTING_ROUNDS; round++) {
      const routed = await next(round, order, fills);
      if ("kind" in routed) {
        if (round === 1) return this.unwind(order, routed, log);
        // Dust left of the order only when the rounds routed the whole of it; else what is left is what the books never held.
        if (routed.code === "order_too_small" && order.plannedInFull) order = await this.update(order.id, ["routing"], { dustLeft: true });
        break;
      }
      order = routed;
      this.d.checkpoint?.("order.routing", order.id);
      const unknown = await this.placeRound(order, order.legs.filter((l) => l.round === round), log);
      if (unknown.length > 0) {
        // Never guess: the order stays `routing` until recovery learns what the venues did.
        log.warn({ venues: unknown }, "child order outcome unknown; left to recovery");
        return order;
      }
      fills = await this.d.store.fills(order.id);
      if (lastRoundFilled(order, fills, fills.reduce((n, f) => n + f.shares, 0n))) break;
    }
    return this.settle(order, fills, log);
  }

  /**
   * A locked order refused before routing (by the router at routing time, or as too late): the refusal recorded, then its
   * USDC released, or its shares returned. Recorded first, so that recovery ends with it an order whose release's answer
   * was lost, or never sent (reconcileUnrouted), not as interrupted.
   */
  private async unwind(order: OrderRecord, refusal: { code: ErrorCode; message: string; details?: Record<string, unknown> }, log: Log): Promise<OrderRecord> {
    await this.update(order.id, ["locked"], { errorCode: refusal.code, errorMessage: refusal.message, errorDetails: refusal.details ?? null });
    const release = await this.releaseHold(order);
    return this.finish(order.id, ["locked"], { status: "rejected", releaseTx: release.txHash }, log);
  }

  /** Sends one round of child orders at once, stores what they filled, and names the venues whose outcome is unknown. */
  private async placeRound(order: OrderRecord, legs: readonly OrderLeg[], log: Log): Promise<string[]> {
    const outcomes = await Promise.all(
      legs.map(async (leg) => {
        this.queued.placing(order.id, leg.venue);
        const outcome = await this.placeAndLearn(leg.venue, childOrder(order, leg), log);
        // A child the venue refused before sending it left its turn unspent: the next child may have it.
        this.d.venues.get(leg.venue)?.returnTurn?.(leg.clientOrderId);
        this.queued.answered(order.id, leg.venue);
        return { leg, outcome };
      }),
    );
    this.d.checkpoint?.("order.placed", order.id);
    await this.d.store.insertFills(outcomes.flatMap(({ leg, outcome }) => (outcome.final ? outcome.fills.map((f) => fillRecord(order.id, leg, f, this.d.clock)) : [])));
    this.d.checkpoint?.("order.fills.stored", order.id);
    return outcomes.filter(({ outcome }) => !outcome.final).map(({ leg }) => leg.venue);
  }

  /**
   * Settles the order on its stored fills, each venue trade counted once, in one transaction: a buy
   * spends what they cost, releases the rest and mints the SOT; a sell burns the shares sold, credits the
   * proceeds and returns the rest. Nothing filled: the lock released, or the escrow returned, whole.
   * Recovery calls it too, for a routing order whose lock or escrow is still open. `fills` are the order's
   * stored fills, all of them; `log` carries the order's id.
   */
  async settle(order: OrderRecord, fills: readonly FillRecord[], log: Log): Promise<OrderRecord> {
    const shares = fills.reduce((s, f) => s + f.shares, 0n);
    this.d.checkpoint?.("order.settle.sent", order.id);
    if (shares === 0n) return this.finish(order.id, ["routing"], nothingFilled(order, (await this.releaseHold(order)).txHash), log);
    const made = order.side === "sell" ? sale(order, fills, log) : { ...settlement(order, fills, log), sotTokenId: this.d.tokenId(order.eventId, order.outcome).toString() };
    const tx = await this.settleHold({ ...order, ...made });
    return this.finish(order.id, ["routing"], { ...made, settleTx: tx.txHash }, log);
  }

  /**
   * Sends the settlement the order records, in one transaction: a buy spends `spent` of its lock, releases the rest and
   * mints `filledShares` SOT of `sotTokenId` (a buy's fills' shares) to its client; a sell burns `filledShares` of its
   * escrow, credits the `proceeds` and returns the rest. The stranded-lock sweep sends it again for a settled order whose
   * settlement a reorganisation removed.
   */
  settleHold(order: Pick<OrderRecord, "id" | "side" | "spent" | "proceeds" | "filledShares" | "sotTokenId">): Promise<TxRef> {
    const chainId = chainOrderId(order.id);
    if (order.side === "sell") return this.d.vault.settleSell(chainId, order.filledShares, order.proceeds);
    return this.d.vault.settle(chainId, order.spent, { tokenId: BigInt(order.sotTokenId!), shares: order.filledShares });
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
    this.d.finished?.(o);
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

function sellRequest(o: Pick<OrderRecord, "maxSlippage" | "strategy" | "timeInForce">, shares: ShareMicro): SellRequest {
  return { side: "sell", shares, maxSlippage: o.maxSlippage, strategy: o.strategy, timeInForce: o.timeInForce };
}

/**
 * Hash of what the order asks for, so a retry with the same idempotency key can be told from a
 * conflicting one. A sell's shares are part of it; a buy's hash is what it was before sells existed.
 */
function requestHash(i: OrderIntent): string {
  const canonical = [i.eventId, i.outcome, i.side, i.amount, i.maxSlippage, i.strategy, i.timeInForce, ...(i.side === "sell" ? [i.shares] : [])].join("\n");
  return createHash("sha256").update(canonical).digest("hex");
}

/** An order's request fields by the names the client sends them under. */
const REQUEST_FIELDS: Record<keyof OrderIntent, string> = {
  eventId: "market_id",
  outcome: "outcome",
  side: "side",
  amount: "amount_usdc",
  shares: "shares",
  maxSlippage: "max_slippage",
  strategy: "strategy",
  timeInForce: "time_in_force",
};

/** The order a retry names by its client_order_id, when it asks for the same; idempotency_conflict, naming what differs, when it does not. */
function sameRequest(order: OrderRecord, intent: OrderIntent, clientOrderId: string): OrderRecord {
  if (order.requestHash !== requestHash(intent)) {
    const differ = (Object.keys(REQUEST_FIELDS) as (keyof OrderIntent)[]).filter((k) => order[k] !== intent[k]).map((k) => REQUEST_FIELDS[k]);
    throw new AppError(
      "idempotency_conflict",
      `The client_order_id (or Idempotency-Key) ${JSON.stringify(clientOrderId)} was already used for a different order${differ.length > 0 ? `: not the same ${differ.join(", ")}` : ""}.`,
      { order_id: order.id },
    );
  }
  return order;
}

function insufficientPosition(intent: Pick<OrderIntent, "eventId" | "outcome" | "shares">, held: ShareMicro): AppError {
  return new AppError(
    "insufficient_position",
    `The account holds ${formatMicro(held)} unlocked ${intent.outcome} shares of ${intent.eventId}; the sell asks for ${formatMicro(intent.shares)}.`,
    { held_shares: microToNumber(held), shares: microToNumber(intent.shares) },
  );
}

/** The order a leg sends to its venue. */
export function childOrder(order: Pick<OrderRecord, "outcome" | "side">, leg: OrderLeg): ChildOrder {
  return {
    clientOrderId: leg.clientOrderId,
    venueMarketId: leg.venueMarketId,
    outcome: order.outcome,
    side: order.side,
    limitPrice: leg.limitPrice,
    shares: leg.shares,
    expiresAt: leg.expiresAt,
  };
}

/** A fill of the child order `leg`, stored under the leg's venue and client order id, whatever id its venue tagged it with: the status counts fills by leg. */
export function fillRecord(orderId: string, leg: Pick<OrderLeg, "venue" | "clientOrderId">, f: VenueFill, clock: Clock): FillRecord {
  return {
    orderId,
    venue: leg.venue,
    venueOrderId: f.venueOrderId,
    tradeId: f.tradeId,
    clientOrderId: leg.clientOrderId,
    price: f.price,
    shares: f.shares,
    fee: f.fee,
    createdAt: new Date(clock.now()).toISOString(),
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
