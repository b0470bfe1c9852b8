import type { Micro, Ppm, PriceMicro, ShareMicro } from "./money.ts";
import { hasHiddenCharacter } from "./text.ts";

export const OUTCOMES = ["YES", "NO"] as const;
export type Outcome = (typeof OUTCOMES)[number];
export const SIDES = ["buy", "sell"] as const;
export type Side = (typeof SIDES)[number];
export const STRATEGIES = ["optimize_price", "optimize_speed"] as const;
export type Strategy = (typeof STRATEGIES)[number];
export const TIME_IN_FORCE = ["FOK", "IOC"] as const;
export type TimeInForce = (typeof TIME_IN_FORCE)[number];
/**
 * An idempotency key: client_order_id, client_withdrawal_id. 1-64 printable characters (code points: an emoji is one,
 * beyond U+FFFF): no space of any kind (Unicode's separators: U+0020, a no-break space U+00A0, U+2000 to U+200A, U+3000,
 * the line and paragraph separators U+2028 and U+2029) and no hidden character (`hasHiddenCharacter`: a control, a lone
 * surrogate, which is no character and is stored as U+FFFD, so two different ids would be one, a zero-width or
 * bidirectional format, a variation selector), with which an id reads on a screen as another one.
 */
export function isClientId(id: string): boolean {
  return /^\P{Z}{1,64}$/u.test(id) && !hasHiddenCharacter(id);
}
/**
 * The Idempotency-Key header's: 1-64 printable ASCII characters. Node reads a header's bytes one character each, so any
 * other character arrives as others ("ké" sent in UTF-8 as "kÃ©"): such an id is given as the body's client id.
 */
export const HEADER_CLIENT_ID = /^[\x21-\x7e]{1,64}$/;
/** `withdraw` pays money out of the vault: never granted unless asked for (keys are made with read and trade). */
export const SCOPES = ["read", "trade", "withdraw"] as const;
export type Scope = (typeof SCOPES)[number];
export const MARKET_STATUSES = ["open", "closed", "resolved", "disputed"] as const;
export type MarketStatus = (typeof MARKET_STATUSES)[number];

/** One price level: `shares` available at `price`. */
export interface Level {
  price: PriceMicro;
  shares: ShareMicro;
}

/** A validated order request, in exact units. */
export interface OrderIntent {
  eventId: string;
  outcome: Outcome;
  side: Side;
  /** A buy's budget (amount_usdc), fees included; 0 for a sell. */
  amount: Micro;
  /** The shares a sell asks to sell; 0 for a buy. */
  shares: ShareMicro;
  maxSlippage: Ppm;
  strategy: Strategy;
  timeInForce: TimeInForce;
}

/** Injected clock, so every test can be deterministic. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };

/** A clock `offsetMs` ahead of (or, negative, behind) another. */
export function skewed(clock: Clock, offsetMs: number): Clock {
  return offsetMs === 0 ? clock : { now: () => clock.now() + offsetMs };
}
