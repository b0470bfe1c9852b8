import type { Micro, Ppm, PriceMicro, ShareMicro } from "../domain/money.ts";
import type { Outcome, Scope, Side, Strategy, TimeInForce } from "../domain/types.ts";

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
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** A web terminal session; the id itself lives only in the user's cookie. */
export interface SessionRecord {
  /** SHA-256 of the session id, hex. */
  idHash: string;
  accountId: string;
  createdAt: string;
  expiresAt: string;
}

export const ORDER_STATUSES = ["pending", "locked", "routing", "filled", "partially_filled", "rejected", "failed"] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
export const TERMINAL_STATUSES: readonly OrderStatus[] = ["filled", "partially_filled", "rejected", "failed"];

/** A child order as sent to a venue. Stored before it is sent, so that after a crash the venue can be asked about it. */
export interface OrderLeg {
  venue: string;
  clientOrderId: string;
  venueMarketId: string;
  limitPrice: PriceMicro;
  shares: ShareMicro;
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
  amount: Micro;
  maxSlippage: Ppm;
  strategy: Strategy;
  timeInForce: TimeInForce;
  status: OrderStatus;
  locked: Micro;
  spent: Micro;
  fees: Micro;
  filledShares: ShareMicro;
  routedTo: string | null;
  /** The child orders, stored with the move to `routing`, before any is sent. */
  legs: OrderLeg[];
  sotTokenId: string | null;
  lockTx: string | null;
  settleTx: string | null;
  releaseTx: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: string;
  updatedAt: string;
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

export type OrderPatch = Partial<Omit<OrderRecord, "id" | "accountId" | "createdAt">>;

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/** Persistence port. SQLite is the embedded default; PostgreSQL implements the same port. */
export interface Store {
  migrate(): Promise<void>;
  close(): Promise<void>;

  createAccount(a: Omit<AccountRecord, "createdAt">): Promise<AccountRecord>;
  accountById(id: string): Promise<AccountRecord | undefined>;
  accountByEmail(email: string): Promise<AccountRecord | undefined>;
  markAccountFunded(id: string, at: string): Promise<AccountRecord>;

  insertApiKey(k: Omit<ApiKeyRecord, "createdAt" | "lastUsedAt" | "revokedAt">): Promise<ApiKeyRecord>;
  apiKey(apiKey: string): Promise<ApiKeyRecord | undefined>;
  listApiKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /** Returns false when the key does not exist or was already revoked. */
  revokeApiKey(apiKey: string, at: string): Promise<boolean>;
  touchApiKey(apiKey: string, at: string): Promise<void>;

  /**
   * Inserts a new order, or — when the account already has an order with the same clientOrderId —
   * returns that one instead, so that a retried request never creates a second order.
   */
  insertOrder(o: OrderRecord): Promise<{ created: true; order: OrderRecord } | { created: false; order: OrderRecord }>;
  updateOrder(id: string, patch: OrderPatch): Promise<OrderRecord>;
  order(id: string): Promise<OrderRecord | undefined>;
  /** The account's orders, newest first. */
  listOrders(accountId: string, opts: { limit: number; cursor: string | null }): Promise<Page<OrderRecord>>;
  ordersInStatus(statuses: readonly OrderStatus[]): Promise<OrderRecord[]>;

  /** Inserts fills, ignoring any whose (venue, tradeId) is already stored. */
  insertFills(fills: FillRecord[]): Promise<void>;
  fills(orderId: string): Promise<FillRecord[]>;

  insertSession(s: SessionRecord): Promise<void>;
  /** The session with this hash, unless it expired before `now` (ISO-8601). */
  session(idHash: string, now: string): Promise<SessionRecord | undefined>;
  deleteSession(idHash: string): Promise<void>;
  purgeSessions(before: string): Promise<void>;

  /** Records a signature as seen until `expiresAt` (ms). Returns false if it was already seen: a replay. */
  rememberSignature(apiKey: string, signature: string, expiresAt: number): Promise<boolean>;
  purgeSignatures(before: number): Promise<void>;
}
