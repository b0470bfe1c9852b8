import { describe, expect, it, vi } from "vitest";
import { allOf, RateLimiter } from "./rate-limiter.ts";
import { onFakeTime, resolvedAt } from "../../../test/helpers/fake-time.ts";

onFakeTime();

describe("RateLimiter", () => {
  it("lets a burst through, then spaces requests at the rate", async () => {
    const limiter = new RateLimiter(10, 3);
    const turns = Array.from({ length: 6 }, () => limiter.acquire().then(() => performance.now()));
    await vi.runAllTimersAsync();
    // The burst was not spaced; the rest are, 100 ms apart.
    expect(await Promise.all(turns)).toEqual([0, 0, 0, 100, 200, 300]);
  });

  it("holds a request until every limit it counts against has room, and pauses them all", async () => {
    const general = new RateLimiter(1_000, 100);
    const endpoint = new RateLimiter(10, 1);
    const both = allOf([general, endpoint]);
    await both.acquire();
    expect(await resolvedAt(both.acquire())).toBe(100);
    both.pause(100);
    expect(await resolvedAt(general.acquire())).toBe(200);
  });

  it("tells how long a request asked for now would wait: the queue ahead of it at the rate, and any pause", async () => {
    const limiter = new RateLimiter(10, 1);
    expect(limiter.delayMs()).toBe(0);
    await limiter.acquire();
    const queued = Array.from({ length: 5 }, () => limiter.acquire());
    // Six requests ahead of a new one at ten a second.
    expect(limiter.delayMs()).toBe(600);
    // With four more to be asked for before it (planned, not yet sent), 400 ms more.
    expect(limiter.delayMs(4)).toBe(1_000);
    expect(allOf([new RateLimiter(100), limiter]).delayMs(4)).toBe(1_000);
    // Less what refilled meanwhile.
    await vi.advanceTimersByTimeAsync(50);
    expect(limiter.delayMs()).toBe(550);
    await resolvedAt(Promise.all(queued));
    expect(limiter.delayMs()).toBe(100);
    limiter.pause(1_000);
    expect(limiter.delayMs()).toBe(1_100);
    expect(allOf([new RateLimiter(100), limiter]).delayMs()).toBe(1_100);
  });

  it("lets a read-back ahead of every caller waiting in line, and counts it in the wait it tells", async () => {
    const limiter = new RateLimiter(20, 1);
    await limiter.acquire();
    const served: string[] = [];
    const line = Array.from({ length: 4 }, (_, i) => limiter.acquire().then(() => served.push(`line ${i}`)));
    const before = limiter.delayMs();
    const readBack = limiter.first().acquire().then(() => served.push("read-back"));
    // One request more ahead of a new caller: 50 ms at twenty a second.
    expect(limiter.delayMs() - before).toBe(50);
    await resolvedAt(Promise.all([...line, readBack]));
    expect(served).toEqual(["read-back", "line 0", "line 1", "line 2", "line 3"]);
  });
});
