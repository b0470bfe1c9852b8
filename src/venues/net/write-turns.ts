import type { Throttle } from "./rate-limiter.ts";

/**
 * Turns taken in a venue's write queue ahead of the child orders that will use them (Venue.writeTurn):
 * the order service waits for a child order's turn, plans it on the books as they are then, and places
 * it; the placement spends the turn instead of queueing again. A turn the new plan does not use is given
 * back, so the next child order in the queue need not wait for it.
 */
export class WriteTurns {
  /** Client order ids whose turn has come and whose placement has not spent it yet. */
  private readonly taken = new Set<string>();
  /** Child orders waiting for their turn. */
  private queued = 0;

  constructor(private readonly throttle: Throttle) {}

  get waiting(): number {
    return this.queued;
  }

  /** Resolves when `clientOrderId`'s turn has come, in the queue's arrival order. */
  async take(clientOrderId: string): Promise<void> {
    this.queued++;
    try {
      await this.throttle.acquire();
    } finally {
      this.queued--;
    }
    this.taken.add(clientOrderId);
  }

  /** The child order will not be placed: its turn goes back to the queue. */
  giveBack(clientOrderId: string): void {
    if (this.taken.delete(clientOrderId)) this.throttle.refund();
  }

  /** What placing `clientOrderId` waits on: its first request spends the turn taken for it, if one was; retries queue as any request. */
  throttleFor(clientOrderId: string): Throttle {
    if (!this.taken.delete(clientOrderId)) return this.throttle;
    let spent = false;
    return {
      acquire: () => {
        if (spent) return this.throttle.acquire();
        spent = true;
        return Promise.resolve();
      },
      pause: (ms) => this.throttle.pause(ms),
      delayMs: (ahead) => this.throttle.delayMs(ahead),
      refund: () => this.throttle.refund(),
    };
  }
}
