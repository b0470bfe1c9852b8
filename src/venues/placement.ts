import { orderFee, type FeeModel } from "../domain/fees.ts";
import { formatMicro, proceedsOf, type Micro } from "../domain/money.ts";
import type { Level } from "../domain/types.ts";
import type { HttpResult } from "./net/http.ts";
import type { ChildOrder, ChildStatus, PlaceResult, VenueFill, VenueMarket } from "./venue.ts";

/**
 * An order that took something: filled when it took all it asked for, open when the venue says the
 * rest still rests. Fills are taken once per trade id, however often the venue repeats one.
 */
export function takenResult(order: ChildOrder, venueOrderId: string, fills: VenueFill[], rests = false): PlaceResult {
  const unique = uniqueTrades(fills);
  const filled = unique.reduce((s, f) => s + f.shares, 0n);
  if (filled >= order.shares) return { kind: "filled", venueOrderId, fills: unique };
  return { kind: rests ? "open" : "partial", venueOrderId, fills: unique };
}

/** Each trade once, the first time it appears: venues may repeat a trade message. */
export function uniqueTrades<T extends { tradeId: string }>(fills: readonly T[]): T[] {
  const seen = new Set<string>();
  return fills.filter((f) => !seen.has(f.tradeId) && seen.add(f.tradeId) !== undefined);
}

/**
 * The refusal of a child whose amount at its limit (`proceedsOf` its limit and shares: what a buy spends
 * at most, what a sell asks at least) is under the market's minimum for its side, in `currency`; undefined
 * where it reaches it. The venue would refuse it: the adapter refuses it without sending it.
 */
export function underMinimumAmount(order: ChildOrder, market: Pick<VenueMarket, "minOrderAmount">, currency: string): PlaceResult | undefined {
  const least = market.minOrderAmount?.[order.side] ?? 0n;
  const amount = proceedsOf(order.limitPrice, order.shares);
  if (amount >= least) return undefined;
  return { kind: "rejected", reason: `invalid_order: ${formatMicro(amount)} ${currency} at the limit is under ${order.venueMarketId}'s minimum ${order.side} of ${formatMicro(least)}` };
}

/**
 * A placement that failed: refused (4xx, a 429 included) or never sent is a definite no; anything else may have
 * been placed, a 503 too, which says no more than any 5xx that the venue did not take the order.
 */
export function failedResult(f: HttpResult & { ok: false }): PlaceResult {
  if (f.kind === "rejected") return { kind: "rejected", reason: `venue_rejected: ${f.reason}` };
  if (f.kind === "retryable" && f.status !== 503) return { kind: "rejected", reason: `venue_unavailable: ${f.reason}` };
  return { kind: "unknown", reason: f.reason };
}

/**
 * The answer to a placement the venue refused as a repeat of an order it already holds (same
 * client order id, same signed order): that order's outcome, as a repeated placement must report.
 * An immediate-or-cancel order that took nothing left no fill, so it was never placed as far as
 * the port is concerned.
 */
export async function repeatResult(order: ChildOrder, why: string, status: () => Promise<ChildStatus>): Promise<PlaceResult> {
  let st: ChildStatus;
  try {
    st = await status();
  } catch (err) {
    return { kind: "unknown", reason: `${why}; looking it up failed: ${String(err)}` };
  }
  if (st.kind === "not_found") return { kind: "rejected", reason: `no_match: ${why}, and that order took nothing` };
  if (st.kind === "open") return { kind: "open", venueOrderId: st.venueOrderId, fills: uniqueTrades(st.fills) };
  return takenResult(order, st.venueOrderId, st.fills);
}

/**
 * Each fill's part of its order's fee, for venues that state no fee per fill: fill i carries the
 * fee of the fills up to it less that of the fills before it, so the parts add up to exactly what
 * the whole order is charged (a fee rounded per fill would not).
 */
export function feesPerFill(model: FeeModel, fills: readonly Level[]): Micro[] {
  let charged: Micro = 0n;
  return fills.map((_, i) => {
    const upTo = orderFee(model, fills.slice(0, i + 1));
    const fee = upTo - charged;
    charged = upTo;
    return fee;
  });
}
