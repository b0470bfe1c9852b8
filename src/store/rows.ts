import type { ColumnType, Generated, Insertable, Selectable, Updateable } from "kysely";
import type { MarketStatus, Outcome, Scope, Side, Strategy, TimeInForce } from "../domain/types.ts";
import type { DepositStatus, WithdrawalStatus } from "../domain/funds-status.ts";
import type {
  AccountRecord,
  ApiKeyRecord,
  DepositRecord,
  WithdrawalRecord,
  CatalogEventRecord,
  CatalogListingRecord,
  EventResolutionRecord,
  FillRecord,
  OrderLeg,
  OrderPatch,
  OrderRecord,
  PositionRecord,
  OrderStatus,
  ProposalMember,
  ProposalRecord,
  ProposalStatus,
  RedemptionRecord,
  SessionRecord,
} from "./store.ts";

/**
 * A 64-bit integer column. SQLite (safe integers) and PostgreSQL (the store's int8 parser) both hand it
 * back as a bigint, never through a JS number, so amounts beyond 2^53 stay exact.
 */
type Int64 = ColumnType<bigint, bigint, bigint>;

export interface AccountsTable {
  id: string;
  email: string;
  address: string;
  wallet_key_enc: string | null;
  password_hash: string | null;
  funded_at: string | null;
  created_at: string;
}

export interface ApiKeysTable {
  api_key: string;
  account_id: string;
  name: string;
  /** JSON array of scopes. */
  scopes: string;
  secret_enc: string;
  /** JSON array of addresses, or null for "any address". */
  ip_allowlist: string | null;
  /** JSON array of lower-case addresses withdrawals may pay to, or null for any. */
  withdrawal_allowlist: Generated<string | null>;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface OrdersTable {
  id: string;
  account_id: string;
  client_order_id: string | null;
  request_hash: string;
  event_id: string;
  outcome: string;
  side: string;
  amount: Int64;
  max_slippage: Int64;
  strategy: string;
  time_in_force: string;
  status: string;
  locked: Int64;
  spent: Int64;
  fees: Int64;
  filled_shares: Int64;
  /** A sell's shares asked, escrowed, and proceeds (migration 008); 0 on a buy. */
  shares: Int64;
  escrowed: Int64;
  proceeds: Int64;
  routed_to: string | null;
  /** JSON array of the child orders, amounts as decimal strings. */
  legs: string;
  sot_token_id: string | null;
  lock_tx: string | null;
  settle_tx: string | null;
  release_tx: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: string;
  updated_at: string;
  /** The instance working on the order, and until when (ISO-8601); null when none is. */
  lease_owner: Generated<string | null>;
  lease_until: Generated<string | null>;
  /** When the lock was recorded (migration 016): the time of the order's `lock` activity; null before it locked anything. */
  locked_at: Generated<string | null>;
  /** OrderRecord.plannedInFull (migration 018): 1 or 0; 1 for the orders stored before it. */
  planned_in_full: Generated<bigint>;
  /** OrderRecord.dustLeft (migration 019): 1 or 0; 0 for the orders stored before it. */
  dust_left: Generated<bigint>;
  /** OrderRecord.errorDetails as JSON (migration 021); null for none, and for the orders stored before it. */
  error_details: Generated<string | null>;
}

export interface FillsTable {
  venue: string;
  trade_id: string;
  order_id: string;
  venue_order_id: string;
  client_order_id: string;
  price: Int64;
  shares: Int64;
  fee: Int64;
  created_at: string;
}

/** What the operator's account holds on a venue of a market, as migration 012's triggers keep it from the fills. */
export interface VenueInventoryTable {
  event_id: string;
  outcome: string;
  venue: string;
  shares: Int64;
}

export interface PositionsTable {
  account_id: string;
  event_id: string;
  outcome: string;
  sot_token_id: string;
  shares: Int64;
  cost: Int64;
  realized: Int64;
  exits: Int64;
  updated_at: string;
}

export interface ReplaySignaturesTable {
  api_key: string;
  signature: string;
  /** Milliseconds since the Unix epoch. */
  expires_at: Int64;
}

export interface SessionsTable {
  id_hash: string;
  account_id: string;
  created_at: string;
  expires_at: string;
}

export interface CatalogEventsTable {
  event_id: string;
  title: string;
  description: string;
  status: string;
  close_time: string;
  resolution: string | null;
  base_price: Int64;
  created_at: string;
}

export interface CatalogListingsTable {
  venue: string;
  venue_market_id: string;
  event_id: string;
  /** Order of the listing within its event, as it was added. */
  position: Int64;
  yes_id: string;
  no_id: string;
  tick_size: Int64 | null;
  fee_rate_ppm: Int64 | null;
}

export interface ProposalsTable {
  id: string;
  kind: string;
  event_id: string;
  title: string;
  /** In millionths, an integer, so that both backends store and sort it the same. */
  score_ppm: Int64;
  reason: string;
  /** JSON array of the member markets. */
  members: string;
  status: string;
  created_at: string;
  decided_at: string | null;
}

export interface ChainDeploymentsTable {
  chain_id: Int64;
  usdc: string | null;
  vault: string | null;
  sot: string | null;
  block: Int64 | null;
  build: string | null;
  claimed_by: string | null;
  /** ISO-8601. */
  claimed_until: string | null;
}

export interface ChainNoncesTable {
  chain_id: Int64;
  genesis: string;
  operator: string;
  /** One past the highest nonce reserved. */
  handed_out: Int64;
  /** When the latest reservation was made (ISO-8601). */
  reserved_at: string;
}

/** An expiry second reserved for a child order (migration 010); the key is all but the last two columns. */
export interface ChildExpiriesTable {
  venue: string;
  venue_market_id: string;
  outcome: string;
  side: string;
  limit_price: Int64;
  shares: Int64;
  /** Unix seconds. */
  expiry_second: Int64;
  client_order_id: string;
  reserved_at: string;
}

export interface EventResolutionsTable {
  event_id: string;
  status: string;
  outcome: string | null;
  decided_by: string;
  /** JSON object: venue id → what it reported. */
  venue_reports: string;
  decided_at: string;
}

export interface RedemptionsTable {
  key: string;
  event_id: string;
  account_id: string;
  address: string;
  outcome: string;
  token_id: string;
  shares: Int64;
  payout: Int64;
  status: string;
  tx_hash: string | null;
  created_at: string;
  updated_at: string;
}

export interface WithdrawalsTable {
  id: string;
  account_id: string;
  client_withdrawal_id: string | null;
  request_hash: string;
  amount: Int64;
  to_address: string;
  status: string;
  tx_hash: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: string;
  updated_at: string;
  lease_owner: string | null;
  lease_until: string | null;
}

export interface DepositsTable {
  id: string;
  account_id: string;
  amount: Int64;
  from_address: string;
  tx_hash: string;
  place: Int64;
  log_index: Int64;
  block: Int64;
  status: string;
  credit_tx: string | null;
  credit_block: Int64 | null;
  credit_block_hash: string | null;
  error_message: string | null;
  created_at: string;
  updated_at: string;
  lease_owner: string | null;
  lease_until: string | null;
}

export interface FaucetDripsTable {
  key: string;
  tx_hash: string;
  account_id: string;
  amount: Int64;
  created_at: string;
}

export interface ChainCursorsTable {
  name: string;
  block: Int64;
  hash: string;
  updated_at: string;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  orders: OrdersTable;
  fills: FillsTable;
  venue_inventory: VenueInventoryTable;
  positions: PositionsTable;
  replay_signatures: ReplaySignaturesTable;
  sessions: SessionsTable;
  catalog_events: CatalogEventsTable;
  catalog_listings: CatalogListingsTable;
  proposals: ProposalsTable;
  chain_deployments: ChainDeploymentsTable;
  chain_nonces: ChainNoncesTable;
  child_expiries: ChildExpiriesTable;
  event_resolutions: EventResolutionsTable;
  redemptions: RedemptionsTable;
  withdrawals: WithdrawalsTable;
  deposits: DepositsTable;
  faucet_drips: FaucetDripsTable;
  chain_cursors: ChainCursorsTable;
}

/**
 * Rows one INSERT takes at most: at 14 columns, well within SQLite's 32,766 parameters a statement and PostgreSQL's
 * 65,535, which a whole event's redemptions or a scan's deposits would otherwise pass.
 */
export const ROWS_PER_INSERT = 1_000;

/**
 * Reads a 64-bit integer column. Anything but a bigint means a driver was opened without the store's
 * integer settings: a JS number may already have lost precision, so the read fails rather than guess.
 */
export function int64(value: unknown, column: string): bigint {
  if (typeof value === "bigint") return value;
  throw new TypeError(`column ${column} must come back as a 64-bit integer, got ${typeof value}`);
}

export function accountToRow(a: AccountRecord): Insertable<AccountsTable> {
  return {
    id: a.id,
    email: a.email,
    address: a.address,
    wallet_key_enc: a.walletKeyEnc,
    password_hash: a.passwordHash,
    funded_at: a.fundedAt,
    created_at: a.createdAt,
  };
}

export function accountFromRow(r: Selectable<AccountsTable>): AccountRecord {
  return {
    id: r.id,
    email: r.email,
    address: r.address,
    walletKeyEnc: r.wallet_key_enc,
    passwordHash: r.password_hash,
    fundedAt: r.funded_at,
    createdAt: r.created_at,
  };
}

export function apiKeyToRow(k: ApiKeyRecord): Insertable<ApiKeysTable> {
  return {
    api_key: k.apiKey,
    account_id: k.accountId,
    name: k.name,
    scopes: JSON.stringify(k.scopes),
    secret_enc: k.secretEnc,
    ip_allowlist: k.ipAllowlist === null ? null : JSON.stringify(k.ipAllowlist),
    withdrawal_allowlist: k.withdrawalAllowlist === null ? null : JSON.stringify(k.withdrawalAllowlist),
    created_at: k.createdAt,
    last_used_at: k.lastUsedAt,
    revoked_at: k.revokedAt,
  };
}

export function apiKeyFromRow(r: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    apiKey: r.api_key,
    accountId: r.account_id,
    name: r.name,
    scopes: JSON.parse(r.scopes) as Scope[],
    secretEnc: r.secret_enc,
    ipAllowlist: r.ip_allowlist === null ? null : (JSON.parse(r.ip_allowlist) as string[]),
    withdrawalAllowlist: r.withdrawal_allowlist === null ? null : (JSON.parse(r.withdrawal_allowlist) as string[]),
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
  };
}

/** Column of every order field; a field added to OrderRecord fails to compile until it is mapped here. */
const ORDER_COLUMNS = {
  id: "id",
  accountId: "account_id",
  clientOrderId: "client_order_id",
  requestHash: "request_hash",
  eventId: "event_id",
  outcome: "outcome",
  side: "side",
  amount: "amount",
  maxSlippage: "max_slippage",
  strategy: "strategy",
  timeInForce: "time_in_force",
  status: "status",
  locked: "locked",
  spent: "spent",
  fees: "fees",
  filledShares: "filled_shares",
  shares: "shares",
  escrowed: "escrowed",
  proceeds: "proceeds",
  routedTo: "routed_to",
  legs: "legs",
  plannedInFull: "planned_in_full",
  dustLeft: "dust_left",
  sotTokenId: "sot_token_id",
  lockTx: "lock_tx",
  settleTx: "settle_tx",
  releaseTx: "release_tx",
  errorCode: "error_code",
  errorMessage: "error_message",
  errorDetails: "error_details",
  createdAt: "created_at",
  updatedAt: "updated_at",
  lockedAt: "locked_at",
} as const satisfies { [K in keyof OrderRecord]: keyof OrdersTable };

// Every order field but the legs, plannedInFull, dustLeft and errorDetails is stored as is (strings, nulls, bigints), so writing one is only a renaming.
function renameOrderFields(fields: Partial<OrderRecord>): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    row[ORDER_COLUMNS[field as keyof OrderRecord]] = orderColumnValue(field as keyof OrderRecord, value);
  }
  return row;
}

function orderColumnValue(field: keyof OrderRecord, value: unknown): unknown {
  if (field === "legs") return encodeLegs(value as OrderLeg[]);
  if (field === "plannedInFull" || field === "dustLeft") return value ? 1n : 0n;
  if (field === "errorDetails") return value === null ? null : JSON.stringify(value);
  return value;
}

function encodeLegs(legs: readonly OrderLeg[]): string {
  return JSON.stringify(legs.map((l) => ({ ...l, limitPrice: l.limitPrice.toString(), shares: l.shares.toString() })));
}

/** Legs stored before rounds and expiries were recorded read as round 1, long expired: their venues' answers are final. */
export function decodeLegs(text: string): OrderLeg[] {
  type Stored = Omit<OrderLeg, "limitPrice" | "shares" | "round" | "expiresAt"> & { limitPrice: string; shares: string; round?: number; expiresAt?: number };
  return (JSON.parse(text) as Stored[]).map((l) => ({
    ...l,
    limitPrice: BigInt(l.limitPrice),
    shares: BigInt(l.shares),
    round: l.round ?? 1,
    expiresAt: l.expiresAt ?? 0,
  }));
}

export function orderToRow(o: OrderRecord): Insertable<OrdersTable> {
  return renameOrderFields(o) as unknown as Insertable<OrdersTable>;
}

export function orderPatchToRow(patch: OrderPatch): Updateable<OrdersTable> {
  return renameOrderFields(patch) as Updateable<OrdersTable>;
}

export function orderFromRow(r: Selectable<OrdersTable>): OrderRecord {
  return {
    id: r.id,
    accountId: r.account_id,
    clientOrderId: r.client_order_id,
    requestHash: r.request_hash,
    eventId: r.event_id,
    outcome: r.outcome as Outcome,
    side: r.side as Side,
    amount: int64(r.amount, "amount"),
    maxSlippage: int64(r.max_slippage, "max_slippage"),
    strategy: r.strategy as Strategy,
    timeInForce: r.time_in_force as TimeInForce,
    status: r.status as OrderStatus,
    locked: int64(r.locked, "locked"),
    spent: int64(r.spent, "spent"),
    fees: int64(r.fees, "fees"),
    filledShares: int64(r.filled_shares, "filled_shares"),
    shares: int64(r.shares, "shares"),
    escrowed: int64(r.escrowed, "escrowed"),
    proceeds: int64(r.proceeds, "proceeds"),
    routedTo: r.routed_to,
    legs: decodeLegs(r.legs),
    plannedInFull: int64(r.planned_in_full, "planned_in_full") !== 0n,
    dustLeft: int64(r.dust_left, "dust_left") !== 0n,
    sotTokenId: r.sot_token_id,
    lockTx: r.lock_tx,
    settleTx: r.settle_tx,
    releaseTx: r.release_tx,
    errorCode: r.error_code,
    errorMessage: r.error_message,
    errorDetails: r.error_details === null ? null : (JSON.parse(r.error_details) as Record<string, unknown>),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    lockedAt: r.locked_at,
  };
}

export function fillToRow(f: FillRecord): Insertable<FillsTable> {
  return {
    venue: f.venue,
    trade_id: f.tradeId,
    order_id: f.orderId,
    venue_order_id: f.venueOrderId,
    client_order_id: f.clientOrderId,
    price: f.price,
    shares: f.shares,
    fee: f.fee,
    created_at: f.createdAt,
  };
}

export function fillFromRow(r: Selectable<FillsTable>): FillRecord {
  return {
    orderId: r.order_id,
    venue: r.venue,
    venueOrderId: r.venue_order_id,
    tradeId: r.trade_id,
    clientOrderId: r.client_order_id,
    price: int64(r.price, "price"),
    shares: int64(r.shares, "shares"),
    fee: int64(r.fee, "fee"),
    createdAt: r.created_at,
  };
}

export function sessionFromRow(r: Selectable<SessionsTable>): SessionRecord {
  return { idHash: r.id_hash, accountId: r.account_id, createdAt: r.created_at, expiresAt: r.expires_at };
}

export function catalogEventToRow(e: CatalogEventRecord, createdAt: string): Insertable<CatalogEventsTable> {
  return {
    event_id: e.eventId,
    title: e.title,
    description: e.description,
    status: e.status,
    close_time: e.closeTime,
    resolution: e.resolution,
    base_price: e.basePrice,
    created_at: createdAt,
  };
}

export function catalogListingToRow(eventId: string, l: CatalogListingRecord, position: bigint): Insertable<CatalogListingsTable> {
  return {
    venue: l.venue,
    venue_market_id: l.venueMarketId,
    event_id: eventId,
    position,
    yes_id: l.outcomeIds.YES,
    no_id: l.outcomeIds.NO,
    tick_size: l.tickSize,
    fee_rate_ppm: l.feeRatePpm,
  };
}

export function catalogEventFromRows(e: Selectable<CatalogEventsTable>, listings: Selectable<CatalogListingsTable>[]): CatalogEventRecord {
  return {
    eventId: e.event_id,
    title: e.title,
    description: e.description,
    status: e.status as MarketStatus,
    closeTime: e.close_time,
    resolution: e.resolution as Outcome | null,
    basePrice: int64(e.base_price, "base_price"),
    listings: listings.map((l) => ({
      venue: l.venue,
      venueMarketId: l.venue_market_id,
      outcomeIds: { YES: l.yes_id, NO: l.no_id },
      tickSize: l.tick_size === null ? null : int64(l.tick_size, "tick_size"),
      feeRatePpm: l.fee_rate_ppm === null ? null : int64(l.fee_rate_ppm, "fee_rate_ppm"),
    })),
  };
}

export function proposalFromRow(r: Selectable<ProposalsTable>): ProposalRecord {
  return {
    id: r.id,
    kind: r.kind as ProposalRecord["kind"],
    eventId: r.event_id,
    title: r.title,
    score: Number(int64(r.score_ppm, "score_ppm")) / 1e6,
    reason: r.reason,
    members: JSON.parse(r.members) as ProposalMember[],
    status: r.status as ProposalStatus,
    createdAt: r.created_at,
    decidedAt: r.decided_at,
  };
}

export function resolutionFromRow(r: Selectable<EventResolutionsTable>): EventResolutionRecord {
  return {
    eventId: r.event_id,
    status: r.status as EventResolutionRecord["status"],
    outcome: r.outcome as Outcome | null,
    decidedBy: r.decided_by as EventResolutionRecord["decidedBy"],
    venueReports: JSON.parse(r.venue_reports) as Record<string, string>,
    decidedAt: r.decided_at,
  };
}

export function resolutionToRow(r: EventResolutionRecord): Insertable<EventResolutionsTable> {
  return { event_id: r.eventId, status: r.status, outcome: r.outcome, decided_by: r.decidedBy, venue_reports: JSON.stringify(r.venueReports), decided_at: r.decidedAt };
}

export function positionFromRow(r: Selectable<PositionsTable>): PositionRecord {
  return {
    accountId: r.account_id,
    eventId: r.event_id,
    outcome: r.outcome as Outcome,
    sotTokenId: r.sot_token_id,
    book: { shares: int64(r.shares, "positions.shares"), cost: int64(r.cost, "positions.cost"), realized: int64(r.realized, "positions.realized") },
    exits: int64(r.exits, "positions.exits"),
    updatedAt: r.updated_at,
  };
}

export function redemptionFromRow(r: Selectable<RedemptionsTable>): RedemptionRecord {
  return {
    key: r.key,
    eventId: r.event_id,
    accountId: r.account_id,
    address: r.address,
    outcome: r.outcome as Outcome,
    tokenId: r.token_id,
    shares: int64(r.shares, "redemptions.shares"),
    payout: int64(r.payout, "redemptions.payout"),
    status: r.status as RedemptionRecord["status"],
    txHash: r.tx_hash,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function withdrawalToRow(w: WithdrawalRecord): Insertable<WithdrawalsTable> {
  return {
    id: w.id,
    account_id: w.accountId,
    client_withdrawal_id: w.clientWithdrawalId,
    request_hash: w.requestHash,
    amount: w.amount,
    to_address: w.toAddress,
    status: w.status,
    tx_hash: w.txHash,
    error_code: w.errorCode,
    error_message: w.errorMessage,
    created_at: w.createdAt,
    updated_at: w.updatedAt,
  };
}

export function withdrawalFromRow(r: Selectable<WithdrawalsTable>): WithdrawalRecord {
  return {
    id: r.id,
    accountId: r.account_id,
    clientWithdrawalId: r.client_withdrawal_id,
    requestHash: r.request_hash,
    amount: int64(r.amount, "withdrawals.amount"),
    toAddress: r.to_address,
    status: r.status as WithdrawalStatus,
    txHash: r.tx_hash,
    errorCode: r.error_code,
    errorMessage: r.error_message,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function redemptionToRow(r: RedemptionRecord): Insertable<RedemptionsTable> {
  return {
    key: r.key,
    event_id: r.eventId,
    account_id: r.accountId,
    address: r.address,
    outcome: r.outcome,
    token_id: r.tokenId,
    shares: r.shares,
    payout: r.payout,
    status: r.status,
    tx_hash: r.txHash,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

export function depositToRow(d: DepositRecord): Insertable<DepositsTable> {
  return {
    id: d.id,
    account_id: d.accountId,
    amount: d.amount,
    from_address: d.fromAddress,
    tx_hash: d.txHash,
    place: BigInt(d.place),
    log_index: BigInt(d.logIndex),
    block: d.block,
    status: d.status,
    credit_tx: d.creditTx,
    credit_block: d.creditBlock,
    credit_block_hash: d.creditBlockHash,
    error_message: d.errorMessage,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

export function depositFromRow(r: Selectable<DepositsTable>): DepositRecord {
  return {
    id: r.id,
    accountId: r.account_id,
    amount: int64(r.amount, "deposits.amount"),
    fromAddress: r.from_address,
    txHash: r.tx_hash,
    place: Number(int64(r.place, "deposits.place")),
    logIndex: Number(int64(r.log_index, "deposits.log_index")),
    block: int64(r.block, "deposits.block"),
    status: r.status as DepositStatus,
    creditTx: r.credit_tx,
    creditBlock: r.credit_block === null ? null : int64(r.credit_block, "deposits.credit_block"),
    creditBlockHash: r.credit_block_hash,
    errorMessage: r.error_message,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
