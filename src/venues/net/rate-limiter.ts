/** What a request waits on before it is sent: one RateLimiter, or several at once (allOf). */
export interface Throttle {
  acquire(): Promise<void>;
  pause(ms: number): void;
  /**
   * How long a request asked for now would wait for its turn, in ms, with `ahead` more requests (default
   * none) to be asked for before it: a cheap reading for the router.
   */
  delayMs(ahead?: number): number;
  /** Gives back a turn acquired and not used: the next caller need not wait for it. */
  refund(): void;
}

/**
 * A token bucket for one of a venue's documented request budgets (Kalshi: 20 reads and 10 writes a
 * second on the Basic tier). Callers wait their turn instead of being refused, and a 429 pauses the
 * whole bucket for the venue's Retry-After so the other callers do not hammer it meanwhile.
 */
/** Callers served one after another: the tail of the chain of their turns, and how many have not had theirs. */
interface Lane {
  tail: Promise<void>;
  waiting: number;
}

export class RateLimiter implements Throttle {
  private tokens: number;
  private refilledAt = performance.now();
  private pausedUntil = 0;
  /** Callers that asked and have not had their turn yet, in arrival order. */
  private readonly line: Lane = { tail: Promise.resolve(), waiting: 0 };
  /** Callers let ahead of the line (first()), in their own arrival order. */
  private readonly front: Lane = { tail: Promise.resolve(), waiting: 0 };

  constructor(
    private readonly perSecond: number,
    private readonly burst: number = perSecond,
  ) {
    if (!(perSecond > 0) || !(burst >= 1)) throw new RangeError("a rate limit needs perSecond > 0 and burst >= 1");
    this.tokens = burst;
  }

  /** Resolves when the caller may send one request; callers are served in arrival order. */
  acquire(): Promise<void> {
    return this.join(this.line);
  }

  /**
   * This bucket with every caller served ahead of those waiting in line (in their own arrival order): for a
   * request that finishes what an earlier turn started (the read-back of a child order just sent, a
   * cancel), which would otherwise wait behind every child order queued since.
   */
  first(): Throttle {
    return { acquire: () => this.join(this.front), pause: (ms) => this.pause(ms), delayMs: (ahead) => this.delayMs(ahead), refund: () => this.refund() };
  }

  delayMs(ahead = 0): number {
    const now = performance.now();
    const tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) / 1000) * this.perSecond);
    const short = this.line.waiting + this.front.waiting + ahead + 1 - tokens;
    return Math.max(0, this.pausedUntil - now) + (short > 0 ? (short / this.perSecond) * 1000 : 0);
  }

  refund(): void {
    this.tokens = Math.min(this.burst, this.tokens + 1);
  }

  /** Holds every caller back for `ms` (the venue said so with a 429). */
  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, performance.now() + ms);
  }

  private join(lane: Lane): Promise<void> {
    lane.waiting++;
    const turn = lane.tail.then(() => this.take(lane)).finally(() => lane.waiting--);
    lane.tail = turn.catch(() => undefined);
    return turn;
  }

  private async take(lane: Lane): Promise<void> {
    for (;;) {
      const now = performance.now();
      if (now < this.pausedUntil) {
        await sleep(this.pausedUntil - now);
        continue;
      }
      // The line's head gives way to whoever was let ahead of it.
      if (lane === this.line && this.front.waiting > 0) {
        await this.front.tail;
        continue;
      }
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) / 1000) * this.perSecond);
      this.refilledAt = now;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await sleep(((1 - this.tokens) / this.perSecond) * 1000);
    }
  }
}

/**
 * Several budgets one request counts against (Polymarket: its general limit and its endpoint's);
 * a 429 pauses them all, since the venue did not say which one was exceeded.
 */
export function allOf(limiters: readonly RateLimiter[]): Throttle {
  return {
    acquire: async () => {
      for (const l of limiters) await l.acquire();
    },
    pause: (ms) => {
      for (const l of limiters) l.pause(ms);
    },
    refund: () => {
      for (const l of limiters) l.refund();
    },
    // The buckets refill side by side, so the wait is the longest one's.
    delayMs: (ahead) => Math.max(0, ...limiters.map((l) => l.delayMs(ahead))),
  };
}

export function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
