import { microToNumber, ONE, type PriceMicro, type ShareMicro } from "../domain/money.ts";
import { averageCost, positionBook, unrealizedPnl, type PositionBook, type PositionMove } from "../domain/pnl.ts";
import type { Outcome } from "../domain/types.ts";
import type { UnifiedEvent } from "../markets/catalog.ts";
import type { OrderRecord, RedemptionRecord, Store } from "../store/store.ts";

/** A move of one of the account's positions, and when it took effect. */
export interface DatedMove {
  eventId: string;
  outcome: Outcome;
  /** ISO time the shares moved: an order's settlement, a redemption's transaction. */
  at: string;
  /** Orders the moves of one instant: the order or redemption id. */
  ref: string;
  move: PositionMove;
}

/** The moves of the account's orders that filled, buys and sells: each settled with its last update. */
export function orderMoves(orders: readonly OrderRecord[]): DatedMove[] {
  return orders
    .filter((o) => (o.status === "filled" || o.status === "partially_filled") && o.filledShares > 0n)
    .map((o) => ({
      eventId: o.eventId,
      outcome: o.outcome,
      at: o.updatedAt,
      ref: o.id,
      move: o.side === "sell" ? { kind: "sell", shares: o.filledShares, proceeds: o.proceeds } : { kind: "buy", shares: o.filledShares, cost: o.spent },
    }));
}

/** The moves of the account's redemptions the chain made: each removes the shares it burned for its payout. */
export function redemptionMoves(redemptions: readonly RedemptionRecord[]): DatedMove[] {
  return redemptions
    .filter((r) => r.status === "redeemed")
    .map((r) => ({ eventId: r.eventId, outcome: r.outcome, at: r.updatedAt, ref: r.key, move: { kind: "redeem", shares: r.shares, payout: r.payout } }));
}

const positionKey = (eventId: string, outcome: Outcome) => `${eventId}\u0000${outcome}`;

/** Each position's book (pnl.ts), keyed by event and outcome, from its moves taken in the order they happened. */
export function positionBooks(moves: readonly DatedMove[]): Map<string, { book: PositionBook; closed: boolean }> {
  const byPosition = new Map<string, DatedMove[]>();
  for (const m of moves) {
    const key = positionKey(m.eventId, m.outcome);
    byPosition.set(key, [...(byPosition.get(key) ?? []), m]);
  }
  const books = new Map<string, { book: PositionBook; closed: boolean }>();
  for (const [key, ms] of byPosition) {
    ms.sort((a, b) => (a.at !== b.at ? (a.at < b.at ? -1 : 1) : a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
    books.set(key, { book: positionBook(ms.map((m) => m.move)), closed: ms.some((m) => m.move.kind !== "buy") });
  }
  return books;
}

/** Every order of the account, read a page at a time. */
export async function accountOrders(store: Store, accountId: string): Promise<OrderRecord[]> {
  const all: OrderRecord[] = [];
  let cursor: string | null = null;
  do {
    const page = await store.listOrders(accountId, { limit: 500, cursor });
    all.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return all;
}

export interface HeldToken {
  eventId: string;
  outcome: Outcome;
  sot: string;
  /** The token's balance on chain: the shares held and free to sell. */
  shares: ShareMicro;
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
}

/**
 * The account's positions with their P&L: every token it holds shares of, and every one it sold or had
 * redeemed (shares 0, its realized P&L kept). `mark` is what selling a share nets now, null with no bid.
 */
export function positionViews(
  held: readonly HeldToken[],
  books: ReadonlyMap<string, { book: PositionBook; closed: boolean }>,
  mark: (eventId: string, outcome: Outcome) => PriceMicro | null,
): PositionView[] {
  const empty = { book: { shares: 0n, cost: 0n, realized: 0n }, closed: false };
  return held
    .map((h) => ({ h, ...(books.get(positionKey(h.eventId, h.outcome)) ?? empty) }))
    .filter(({ h, closed }) => h.shares > 0n || closed)
    .map(({ h, book }) => {
      const m = mark(h.eventId, h.outcome);
      const avg = averageCost(book);
      return {
        event_id: h.eventId,
        outcome: h.outcome,
        sot: h.sot,
        shares: microToNumber(h.shares),
        avg_cost: avg === null ? null : microToNumber(avg),
        mark_price: m === null ? null : microToNumber(m),
        unrealized_pnl_usdc: m === null ? null : microToNumber(unrealizedPnl(book, m)),
        realized_pnl_usdc: microToNumber(book.realized),
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
