import type { Micro, Ppm, PriceMicro, ShareMicro } from "../domain/money.ts";
import type { MarketStatus, Outcome, Scope, Side, Strategy, TimeInForce } from "../domain/types.ts";
import type { DepositStatus, WithdrawalStatus } from "../domain/funds-status.ts";
import type { PositionBook } from "../domain/pnl.ts";

export interface AccountRecord {
  id: string;
  email: string;
  /** On-chain address holding the account's vault balance and positions. */
  address: string;
  /** Private key of that address, encrypted (embedded chain only; null for a user's own wallet). */
  walletKeyEnc: string | null;
  passwordHash: string | null;
  /** When the dev faucet funded the account's vault; null until then (and always on a real chain). */
  fundedAt: string | null;
  createdAt: string;
}

export interface ApiKeyRecord {
  apiKey: string;
  accountId: string;
  name: string;
  scopes: Scope[];
  /** API_SECRET encrypted with AES-256-GCM under the master key. */
  secretEnc: string;
  ipAllowlist: string[] | null;
  /** The only addresses (lower case) withdrawals with this key may pay to; null for any address. */
  withdrawalAllowlist: string[] | null;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** A key as stored new: no withdrawal allowlist unless one is given. */
export type NewApiKeyRecord = Omit<ApiKeyRecord, "createdAt" | "lastUsedAt" | "revokedAt" | "withdrawalAllowlist"> & { withdrawalAllowlist?: string[] | null };

/** A web terminal session; the id itself lives only in the user's cookie. */
export interface SessionRecord {
  /** SHA-256 of the session id, hex. */
  idHash: string;
  accountId: string;
  createdAt: string;
  expiresAt: string;
}

import type { OrderStatus } from "../domain/order-status.ts";
export type { OrderStatus } from "../domain/order-status.ts";

/** A child order as sent to a venue. Stored before it is sent, so that after a crash the venue can be asked about it. */
export interface OrderLeg {
  venue: string;
  clientOrderId: string;
  venueMarketId: string;
  limitPrice: PriceMicro;
  shares: ShareMicro;
  /** The routing round that sent it: the last round's legs are the plan the order is told filled against. */
  round: number;
  /** The child order's expiry at its venue, ms since the epoch (ChildOrder.expiresAt). */
  expiresAt: number;
}

export interface OrderRecord {
  id: string;
  accountId: string;
  clientOrderId: string | null;
  /** Hash of the canonical request, to tell an idempotent retry from a conflicting reuse of the key. */
  requestHash: string;
  eventId: string;
  outcome: Outcome;
  side: Side;
  /** A buy's budget; 0 for a sell. */
  amount: Micro;
  /** The shares a sell asks to sell; 0 for a buy. */
  shares: ShareMicro;
  maxSlippage: Ppm;
  strategy: Strategy;
  timeInForce: TimeInForce;
  status: OrderStatus;
  /** A buy's USDC locked in the vault; 0 for a sell. */
  locked: Micro;
  /** A buy's charge, fees included; 0 for a sell. */
  spent: Micro;
  fees: Micro;
  /** Shares bought (minted) for a buy, sold (burned) for a sell. */
  filledShares: ShareMicro;
  /** A sell's shares held in escrow by the vault for the order; 0 for a buy. */
  escrowed: ShareMicro;
  /** A sell's USDC credited to the client: its fills' price × shares less their fees; 0 for a buy. */
  proceeds: Micro;
  routedTo: string | null;
  /** The child orders, stored with the move to `routing`, before any is sent. */
  legs: OrderLeg[];
  /**
   * Whether the latest round's plan fills what the rounds before it left of the order (what it leaves
   * is dust, as FOK requires): stored with each round's legs. An IOC plan of books that hold less than
   * that does not, and the order is then `partially_filled` however that round's fills went.
   */
  plannedInFull: boolean;
  /**
   * Whether what the rounds left of the order is dust: a later round refused as `order_too_small`, the
   * rest under every venue's minimum size. The order is then `filled` however its last legs filled.
   */
  dustLeft: boolean;
  sotTokenId: string | null;
  /** The transaction that locked a buy's USDC, or escrowed a sell's shares. */
  lockTx: string | null;
  /** The transaction that settled the order: a buy's charge and mint, or a sell's burn and credit. */
  settleTx: string | null;
  /** The transaction that released a buy's lock, or returned a sell's escrow whole. */
  releaseTx: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  /** What the error names beside its message (a refusal's limit and reference, the balance short of the amount); null when nothing. */
  errorDetails: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
  /** When the store recorded a buy's lock, or a sell's escrow, once its answer came back (after its block); null before. */
  lockedAt: string | null;
}

export interface FillRecord {
  orderId: string;
  venue: string;
  venueOrderId: string;
  tradeId: string;
  clientOrderId: string;
  price: PriceMicro;
  shares: ShareMicro;
  fee: Micro;
  createdAt: string;
}

/** A child order as a venue that finds children by their content tells them apart, but for its expiry (Venue.findsChildrenByContent). */
export interface ChildContent {
  venue: string;
  venueMarketId: string;
  outcome: Outcome;
  side: Side;
  limitPrice: PriceMicro;
  shares: ShareMicro;
}

/** An instance's hold on an order: it alone executes or recovers the order until `until` (ISO-8601). */
export interface Lease {
  owner: string;
  until: string;
}

export type OrderPatch = Partial<Omit<OrderRecord, "id" | "accountId" | "createdAt" | "lockedAt">>;

/** One venue's listing of a catalog event. Tick and fee are set only where they differ from the venue's usual ones. */
export interface CatalogListingRecord {
  venue: string;
  venueMarketId: string;
  outcomeIds: Record<Outcome, string>;
  tickSize: PriceMicro | null;
  feeRatePpm: Ppm | null;
}

/** A unified event of the catalog, with its listings in the order they were added. */
export interface CatalogEventRecord {
  eventId: string;
  title: string;
  description: string;
  status: MarketStatus;
  closeTime: string;
  resolution: Outcome | null;
  /** Where the simulators anchor the books of markets they take from the catalog. */
  basePrice: PriceMicro;
  listings: CatalogListingRecord[];
}

/**
 * How an event ended: `resolved` to an outcome once every venue listing it reported the same one (or an
 * operator decided it), `disputed` while the venues disagree, until an operator decides.
 */
export interface EventResolutionRecord {
  eventId: string;
  status: "resolved" | "disputed";
  /** The winning outcome; null while disputed. */
  outcome: Outcome | null;
  decidedBy: "venues" | "operator";
  /** What each venue reported when it was decided: venue id → its outcome, or "voided". */
  venueReports: Record<string, string>;
  decidedAt: string;
}

/**
 * One holder's position in a resolved event, paid out (a winning share pays 1 USDC) or burned for
 * nothing. `key` is the id the Vault redeems it under: the chain pays a key at most once.
 */
export interface RedemptionRecord {
  key: string;
  eventId: string;
  accountId: string;
  address: string;
  outcome: Outcome;
  tokenId: string;
  shares: ShareMicro;
  payout: Micro;
  /** `pending` until the chain shows the key redeemed. */
  status: "pending" | "redeemed";
  txHash: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * One position of an account (an event's outcome, whose token the vault mints): its book by the average cost
 * method (pnl.ts), moved by the store in the transaction that finishes each of its orders with shares filled
 * (`updateOrder`) and marks each of its redemptions redeemed (`markRedeemed`), in the order those commit; folded again
 * without a settled order whose settlement a reorganisation removed and whose lock or escrow went back whole (`recordUnsettled`).
 */
export interface PositionRecord {
  accountId: string;
  eventId: string;
  outcome: Outcome;
  sotTokenId: string;
  book: PositionBook;
  /** The sells and redemptions taken in: a position with one is shown even when no share is left. */
  exits: bigint;
  updatedAt: string;
}

/** A venue market as a match proposal names it: enough to write its listing when a person accepts. */
export interface ProposalMember {
  venue: string;
  venueMarketId: string;
  title: string;
  closeTime: string;
  outcomeIds: Record<Outcome, string>;
}

export const PROPOSAL_STATUSES = ["proposed", "accepted", "rejected"] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];

/** A proposed cross-venue match: a new event from markets of several venues, or a new venue's listing of an existing event. */
export interface ProposalRecord {
  /** Derived from the kind, the target event and the members, so the same match proposed twice is one proposal. */
  id: string;
  kind: "new_event" | "add_listing";
  /** The existing event (add_listing), or the id suggested for the new one (new_event). */
  eventId: string;
  /** The suggested title of a new event; the existing event's title otherwise. */
  title: string;
  score: number;
  reason: string;
  members: ProposalMember[];
  status: ProposalStatus;
  createdAt: string;
  decidedAt: string | null;
}

export type NewProposal = Omit<ProposalRecord, "status" | "createdAt" | "decidedAt">;

/** What accepting a proposal writes: a new event, or new listings on an existing one. */
export type CatalogChange = { kind: "new_event"; event: CatalogEventRecord } | { kind: "add_listings"; eventId: string; listings: CatalogListingRecord[] };

export type AcceptResult =
  | { kind: "accepted"; proposal: ProposalRecord }
  | { kind: "not_found" }
  | { kind: "already_decided"; proposal: ProposalRecord }
  /** The change conflicts with the catalog (the event id is taken, a market is already listed): nothing was written. */
  | { kind: "conflict"; reason: string };

/** The contracts deployed on a chain, recorded so that every instance on this store uses the same ones. */
export interface ChainDeploymentRecord {
  usdc: string;
  vault: string;
  sot: string;
  /** The block the Vault was deployed in: no event of ours is older. */
  block: bigint;
  /** What the contracts were built from (a hash of their creation code): another build's are not used as they are. */
  build: string;
}

/** One operator's nonces on one chain: the chain is named by its id and its genesis block's hash. */
export interface NonceKey {
  chainId: number;
  genesis: string;
  operator: string;
}

/** A payment of an account's available USDC to an external address (DESIGN §12). */
export interface WithdrawalRecord {
  id: string;
  accountId: string;
  clientWithdrawalId: string | null;
  /** Hash of what the request asked for, to tell an idempotent retry from a conflicting reuse of the client id. */
  requestHash: string;
  amount: Micro;
  /** Lower case. */
  toAddress: string;
  status: WithdrawalStatus;
  /** The transaction that paid it: its receipt holds the withdrawal's own WithdrawnTo event. */
  txHash: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: string;
  updatedAt: string;
}

export type WithdrawalPatch = Partial<Pick<WithdrawalRecord, "status" | "txHash" | "errorCode" | "errorMessage">>;

/** One USDC transfer into an account's deposit address, credited to its vault balance once. */
export interface DepositRecord {
  /** `<tx hash>:<place>` (`depositId`): the transfer, named so that a reorganisation mining its transaction again keeps the name. */
  id: string;
  accountId: string;
  amount: Micro;
  /** Lower case, as are the hashes. */
  fromAddress: string;
  txHash: string;
  /** Its place among its transaction's transfers into deposit addresses. */
  place: number;
  /** The log index it was first found at: its Vault key is made of it (`depositKey`). */
  logIndex: number;
  block: bigint;
  status: DepositStatus;
  /** The transaction that credited it: its receipt holds the deposit's DepositCredited event. */
  creditTx: string | null;
  /** The block that transaction was mined in, by number and hash (lower case); null before, and for a deposit credited before they were stored. */
  creditBlock: bigint | null;
  creditBlockHash: string | null;
  /** Why the last credit attempt failed, while it is retried. */
  errorMessage: string | null;
  createdAt: string;
  updatedAt: string;
}

export type DepositPatch = Partial<Pick<DepositRecord, "status" | "accountId" | "amount" | "fromAddress" | "creditTx" | "creditBlock" | "creditBlockHash" | "errorMessage">>;

/** A drip of the dev faucet into an account's vault. */
export interface FaucetDripRecord {
  /** The faucet's idempotency key. */
  key: string;
  txHash: string;
  accountId: string;
  amount: Micro;
  createdAt: string;
}

/** How far a scan of the chain got: through `block`, whose hash was `hash` (another hash there means a reorganisation). */
export interface ChainCursor {
  block: bigint;
  hash: string;
}

/** One movement of an account's money, as GET /v1/activity lists it (src/store/activity.ts says where each comes from). */
export interface ActivityRecord {
  /** Unique across every kind: `<type>:<reference>`. */
  id: string;
  type: string;
  amount: Micro;
  txHash: string | null;
  /** The state of what moved the money (the deposit's, the withdrawal's, the order's). */
  status: string;
  /** The order, withdrawal or deposit it belongs to. */
  reference: string;
  /** The other side, where there is one: a deposit's sender, a withdrawal's recipient. */
  address: string | null;
  createdAt: string;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/** Persistence port. SQLite is the embedded default; PostgreSQL implements the same port. */
export interface Store {
  migrate(): Promise<void>;
  /** Whether crossfill's first migration was ever applied here: false for an empty database (which only the server's first start makes the schema of), or another application's. */
  made(): Promise<boolean>;
  close(): Promise<void>;

  createAccount(a: Omit<AccountRecord, "createdAt">): Promise<AccountRecord>;
  accountById(id: string): Promise<AccountRecord | undefined>;
  accountByEmail(email: string): Promise<AccountRecord | undefined>;
  markAccountFunded(id: string, at: string): Promise<AccountRecord>;
  /** Every account, oldest first: for the audit. */
  accounts(): Promise<AccountRecord[]>;
  /** The accounts whose address is one of `addresses`, compared without regard to case, in no particular order. */
  accountsByAddress(addresses: readonly string[]): Promise<AccountRecord[]>;
  /** Sets the hash of the password that signs the account in to the web terminal, and ends the account's sessions. */
  setPasswordHash(id: string, hash: string): Promise<void>;

  insertApiKey(k: NewApiKeyRecord): Promise<ApiKeyRecord>;
  apiKey(apiKey: string): Promise<ApiKeyRecord | undefined>;
  listApiKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /** Returns false when the key does not exist or was already revoked. */
  revokeApiKey(apiKey: string, at: string): Promise<boolean>;
  touchApiKey(apiKey: string, at: string): Promise<void>;
  /**
   * Changes whenever an API key may have changed in this database, by this process or any other (a
   * revocation): cached key records stay good while it does not. Read without I/O, on every request.
   * undefined while that cannot be known (PostgreSQL's notification connection is not up): cache nothing.
   */
  apiKeysVersion(): string | undefined;

  /**
   * Inserts a new order, leased to the instance that will execute it (without a lease any instance's
   * recovery may take it), or — when the account already
   * has an order with the same clientOrderId — returns that one instead, so that a retried request
   * never creates a second order.
   */
  insertOrder(o: OrderRecord, lease?: Lease): Promise<{ created: true; order: OrderRecord } | { created: false; order: OrderRecord }>;
  /**
   * Takes an open order for `lease.owner`, unless another owner's lease runs past `now` (ISO-8601):
   * true when taken. What recovery does before it touches an order, so two instances never both do.
   */
  claimOrder(id: string, lease: Lease, now: string): Promise<boolean>;
  /**
   * Puts an order rejected with one of RETRIED_REJECTIONS before anything was locked (no lock_tx, no release_tx) back to `pending`,
   * its error and the time of its first attempt's (empty) hold cleared, leased to `lease.owner`, for its client's retry to run it again; undefined when it is no longer such a one.
   */
  reopenOrder(id: string, lease: Lease): Promise<OrderRecord | undefined>;
  /** Extends the owner's leases of these orders (those it still holds). */
  renewLeases(ids: readonly string[], lease: Lease): Promise<void>;
  /** Gives up the owner's lease of the order, if it still holds it. */
  releaseOrder(id: string, owner: string): Promise<void>;
  /**
   * Applies the patch only while the order is in one of `from` (a compare-and-set): answers the
   * updated order, or undefined when the order had already moved on, and nothing is written.
   * A patch that sets `status` must come from the states ENTERED_FROM allows for it. With `owner`,
   * the write also needs that instance to hold the order's lease: an instance whose lease was taken
   * over stops at its next step instead of acting beside the new owner. A patch that finishes the
   * order (`filled`, `partially_filled`) with shares filled moves its position's book in the same
   * transaction: a buy adds its shares at what they cost, a sell takes its shares off for its proceeds.
   */
  updateOrder(id: string, from: readonly OrderStatus[], patch: OrderPatch, owner?: string): Promise<OrderRecord | undefined>;
  /**
   * Records on a settled order (`status`) with no release_tx the release of its lock or escrow (`patch`, with its release_tx), its
   * settlement removed by a reorganisation and never made again, or the lock or escrow gone too (`patch` holding none, no
   * release_tx: a second reorganisation removed it): updateOrder from `status` while release_tx is empty, which in the same
   * transaction folds its position's book again without the order (the client holds none of the shares a buy's removed
   * settlement minted; a sell's shares are its own again). Undefined, and no book moved, when its release is already recorded;
   * one holding none has no release_tx to tell a second writer by, whose fold comes to the same book.
   */
  recordUnsettled(id: string, status: OrderStatus, patch: OrderPatch): Promise<OrderRecord | undefined>;
  /**
   * Records on an order `rejected` or `failed` with no release_tx the lock or escrow of its id that landed after it closed, before
   * the stranded-lock sweep releases it: updateOrder from `rejected` or `failed`, while release_tx is empty. Undefined when the order
   * moved on: reopened by a retry, or rejected again by that retry with the hold it took over released.
   */
  recordStrandedHold(id: string, patch: OrderPatch): Promise<OrderRecord | undefined>;
  order(id: string): Promise<OrderRecord | undefined>;
  /** The account's order with this client_order_id, if any. */
  orderByClientId(accountId: string, clientOrderId: string): Promise<OrderRecord | undefined>;
  /** The account's orders, newest first. */
  listOrders(accountId: string, opts: { limit: number; cursor: string | null }): Promise<Page<OrderRecord>>;
  ordersInStatus(statuses: readonly OrderStatus[]): Promise<OrderRecord[]>;
  /**
   * The orders in `status` with a lock or escrow recorded (`lock_tx`) and no `release_tx`: those the stranded-lock sweep
   * recorded holding one that landed after they closed, whose release it has not recorded yet. Oldest first.
   */
  closedHolding(status: "rejected" | "failed"): Promise<OrderRecord[]>;
  /**
   * The orders in `status` with neither `settle_tx` nor `release_tx`, holding a lock or escrow: those the stranded-lock sweep
   * settles again, a reorganisation having removed their settlement, whose new settlement it has not recorded yet (not those
   * recorded holding none, a second reorganisation having removed the lock or escrow). Oldest first.
   */
  resettling(status: "filled" | "partially_filled"): Promise<OrderRecord[]>;
  /** The account's position books, by event and outcome; every account's without one (the audit). */
  positions(accountId?: string): Promise<PositionRecord[]>;

  /**
   * What the operator's account holds of an event's outcome on each venue, by venue id, from the stored
   * fills: what buys filled less what sells filled. A sell still open counts every share of its child
   * orders as sold, so two sells never plan on the same shares. Venues with nothing stored are absent.
   */
  venueInventory(eventId: string, outcome: Outcome): Promise<Map<string, ShareMicro>>;

  /** Inserts fills, ignoring any whose (venue, tradeId, clientOrderId) is already stored: both sides of a venue's self-trade are stored. */
  insertFills(fills: FillRecord[]): Promise<void>;
  fills(orderId: string): Promise<FillRecord[]>;
  /** Every stored fill of every order: for the audit. */
  allFills(): Promise<FillRecord[]>;

  insertSession(s: SessionRecord): Promise<void>;
  /** The session with this hash, unless it expired before `now` (ISO-8601). */
  session(idHash: string, now: string): Promise<SessionRecord | undefined>;
  deleteSession(idHash: string): Promise<void>;
  purgeSessions(before: string): Promise<void>;

  /**
   * Inserts each seed event whose id the catalog does not hold yet, with its listings; events
   * already there are left as they are, so seeding at every start is harmless. Returns how many were inserted.
   */
  seedCatalog(events: readonly CatalogEventRecord[]): Promise<number>;
  /** Every catalog event with its listings, by event id. */
  catalogEvents(): Promise<CatalogEventRecord[]>;

  /**
   * Stores proposals: new ones as `proposed`, and a still-undecided one proposed again gets the new
   * score and reason. A decided proposal is not reopened. Returns the proposals as stored.
   */
  saveProposals(proposals: readonly NewProposal[]): Promise<ProposalRecord[]>;
  proposal(id: string): Promise<ProposalRecord | undefined>;
  /** Proposals, best score first. */
  listProposals(status?: ProposalStatus): Promise<ProposalRecord[]>;
  /** Marks the proposal accepted and writes its change to the catalog, in one transaction: both or neither. */
  acceptProposal(id: string, change: CatalogChange, at: string): Promise<AcceptResult>;
  /** Returns false when there is no undecided proposal of that id. */
  rejectProposal(id: string, at: string): Promise<boolean>;

  /** The chain's recorded deployment, if any, and the claim of the instance deploying on it, if one does. */
  chainDeployment(chainId: number): Promise<{ deployment: ChainDeploymentRecord | undefined; claim: Lease | undefined }>;
  /**
   * Takes the right to deploy on the chain for `claim.owner` until `claim.until`, unless another owner's
   * claim runs past `now`, and only while the recorded Vault is still `replacing` (null: none recorded):
   * true when taken. So instances that find no usable deployment at the same moment deploy once.
   */
  claimChainDeployment(chainId: number, replacing: string | null, claim: Lease, now: string): Promise<boolean>;
  /**
   * Ends `owner`'s claim: records the deployment it made, or without one gives the claim up. False, and
   * nothing written, when the claim is no longer its own (it ran out and another instance took it).
   */
  finishChainDeployment(chainId: number, owner: string, deployment?: ChainDeploymentRecord): Promise<boolean>;
  /** Every decided event: resolved or disputed. */
  eventResolutions(): Promise<EventResolutionRecord[]>;
  /**
   * Records how an event ended and answers the record as it stands: the first decision stays, except that
   * an operator's decision replaces a `disputed` one. A resolved event is never decided again.
   */
  decideEvent(r: EventResolutionRecord): Promise<EventResolutionRecord>;
  /** The venues that any order on the event sent a child order to (its stored legs, whatever became of them), sorted. */
  childOrderVenues(eventId: string): Promise<string[]>;
  /** The accounts that ever held a position in the event: those with an order on it that filled. */
  holders(eventId: string): Promise<{ accountId: string; address: string }[]>;
  /** Stores redemptions to make; a key already stored is left as it is. */
  insertRedemptions(rs: readonly RedemptionRecord[]): Promise<void>;
  /** The redemptions in `status` and of `eventId` (every one without them), oldest first. */
  redemptions(filter?: { status?: RedemptionRecord["status"]; eventId?: string }): Promise<RedemptionRecord[]>;
  /**
   * Sets a pending redemption to `shares` (more than 0: what the holder holds now) and their payout. Redemptions
   * are never removed: a holder's next redemption of a token takes the next key. A redeemed or unknown key is
   * left as it is; the caller asked the chain first, and a key that landed since is recorded as the chain made it.
   */
  replanRedemption(key: string, shares: ShareMicro, payout: Micro, at: string): Promise<void>;
  /**
   * Records the key redeemed as the chain did it (its shares, payout and transaction), and takes those shares
   * off its position's book for the payout, in one transaction; a key already marked is left as it is.
   */
  markRedeemed(key: string, made: { shares: ShareMicro; payout: Micro; txHash: string }, at: string): Promise<void>;

  /**
   * Reserves `count` nonces from max(`floor`, one past the highest reserved before), stamped `at`, and
   * answers the first. One statement that holds the row's lock (PostgreSQL) or the database's write lock
   * (SQLite) while it reads and writes, committed before it answers: no two callers get the same nonce.
   */
  reserveNonces(key: NonceKey, floor: number, count: number, at: string): Promise<number>;
  /** One past the highest nonce reserved, and when that reservation was made; undefined before the first. */
  noncesReserved(key: NonceKey): Promise<{ next: number; at: string } | undefined>;

  /**
   * Reserves for child order `clientOrderId` the first expiry second (unix seconds) from `fromSecond` on
   * that no other child of the same content holds, stamped `at`, and answers it. Each try is an insert
   * that the key (content and second) lets through once: no two callers, on any connection or instance,
   * get the same second for the same content. Reservations are kept.
   */
  reserveChildExpiry(content: ChildContent, clientOrderId: string, fromSecond: number, at: string): Promise<number>;

  /**
   * Inserts a new withdrawal, leased to the instance that will execute it, or — when the account already has one
   * with the same clientWithdrawalId — returns that one instead, so a retried request never pays twice.
   */
  insertWithdrawal(w: WithdrawalRecord, lease?: Lease): Promise<{ created: boolean; withdrawal: WithdrawalRecord }>;
  withdrawal(id: string): Promise<WithdrawalRecord | undefined>;
  withdrawalByClientId(accountId: string, clientWithdrawalId: string): Promise<WithdrawalRecord | undefined>;
  /** The account's withdrawals, newest first. */
  listWithdrawals(accountId: string, opts: { limit: number; cursor: string | null }): Promise<Page<WithdrawalRecord>>;
  withdrawalsInStatus(statuses: readonly WithdrawalStatus[]): Promise<WithdrawalRecord[]>;
  /** A compare-and-set from `from`, as updateOrder; with `owner`, only while that instance holds the lease. */
  updateWithdrawal(id: string, from: readonly WithdrawalStatus[], patch: WithdrawalPatch, owner?: string): Promise<WithdrawalRecord | undefined>;
  /**
   * Puts a withdrawal that failed `chain_unavailable` (nothing paid, nothing to land) back to `pending`, its error
   * cleared, leased to `lease.owner`, for its client's retry to run it again; undefined when it is no longer such a one.
   */
  reopenWithdrawal(id: string, lease: Lease): Promise<WithdrawalRecord | undefined>;
  /** Takes an open withdrawal for `lease.owner` unless another owner's lease runs past `now`, as claimOrder. */
  claimWithdrawal(id: string, lease: Lease, now: string): Promise<boolean>;
  renewWithdrawalLeases(ids: readonly string[], lease: Lease): Promise<void>;
  releaseWithdrawal(id: string, owner: string): Promise<void>;

  /** Stores each transfer once; one stored as dropped and found on chain again is detected anew, its error cleared. */
  insertDeposits(deposits: readonly DepositRecord[]): Promise<void>;
  depositsInStatus(statuses: readonly DepositStatus[]): Promise<DepositRecord[]>;
  updateDeposit(id: string, from: readonly DepositStatus[], patch: DepositPatch, owner?: string): Promise<DepositRecord | undefined>;
  /** Takes an open deposit for `lease.owner` unless another owner's lease runs past `now`, as claimOrder. */
  claimDeposit(id: string, lease: Lease, now: string): Promise<boolean>;
  renewDepositLeases(ids: readonly string[], lease: Lease): Promise<void>;
  releaseDeposit(id: string, owner: string): Promise<void>;

  /** Records a drip of the dev faucet, once per (key, transaction). */
  recordFaucetDrip(d: FaucetDripRecord): Promise<void>;
  /** The account's drips of the dev faucet, newest first. */
  faucetDrips(accountId: string): Promise<FaucetDripRecord[]>;
  chainCursor(name: string): Promise<ChainCursor | undefined>;
  setChainCursor(name: string, cursor: ChainCursor): Promise<void>;
  /** Sets the cursor as `setChainCursor` does, unless it already stands at or above `cursor.block`: it only rises, whoever writes. */
  raiseChainCursor(name: string, cursor: ChainCursor): Promise<void>;

  /** Every movement of the account's money, newest first (src/store/activity.ts). */
  activity(accountId: string, opts: { limit: number; cursor: string | null }): Promise<Page<ActivityRecord>>;

  /** Records a signature as seen until `expiresAt` (ms). Returns false if it was already seen: a replay. */
  rememberSignature(apiKey: string, signature: string, expiresAt: number): Promise<boolean>;
  /** Whether a signature is recorded and not expired. */
  signatureSeen(apiKey: string, signature: string): Promise<boolean>;
  purgeSignatures(before: number): Promise<void>;
}
