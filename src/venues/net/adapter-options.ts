import type { Clock } from "../../domain/types.ts";
import type { MarketCatalog } from "../../markets/catalog.ts";
import type { StreamLog } from "./reconnecting-socket.ts";

/**
 * How often an adapter reads its markets' fees again by default: a venue sets the fee at match time, so a
 * change it makes is charged before the adapter prices it for at most this long.
 */
export const FEE_READ_INTERVAL_MS = 60_000;

/** What a wire-protocol adapter is given: where the venue is, how to sign, and its timing and rate limits. */
export interface AdapterOptions<Credentials> {
  baseUrl: string;
  wsUrl: string;
  credentials: Credentials;
  catalog: MarketCatalog;
  clock?: Clock;
  /** The venue name the catalog lists this venue's markets under. */
  venueId?: string;
  freshnessMs?: number;
  /** How long a request may go unanswered before its outcome is unknown. */
  requestTimeoutMs?: number;
  /** Client-side token buckets; a 429's Retry-After is honoured on top. */
  rateLimits?: { readsPerSecond: number; writesPerSecond: number };
  /** How often the markets' fees are read again (FEE_READ_INTERVAL_MS by default), where the adapter does. */
  feeReadIntervalMs?: number;
  /** Longest wait for the stream's first books in start(). */
  startTimeoutMs?: number;
  /** Where the book stream tells of reconnections and dropped frames. */
  log?: StreamLog;
}
