import type { FeeModel } from "../domain/fees.ts";
import type { Micro, PriceMicro, ShareMicro } from "../domain/money.ts";
import type { Level, MarketStatus, Outcome } from "../domain/types.ts";

/** One market as a venue lists it, with what the router needs to trade it. */
export interface VenueMarket {
  venueMarketId: string;
  title: string;
  /** The venue's own id of each outcome (a token id on Polymarket, "yes"/"no" on Kalshi). */
  outcomeIds: Record<Outcome, string>;
  status: MarketStatus;
  closeTime: string;
  tickSize: PriceMicro;
  /** Smallest order the venue accepts, in micro-shares. */
  minOrderShares: ShareMicro;
  /** Share increment of an order, in micro-shares (1 contract on Kalshi, 0.01 share on Polymarket). */
  lotShares: ShareMicro;
  /** Share increment of a sell, where the venue's differs from `lotShares`' (Polymarket: 0.01 share at every tick); absent: `lotShares`. */
  sellLotShares?: ShareMicro;
  /**
   * Smallest amount of a buy and of a sell the venue accepts, in micro-USDC, measured by `proceedsOf` its
   * limit and shares (money.ts); absent: none (underMinimumAmount, placement.ts).
   */
  minOrderAmount?: Record<TradeSide, Micro>;
  feeModel: FeeModel;
  volume: Micro;
}

/**
 * One outcome's levels, bids best first (descending), asks best first (ascending). The venue adapters
 * build them once per change of a book and hand the same arrays to every reader until the next change
 * (merged books, quotes, the router): nobody may change them.
 */
export interface BookSides {
  readonly bids: readonly Level[];
  readonly asks: readonly Level[];
}

/** The latest book of one outcome on one venue. */
export interface BookSnapshot extends BookSides {
  venue: string;
  venueMarketId: string;
  outcome: Outcome;
  /** When the venue last updated this book, ms since the epoch. */
  updatedAt: number;
}

export interface BookUpdate {
  venue: string;
  venueMarketId: string;
}

/** Which way a child order trades its outcome. */
export type TradeSide = "buy" | "sell";

/**
 * A child order, immediate-or-cancel: a buy takes up to `shares` of `outcome` at no more than
 * `limitPrice`; a sell sells up to `shares` of `outcome` that the venue account holds, at no less
 * than `limitPrice` (a venue refuses a sell of more, except one that nets YES against NO, Kalshi,
 * which takes the rest as the other outcome's buy: docs/venues/kalshi.md). Prices are always the
 * outcome's own.
 */
export interface ChildOrder {
  /** Deterministic id derived from the parent order and leg, so a retry or a reconciliation finds the same order. */
  clientOrderId: string;
  venueMarketId: string;
  outcome: Outcome;
  side: TradeSide;
  limitPrice: PriceMicro;
  /**
   * The shares the order is to deliver (a sell: to sell). A buy that pays its fee in the contracts it
   * buys (Limitless) asks for what is left after the fee: the adapter signs it for the whole lots that
   * deliver exactly that (fees.ts, grossForDelivered) and refuses a size no whole number of lots delivers.
   */
  shares: ShareMicro;
  /**
   * When the order expires, ms since the epoch, sent in the venue's own expiry field: the venue refuses
   * it if it arrives later. A venue that takes no expiry for such an order (Kalshi's IOC) has the adapter
   * keep it: nothing of the order is sent after it, and a request unanswered by then is given up. Until
   * then a venue that does not know the order may still receive it, so "not found" means "never placed"
   * only once this has passed.
   */
  expiresAt: number;
}

export interface VenueFill {
  /** The venue's trade id: fills are keyed by it, so a fill is never counted twice. */
  tradeId: string;
  venueOrderId: string;
  /** The child order's client id; "" in a trade list of a venue that does not echo it (Polymarket). */
  clientOrderId: string;
  /** The side of the child order the fill belongs to: what was bought or sold, `price` being the outcome's own. */
  side: TradeSide;
  price: PriceMicro;
  /** The shares the account got (a sell: sold): for a buy that pays its fee in contracts, those left after it. */
  shares: ShareMicro;
  /** In USDC: a fee paid in contracts is their value at the fill's price, so notional(price, shares) + fee is what the venue took. */
  fee: Micro;
}

export type PlaceResult =
  | { kind: "filled" | "partial"; venueOrderId: string; fills: VenueFill[] }
  /** The venue holds part of the order open (it rests on the book): cancel it, then settle on what the cancel reports. */
  | { kind: "open"; venueOrderId: string; fills: VenueFill[] }
  /** Definite: nothing happened on the venue. */
  | { kind: "rejected"; reason: string }
  /** Timeout and the like: the order may or may not exist. Reconcile with status(); never guess. */
  | { kind: "unknown"; reason: string };

export type ChildStatus =
  | { kind: "not_found" }
  | { kind: "open" | "done"; venueOrderId: string; fills: VenueFill[] };

export interface LatencyStats {
  /** Median of measured place() round trips in ms, or undefined before any was measured. */
  p50Ms: number | undefined;
  p99Ms: number | undefined;
  samples: number;
}

export interface VenueHealth {
  state: "up" | "degraded" | "down";
  latency: LatencyStats;
  /** Age in ms of the oldest book this venue holds, or undefined with no books. */
  bookAgeMs: number | undefined;
}

/** What an adapter is and where it points, for GET /v1/health. */
export interface VenueDescription {
  adapter: string;
  /** The REST endpoint, or null for an in-process simulator. */
  baseUrl: string | null;
  /** The book stream's connection, or null where there is none. */
  stream: { state: string } | null;
}

export type Unsubscribe = () => void;

/**
 * Where a market stands on its venue, read from the venue's own fields (each venue's mapping is in
 * docs/venues/<venue>.md). `open` trades. `closed` no longer trades and has paid nothing yet: past its
 * close, or with an outcome proposed, determined or disputed but not yet paid. `resolved` has paid out
 * (or lets holders redeem): each share of `outcome` is worth 1 USDC, the other outcome nothing.
 * `voided` has paid out, but not to one outcome (cancelled and refunded, or split 50/50).
 */
export type VenueResolution = { state: "open" } | { state: "closed" } | { state: "resolved"; outcome: Outcome } | { state: "voided" };

/** The catalog status of a market in this state: a voided market trades no more and names no outcome. */
export function resolutionStatus(r: VenueResolution): MarketStatus {
  return r.state === "voided" ? "closed" : r.state;
}

/**
 * Child orders whose venue order id an adapter remembers from placing or finding them, the newest: an
 * order's status and cancel lookups come within its minutes, and one let go (or placed before a restart) is
 * looked for at the venue from the child order, as recovery looks for it (by its client order id, or by what
 * it asked for where the venue keeps no such id: docs/venues/).
 */
export const CHILD_ORDERS_KEPT = 10_000;

/** The longest a child order may live (CHILD_ORDER_TTL_MS's bound): a venue received it, if at all, within this before its expiry. */
export const MAX_CHILD_ORDER_TTL_MS = 3_600_000;

/** The port every venue adapter implements, simulated or real. */
export interface Venue {
  readonly id: string;
  /** A book older than this is stale and left out of merged books. */
  readonly freshnessMs: number;
  /**
   * True for a venue that keeps no client id of a child order and lists nothing the adapter signed
   * (Opinion): after a restart the adapter can find a child only by its content, its market, outcome,
   * side, price, shares and expiry second. The order service then gives each child on this venue an
   * expiry second that no other child of the same content holds, reserved in the store before the child
   * is stored and sent (Store.reserveChildExpiry), so two children are never alike in all of it.
   */
  readonly findsChildrenByContent?: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The catalog's markets on this venue, as the venue states them now: what crossfill trades. */
  markets(): Promise<VenueMarket[]>;
  /**
   * The venue's open markets that the catalog does not list: candidates for `crossfill events match`.
   * Optional: an adapter that cannot list a venue's whole catalogue leaves it out.
   */
  discover?(): Promise<VenueMarket[]>;
  /**
   * The market's resolution as the venue states it now, read from the venue. The adapter's catalogue
   * follows what it reads: a market that no longer reads open is no longer open in market(), so no
   * merged book or plan routes to it. Throws when the venue cannot be asked or does not list the market.
   */
  resolution(venueMarketId: string): Promise<VenueResolution>;
  /** One market from the adapter's cached catalogue, without I/O: merged books and quotes need its fee model and trading rules on every read. */
  market(venueMarketId: string): VenueMarket | undefined;
  book(venueMarketId: string, outcome: Outcome): BookSnapshot | undefined;
  onBook(listener: (u: BookUpdate) => void): Unsubscribe;
  place(order: ChildOrder): Promise<PlaceResult>;
  /**
   * Finds a child order by its client id. `order` is the child order itself, when the caller
   * still has it: a venue that keys orders by a hash of their content (Polymarket) needs it to
   * find an order placed before a restart. Adapters that key by client id ignore it.
   */
  status(clientOrderId: string, order?: ChildOrder): Promise<ChildStatus>;
  /**
   * Cancels what is left of a child order, in the venue's own protocol, and answers its final state:
   * `done` with every fill it had, or `not_found` when the venue does not hold it (not placed, or not
   * arrived yet: see ChildOrder.expiresAt). Never `open`; throws when the venue cannot be asked.
   */
  cancel(clientOrderId: string, order?: ChildOrder): Promise<ChildStatus>;
  /** Every trade of the adapter's account on the venue, oldest first: what the audit compares the stored fills with. */
  trades(): Promise<VenueFill[]>;
  latency(): LatencyStats;
  /**
   * How long a child order placed now would wait in the adapter's queue (its client-side write
   * limit) before it is sent, in ms, read without I/O, with `ahead` more child orders (default none)
   * placed before it: those the order service has planned onto the venue and not yet placed. The
   * router spills orders past a venue whose queue is long. Optional: an adapter without such a limit
   * has no queue.
   */
  queueDelayMs?(ahead?: number): number;
  /**
   * Resolves when a child order with this client id would be sent from the adapter's queue: the turn is
   * then the child's, and its `place` spends it instead of queueing again, so the order service can plan
   * the child on the books as they are when it leaves the queue rather than when it joined. `returnTurn`
   * gives back a turn its child did not spend: one the new plan leaves out, or one whose `place` answered
   * without sending (a turn spent is not given back twice). Optional, with `queueDelayMs`: an adapter
   * without a queue sends at once.
   */
  writeTurn?(clientOrderId: string): Promise<void>;
  returnTurn?(clientOrderId: string): void;
  health(): VenueHealth;
  describe(): VenueDescription;
}
