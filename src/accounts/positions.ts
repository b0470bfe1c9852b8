import { microToNumber, ONE, type PriceMicro, type ShareMicro } from "../domain/money.ts";
import { averageCost, unrealizedPnl, type PositionBook } from "../domain/pnl.ts";
import type { MarketStatus, Outcome } from "../domain/types.ts";
import type { UnifiedEvent } from "../markets/catalog.ts";

/** A position of the account as the store books it, with what the chain holds of its token. */
export interface HeldPosition {
  eventId: string;
  outcome: Outcome;
  sot: string;
  /** The token's balance on chain: the shares held and free to sell. */
  shares: ShareMicro;
  book: PositionBook;
}

/** A position of GET /v1/account. */
export interface PositionView {
  event_id: string;
  outcome: string;
  sot: string;
  shares: number;
  avg_cost: number | null;
  mark_price: number | null;
  unrealized_pnl_usdc: number | null;
  realized_pnl_usdc: number;
  event_status: MarketStatus | null;
}

/**
 * The account's positions with their P&L: every one the store books, so every token it bought, whether it
 * still holds shares of it on chain, holds them all in a sell's escrow (shares 0, its book's shares still
 * held until the sell settles), or sold or had them redeemed (shares 0, its realized P&L kept). `mark` is
 * what selling a share nets now, null with no bid; `status` the event's (a position is sold only while it is open), null
 * for one the catalog no longer lists.
 */
export function positionViews(
  held: readonly HeldPosition[],
  mark: (eventId: string, outcome: Outcome) => PriceMicro | null,
  status: (eventId: string) => MarketStatus | null,
): PositionView[] {
  return held.map((h) => {
    const m = mark(h.eventId, h.outcome);
    const avg = averageCost(h.book);
    return {
      event_id: h.eventId,
      outcome: h.outcome,
      sot: h.sot,
      shares: microToNumber(h.shares),
      avg_cost: avg === null ? null : microToNumber(avg),
      mark_price: m === null ? null : microToNumber(m),
      unrealized_pnl_usdc: m === null ? null : microToNumber(unrealizedPnl(h.book, m)),
      realized_pnl_usdc: microToNumber(h.book.realized),
      event_status: status(h.eventId),
    };
  });
}

/**
 * What a share of the position is worth now: on a resolved event what it redeems for (1 USDC a winning
 * share, nothing a losing one), elsewhere what selling it nets at the best bid (`bestBid`), null without one.
 */
export function positionMark(event: UnifiedEvent, outcome: Outcome, bestBid: () => PriceMicro | null): PriceMicro | null {
  if (event.status === "resolved" && event.resolution !== null) return event.resolution === outcome ? ONE : 0n;
  return bestBid();
}
