import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ONE } from "./money.ts";
import { averageCost, positionBook, unrealizedPnl, type PositionMove } from "./pnl.ts";

const usdc = (n: number) => BigInt(Math.round(n * 1e6));

/** Sequences a vault allows: every sell or redemption removes at most the shares held. */
const moves = fc
  .array(
    fc.record({
      kind: fc.constantFrom("buy", "buy", "sell", "redeem"),
      part: fc.bigInt({ min: 1n, max: 1_000_000n }),
      shares: fc.bigInt({ min: 1n, max: 10_000n * ONE }),
      price: fc.bigInt({ min: 1n, max: ONE }),
    }),
    { maxLength: 20 },
  )
  .map((raw) => {
    let held = 0n;
    const out: PositionMove[] = [];
    for (const r of raw) {
      if (r.kind === "buy") {
        held += r.shares;
        out.push({ kind: "buy", shares: r.shares, cost: (r.shares * r.price) / ONE + 1n });
      } else if (held > 0n) {
        const shares = (held * r.part + ONE - 1n) / ONE;
        held -= shares;
        const paid = (shares * r.price) / ONE;
        out.push(r.kind === "sell" ? { kind: "sell", shares, proceeds: paid } : { kind: "redeem", shares, payout: r.price === ONE ? shares : 0n });
      }
    }
    return out;
  });
const mark = fc.bigInt({ min: 0n, max: ONE });

const received = (ms: readonly PositionMove[]) => ms.reduce((s, m) => s + (m.kind === "sell" ? m.proceeds : m.kind === "redeem" ? m.payout : 0n), 0n);
const paid = (ms: readonly PositionMove[]) => ms.reduce((s, m) => s + (m.kind === "buy" ? m.cost : 0n), 0n);

describe("position P&L by average cost", () => {
  it("realizes a partial sell against the average cost and keeps the rest at it", () => {
    const book = positionBook([
      { kind: "buy", shares: usdc(60), cost: usdc(27) },
      { kind: "buy", shares: usdc(40), cost: usdc(23) },
      { kind: "sell", shares: usdc(40), proceeds: usdc(24) },
    ]);
    expect(book).toEqual({ shares: usdc(60), cost: usdc(30), realized: usdc(4) });
    expect(averageCost(book)).toBe(usdc(0.5));
    expect(unrealizedPnl(book, usdc(0.55))).toBe(usdc(3));
  });

  it("pays a winning redemption 1 a share and books a losing one's whole cost as lost", () => {
    const won = positionBook([{ kind: "buy", shares: usdc(10), cost: usdc(4.2) }, { kind: "redeem", shares: usdc(10), payout: usdc(10) }]);
    expect(won).toEqual({ shares: 0n, cost: 0n, realized: usdc(5.8) });
    expect(averageCost(won)).toBeNull();
    const lost = positionBook([{ kind: "buy", shares: usdc(10), cost: usdc(4.2) }, { kind: "redeem", shares: usdc(10), payout: 0n }]);
    expect(lost.realized).toBe(-usdc(4.2));
  });

  it("rounds a partial removal's cost up, so a realized gain is never overstated", () => {
    const book = positionBook([{ kind: "buy", shares: 3n, cost: 1n }, { kind: "sell", shares: 1n, proceeds: 0n }]);
    expect(book).toEqual({ shares: 2n, cost: 0n, realized: -1n });
  });

  it("adds realized and unrealized to everything received, plus the value held, less everything paid", () => {
    fc.assert(
      fc.property(moves, mark, (ms, m) => {
        const book = positionBook(ms);
        return book.realized + unrealizedPnl(book, m) === received(ms) + (m * book.shares) / ONE - paid(ms);
      }),
    );
  });

  it("gives nothing to a buy sold whole for what it cost", () => {
    fc.assert(
      fc.property(moves, fc.bigInt({ min: 1n, max: 10n ** 12n }), fc.bigInt({ min: 0n, max: 10n ** 12n }), (before, shares, cost) => {
        const base = positionBook(before);
        const after = positionBook([...before, { kind: "buy", shares: base.shares + shares, cost }, { kind: "sell", shares: 2n * base.shares + shares, proceeds: base.cost + cost }]);
        return after.shares === 0n && after.cost === 0n && after.realized === base.realized;
      }),
    );
  });

  it("only lowers realized and unrealized P&L when a fee is paid on a buy or taken from a sell", () => {
    fc.assert(
      fc.property(moves, fc.nat(), fc.bigInt({ min: 1n, max: 10n ** 9n }), mark, (ms, at, fee, m) => {
        if (ms.length === 0) return true;
        const i = at % ms.length;
        const move = ms[i]!;
        if (move.kind === "redeem" || (move.kind === "sell" && move.proceeds < fee)) return true;
        const charged = ms.map((x, j) => (j !== i ? x : x.kind === "buy" ? { ...x, cost: x.cost + fee } : x.kind === "sell" ? { ...x, proceeds: x.proceeds - fee } : x));
        const [plain, fees] = [positionBook(ms), positionBook(charged)];
        return fees.realized <= plain.realized && unrealizedPnl(fees, m) <= unrealizedPnl(plain, m) && fees.realized + unrealizedPnl(fees, m) === plain.realized + unrealizedPnl(plain, m) - fee;
      }),
    );
  });

  it("books a sell stored before the buy it sold as short, and the buy's cost for those shares as realized when it comes", () => {
    const short = positionBook([{ kind: "sell", shares: usdc(10), proceeds: usdc(6) }]);
    expect(short).toEqual({ shares: -usdc(10), cost: 0n, realized: usdc(6) });
    expect(averageCost(short)).toBeNull();
    expect(unrealizedPnl(short, usdc(0.55))).toBe(-usdc(5.5));
    const covered = positionBook([{ kind: "sell", shares: usdc(10), proceeds: usdc(6) }, { kind: "buy", shares: usdc(30), cost: usdc(15) }]);
    expect(covered).toEqual({ shares: usdc(20), cost: usdc(10), realized: usdc(1) });
    expect(averageCost(covered)).toBe(usdc(0.5));
  });

  it("comes to the same shares, realized less cost, and realized plus unrealized whatever order the moves are taken in", () => {
    const shuffled = moves.chain((ms) => fc.tuple(fc.constant(ms), fc.shuffledSubarray(ms, { minLength: ms.length, maxLength: ms.length })));
    fc.assert(
      fc.property(shuffled, mark, ([ms, late], m) => {
        const [inOrder, taken] = [positionBook(ms), positionBook(late)];
        return (
          taken.shares === inOrder.shares &&
          taken.realized - taken.cost === inOrder.realized - inOrder.cost &&
          taken.realized + unrealizedPnl(taken, m) === received(ms) + (m * taken.shares) / ONE - paid(ms) &&
          (taken.shares > 0n || taken.cost === 0n)
        );
      }),
    );
  });

  it("states an average cost that covers the shares' cost by less than a micro-USDC a share", () => {
    fc.assert(
      fc.property(moves, (ms) => {
        const book = positionBook(ms);
        const avg = averageCost(book);
        if (book.shares === 0n) return avg === null && book.cost === 0n;
        return avg! * book.shares >= book.cost * ONE && avg! * book.shares - book.cost * ONE < book.shares;
      }),
    );
  });
});
