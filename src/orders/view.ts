import { ERRORS, type ErrorCode } from "../domain/errors.ts";
import { microToNumber, type Micro } from "../domain/money.ts";
import { OPEN_STATUSES, reopenable } from "../domain/order-status.ts";
import type { FillRecord, OrderRecord } from "../store/store.ts";

/** The JSON an order is shown as: the SPEC's fields first, then DESIGN §6's extras. */
export interface OrderView {
  order_id: string;
  status: string;
  executed_price: number | null;
  routed_to: string | null;
  /** A buy's position token, minted by its settlement; null for a sell. */
  sot_minted: string | null;
  tx_hash: string | null;
  /** Shares bought, or sold. */
  filled_shares: number;
  /** A buy's charge, fees included; 0 for a sell, which spends nothing. */
  spent_usdc: number;
  fees_usdc: number;
  /** A sell's USDC credited to available: the fills' price × shares less their fees; null for a buy. */
  proceeds_usdc: number | null;
  /** A sell's position token, burned by its settlement; null for a buy. */
  sot_burned: string | null;
  fills: { venue: string; price: number; shares: number; fee_usdc: number; venue_order_id: string }[];
  created_at: string;
  updated_at: string;
  client_order_id: string | null;
  market_id: string;
  outcome: string;
  side: string;
  /** What a buy asked to spend; null for a sell. */
  amount_usdc: number | null;
  /** What a sell asked to sell; null for a buy. */
  shares: number | null;
  max_slippage: number;
  strategy: string;
  time_in_force: string;
  lock_tx_hash: string | null;
  release_tx_hash: string | null;
  /** The order's error: its code, message and what the message names (`details`, empty when nothing), as the POST that stored it answered; null while the order is open. */
  error: { code: string; message: string; details: Record<string, unknown> } | null;
}

/** Volume-weighted average price per share of the fills, fees excluded, rounded to the micro-USDC. */
export function averagePrice(fills: readonly Pick<FillRecord, "price" | "shares">[]): Micro | null {
  let shares = 0n;
  let weighted = 0n;
  for (const f of fills) {
    shares += f.shares;
    weighted += f.price * f.shares;
  }
  if (shares === 0n) return null;
  return (weighted + shares / 2n) / shares;
}

export function orderView(o: OrderRecord, fills: readonly FillRecord[], sotAssetId: (tokenId: string) => string): OrderView {
  const avg = averagePrice(fills);
  const sell = o.side === "sell";
  const traded = o.sotTokenId !== null && o.filledShares > 0n ? sotAssetId(o.sotTokenId) : null;
  return {
    order_id: o.id,
    status: o.status,
    executed_price: avg === null ? null : microToNumber(avg),
    routed_to: o.routedTo,
    sot_minted: sell ? null : traded,
    tx_hash: o.settleTx,
    filled_shares: microToNumber(o.filledShares),
    spent_usdc: microToNumber(o.spent),
    fees_usdc: microToNumber(o.fees),
    proceeds_usdc: sell ? microToNumber(o.proceeds) : null,
    sot_burned: sell ? traded : null,
    fills: fills.map((f) => ({
      venue: f.venue,
      price: microToNumber(f.price),
      shares: microToNumber(f.shares),
      fee_usdc: microToNumber(f.fee),
      venue_order_id: f.venueOrderId,
    })),
    created_at: o.createdAt,
    updated_at: o.updatedAt,
    client_order_id: o.clientOrderId,
    market_id: o.eventId,
    outcome: o.outcome,
    side: o.side,
    amount_usdc: sell ? null : microToNumber(o.amount),
    shares: sell ? microToNumber(o.shares) : null,
    max_slippage: microToNumber(o.maxSlippage),
    strategy: o.strategy,
    time_in_force: o.timeInForce,
    lock_tx_hash: o.lockTx,
    release_tx_hash: o.releaseTx,
    // An open order's error is the refusal its release is on the way for (OrderService.unwind): its answer once released.
    error: o.errorCode === null || OPEN_STATUSES.includes(o.status) ? null : { code: o.errorCode, message: errorMessage(o), details: o.errorDetails ?? {} },
  };
}

/**
 * An order's error message as its client reads it. A 5xx says "try again", yet an order that ended so after its lock
 * or escrow was taken (its chain order id spent: the Vault takes an id once) is its client_order_id's answer for good,
 * unlike one its retry runs again (reopenable): its message says so, and how to try again.
 */
function errorMessage(o: OrderRecord): string {
  const message = o.errorMessage ?? "";
  const status = ERRORS[o.errorCode as ErrorCode]?.status ?? 500;
  if (status < 500 || reopenable(o)) return message;
  return `${message} Sent again under the same client_order_id (or Idempotency-Key), the order answers as it is: to try again, send it under a new client_order_id.`;
}

/** The venue that filled the largest part of the order (by shares; ties by name, for stability). */
export function largestVenue(fills: readonly Pick<FillRecord, "venue" | "shares">[]): string | null {
  const by = new Map<string, bigint>();
  for (const f of fills) by.set(f.venue, (by.get(f.venue) ?? 0n) + f.shares);
  let best: string | null = null;
  let bestShares = -1n;
  for (const [venue, shares] of [...by].sort(([a], [b]) => a.localeCompare(b))) {
    if (shares > bestShares) [best, bestShares] = [venue, shares];
  }
  return best;
}

