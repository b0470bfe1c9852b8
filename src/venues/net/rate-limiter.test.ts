import { describe, expect, it } from "vitest";
import { allOf, RateLimiter } from "./rate-limiter.ts";

describe("RateLimiter", () => {
  it("lets a burst through, then spaces requests at the rate", async () => {
    const limiter = new RateLimiter(10, 3);
    const started = performance.now();
    for (let i = 0; i < 3; i++) await limiter.acquire();
    // Under the 100 ms spacing by a margin a busy machine's pause cannot eat: the burst was not spaced.
    expect(performance.now() - started).toBeLessThan(90);
    for (let i = 0; i < 3; i++) await limiter.acquire();
    expect(performance.now() - started).toBeGreaterThanOrEqual(280);
  });

  it("holds a request until every limit it counts against has room, and pauses them all", async () => {
    const general = new RateLimiter(1_000, 100);
    const endpoint = new RateLimiter(10, 1);
    const both = allOf([general, endpoint]);
    const started = performance.now();
    await both.acquire();
    await both.acquire();
    expect(performance.now() - started).toBeGreaterThanOrEqual(90);
    both.pause(100);
    const paused = performance.now();
    await general.acquire();
    expect(performance.now() - paused).toBeGreaterThanOrEqual(90);
  });

  it("tells how long a request asked for now would wait: the queue ahead of it at the rate, and any pause", async () => {
    const limiter = new RateLimiter(10, 1);
    expect(limiter.delayMs()).toBe(0);
    await limiter.acquire();
    const queued = Array.from({ length: 5 }, () => limiter.acquire());
    // Six requests ahead of a new one at ten a second, less what refilled meanwhile.
    expect(limiter.delayMs()).toBeGreaterThan(500);
    expect(limiter.delayMs()).toBeLessThanOrEqual(600);
    // With four more to be asked for before it (planned, not yet sent), 400 ms more.
    expect(limiter.delayMs(4)).toBeGreaterThan(900);
    expect(limiter.delayMs(4)).toBeLessThanOrEqual(1_000);
    expect(allOf([new RateLimiter(100), limiter]).delayMs(4)).toBeGreaterThan(900);
    await Promise.all(queued);
    expect(limiter.delayMs()).toBeLessThanOrEqual(100);
    limiter.pause(1_000);
    expect(limiter.delayMs()).toBeGreaterThan(900);
    expect(allOf([new RateLimiter(100), limiter]).delayMs()).toBeGreaterThan(900);
  });

  it("lets a read-back ahead of every caller waiting in line, and counts it in the wait it tells", async () => {
    const limiter = new RateLimiter(20, 1);
    await limiter.acquire();
    const served: string[] = [];
    const line = Array.from({ length: 4 }, (_, i) => limiter.acquire().then(() => served.push(`line ${i}`)));
    const before = limiter.delayMs();
    const readBack = limiter.first().acquire().then(() => served.push("read-back"));
    // One request more ahead of a new caller: 50 ms at twenty a second.
    expect(limiter.delayMs() - before).toBeGreaterThan(40);
    await Promise.all([...line, readBack]);
    expect(served).toEqual(["read-back", "line 0", "line 1", "line 2", "line 3"]);
  });
});
