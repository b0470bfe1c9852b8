import { ONE, type PriceMicro, type ShareMicro } from "../domain/money.ts";
import type { Level, Outcome } from "../domain/types.ts";
import type { BookSides } from "./venue.ts";

/** Price levels keyed by price in micro-USDC, shares in micro-shares. */
export type LevelMap = Map<PriceMicro, ShareMicro>;

/**
 * Both outcomes' sides from the YES token's book. A YES bid at p is an offer to sell NO at 1 − p (the
 * pair redeems for $1), so NO's asks are YES's bids flipped and NO's bids YES's asks flipped.
 */
export function mirroredSides(bids: LevelMap, asks: LevelMap): Record<Outcome, BookSides> {
  const yesBids = sorted(bids, -1);
  const yesAsks = sorted(asks, 1);
  const flip = (l: Level): Level => ({ price: ONE - l.price, shares: l.shares });
  return { YES: { bids: yesBids, asks: yesAsks }, NO: { bids: yesAsks.map(flip), asks: yesBids.map(flip) } };
}

/** The levels by price, ascending (dir 1) or descending (-1); compared, not subtracted: a BigInt difference is an allocation per comparison. */
function sorted(levels: LevelMap, dir: 1 | -1): Level[] {
  return [...levels]
    .sort(([a], [b]) => (a < b ? -dir : a > b ? dir : 0))
    .map(([price, shares]) => ({ price, shares }));
}
