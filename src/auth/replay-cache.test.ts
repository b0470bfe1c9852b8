import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { testRedis, testRedisPrefix } from "../../test/helpers/redis.ts";
import type { Redis } from "../redis.ts";
import { redisReplayCache } from "./replay-cache.ts";

const clock = { now: () => Date.now() };

describe("the Redis replay cache (TEST_REDIS_URL)", () => {
  let a: Redis;
  let b: Redis;

  beforeEach(async () => {
    const prefix = testRedisPrefix();
    // Two connections: two instances of the server on one Redis.
    a = await testRedis(prefix);
    b = await testRedis(prefix);
  });
  afterEach(async () => {
    await a.quit();
    await b.quit();
  });

  it("accepts a signature once, on whichever instance sees it first", async () => {
    const one = redisReplayCache(a, clock);
    const two = redisReplayCache(b, clock);
    const until = clock.now() + 60_000;
    expect(await one.remember("ck_1", "aa", until)).toBe(true);
    expect(await two.remember("ck_1", "aa", until)).toBe(false);
    expect(await one.remember("ck_1", "aa", until)).toBe(false);
    // per key and per signature
    expect(await two.remember("ck_1", "bb", until)).toBe(true);
    expect(await two.remember("ck_2", "aa", until)).toBe(true);
    // seen reads, recording nothing
    expect([await two.seen("ck_1", "aa"), await one.seen("ck_1", "ee")]).toEqual([true, false]);
    expect(await one.remember("ck_1", "ee", until)).toBe(true);
  });

  it("lets exactly one of many simultaneous copies through", async () => {
    const caches = [redisReplayCache(a, clock), redisReplayCache(b, clock)];
    const until = clock.now() + 60_000;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => caches[i % 2]!.remember("ck_1", "cc", until)));
    expect(answers.filter(Boolean)).toHaveLength(1);
  });

  it("forgets a signature when its window has passed, by itself", async () => {
    const cache = redisReplayCache(a, clock);
    // A window of a second, not of milliseconds: the replay must reach Redis within it to be refused, which a loaded machine's round trips need not.
    expect(await cache.remember("ck_1", "dd", clock.now() + 1_000)).toBe(true);
    expect(await cache.remember("ck_1", "dd", clock.now() + 1_000)).toBe(false);
    await new Promise((r) => setTimeout(r, 1_100));
    expect(await cache.remember("ck_1", "dd", clock.now() + 1_000)).toBe(true);
    expect(await a.pttl("replay:ck_1:dd")).toBeGreaterThan(0);
  });
});
