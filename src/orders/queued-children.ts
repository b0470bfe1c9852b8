/**
 * Child orders this process has planned onto each venue and not yet placed there. Orders planned at once
 * (a burst, whose locks land in one batch transaction) all read the venues' queues before any of their
 * child orders reaches a venue's write limit; counting those planned ahead in each venue's queue delay
 * (Venue.queueDelayMs) is what lets the later ones spill to the next venue instead of queuing behind them.
 * A child order leaves the count as it is placed: from then on the venue's own limiter counts it.
 */
export class QueuedChildren {
  private readonly byVenue = new Map<string, number>();
  /** The venues each executing order has planned child orders onto and not placed yet, one entry per child order. */
  private readonly byOrder = new Map<string, string[]>();

  /** Child orders planned onto `venue` and not yet placed: they queue before one planned now. */
  readonly ahead = (venue: string): number => this.byVenue.get(venue) ?? 0;

  /** A routing round of `orderId` planned one child order onto each of `venues`. */
  planned(orderId: string, venues: readonly string[]): void {
    const held = this.byOrder.get(orderId) ?? [];
    for (const v of venues) {
      held.push(v);
      this.byVenue.set(v, this.ahead(v) + 1);
    }
    this.byOrder.set(orderId, held);
  }

  /** `orderId`'s child order on `venue` is being placed. */
  placing(orderId: string, venue: string): void {
    const held = this.byOrder.get(orderId);
    const i = held?.indexOf(venue) ?? -1;
    if (i < 0) return;
    held!.splice(i, 1);
    this.drop(venue);
  }

  /** `orderId` is no longer executing here: what it planned and did not place will not be placed by it. */
  forget(orderId: string): void {
    for (const v of this.byOrder.get(orderId) ?? []) this.drop(v);
    this.byOrder.delete(orderId);
  }

  private drop(venue: string): void {
    const left = this.ahead(venue) - 1;
    if (left > 0) this.byVenue.set(venue, left);
    else this.byVenue.delete(venue);
  }
}
