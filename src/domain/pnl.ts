import { ceilDiv, ONE, proceedsOf, type Micro, type PriceMicro, type ShareMicro } from "./money.ts";

/**
 * One change to a position, in the order it happened: a buy adds shares at their cost (fees included), a
 * sell removes shares for its proceeds (after fees), a redemption removes shares for its payout (1 USDC a
 * winning share, 0 a losing one).
 */
export type PositionMove =
  | { kind: "buy"; shares: ShareMicro; cost: Micro }
  | { kind: "sell"; shares: ShareMicro; proceeds: Micro }
  | { kind: "redeem"; shares: ShareMicro; payout: Micro };

/** A position's standing by the average cost method, in exact micro units. */
export interface PositionBook {
  /** Shares held: bought less sold and redeemed. */
  shares: ShareMicro;
  /** The cost of the shares held: what buys cost, less the average cost of every share a sell or redemption removed. */
  cost: Micro;
  /** What sells and redemptions paid, less the average cost of the shares they removed. */
  realized: Micro;
}

/** A position with no move yet. */
export const EMPTY_BOOK: PositionBook = { shares: 0n, cost: 0n, realized: 0n };

/**
 * Takes one move into a position's book. A sell or redemption of `s` of the `S` shares held removes
 * `cost × s / S` of the cost, rounded up to the micro-USDC (a realized P&L is never overstated; the
 * shares still held keep the rest), and the last share removes all that is left.
 *
 * The store takes moves in as it finishes orders, which is not always the order the chain saw them in:
 * a buy settled on chain by a server killed before it stored the fill is finished by recovery, perhaps
 * after a sell of its shares finished. A removal beyond the shares held therefore leaves the book short
 * (negative shares, no cost), those shares' proceeds realized at no cost, and the buy that comes in later
 * covers them first: its cost for them is realized then (rounded up), the rest held. So the shares, and
 * realized less cost, come to the same whatever order the moves are taken in.
 */
export function applyMove(book: PositionBook, m: PositionMove): PositionBook {
  if (m.kind === "buy") {
    const short = book.shares < 0n ? -book.shares : 0n;
    const covered = m.shares < short ? m.shares : short;
    const coveredCost = covered === m.shares ? m.cost : ceilDiv(m.cost * covered, m.shares);
    return { shares: book.shares + m.shares, cost: book.cost + m.cost - coveredCost, realized: book.realized - coveredCost };
  }
  const held = book.shares > 0n ? book.shares : 0n;
  const removed = m.shares < held ? m.shares : held;
  const removedCost = removed === held ? book.cost : ceilDiv(book.cost * removed, held);
  return { shares: book.shares - m.shares, cost: book.cost - removedCost, realized: book.realized + (m.kind === "sell" ? m.proceeds : m.payout) - removedCost };
}

/** Folds a position's moves, in the order they happened, into its book. */
export function positionBook(moves: readonly PositionMove[]): PositionBook {
  return moves.reduce(applyMove, EMPTY_BOOK);
}

/** USDC per share the shares held cost, fees included, rounded up to the micro-USDC; null with none held. */
export function averageCost(book: PositionBook): PriceMicro | null {
  return book.shares <= 0n ? null : ceilDiv(book.cost * ONE, book.shares);
}

/**
 * What the shares held would gain or lose if sold at `mark` (USDC a share netted after fees): their value at
 * the mark, rounded down to the micro-USDC as a sale's proceeds are, less their cost. Equal to
 * (mark − avg_cost) × shares up to that rounding, and exact in total: realized + unrealized =
 * everything received + the value held − everything paid. A short book (see applyMove) is worth minus what
 * its missing shares fetch: its sold shares' proceeds are realized, their cost not yet.
 */
export function unrealizedPnl(book: PositionBook, mark: PriceMicro): Micro {
  return proceedsOf(mark, book.shares) - book.cost;
}
