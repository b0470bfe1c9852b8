import { createHash } from "node:crypto";
import { formatMicro, ONE } from "../../../domain/money.ts";
import type { Level } from "../../../domain/types.ts";
import type { CatalogEvent, CatalogListing } from "../../../markets/catalog.ts";
import type { SimLifecycle } from "../../simulated/exchange.ts";
import type { BookSnapshot, VenueMarket } from "../../venue.ts";

/**
 * One page of a listing as Polymarket pages them (`GET /markets`, `GET /data/trades`): the cursor is
 * the base64 of the offset, "MA==" the first page and "LTE=" (base64 of -1) past the last; undefined
 * for a cursor that is not one.
 */
export function cursorPage<T>(items: readonly T[], cursor: string, pageSize: number) {
  const offset = Number(Buffer.from(cursor, "base64").toString("utf8"));
  if (!Number.isInteger(offset) || offset < 0) return undefined;
  const data = items.slice(offset, offset + pageSize);
  const next = offset + pageSize < items.length ? String(offset + pageSize) : "-1";
  return { limit: pageSize, count: data.length, next_cursor: Buffer.from(next).toString("base64"), data };
}

/**
 * A market as `GET /markets` and `GET /markets/{condition_id}` list it: the CLOB's field names and types
 * (numbers where Polymarket sends numbers). A market that stopped trading is `closed`; once resolved, its
 * winning token is the `winner` and is priced 1, the other 0.
 */
export function renderMarket(event: CatalogEvent, listing: CatalogListing, m: VenueMarket, lifecycle: SimLifecycle, feeRateBps: bigint, mid: bigint | undefined) {
  const open = lifecycle.state === "open";
  const winner = lifecycle.state === "resolved" ? lifecycle.outcome : undefined;
  const price = (outcome: "YES" | "NO") => {
    if (winner) return winner === outcome ? 1 : 0;
    if (mid === undefined) return 0;
    return Number(formatMicro(outcome === "YES" ? mid : ONE - mid));
  };
  return {
    enable_order_book: true,
    active: open,
    closed: !open,
    archived: false,
    accepting_orders: open,
    accepting_order_timestamp: null,
    minimum_order_size: Number(formatMicro(m.minOrderShares)),
    minimum_tick_size: Number(formatMicro(m.tickSize)),
    condition_id: listing.venueMarketId,
    question_id: `0x${createHash("sha256").update(`question:${listing.venueMarketId}`).digest("hex")}`,
    question: event.title,
    description: event.description,
    market_slug: event.eventId,
    end_date_iso: event.closeTime,
    game_start_time: null,
    seconds_delay: 0,
    fpmm: "",
    maker_base_fee: 0,
    taker_base_fee: Number(feeRateBps),
    notifications_enabled: true,
    neg_risk: false,
    neg_risk_market_id: "",
    neg_risk_request_id: "",
    icon: "",
    image: "",
    rewards: { rates: null, min_size: 0, max_spread: 0 },
    is_50_50_outcome: false,
    tokens: [
      { token_id: listing.outcomeIds.YES, outcome: "Yes", price: price("YES"), winner: winner === "YES" },
      { token_id: listing.outcomeIds.NO, outcome: "No", price: price("NO"), winner: winner === "NO" },
    ],
    tags: [],
  };
}

export interface WireLevel {
  price: string;
  size: string;
}

/**
 * A book summary as `GET /book` answers it. Levels come worst to best (bids ascending, asks
 * descending), as Polymarket sends them, and the hash is clob-client's: SHA-1 of the summary's
 * JSON with an empty hash.
 */
export function renderBook(book: BookSnapshot, assetId: string, m: VenueMarket, lastTradePrice: bigint | undefined) {
  const summary = {
    market: book.venueMarketId,
    asset_id: assetId,
    timestamp: String(book.updatedAt),
    hash: "",
    bids: [...book.bids].reverse().map(wireLevel),
    asks: [...book.asks].reverse().map(wireLevel),
    min_order_size: formatMicro(m.minOrderShares),
    tick_size: formatMicro(m.tickSize),
    neg_risk: false,
    last_trade_price: lastTradePrice === undefined ? "" : formatMicro(lastTradePrice),
  };
  summary.hash = createHash("sha1").update(JSON.stringify(summary)).digest("hex");
  return summary;
}

function wireLevel(l: Level): WireLevel {
  return { price: formatMicro(l.price), size: formatMicro(l.shares) };
}

/** The `book` event of the market channel for one token. */
export function bookEvent(summary: ReturnType<typeof renderBook>) {
  return { event_type: "book", asset_id: summary.asset_id, market: summary.market, bids: summary.bids, asks: summary.asks, timestamp: summary.timestamp, hash: summary.hash };
}
