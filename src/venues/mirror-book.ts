import { ONE, type PriceMicro, type ShareMicro } from "../domain/money.ts";
import type { Level, Outcome } from "../domain/types.ts";
import type { BookSnapshot } from "./venue.ts";

/** Price levels keyed by price in micro-USDC, shares in micro-shares. */
export type LevelMap = Map<PriceMicro, ShareMicro>;

/**
 * Both outcomes from the YES token's book. A YES bid at p is an offer to sell NO at 1 − p (the
 * pair redeems for $1), so NO's asks are YES's bids flipped and NO's bids YES's asks flipped.
 */
export function booksFromLevels(venue: string, slug: string, bids: LevelMap, asks: LevelMap, updatedAt: number): Record<Outcome, BookSnapshot> {
  const yesBids = sorted(bids, -1n);
  const yesAsks = sorted(asks, 1n);
  const flip = (l: Level): Level => ({ price: ONE - l.price, shares: l.shares });
  return {
    YES: { venue, venueMarketId: slug, outcome: "YES", bids: yesBids, asks: yesAsks, updatedAt },
    NO: { venue, venueMarketId: slug, outcome: "NO", bids: yesAsks.map(flip), asks: yesBids.map(flip), updatedAt },
  };
}

function sorted(levels: LevelMap, dir: 1n | -1n): Level[] {
  return [...levels]
    .sort(([a], [b]) => (dir * (a - b) < 0n ? -1 : dir * (a - b) > 0n ? 1 : 0))
    .map(([price, shares]) => ({ price, shares }));
}
