import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import { AppError } from "../domain/errors.ts";
import type { Redis } from "../redis.ts";
import { BoundedMap } from "../domain/bounded-map.ts";

/** A budget: `max` requests per key in each fixed window of `windowMs`. */
export interface RateLimit {
  max: number;
  windowMs: number;
  /** Whose budget a request spends. */
  key(req: FastifyRequest): string;
}

declare module "fastify" {
  interface FastifyContextConfig {
    /** A budget of the route's own instead of the API-wide one, or false for none. */
    rateLimit?: RateLimit | false;
  }
}

/** A key's requests in its window so far, and when the window ends (epoch milliseconds). */
interface Spent {
  count: number;
  endsAt: number;
}

/** Where one budget is counted. */
interface Counter {
  /** Counts one request against the key. */
  spend(key: string, windowMs: number): Spent | Promise<Spent>;
}

/**
 * Counts in this process. Answered at once: a request's count costs a map lookup, no promise. Holds at
 * most `capacity` keys; past it the key whose window began longest ago is forgotten.
 */
class LocalCounter implements Counter {
  private readonly windows: BoundedMap<string, Spent>;

  constructor(capacity = 10_000) {
    this.windows = new BoundedMap(capacity);
  }

  spend(key: string, windowMs: number): Spent {
    const window = this.window(key, windowMs);
    window.count++;
    return window;
  }

  /** Spends one request only while fewer than `max` are spent; undefined, spending nothing, once they are. */
  spendUnder(key: string, windowMs: number, max: number): Spent | undefined {
    const window = this.window(key, windowMs);
    if (window.count >= max) return undefined;
    window.count++;
    return window;
  }

  private window(key: string, windowMs: number): Spent {
    const now = Date.now();
    let window = this.windows.get(key);
    if (window === undefined || window.endsAt <= now) {
      this.windows.delete(key);
      this.windows.set(key, (window = { count: 0, endsAt: now + windowMs }));
    }
    return window;
  }
}

/** One round trip: the key's count after this request, and its window's time left in milliseconds. */
const SPEND = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return {count, tonumber(ARGV[1])}
end
return {count, redis.call('PTTL', KEYS[1])}`;

/** Counts in Redis, so that every instance on it spends one budget: an atomic script per request. */
class RedisCounter implements Counter {
  constructor(
    private readonly redis: Redis & { crossfillSpend?: (key: string, windowMs: number) => Promise<[number, number]> },
    private readonly prefix: string,
  ) {
    // Sent once, then called by its hash.
    if (redis.crossfillSpend === undefined) redis.defineCommand("crossfillSpend", { numberOfKeys: 1, lua: SPEND });
  }

  async spend(key: string, windowMs: number): Promise<Spent> {
    const [count, ttl] = await this.redis.crossfillSpend!(this.prefix + key, windowMs);
    return { count, endsAt: Date.now() + Math.max(0, ttl) };
  }
}

/**
 * The API's rate limits, counted as a request arrives (onRequest: before its body is read or its
 * signature checked). Every route spends `api`, the budget of its key, unless its config names a budget
 * of its own (counted apart, per route) or none. With Redis every instance counts in it; a Redis that
 * fails lets the request through. Limited answers carry x-ratelimit-limit, -remaining and -reset; a
 * refused one is rate_limited with Retry-After.
 */
export function registerRateLimits(app: FastifyInstance, api: RateLimit | undefined, redis: Redis | undefined): ApiBudget | undefined {
  const counter = (scope: string): Counter => (redis ? new RedisCounter(redis, `ratelimit:${scope}:`) : new LocalCounter());
  const apiCounter = counter("api");
  app.addHook("onRoute", (route) => {
    const own = route.config?.rateLimit;
    const limit = own ?? api;
    if (!limit) return;
    const hook = limiter(limit, own ? counter(`${route.method}:${route.url}`) : apiCounter);
    route.onRequest = route.onRequest === undefined ? [hook] : [...[route.onRequest].flat(), hook];
  });
  if (!api) return { spend: () => [] };
  if (!(apiCounter instanceof LocalCounter)) return undefined;
  return {
    spend(key) {
      const spent = apiCounter.spendUnder(key, api.windowMs, api.max);
      if (spent === undefined) return undefined;
      const { remaining, reset } = left(api, spent);
      return ["x-ratelimit-limit", String(api.max), "x-ratelimit-remaining", remaining, "x-ratelimit-reset", reset];
    },
  };
}

/**
 * The API-wide budget as spent by a request answered outside Fastify's hooks (fast-prices.ts), which
 * needs its answer at once: counted in this process only.
 */
export interface ApiBudget {
  /**
   * Spends one request of the key's budget as the hook would, and gives the answer's x-ratelimit-*
   * headers as name, value, name, value (none when there is no limit); undefined, spending nothing, once
   * the budget is spent, for the hook to refuse the request.
   */
  spend(key: string): string[] | undefined;
}

/**
 * A budget spent in a route's handler, for what only the handler knows of (whose password a request
 * checks): each call spends one of the key's `max` a window, and throws rate_limited with Retry-After
 * once they are spent. Counted where the request budgets are (Redis when there is one); a Redis that
 * fails lets the request through, as theirs does.
 */
export function handlerBudget(scope: string, limit: Omit<RateLimit, "key">, redis: Redis | undefined): (key: string) => Promise<void> {
  const counter: Counter = redis ? new RedisCounter(redis, `ratelimit:${scope}:`) : new LocalCounter();
  return async (key) => {
    const spent = await Promise.resolve(counter.spend(key, limit.windowMs)).catch(() => undefined);
    if (spent !== undefined && spent.count > limit.max) throw refusal(left(limit, spent).reset);
  };
}

/** What x-ratelimit-remaining and x-ratelimit-reset say: requests left in the window, and its seconds left (at least 1). */
function left(limit: Pick<RateLimit, "max">, spent: Spent): { remaining: string; reset: string } {
  return { remaining: String(Math.max(0, limit.max - spent.count)), reset: String(Math.max(1, Math.ceil((spent.endsAt - Date.now()) / 1000))) };
}

function limiter(limit: RateLimit, counter: Counter): onRequestHookHandler {
  return (req, reply, done) => {
    const spent = counter.spend(limit.key(req), limit.windowMs);
    if (spent instanceof Promise) spent.then((s) => done(verdict(limit, s, reply)), () => done());
    else done(verdict(limit, spent, reply));
  };
}

/** Sets the budget's headers; the error that refuses the request once the budget is spent. */
function verdict(limit: RateLimit, spent: Spent, reply: FastifyReply): AppError | undefined {
  const { remaining, reset } = left(limit, spent);
  reply.header("x-ratelimit-limit", limit.max);
  reply.header("x-ratelimit-remaining", remaining);
  reply.header("x-ratelimit-reset", reset);
  return spent.count <= limit.max ? undefined : refusal(reset);
}

function refusal(reset: string): AppError {
  return new AppError("rate_limited", `Too many requests: try again in ${reset} s.`, { retry_after_seconds: Number(reset) }, { "retry-after": reset });
}
