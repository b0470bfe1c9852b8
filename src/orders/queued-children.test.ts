import { describe, expect, it } from "vitest";
import type { SellQuote, VenueQuote } from "../router/index.ts";
import { QueuedChildren, withoutHeld } from "./queued-children.ts";

const level = (price: bigint, shares: bigint) => ({ price, shares });
const leg = (venue: string, ...levels: { price: bigint; shares: bigint }[]) => ({ venue, venueMarketId: "m", levels });
const buy = (id: string) => ({ id, outcome: "YES" as const, side: "buy" as const });

describe("withoutHeld", () => {
  const book = [level(500_000n, 10_000_000n), level(510_000n, 5_000_000n), level(520_000n, 7_000_000n)];

  it("takes held shares off the level of the same price, keeping the order", () => {
    expect(withoutHeld(book, new Map([[510_000n, 2_000_000n]]))).toEqual([level(500_000n, 10_000_000n), level(510_000n, 3_000_000n), level(520_000n, 7_000_000n)]);
  });

  it("drops a level held whole or more, never leaving shares below zero", () => {
    const held = new Map([
      [500_000n, 10_000_000n],
      [520_000n, 9_000_000n],
    ]);
    expect(withoutHeld(book, held)).toEqual([level(510_000n, 5_000_000n)]);
  });

  it("takes shares held at a price the book no longer shows off nothing, and leaves a book with nothing held as it is", () => {
    expect(withoutHeld(book, new Map([[490_000n, 1_000_000n]]))).toEqual(book);
    expect(withoutHeld(book, undefined)).toBe(book);
    expect(withoutHeld([], new Map([[500_000n, 1n]]))).toEqual([]);
  });
});

describe("QueuedChildren", () => {
  it("counts each venue's child orders from their plan until they are placed, or their order forgotten", () => {
    const q = new QueuedChildren();
    q.planned(buy("a"), [leg("lim"), leg("poly")]);
    q.planned(buy("b"), [leg("lim")]);
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
    q.planned(buy("a"), [leg("lim")]);
    expect(q.ahead("lim")).toBe(1);
  });

  it("holds a child order's shares off its venue's book side from its plan until its answer", () => {
    const q = new QueuedChildren();
    const quote = (venue: string) => ({ venue, venueMarketId: "m", asks: [level(500_000n, 10_000_000n), level(510_000n, 10_000_000n)] }) as Partial<VenueQuote> as VenueQuote;
    const asks = (outcome: "YES" | "NO" = "YES") => q.buyQuotes([quote("lim"), quote("poly")], outcome).map((x) => x.asks);
    q.planned(buy("a"), [leg("lim", level(500_000n, 10_000_000n), level(510_000n, 4_000_000n))]);
    q.planned(buy("b"), [leg("lim", level(510_000n, 1_000_000n)), leg("poly", level(500_000n, 3_000_000n))]);
    expect(asks()).toEqual([[level(510_000n, 5_000_000n)], [level(500_000n, 7_000_000n), level(510_000n, 10_000_000n)]]);
    // Another outcome's asks, and the bids a sell reads, are other levels.
    expect(asks("NO")).toEqual([quote("lim").asks, quote("poly").asks]);
    const bids = { venue: "lim", venueMarketId: "m", bids: quote("lim").asks } as Partial<SellQuote> as SellQuote;
    expect(q.sellQuotes([bids], "YES")[0]!.bids).toEqual(bids.bids);
    // Placed, the child order still holds its shares: the venue has not matched them yet.
    q.placing("a", "lim");
    expect(asks()[0]).toEqual([level(510_000n, 5_000_000n)]);
    q.answered("a", "lim");
    expect(asks()[0]).toEqual([level(500_000n, 10_000_000n), level(510_000n, 9_000_000n)]);
    // A child order not placed yet has no answer to release it; its order forgotten, it holds nothing.
    q.answered("b", "poly");
    expect(asks()[1]).toEqual([level(500_000n, 7_000_000n), level(510_000n, 10_000_000n)]);
    q.forget("b");
    expect(asks()).toEqual([quote("lim").asks, quote("poly").asks]);
  });
});
