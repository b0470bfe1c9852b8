import { describe, expect, it } from "vitest";
import { QueuedChildren } from "./queued-children.ts";

describe("QueuedChildren", () => {
  it("counts each venue's child orders from their plan until they are placed, or their order forgotten", () => {
    const q = new QueuedChildren();
    q.planned("a", ["lim", "poly"]);
    q.planned("b", ["lim"]);
    expect([q.ahead("lim"), q.ahead("poly"), q.ahead("kal")]).toEqual([2, 1, 0]);
    q.placing("a", "lim");
    expect([q.ahead("lim"), q.ahead("poly")]).toEqual([1, 1]);
    // A child order placed twice, or one never planned, counts off nothing more.
    q.placing("a", "lim");
    q.placing("c", "poly");
    expect([q.ahead("lim"), q.ahead("poly")]).toEqual([1, 1]);
    // An order that ends without placing what it planned (refused, interrupted) leaves nothing behind.
    q.forget("a");
    q.forget("b");
    expect([q.ahead("lim"), q.ahead("poly")]).toEqual([0, 0]);
    q.planned("a", ["lim"]);
    expect(q.ahead("lim")).toBe(1);
  });
});
