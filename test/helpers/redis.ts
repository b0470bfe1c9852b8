import { randomBytes } from "node:crypto";
import { openRedis, type Redis } from "../../src/redis.ts";

/** TEST_REDIS_URL (`.ci/run` sets it): a test that needs Redis fails without it, it never skips. */
export function testRedisUrl(): string {
  const url = process.env.TEST_REDIS_URL;
  if (!url) throw new Error("TEST_REDIS_URL is not set: these tests need a Redis server (e.g. redis://127.0.0.1:6379).");
  return url;
}

/** A key prefix of its own for each test, so that tests sharing one Redis never see each other's keys. */
export function testRedisPrefix(): string {
  return `crossfill-test:${randomBytes(6).toString("hex")}:`;
}

/** The settings that put a test server on TEST_REDIS_URL, under `prefix` (shared by the servers that must share state). */
export function redisEnv(prefix: string): Record<string, string> {
  return { REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix };
}

/** A client on TEST_REDIS_URL under `prefix`; the caller quits it. */
export function testRedis(prefix: string): Promise<Redis> {
  return openRedis(testRedisUrl(), { prefix });
}
