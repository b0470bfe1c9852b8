import type { PriceMicro, ShareMicro } from "../domain/money.ts";
import type { Level, Outcome } from "../domain/types.ts";
import type { ChildLeg, SellQuote, VenueQuote } from "../router/index.ts";

/** Shares held off one venue market's book side, by level price. */
type Held = Map<PriceMicro, ShareMicro>;

interface Child {
  venue: string;
  /** Not placed yet: counted in its venue's queue. */
  queued: boolean;
  /** The book side its levels are held off (heldKey). */
  key: string;
  levels: readonly Level[];
}

/**
 * Child orders this process has planned and not yet heard back from. Orders planned at once (a burst,
 * whose locks land in one batch transaction) all read the same queues and books before any of their child
 * orders reaches a venue, so each child order counts twice for the orders planned after it:
 *
 * - in its venue's queue from its plan until it is placed (Venue.queueDelayMs counts it `ahead`): from
 *   then on the venue's own write limiter counts it, so the later orders spill to the next venue instead of
 *   queuing behind it;
 * - on its book from its plan until its venue answers (filled, missed, failed or unknown): the shares it
 *   plans to take at each level are held off that level of the quotes the router reads, so two orders do
 *   not plan on the same shares. The venue's book stream shows a take only after the venue matched it,
 *   which is at the earliest when it answers; holding the shares past the answer would count them twice.
 */
export class QueuedChildren {
  private readonly byVenue = new Map<string, number>();
  /** Each executing order's child orders not answered yet. */
  private readonly byOrder = new Map<string, Child[]>();
  private readonly held = new Map<string, Held>();

  /** Child orders planned onto `venue` and not yet placed: they queue before one planned now. */
  readonly ahead = (venue: string): number => this.byVenue.get(venue) ?? 0;

  /** A routing round of `order` planned `legs`, one child order each: each is queued and holds the shares of its levels. */
  planned(order: { id: string; outcome: Outcome; side: "buy" | "sell" }, legs: readonly Pick<ChildLeg, "venue" | "venueMarketId" | "levels">[]): void {
    const children = this.byOrder.get(order.id) ?? [];
    for (const leg of legs) {
      const child = { venue: leg.venue, queued: true, key: heldKey(leg.venue, leg.venueMarketId, order.outcome, order.side), levels: leg.levels };
      children.push(child);
      this.byVenue.set(leg.venue, this.ahead(leg.venue) + 1);
      this.hold(child, 1n);
    }
    this.byOrder.set(order.id, children);
  }

  /** `orderId`'s child order on `venue` is being placed: it leaves the venue's queue and still holds its shares. */
  placing(orderId: string, venue: string): void {
    const child = this.byOrder.get(orderId)?.find((c) => c.venue === venue && c.queued);
    if (!child) return;
    child.queued = false;
    this.dequeue(venue);
  }

  /** `orderId`'s child order on `venue` has its answer: its shares are no longer held. */
  answered(orderId: string, venue: string): void {
    const children = this.byOrder.get(orderId);
    const i = children?.findIndex((c) => c.venue === venue && !c.queued) ?? -1;
    if (i < 0) return;
    this.hold(children!.splice(i, 1)[0]!, -1n);
  }

  /**
   * What `orderId` planned and has no answer for will not be placed or answered as planned: the order is no
   * longer executing here, or its round is about to be planned again (at its venues' turns).
   */
  forget(orderId: string): void {
    for (const c of this.byOrder.get(orderId) ?? []) {
      if (c.queued) this.dequeue(c.venue);
      this.hold(c, -1n);
    }
    this.byOrder.delete(orderId);
  }

  /** The router's buy quotes for `outcome` with the shares held by child buys taken off their asks. */
  buyQuotes(quotes: VenueQuote[], outcome: Outcome): VenueQuote[] {
    if (this.held.size === 0) return quotes;
    return quotes.map((q) => ({ ...q, asks: withoutHeld(q.asks, this.held.get(heldKey(q.venue, q.venueMarketId, outcome, "buy"))) }));
  }

  /** The router's sell quotes for `outcome` with the shares held by child sells taken off their bids. */
  sellQuotes(quotes: SellQuote[], outcome: Outcome): SellQuote[] {
    if (this.held.size === 0) return quotes;
    return quotes.map((q) => ({ ...q, bids: withoutHeld(q.bids, this.held.get(heldKey(q.venue, q.venueMarketId, outcome, "sell"))) }));
  }

  private dequeue(venue: string): void {
    const left = this.ahead(venue) - 1;
    if (left > 0) this.byVenue.set(venue, left);
    else this.byVenue.delete(venue);
  }

  /** Adds (sign 1) or takes back (−1) a child order's shares at each of its levels. */
  private hold(child: Child, sign: 1n | -1n): void {
    const held = this.held.get(child.key) ?? new Map<PriceMicro, ShareMicro>();
    for (const l of child.levels) {
      const shares = (held.get(l.price) ?? 0n) + sign * l.shares;
      if (shares > 0n) held.set(l.price, shares);
      else held.delete(l.price);
    }
    if (held.size > 0) this.held.set(child.key, held);
    else this.held.delete(child.key);
  }
}

/** A buy's child orders take a book's asks, a sell's its bids. */
function heldKey(venue: string, venueMarketId: string, outcome: Outcome, side: "buy" | "sell"): string {
  return `${venue}\n${venueMarketId}\n${outcome}\n${side}`;
}

/**
 * One side of a book, sorted best first, with `held` shares (by level price) taken off the level of the
 * same price: a level left empty is dropped, none goes below zero, and the order is kept. Shares held at a
 * price the book no longer shows are taken off nothing.
 */
export function withoutHeld(levels: readonly Level[], held: ReadonlyMap<PriceMicro, ShareMicro> | undefined): readonly Level[] {
  if (!held) return levels;
  const out: Level[] = [];
  for (const l of levels) {
    const left = l.shares - (held.get(l.price) ?? 0n);
    if (left > 0n) out.push(left === l.shares ? l : { price: l.price, shares: left });
  }
  return out;
}
