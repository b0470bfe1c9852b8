import type { Clock } from "../domain/types.ts";
import type { ChildOrder, ChildStatus, PlaceResult, Venue, VenueFill } from "../venues/venue.ts";

/** What a child order came to: final with the fills it had, or not known yet. */
export type ChildOutcome = { final: true; fills: VenueFill[] } | { final: false; why: string };

export interface OutcomeRules {
  clock: Clock;
  /**
   * How far the venue's clock may run behind ours: a venue that does not know a child order may
   * still receive it until its expiry has passed on the venue's clock, so "not found" is final only
   * this long after the expiry by ours.
   */
  expirySkewMs: number;
}

/** What a placement's answer says, once a child order the venue left open has been cancelled. */
export async function outcomeOfPlacement(venue: Venue, child: ChildOrder, result: PlaceResult, rules: OutcomeRules): Promise<ChildOutcome> {
  switch (result.kind) {
    case "filled":
    case "partial":
      return { final: true, fills: result.fills };
    case "rejected":
      return { final: true, fills: [] };
    case "open":
      return outcomeOfStatus(venue, child, await venue.cancel(child.clientOrderId, child), rules);
    case "unknown":
      return { final: false, why: result.reason };
  }
}

/**
 * Asks the venue what became of a child order: one still open is cancelled first, so that nothing
 * of it can fill after it is settled; one the venue does not know is never placed only once its
 * expiry has passed, since until then it may still arrive.
 */
export async function learnOutcome(venue: Venue, child: ChildOrder, rules: OutcomeRules): Promise<ChildOutcome> {
  const status = await venue.status(child.clientOrderId, child);
  return outcomeOfStatus(venue, child, status.kind === "open" ? await venue.cancel(child.clientOrderId, child) : status, rules);
}

function outcomeOfStatus(venue: Venue, child: ChildOrder, status: ChildStatus, rules: OutcomeRules): ChildOutcome {
  if (status.kind === "done") return { final: true, fills: status.fills };
  if (status.kind === "open") throw new Error(`${venue.id} answered a cancel of ${child.clientOrderId} with an open order`);
  if (rules.clock.now() > child.expiresAt + rules.expirySkewMs) return { final: true, fills: [] };
  return { final: false, why: `${venue.id} does not know ${child.clientOrderId} yet, and it may still arrive until it expires` };
}
