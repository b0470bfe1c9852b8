import { randomUUID } from "node:crypto";
import { feeInShares, grossForDelivered, netOfWithheld, orderFee, withheldShares, type FeeModel } from "../../domain/fees.ts";
import { formatMicro, ONE, type Micro, type PriceMicro, type ShareMicro } from "../../domain/money.ts";
import type { Clock, Level, Outcome } from "../../domain/types.ts";
import type { CatalogEvent } from "../../markets/catalog.ts";
import type { BookSnapshot, BookUpdate, ChildOrder, ChildStatus, PlaceResult, Unsubscribe, VenueFill, VenueMarket } from "../venue.ts";
import { BookEngine, costOf } from "./book-engine.ts";
import { OWN_ACCOUNT, SimPositions } from "./positions.ts";
import { Rng, seedFor } from "./prng.ts";
import type { VenueProfile } from "./profiles.ts";

/** Switches tests flip at run time to make a simulated venue misbehave. */
export interface SimFaults {
  /** Refuse every new order, definitely. */
  reject: boolean;
  /** Fill only half of what each order asks for. */
  partial: boolean;
  /** Unreachable: no book updates (books go stale) and no orders. */
  down: boolean;
  /** The caller never hears back: `ack_lost` after the order executed, `request_lost` before it reached the venue. */
  timeout: false | "ack_lost" | "request_lost";
  /** Orders take half of what they ask and rest with the rest, open until cancelled. */
  resting: boolean;
  /** The wire repeats every trade it reports (same trade id), as a venue's retried message would. */
  duplicateTrades: boolean;
}

export interface SimExchangeOptions {
  profile: VenueProfile;
  /** Every event of the catalog; the exchange lists those with a listing naming its venue. */
  events: readonly CatalogEvent[];
  seed: number;
  clock: Clock;
}

/** A market's life on a simulated venue: trading, stopped, or resolved to an outcome, since `at` (ms since the epoch). */
export type SimLifecycle = { state: "open" } | { state: "closed"; at: number } | { state: "resolved"; outcome: Outcome; at: number };

interface SimMarket {
  market: VenueMarket;
  /** Absent for markets that no longer trade: they have no book. */
  engine: BookEngine | undefined;
  updatedAt: number;
  lifecycle: SimLifecycle;
}

interface OrderRecord {
  venueOrderId: string;
  fills: VenueFill[];
  /** The order's matches as the book saw them: the fills before any fee withheld in contracts. */
  matched: VenueFill[];
  result: PlaceResult;
  /** Shares still resting on the book (the `resting` fault); 0 once filled, killed or cancelled. */
  resting: bigint;
  /** Whose order, and what a resting sell offers of its holding. */
  account: string;
  order: ChildOrder;
}

/** How far (at p = 0.5; less toward 0 or 1) a venue's mid may settle from the event's shared base price. */
const MAX_VENUE_OFFSET = 6_000;

/**
 * One simulated venue's matching engine: its markets and books, order validation, IOC matching,
 * fees and the order registry. Transport-free, so the in-process adapter and the wire-protocol
 * simulators drive the same exchange.
 */
export class SimExchange {
  readonly venue: string;
  readonly faults: SimFaults = { reject: false, partial: false, down: false, timeout: false, resting: false, duplicateTrades: false };
  private readonly profile: VenueProfile;
  private readonly clock: Clock;
  private readonly markets_ = new Map<string, SimMarket>();
  private readonly orders = new Map<string, OrderRecord>();
  private readonly listeners = new Set<(u: BookUpdate) => void>();
  /** Every account's holdings, from its fills. */
  readonly positions = new SimPositions();

  constructor(opts: SimExchangeOptions) {
    this.profile = opts.profile;
    this.venue = opts.profile.id;
    this.clock = opts.clock;
    const now = this.clock.now();
    for (const event of opts.events) {
      const listing = event.listings.find((l) => l.venue === this.venue);
      if (!listing) continue;
      const rng = new Rng(seedFor(opts.seed, this.venue, listing.venueMarketId));
      const tickSize = listing.tickSize ?? this.profile.defaultTick;
      const lifecycle = initialLifecycle(event);
      const market: VenueMarket = {
        venueMarketId: listing.venueMarketId,
        title: event.title,
        outcomeIds: { ...listing.outcomeIds },
        status: lifecycle.state,
        closeTime: event.closeTime,
        tickSize,
        minOrderShares: this.profile.minOrderShares,
        lotShares: this.profile.lotShares,
        feeModel: this.profile.feeModel(listing.feeRatePpm),
        volume: BigInt(Math.round(Math.exp(9 + rng.next() * 6))) * ONE,
      };
      const p = Number(event.basePrice) / Number(ONE);
      const offset = Math.round((rng.next() * 2 - 1) * MAX_VENUE_OFFSET * 4 * p * (1 - p));
      const engine =
        lifecycle.state === "open"
          ? new BookEngine({ tick: tickSize, lot: this.profile.lotShares, anchor: event.basePrice + BigInt(offset), rng })
          : undefined;
      this.markets_.set(listing.venueMarketId, { market, engine, updatedAt: now, lifecycle });
    }
  }

  markets(): VenueMarket[] {
    return [...this.markets_.values()].map((m) => ({ ...m.market, outcomeIds: { ...m.market.outcomeIds } }));
  }

  market(venueMarketId: string): VenueMarket | undefined {
    const m = this.markets_.get(venueMarketId)?.market;
    return m && { ...m, outcomeIds: { ...m.outcomeIds } };
  }

  /** Charges a market's later fills another fee: the venue changed it. */
  setFeeModel(venueMarketId: string, feeModel: FeeModel): void {
    const m = this.markets_.get(venueMarketId);
    if (m) m.market = { ...m.market, feeModel };
  }

  /** Trades a market on another tick from now on: the venue changed it (its book's new quotes follow it). */
  setTick(venueMarketId: string, tickSize: PriceMicro): void {
    const m = this.markets_.get(venueMarketId);
    if (!m) return;
    m.engine?.setTick(tickSize);
    m.market = { ...m.market, tickSize };
  }

  book(venueMarketId: string, outcome: Outcome): BookSnapshot | undefined {
    const m = this.markets_.get(venueMarketId);
    if (!m?.engine) return undefined;
    return { venue: this.venue, venueMarketId, outcome, ...m.engine.book(outcome), updatedAt: m.updatedAt };
  }

  /** When the least recently updated book was updated, or undefined with no books. */
  oldestBookAt(): number | undefined {
    let oldest: number | undefined;
    for (const m of this.markets_.values()) {
      if (m.engine && (oldest === undefined || m.updatedAt < oldest)) oldest = m.updatedAt;
    }
    return oldest;
  }

  onBook(listener: (u: BookUpdate) => void): Unsubscribe {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Moves every book one step. A venue that is down publishes nothing, so its books age. */
  step(): void {
    if (this.faults.down) return;
    const now = this.clock.now();
    for (const m of this.markets_.values()) {
      if (!m.engine) continue;
      m.market.volume += m.engine.step();
      m.updatedAt = now;
      this.emit(m.market.venueMarketId);
    }
  }

  /**
   * Executes an immediate-or-cancel order for `account`. A repeated client order id gets the first
   * answer back and nothing more is filled. An order that finds nothing to take is refused, as
   * Polymarket refuses an unmatched FAK order: nothing happened, and a retry under the same id may
   * still fill. An order that arrives after its expiry is refused and never trades. A sell of more
   * than the account holds (less what its resting sells offer) is refused before it meets the book.
   * A buy given a `budget` (micro-USDC) is a market buy that spends it, as Polymarket's do: it takes
   * at each ask no worse than its limit as many shares as what is left buys (BookEngine.spend), more
   * than `order.shares` at better prices, and is filled once what is left buys no micro-share at its limit.
   */
  place(order: ChildOrder, account = OWN_ACCOUNT, budget?: Micro): PlaceResult {
    const known = this.orders.get(order.clientOrderId);
    if (known) return known.result;
    if (this.faults.reject) return { kind: "rejected", reason: "venue_rejected: the venue refused the order" };
    if (order.expiresAt <= this.clock.now()) return { kind: "rejected", reason: `order_expired: the order expired at ${new Date(order.expiresAt).toISOString()}` };
    const sized = this.grossOrder(order);
    if (typeof sized === "string") return { kind: "rejected", reason: sized };
    const checked = this.validate(sized);
    if (typeof checked === "string") return { kind: "rejected", reason: checked };
    const { market: m, engine } = checked;
    if (order.side === "sell") {
      const sellable = this.positions.sellable(account, order.venueMarketId, order.outcome);
      if (order.shares > sellable) {
        return { kind: "rejected", reason: `insufficient_position: selling ${formatMicro(order.shares)} ${order.outcome} shares, ${formatMicro(sellable)} held and not offered` };
      }
    }
    const halve = this.faults.partial || this.faults.resting;
    const wanted = halve ? (sized.shares / 2n / m.market.lotShares) * m.market.lotShares : sized.shares;
    const taken =
      order.side === "sell"
        ? engine.sell(order.outcome, order.limitPrice, wanted)
        : budget === undefined
          ? engine.take(order.outcome, order.limitPrice, wanted)
          : engine.spend(order.outcome, order.limitPrice, halve ? budget / 2n : budget);
    if (taken.length === 0) {
      return { kind: "rejected", reason: `no_match: nothing to take at ${order.side === "buy" ? "or below" : "or above"} ${formatMicro(order.limitPrice)}` };
    }
    const venueOrderId = this.profile.newOrderId();
    const matched = this.toFills(order, venueOrderId, taken, m.market);
    const filled = taken.reduce((s, l) => s + l.shares, 0n);
    // a fee in contracts: the account is credited, and told of, what is left of them
    const withheld = feeInShares(m.market.feeModel, order.side) ? withheldShares(m.market.feeModel, filled) : 0n;
    const fills = withheld === 0n ? matched : netOfWithheld(taken, withheld).map((n, i) => ({ ...matched[i]!, shares: n.shares, fee: n.fee }));
    const whole = budget === undefined ? filled === sized.shares : ((budget - costOf(taken)) * ONE) / order.limitPrice === 0n;
    const result: PlaceResult = { kind: whole ? "filled" : "partial", venueOrderId, fills };
    const resting = this.faults.resting && filled < sized.shares ? sized.shares - filled : 0n;
    this.orders.set(order.clientOrderId, { venueOrderId, fills, matched, result, resting, account, order });
    this.positions.fill(account, order.venueMarketId, order.outcome, order.side, filled - withheld);
    if (order.side === "sell") this.positions.offer(account, order.venueMarketId, order.outcome, resting);
    m.market.volume += costOf(taken);
    m.updatedAt = this.clock.now();
    this.emit(order.venueMarketId);
    return result;
  }

  /**
   * An IOC order is done the moment it is answered, unless the `resting` fault left part of it open;
   * only orders that traded are remembered, as on the venues.
   */
  status(clientOrderId: string): ChildStatus {
    const o = this.orders.get(clientOrderId);
    if (!o) return { kind: "not_found" };
    return { kind: o.resting > 0n ? "open" : "done", venueOrderId: o.venueOrderId, fills: o.fills };
  }

  /** Cancels what rests of an order and answers its final state; an order the venue does not hold stays unknown to it. */
  cancel(clientOrderId: string): ChildStatus {
    const o = this.orders.get(clientOrderId);
    if (!o) return { kind: "not_found" };
    if (o.order.side === "sell") this.positions.offer(o.account, o.order.venueMarketId, o.order.outcome, -o.resting);
    o.resting = 0n;
    return { kind: "done", venueOrderId: o.venueOrderId, fills: o.fills };
  }

  /**
   * Another trader's order takes up to `shares` of what rests of an order, at the order's limit: the order's
   * fill as the maker, which pays no fee; undefined when nothing of it rests.
   */
  takeResting(clientOrderId: string, shares: ShareMicro): VenueFill | undefined {
    const o = this.orders.get(clientOrderId);
    if (!o || o.resting === 0n) return undefined;
    const taken = shares < o.resting ? shares : o.resting;
    const { side, limitPrice, venueMarketId, outcome } = o.order;
    const fill: VenueFill = { tradeId: randomUUID(), venueOrderId: o.venueOrderId, clientOrderId, side, price: limitPrice, shares: taken, fee: 0n };
    o.fills = [...o.fills, fill];
    o.matched = [...o.matched, fill];
    o.resting -= taken;
    this.positions.fill(o.account, venueMarketId, outcome, side, taken);
    if (side === "sell") this.positions.offer(o.account, venueMarketId, outcome, -taken);
    return fill;
  }

  /** Whether an order rests (the `resting` fault), as the venues' order views report it. */
  resting(clientOrderId: string): bigint {
    return this.orders.get(clientOrderId)?.resting ?? 0n;
  }

  /** An order's matches as the book made them (before any fee withheld in contracts); none for an order the exchange does not hold. */
  matches(clientOrderId: string): VenueFill[] {
    return this.orders.get(clientOrderId)?.matched ?? [];
  }

  /** Every trade the exchange made, oldest first. */
  trades(): VenueFill[] {
    return [...this.orders.values()].flatMap((o) => o.fills);
  }

  /**
   * The order as it meets the book: a buy that pays its fee in contracts asks for the shares it is to
   * deliver, so it takes the whole lots that deliver exactly those (the port's ChildOrder.shares).
   */
  private grossOrder(order: ChildOrder): ChildOrder | string {
    const market = this.markets_.get(order.venueMarketId)?.market;
    if (!market || !feeInShares(market.feeModel, order.side) || order.shares <= 0n) return order;
    const gross = grossForDelivered(market.feeModel, market.lotShares, order.shares);
    if (gross === undefined) return `invalid_lot: no whole number of ${formatMicro(market.lotShares)}-share lots delivers ${formatMicro(order.shares)} shares after the fee in contracts`;
    return { ...order, shares: gross };
  }

  /** The market and its book when the order may trade, or why it may not. */
  private validate(order: ChildOrder): { market: SimMarket; engine: BookEngine } | string {
    const m = this.markets_.get(order.venueMarketId);
    if (!m) return `unknown_market: ${this.venue} lists no market ${order.venueMarketId}`;
    if (m.market.status !== "open" || !m.engine) return `market_closed: ${order.venueMarketId} is ${m.market.status}`;
    if (order.side !== "buy" && order.side !== "sell") return `invalid_side: ${String(order.side)}`;
    if (order.outcome !== "YES" && order.outcome !== "NO") return `invalid_outcome: ${String(order.outcome)}`;
    const { tickSize, lotShares, minOrderShares } = m.market;
    if (order.limitPrice <= 0n || order.limitPrice >= ONE || order.limitPrice % tickSize !== 0n) {
      return `invalid_tick: limit price ${formatMicro(order.limitPrice)} is not on the ${formatMicro(tickSize)} grid inside (0, 1)`;
    }
    if (order.shares <= 0n || order.shares % lotShares !== 0n) {
      return `invalid_lot: size ${formatMicro(order.shares)} is not a positive multiple of ${formatMicro(lotShares)} shares`;
    }
    if (order.shares < minOrderShares) {
      return `below_min_size: size ${formatMicro(order.shares)} is below the minimum of ${formatMicro(minOrderShares)} shares`;
    }
    return { market: m, engine: m.engine };
  }

  /** Where a market stands, or undefined for a market the venue does not list. */
  lifecycle(venueMarketId: string): SimLifecycle | undefined {
    const l = this.markets_.get(venueMarketId)?.lifecycle;
    return l && { ...l };
  }

  /**
   * Stops trading on a market, or resolves it, as of `at`: its book is gone and every order on it is
   * refused from then on. A resolution is final: a resolved market neither closes nor resolves again,
   * and the answer is where the market stands afterwards, for the caller to compare with what it asked.
   */
  conclude(venueMarketId: string, to: { state: "closed" } | { state: "resolved"; outcome: Outcome }, at: number): SimLifecycle | undefined {
    const m = this.markets_.get(venueMarketId);
    if (!m) return undefined;
    if (m.lifecycle.state !== "resolved" && !(m.lifecycle.state === "closed" && to.state === "closed")) {
      m.lifecycle = { ...to, at };
      m.market.status = to.state;
      m.engine = undefined;
    }
    return { ...m.lifecycle };
  }

  /** Splits the order's fee over its fills so that they add up to exactly the fee of the whole order. */
  private toFills(order: ChildOrder, venueOrderId: string, taken: Level[], market: VenueMarket): VenueFill[] {
    let charged: Micro = 0n;
    return taken.map((level, i) => {
      const upTo = orderFee(market.feeModel, taken.slice(0, i + 1));
      const fee = upTo - charged;
      charged = upTo;
      return { tradeId: randomUUID(), venueOrderId, clientOrderId: order.clientOrderId, side: order.side, price: level.price, shares: level.shares, fee };
    });
  }

  private emit(venueMarketId: string): void {
    const update: BookUpdate = { venue: this.venue, venueMarketId };
    for (const listener of this.listeners) listener(update);
  }
}

/** A catalog event's market as the venue starts it: resolved or closed events ended at their close time. */
function initialLifecycle(event: CatalogEvent): SimLifecycle {
  if (event.status === "open") return { state: "open" };
  const at = Date.parse(event.closeTime);
  return event.status === "resolved" && event.resolution ? { state: "resolved", outcome: event.resolution, at } : { state: "closed", at };
}
