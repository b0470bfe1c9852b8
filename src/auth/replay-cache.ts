import type { Clock } from "../domain/types.ts";
import type { Store } from "../store/store.ts";

/**
 * The signatures already accepted, shared by every instance: a signed request replayed to any of them
 * is refused. In the store's table by default, in Redis when REDIS_URL is set.
 */
export interface ReplayCache {
  /** Records a signature as seen until `expiresAt` (ms). Returns false if it was already seen: a replay. */
  remember(apiKey: string, signature: string, expiresAt: number): Promise<boolean>;
  /** Whether a signature is recorded and its record not expired, recording nothing. */
  seen(apiKey: string, signature: string): Promise<boolean>;
  /** Forgets what expired before `now` (ms), where entries do not expire by themselves. */
  purge(now: number): Promise<void>;
}

export function storeReplayCache(store: Store): ReplayCache {
  return {
    remember: (apiKey, signature, expiresAt) => store.rememberSignature(apiKey, signature, expiresAt),
    seen: (apiKey, signature) => store.signatureSeen(apiKey, signature),
    purge: (now) => store.purgeSignatures(now),
  };
}

/** What the Redis replay cache needs of a client: ioredis's SET, with its NX and PX flags, and EXISTS. */
export interface RedisSet {
  set(key: string, value: string, px: "PX", ttlMs: number, nx: "NX"): Promise<"OK" | null>;
  exists(key: string): Promise<number>;
}

/**
 * One key per signature, set only if absent (SET NX: atomic, so two instances receiving the same copy
 * at once cannot both accept it) and expiring with the signature's window (PX), so nothing is purged.
 */
export function redisReplayCache(redis: RedisSet, clock: Clock): ReplayCache {
  return {
    remember: async (apiKey, signature, expiresAt) =>
      (await redis.set(`replay:${apiKey}:${signature}`, "1", "PX", Math.max(1, expiresAt - clock.now()), "NX")) === "OK",
    seen: async (apiKey, signature) => (await redis.exists(`replay:${apiKey}:${signature}`)) === 1,
    purge: async () => undefined,
  };
}
