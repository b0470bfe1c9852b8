// Wire shapes of the crossfill HTTP API (snake_case, as on the wire). Written out rather than
// derived from the server's schemas so that the SDK compiles and ships without server code.

export type Outcome = "YES" | "NO";
export type OrderStatus = "pending" | "locked" | "routing" | "filled" | "partially_filled" | "rejected" | "failed";

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export interface ListQuery {
  limit?: number;
  cursor?: string;
}

export interface MarketsQuery extends ListQuery {
  status?: "open" | "closed" | "resolved" | "disputed";
  venue?: string;
  q?: string;
}

export interface MarketVenue {
  venue: string;
  venue_market_id: string;
  outcome_ids: Record<string, string>;
  fee_model: Record<string, unknown>;
  tick_size: number;
  min_order_size: number;
}

export interface Market {
  event_id: string;
  title: string;
  description: string;
  outcomes: string[];
  status: "open" | "closed" | "resolved" | "disputed";
  close_time: string;
  resolution: string | null;
  venues: MarketVenue[];
  best_bid: number | null;
  best_ask: number | null;
  volume_usdc: number;
}

/** One level of the merged book: [price, size, venue]. */
export type BookEntry = [price: number, size: number, venue: string];

export interface PriceRecord {
  event_id: string;
  outcome: Outcome;
  best_execution: { venue: string; price: number; fee_adjusted_price: number } | null;
  orderbook: { bids: BookEntry[]; asks: BookEntry[] };
  spread: { best_bid: number | null; best_ask: number | null; spread: number | null };
  updated_at: string | null;
  stale_venues: string[];
}

export interface PricesQuery {
  outcome?: Outcome;
  depth?: number;
  /** The order side to rank for (default buy): sell orders the bids by what a seller nets after fees. */
  side?: "buy" | "sell";
}

interface OrderRequestCommon {
  market_id: string;
  outcome: Outcome;
  max_slippage?: number | string;
  strategy?: "optimize_price" | "optimize_speed";
  client_order_id?: string;
  time_in_force?: "FOK" | "IOC";
}

/** A buy spends `amount_usdc`, fees included. */
export interface BuyRequest extends OrderRequestCommon {
  side: "buy";
  /** A number, or a decimal string to avoid any float rounding on the client's side. */
  amount_usdc: number | string;
}

/** A sell sells `shares` of a position held (at most its unlocked shares, else `insufficient_position`). */
export interface SellRequest extends OrderRequestCommon {
  side: "sell";
  /** A number, or a decimal string. */
  shares: number | string;
}

export type OrderRequest = BuyRequest | SellRequest;

export interface Fill {
  venue: string;
  price: number;
  shares: number;
  fee_usdc: number;
  venue_order_id: string;
}

export interface Order {
  order_id: string;
  status: OrderStatus;
  executed_price: number | null;
  routed_to: string | null;
  /** A buy's position token, minted; null for a sell. */
  sot_minted: string | null;
  tx_hash: string | null;
  /** Shares bought, or sold. */
  filled_shares: number;
  /** A buy's charge; 0 for a sell. */
  spent_usdc: number;
  fees_usdc: number;
  /** A sell's USDC credited after fees; null for a buy. */
  proceeds_usdc: number | null;
  /** A sell's position token, burned; null for a buy. */
  sot_burned: string | null;
  fills: Fill[];
  created_at: string;
  updated_at: string;
  client_order_id: string | null;
  market_id: string;
  outcome: Outcome;
  side: "buy" | "sell";
  /** A buy's amount asked; null for a sell. */
  amount_usdc: number | null;
  /** A sell's shares asked; null for a buy. */
  shares: number | null;
  max_slippage: number;
  strategy: "optimize_price" | "optimize_speed";
  time_in_force: "FOK" | "IOC";
  lock_tx_hash: string | null;
  release_tx_hash: string | null;
  /** Its code, message and what the message names (a refusal's limit and reference, the balance short of the amount): empty when nothing. */
  error: { code: string; message: string; details: Record<string, unknown> } | null;
}

export interface Account {
  account_id: string;
  email: string;
  vault_address: string;
  /** Send USDC here (an ERC-20 transfer): it is credited to available_usdc once. */
  deposit_address: string | null;
  available_usdc: number;
  locked_usdc: number;
  positions: Position[];
}

/** A position: a token held, or one sold or redeemed whole (shares 0, its realized P&L kept). */
export interface Position {
  event_id: string;
  outcome: Outcome;
  /** CAIP-19 id of the position token. */
  sot: string;
  shares: number;
  /** USDC a share the shares held cost, fees included (average cost method); null with none held. */
  avg_cost: number | null;
  /** What selling a share nets now: the best fee-adjusted bid across venues (1 or 0 once resolved); null with no bid. */
  mark_price: number | null;
  /** (mark_price − avg_cost) × shares; null without a mark. */
  unrealized_pnl_usdc: number | null;
  /** What sells and redemptions paid, less the average cost of the shares they removed. */
  realized_pnl_usdc: number;
  /** The event's status: the position is sold only while it is open; a resolved one's shares are redeemed. Null for an event no longer listed. */
  event_status: "open" | "closed" | "resolved" | "disputed" | null;
}

export interface WithdrawalRequest {
  /** A number, or a decimal string to avoid any float rounding on the client's side. */
  amount_usdc: number | string;
  /** A 0x address, EIP-55 checksummed or all lower case. */
  to_address: string;
  client_withdrawal_id?: string;
}

export type WithdrawalStatus = "pending" | "sent" | "confirmed" | "failed";

export interface Withdrawal {
  withdrawal_id: string;
  status: WithdrawalStatus;
  amount_usdc: number;
  to_address: string;
  tx_hash: string | null;
  client_withdrawal_id: string | null;
  created_at: string;
  updated_at: string;
  error: { code: string; message: string } | null;
}

/** One movement of the account's money. */
export interface Activity {
  activity_id: string;
  /** deposit, faucet, lock, settle, release (a buy), sell (its proceeds), withdrawal, redemption; more kinds may come. */
  type: string;
  amount_usdc: number;
  tx_hash: string | null;
  status: string;
  reference: string;
  address: string | null;
  created_at: string;
}

export interface Health {
  /** degraded when the chain, the store, Redis or a venue is not up. */
  status: "ok" | "degraded";
  version: string;
  chain: { chain_id: number; rpc_url: string; contracts: { usdc: string; vault: string; sot: string }; state: "up" | "down" };
  store: { state: "up" | "down" };
  /** null without REDIS_URL. */
  redis: { state: "up" | "down" } | null;
  venues: {
    venue: string;
    /** The adapter serving the venue. */
    adapter: string;
    /** Where the adapter points: the venue, or its local simulator. */
    base_url: string | null;
    /** State of the book stream's connection. */
    stream_state: string | null;
    state: string;
    latency_p50_ms: number | null;
    latency_p99_ms: number | null;
    book_age_ms: number | null;
  }[];
}

/** Body of every non-2xx response. */
export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown>; request_id: string };
}
