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
  const yesBids = sorted(bids, -1n);
  const yesAsks = sorted(asks, 1n);
  const flip = (l: Level): Level => ({ price: ONE - l.price, shares: l.shares });
  return { YES: { bids: yesBids, asks: yesAsks }, NO: { bids: yesAsks.map(flip), asks: yesBids.map(flip) } };
}

function sorted(levels: LevelMap, dir: 1n | -1n): Level[] {
  return [...levels]
    .sort(([a], [b]) => (dir * (a - b) < 0n ? -1 : dir * (a - b) > 0n ? 1 : 0))
    .map(([price, shares]) => ({ price, shares }));
}
