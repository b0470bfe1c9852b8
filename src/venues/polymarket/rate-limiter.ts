import { performance } from "node:perf_hooks";

/** A limit as the venue publishes it: at most `requests` per `windowMs`. */
export interface Limit {
  requests: number;
  windowMs: number;
}

interface Bucket {
  limit: Limit;
  tokens: number;
  at: number;
}

/**
 * Token buckets, one per named limit, refilled continuously at requests/window: a request waits
 * until every bucket it draws on has a token. Measured on the monotonic clock, not the injected
 * one, because it schedules real sockets and a test's frozen clock must not freeze it.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(limits: Record<string, Limit>) {
    const now = performance.now();
    for (const [name, limit] of Object.entries(limits)) {
      if (!(limit.requests > 0 && limit.windowMs > 0)) throw new RangeError(`limit ${name} must be positive`);
      this.buckets.set(name, { limit, tokens: limit.requests, at: now });
    }
  }

  /** Waits until a request may go under every named limit (unknown names are unlimited), then counts it. */
  async acquire(names: readonly string[]): Promise<void> {
    const buckets = names.map((n) => this.buckets.get(n)).filter((b): b is Bucket => b !== undefined);
    for (;;) {
      const now = performance.now();
      let waitMs = 0;
      for (const b of buckets) {
        const rate = b.limit.requests / b.limit.windowMs;
        b.tokens = Math.min(b.limit.requests, b.tokens + (now - b.at) * rate);
        b.at = now;
        if (b.tokens < 1) waitMs = Math.max(waitMs, (1 - b.tokens) / rate);
      }
      if (waitMs === 0) {
        for (const b of buckets) b.tokens -= 1;
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.ceil(waitMs)));
    }
  }
}

const TEN_SECONDS = 10_000;

/**
 * Polymarket's published CLOB limits (docs.polymarket.com/api-reference/rate-limits): every
 * request counts against `general`, and against its endpoint's own limit where one is published.
 * Cloudflare throttles rather than refuses above them, which would show as latency on our orders.
 */
export const POLYMARKET_LIMITS: Record<string, Limit> = {
  general: { requests: 9_000, windowMs: TEN_SECONDS },
  book: { requests: 1_500, windowMs: TEN_SECONDS },
  books: { requests: 500, windowMs: TEN_SECONDS },
  tickSize: { requests: 200, windowMs: TEN_SECONDS },
  order: { requests: 900, windowMs: TEN_SECONDS },
  trades: { requests: 500, windowMs: TEN_SECONDS },
  postOrderBurst: { requests: 3_500, windowMs: TEN_SECONDS },
  postOrderSustained: { requests: 36_000, windowMs: 600_000 },
};
