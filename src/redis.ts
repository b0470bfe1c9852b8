import { Redis } from "ioredis";

export type { Redis } from "ioredis";

/**
 * Connects to the Redis that instances share (REDIS_URL), or fails start-up with a sentence naming it.
 * Every key gets `prefix`, so several deployments, or test servers, can share one Redis.
 *
 * A command waits at most `commandTimeoutMs` and is tried again at most once while the connection is
 * re-established: a Redis that is gone fails the requests that need it within seconds (the replay
 * cache refuses to guess; the rate limit lets requests through) instead of holding them for ever.
 */
export async function openRedis(url: string, opts: { prefix: string; commandTimeoutMs?: number; onError?: (err: Error) => void }): Promise<Redis> {
  const redis = new Redis(url, {
    keyPrefix: opts.prefix,
    lazyConnect: true,
    commandTimeout: opts.commandTimeoutMs ?? 2_000,
    connectTimeout: 5_000,
    maxRetriesPerRequest: 1,
  });
  // ioredis reconnects by itself and reports each failure as an "error" event, which it prints to the console when nobody listens.
  redis.on("error", (err: Error) => opts.onError?.(err));
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw new Error(`Redis at REDIS_URL is unreachable: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return redis;
}
