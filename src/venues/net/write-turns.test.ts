import { describe, expect, it } from "vitest";
import { RateLimiter } from "./rate-limiter.ts";
import { WriteTurns } from "./write-turns.ts";
import { onFakeTime, resolvedAt } from "../../../test/helpers/fake-time.ts";

onFakeTime();

describe("WriteTurns", () => {
  it("places a child order whose turn has come at once, its retries queueing as any request", async () => {
    const turns = new WriteTurns(new RateLimiter(10, 1));
    await turns.take("c1");
    const throttle = turns.throttleFor("c1");
    // The first request spent the turn taken for it; the retry waits the 100 ms spacing.
    expect(await resolvedAt(throttle.acquire())).toBe(0);
    expect(await resolvedAt(throttle.acquire())).toBe(100);
  });

  it("queues a child order's turns in arrival order, one a tick of the write limit", async () => {
    const turns = new WriteTurns(new RateLimiter(10, 1));
    const order: [string, number][] = [];
    await resolvedAt(Promise.all(["a", "b", "c"].map((id) => turns.take(id).then(() => order.push([id, performance.now()])))));
    expect(order).toEqual([
      ["a", 0],
      ["b", 100],
      ["c", 200],
    ]);
  });

  it("lets the next child order have a turn given back unused, and gives back a spent one as nothing", async () => {
    const limiter = new RateLimiter(10, 1);
    const turns = new WriteTurns(limiter);
    await turns.take("a");
    turns.giveBack("a");
    expect(await resolvedAt(turns.take("b"))).toBe(0);
    await turns.throttleFor("b").acquire();
    turns.giveBack("b");
    // b's turn was spent by its placement: the next one waits its 100 ms.
    expect(await resolvedAt(turns.take("c"))).toBe(100);
    // A child order with no turn taken queues as any request.
    expect(turns.throttleFor("d")).toBe(limiter);
  });

  it("counts the child orders waiting for their turn", async () => {
    const turns = new WriteTurns(new RateLimiter(20, 1));
    await turns.take("a");
    const waiting = [turns.take("b"), turns.take("c")];
    expect(turns.waiting).toBe(2);
    await resolvedAt(Promise.all(waiting));
    expect(turns.waiting).toBe(0);
  });
});
