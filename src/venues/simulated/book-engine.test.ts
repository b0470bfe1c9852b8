import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ONE } from "../../domain/money.ts";
import { BookEngine, costOf, type TwoSidedBook } from "./book-engine.ts";
import { Rng } from "./prng.ts";

const engine = (seed: number, tick = 10_000n, anchor = 550_000n, lot = 10_000n) =>
  new BookEngine({ tick, lot, anchor, rng: new Rng(seed) });

/** Why a book is malformed, or undefined when it is on its grid, inside (0, 1), sorted and uncrossed. */
function malformed(book: TwoSidedBook, tick: bigint, lot: bigint, maxLevels = 25): string | undefined {
  for (const [name, levels, order] of [["bids", book.bids, -1n], ["asks", book.asks, 1n]] as const) {
    if (levels.length > maxLevels) return `${name}: ${levels.length} levels`;
    for (let i = 0; i < levels.length; i++) {
      const l = levels[i]!;
      if (l.price <= 0n || l.price >= ONE || l.price % tick !== 0n) return `${name}: price ${l.price} off grid`;
      if (l.shares <= 0n || l.shares % lot !== 0n) return `${name}: size ${l.shares} off lot`;
      if (i > 0 && order * (l.price - levels[i - 1]!.price) <= 0n) return `${name}: not sorted best first`;
    }
  }
  if (book.bids[0] && book.asks[0] && book.bids[0].price >= book.asks[0].price) return "crossed";
  return undefined;
}

describe("BookEngine", () => {
  it("starts with a realistic two-sided book around its anchor", () => {
    const e = engine(7);
    const { bids, asks } = e.book("YES");
    expect(bids.length).toBeGreaterThanOrEqual(10);
    expect(asks.length).toBeGreaterThanOrEqual(10);
    expect(Math.abs(Number(asks[0]!.price) - 550_000)).toBeLessThan(30_000);
    for (const l of [...bids, ...asks]) {
      expect(l.shares).toBeGreaterThanOrEqual(10n * ONE);
      expect(l.shares).toBeLessThanOrEqual(3_001n * ONE);
    }
  });

  it("keeps every book on its tick and lot grid, inside (0, 1) and uncrossed, however it walks", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.constantFrom(10_000n, 1_000n),
        fc.constantFrom(10_000n, 1_000_000n),
        fc.bigInt({ min: 1n, max: ONE - 1n }),
        (seed, tick, lot, anchor) => {
          const e = engine(seed, tick, anchor, lot);
          for (let i = 0; i < 60; i++) {
            e.step();
            expect(malformed(e.book("YES"), tick, lot)).toBeUndefined();
            expect(malformed(e.book("NO"), tick, lot)).toBeUndefined();
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("replays exactly from a seed, and another seed gives another book", () => {
    const a = engine(99);
    const b = engine(99);
    const c = engine(100);
    for (let i = 0; i < 100; i++) [a, b, c].forEach((e) => e.step());
    expect(a.book("YES")).toEqual(b.book("YES"));
    expect(a.fairValue).toBe(b.fairValue);
    expect(a.book("YES")).not.toEqual(c.book("YES"));
  });

  it("moves: the book after some steps is not the book it started with", () => {
    const e = engine(3);
    const before = e.book("YES");
    for (let i = 0; i < 20; i++) e.step();
    expect(e.book("YES")).not.toEqual(before);
  });

  it("derives NO from YES: a NO ask at 1 − p is the YES bid at p, a NO bid the YES ask", () => {
    const e = engine(11);
    for (let i = 0; i < 10; i++) e.step();
    const yes = e.book("YES");
    const no = e.book("NO");
    expect(no.asks).toEqual(yes.bids.map((l) => ({ price: ONE - l.price, shares: l.shares })));
    expect(no.bids).toEqual(yes.asks.map((l) => ({ price: ONE - l.price, shares: l.shares })));
  });

  it("takes asks best first up to the limit and removes what it takes", () => {
    const e = engine(5);
    const asks = e.book("YES").asks;
    const limit = asks[2]!.price;
    const available = asks[0]!.shares + asks[1]!.shares + asks[2]!.shares;
    const taken = e.take("YES", limit, available + 1_000_000_000n);
    expect(taken).toEqual(asks.slice(0, 3));
    expect(e.book("YES").asks).toEqual(asks.slice(3));
  });

  it("takes part of a level and leaves the rest resting", () => {
    const e = engine(5);
    const best = e.book("YES").asks[0]!;
    const part = best.shares / 2n / 10_000n * 10_000n;
    expect(e.take("YES", best.price, part)).toEqual([{ price: best.price, shares: part }]);
    expect(e.book("YES").asks[0]).toEqual({ price: best.price, shares: best.shares - part });
  });

  it("buys NO by consuming YES bids, at 1 − the bid price", () => {
    const e = engine(21);
    const yesBids = e.book("YES").bids;
    const noLimit = ONE - yesBids[1]!.price;
    const taken = e.take("NO", noLimit, 10n ** 15n);
    expect(taken).toEqual(yesBids.slice(0, 2).map((l) => ({ price: ONE - l.price, shares: l.shares })));
    expect(e.book("YES").bids).toEqual(yesBids.slice(2));
  });

  it("spends a budget as a market buy does: each level's shares for what is left of it, more shares at better prices", () => {
    const e = engine(11);
    const [best, next] = e.book("YES").asks;
    const limit = next!.price;
    // the budget buys the limit's share count at the limit, and more at the best ask below it
    const budget = (limit * best!.shares) / ONE + 10n;
    const taken = e.spend("YES", limit, budget);
    expect(taken[0]).toEqual(best);
    expect(taken[1]!.price).toBe(limit);
    const spent = costOf(taken);
    expect(spent).toBeLessThanOrEqual(budget);
    expect(((budget - spent) * ONE) / limit).toBe(0n);
    expect(taken.reduce((s, l) => s + l.shares, 0n)).toBeGreaterThan(best!.shares);
    expect(e.spend("NO", 1n, ONE)).toEqual([]);
  });

  it("takes nothing when the limit is below the best ask", () => {
    const e = engine(8);
    const before = e.book("YES");
    expect(e.take("YES", before.asks[0]!.price - 10_000n, ONE)).toEqual([]);
    expect(e.book("YES")).toEqual(before);
  });

  it("sells into bids best first down to the limit, leaving a part level resting", () => {
    const e = engine(5);
    const bids = e.book("YES").bids;
    const part = bids[1]!.shares / 2n / 10_000n * 10_000n;
    const sold = e.sell("YES", bids[1]!.price, bids[0]!.shares + part);
    expect(sold).toEqual([bids[0], { price: bids[1]!.price, shares: part }]);
    expect(e.book("YES").bids).toEqual([{ price: bids[1]!.price, shares: bids[1]!.shares - part }, ...bids.slice(2)]);
  });

  it("sells NO into the NO bids, which are YES asks at 1 − the ask price, and nothing above the best bid", () => {
    const e = engine(21);
    const yesAsks = e.book("YES").asks;
    const noLimit = ONE - yesAsks[1]!.price;
    expect(e.sell("NO", noLimit, 10n ** 15n)).toEqual(yesAsks.slice(0, 2).map((l) => ({ price: ONE - l.price, shares: l.shares })));
    expect(e.book("YES").asks).toEqual(yesAsks.slice(2));
    const before = e.book("NO");
    expect(e.sell("NO", before.bids[0]!.price + 1_000n, ONE)).toEqual([]);
    expect(e.book("NO")).toEqual(before);
  });
});
