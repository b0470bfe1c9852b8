import { generateKeyPairSync, randomUUID, type KeyObject } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { formatMicro, ONE } from "../../../domain/money.ts";
import type { Clock } from "../../../domain/types.ts";
import { MarketCatalog, simulatedVenueEvents, type CatalogEvent } from "../../../markets/catalog.ts";
import { KALSHI_SIM } from "../../simulated/profiles.ts";
import type { VenueMarket } from "../../venue.ts";
import { serveVenueSim, simExchange, SimFaults, type SimReply, type SimRequest, type VenueSim, type VenueSimOptions } from "../../net/sim-server.ts";
import { KALSHI_HEADERS, verifyKalshi, type KalshiCredentials } from "../signing.ts";
import { eventFee, formatCount, formatDollars, kalshiFeeModel, kalshiMarketFeeModel, KALSHI_TAKER_RATE_PPM, onPriceGrid, priceRanges, scheduledAt, seriesFee, seriesOf, type KalshiEventFee, type KalshiEventFeeChange, type KalshiSeriesFee, type KalshiSeriesFeeChange } from "../wire.ts";
import { KalshiOrderBook } from "./orders.ts";
import { KalshiStream } from "./stream.ts";

export const KALSHI_REST_PREFIX = "/trade-api/v2";
export const KALSHI_WS_PATH = "/trade-api/ws/v2";
/** Markets the simulated Kalshi lists beyond the catalog's: new questions for `crossfill events match` to place. */
const OWN_MARKETS = MarketCatalog.load(new URL("./own-markets.json", import.meta.url));
/** GET /markets?status=: the filter's values and the statuses each matches (docs.kalshi.com, Market Lifecycle). */
const STATUS_FILTER: Record<string, string[]> = {
  unopened: ["initialized"],
  open: ["active"],
  paused: ["inactive"],
  closed: ["closed", "determined", "disputed", "amended"],
  settled: ["finalized"],
};
/** How far a request's signed timestamp may be from the simulator's clock. */
const TIMESTAMP_WINDOW_MS = 60_000;
/**
 * What a multivariate (combo) event's series starts with, which `GET /events` leaves out ("excludes multivariate
 * events") and `GET /markets?mve_filter=exclude` too, its markets naming it their `mve_collection_ticker`. Assumed of
 * Kalshi's tickers; only the simulator relies on it.
 */
const MULTIVARIATE_SERIES = "KXMVE";
/** Whether a market (or event) is of a multivariate (combo) event. */
const isCombo = (ticker: string) => seriesOf(ticker).startsWith(MULTIVARIATE_SERIES);

export interface KalshiSimOptions extends VenueSimOptions {
  /**
   * How long a resolved market stays `determined` (its result known, its settlement timer running)
   * before it is `finalized` and paid out: its `settlement_timer_seconds` (default 0: paid at once).
   */
  settlementTimerMs?: number;
  /**
   * Fee overrides by event ticker, served on the event (`fee_type_override`, `fee_multiplier_override`) and
   * charged on its markets' fills; each field left out keeps the series' (default: no event overrides its series).
   */
  eventFees?: Record<string, KalshiEventFee>;
  /**
   * Fee changes scheduled on the series and events, listed by `GET /series/fee_changes` and `GET /events/fee_changes`
   * and applied at their `scheduled_ts` by the simulator's clock: to the fee the series and event state, and to
   * their markets' fills from then on.
   */
  feeChanges?: { series?: KalshiSeriesFeeChange[]; events?: KalshiEventFeeChange[] };
  /**
   * Markets served as `tapered_deci_cent` (TAPERED_RANGES): quoted on 0.001 steps and taking orders only on
   * their ranges' grid. Their books should lie in a tail (under 0.10 or over 0.90), the only part of the
   * grid with 0.001 steps: the engine quotes one step everywhere.
   */
  tapered?: string[];
  /**
   * How long after an order ends, or a fill is made, it moves past Kalshi's historical cutoff (`GET /historical/cutoff`):
   * from then on `GET /historical/orders` and `GET /historical/fills` list it, and `GET /portfolio/orders` and
   * `GET /portfolio/fills` no longer do (default: never; Kalshi keeps about three months live).
   */
  historicalAfterMs?: number;
}

/** `tapered_deci_cent`'s ranges (docs.kalshi.com, fixed_point_migration): 0.001 steps below 0.10 and above 0.90, 0.01 between. */
export const TAPERED_RANGES = [
  { start: "0.0000", end: "0.1000", step: "0.0010" },
  { start: "0.1000", end: "0.9000", step: "0.0100" },
  { start: "0.9000", end: "1.0000", step: "0.0010" },
];

export type KalshiSim = VenueSim<KalshiCredentials> & {
  /** Another trader takes up to `shares` contracts of what rests of an order (the `resting` fault): its maker fill's trade id, undefined when nothing rests. */
  takeResting(orderId: string, shares: bigint): string | undefined;
};

/**
 * Kalshi's trade API v2 on a loopback port: markets, events, series, orderbooks, V2 order creation and
 * cancellation, orders, fills and the orderbook_delta WebSocket channel, all RSA-PSS authenticated
 * with a key pair made at start, backed by the shared simulated exchange with the kalshi-sim profile.
 */
export async function startKalshiSim(opts: KalshiSimOptions): Promise<KalshiSim> {
  const eventFees = new Map(Object.entries(opts.eventFees ?? {}));
  const seriesFees = new Map<string, KalshiSeriesFee>();
  for (const l of simulatedVenueEvents(opts.catalog, OWN_MARKETS, KALSHI_SIM.id).flatMap((e) => e.listings)) {
    const s = seriesOf(l.venueMarketId);
    if (l.venue === KALSHI_SIM.id && !seriesFees.has(s)) seriesFees.set(s, { fee_type: "quadratic", fee_multiplier: multiplierOf(KALSHI_SIM.feeModel(l.feeRatePpm).ratePpm) });
  }
  const { clock, events, exchange, markets } = simExchange(opts, KALSHI_SIM, OWN_MARKETS);
  const tapered = new Set(opts.tapered ?? []);
  for (const t of tapered) exchange.setTick(t, 1_000n);
  const grid = (ticker: string) => (tapered.has(ticker) ? TAPERED_RANGES : [{ start: "0.0000", end: "1.0000", step: formatDollars(exchange.market(ticker)!.tickSize) }]);
  /**
   * Charges the markets `which` selects the fee their series and event state now; the others keep their
   * listing's rate, which a series' multiplier (six decimals) may not state exactly.
   */
  const charge = (which: (ticker: string) => boolean) => {
    for (const m of exchange.markets()) {
      const t = m.venueMarketId;
      if (which(t)) exchange.setFeeModel(t, kalshiMarketFeeModel(seriesFees.get(seriesOf(t))!, eventFees.get(eventTickerOf(t)) ?? {}));
    }
  };
  charge((t) => eventFees.has(eventTickerOf(t)));
  const seriesChanges = timeline(opts.feeChanges?.series, (c) => {
    seriesFees.set(c.series_ticker, seriesFee(c));
    charge((t) => seriesOf(t) === c.series_ticker);
  });
  const eventChanges = timeline(opts.feeChanges?.events, (c) => {
    eventFees.set(c.event_ticker, eventFee(c));
    charge((t) => eventTickerOf(t) === c.event_ticker);
  });
  // the simulator charges only the fees the adapter models: a change it could not charge is refused at start
  for (const c of seriesChanges.all) kalshiFeeModel(c.fee_type, c.fee_multiplier);
  for (const c of eventChanges.all) if (c.fee_type_override) kalshiFeeModel(c.fee_type_override, c.fee_multiplier_override ?? 1);
  /** Applies the changes whose time has come, in time order. */
  const applyDue = () => {
    seriesChanges.applyDue(clock.now());
    eventChanges.applyDue(clock.now());
  };
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const credentials: KalshiCredentials = { keyId: randomUUID(), privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString() };
  const settlementTimerMs = opts.settlementTimerMs ?? 0;
  const eventOf = new Map<string, CatalogEvent>();
  for (const e of events) for (const l of e.listings) if (l.venue === KALSHI_SIM.id) eventOf.set(l.venueMarketId, e);
  const stream: KalshiStream = new KalshiStream(exchange, () => faults.switches.streamSilent, () => clock.now());
  const faults: SimFaults = new SimFaults(exchange, stream.sockets);
  const onGrid = (ticker: string, yesPrice: bigint) => !exchange.market(ticker) || onPriceGrid(yesPrice, priceRanges({ price_ranges: grid(ticker) }));
  // the epoch where nothing is historical yet
  const cutoff = () => (opts.historicalAfterMs === undefined ? 0 : clock.now() - opts.historicalAfterMs);
  const orders = new KalshiOrderBook(exchange, randomUUID(), () => clock.now(), onGrid, cutoff);
  const auth = (method: string, path: string, headers: IncomingMessage["headers"]) => checkAuth(publicKey, credentials.keyId, clock, method, path, headers);

  const handle = (req: SimRequest): SimReply => {
    if (!req.path.startsWith(KALSHI_REST_PREFIX + "/")) return notFound();
    const route = req.path.slice(KALSHI_REST_PREFIX.length);
    const signed = req.headers[KALSHI_HEADERS.key.toLowerCase()] !== undefined;
    // market data is public on Kalshi, but a request that carries a signature must carry a good one; the account's orders and fills are not
    if (route.startsWith("/portfolio/") || route === "/historical/orders" || route === "/historical/fills" || signed) {
      const refusal = auth(req.method, req.path, req.headers);
      if (refusal) return refusal;
    }
    applyDue();
    const markets = exchange.markets();
    let m: RegExpExecArray | null;
    if (req.method === "GET" && route === "/markets") return listMarkets(markets, req.query);
    if (req.method === "GET" && (m = /^\/(historical\/)?markets\/([^/]+)$/.exec(route))) {
      // a market settled before the cutoff is served by GET /historical/markets/{ticker} only
      const market = exchange.market(decodeURIComponent(m[2]!));
      return market && settledBeforeCutoff(market.venueMarketId) === (m[1] !== undefined) ? ok({ market: kalshiMarket(market) }) : notFound("market");
    }
    if (req.method === "GET" && (m = /^\/markets\/([^/]+)\/orderbook$/.exec(route))) {
      const ticker = decodeURIComponent(m[1]!);
      if (!exchange.market(ticker)) return notFound("market");
      const depth = Number(req.query.get("depth") ?? "0");
      return ok({ orderbook_fp: orderbook(ticker, depth > 0 ? depth : Infinity) });
    }
    if (req.method === "GET" && route === "/series/fee_changes") {
      // "all upcoming series fee changes"; past ones with show_historical
      const series = req.query.get("series_ticker");
      const historical = req.query.get("show_historical") === "true";
      const list = (historical ? seriesChanges.all : seriesChanges.upcoming()).filter((c) => !series || c.series_ticker === series);
      return ok({ series_fee_change_arr: list });
    }
    if (req.method === "GET" && route === "/events/fee_changes") {
      // the endpoint has no show_historical: the simulator lists past changes too, which an adapter must not apply again
      const event = req.query.get("event_ticker");
      return page("event_fee_changes", eventChanges.all.filter((c) => !event || c.event_ticker === event), req.query);
    }
    if (req.method === "GET" && route === "/events") {
      const tickers = req.query.get("tickers")?.split(",").filter(Boolean);
      const listed = [...byEvent(markets)].filter(([e]) => !isCombo(e) && (!tickers || tickers.includes(e)));
      return page("events", listed.map(([e, ms]) => kalshiEvent(e, ms)), req.query, { byDefault: 200, max: 200 });
    }
    if (req.method === "GET" && (m = /^\/events\/([^/]+)$/.exec(route))) {
      const ticker = decodeURIComponent(m[1]!);
      const of = byEvent(markets).get(ticker);
      return of ? ok({ event: kalshiEvent(ticker, of), markets: of.map(kalshiMarket) }) : notFound("event");
    }
    if (req.method === "GET" && (m = /^\/series\/([^/]+)$/.exec(route))) {
      const market = markets.find((x) => seriesOf(x.venueMarketId) === decodeURIComponent(m![1]!));
      return market ? ok({ series: series(market) }) : notFound("series");
    }
    if (req.method === "POST" && route === "/portfolio/events/orders") {
      // an order whose client gave up before it reached the engine never executes (assumed of Kalshi: docs/venues/kalshi.md)
      if (req.connectionClosed()) return "cut";
      const out = orders.create(req.body);
      if (faults.switches.ackLost) return "cut";
      return out.kind === "created" ? { status: 201, body: out.body } : error(out.status, out.code, out.message, out.details);
    }
    if (req.method === "DELETE" && (m = /^\/portfolio\/events\/orders\/([^/]+)$/.exec(route))) {
      const out = orders.cancel(decodeURIComponent(m[1]!), req.query.get("market_ticker") ?? undefined);
      return out.kind === "cancelled" ? ok(out.body) : error(out.status, out.code, out.message, out.details);
    }
    if (req.method === "GET" && route === "/historical/cutoff") {
      const at = new Date(cutoff()).toISOString();
      return ok({ market_settled_ts: at, trades_created_ts: at, orders_updated_ts: at });
    }
    if (req.method === "GET" && (route === "/portfolio/orders" || route === "/historical/orders")) {
      const list = orders.listOrders(
        {
          ticker: req.query.get("ticker") ?? undefined,
          status: req.query.get("status") ?? undefined,
          minTs: timestamp(req.query.get("min_ts")),
          maxTs: timestamp(req.query.get("max_ts")),
        },
        route === "/historical/orders",
      );
      return page("orders", list, req.query, route === "/historical/orders" ? undefined : LIVE_LIST);
    }
    if (req.method === "GET" && (m = /^\/portfolio\/orders\/([^/]+)$/.exec(route))) {
      const order = orders.order(decodeURIComponent(m[1]!));
      return order ? ok({ order }) : notFound("order");
    }
    if (req.method === "GET" && route === "/portfolio/fills") {
      const list = orders.listFills({
        orderId: req.query.get("order_id") ?? undefined,
        ticker: req.query.get("ticker") ?? undefined,
        minTs: timestamp(req.query.get("min_ts")),
        maxTs: timestamp(req.query.get("max_ts")),
      });
      return page("fills", faults.switches.duplicateTrades ? list.flatMap((f) => [f, f]) : list, req.query, LIVE_LIST);
    }
    if (req.method === "GET" && route === "/historical/fills") {
      // Get Historical Fills filters by market and time, not by order
      const filter = { ticker: req.query.get("ticker") ?? undefined, minTs: timestamp(req.query.get("min_ts")), maxTs: timestamp(req.query.get("max_ts")) };
      return page("fills", orders.listFills(filter, true), req.query);
    }
    return notFound();
  };

  function kalshiMarket(market: VenueMarket): Record<string, unknown> {
    const event = eventOf.get(market.venueMarketId)!;
    const yes = exchange.book(market.venueMarketId, "YES");
    const no = exchange.book(market.venueMarketId, "NO");
    const dollars = (p: bigint | undefined) => (p === undefined ? "0.0000" : formatDollars(p));
    return {
      ticker: market.venueMarketId,
      event_ticker: eventTickerOf(market.venueMarketId),
      market_type: "binary",
      title: market.title,
      yes_sub_title: market.title,
      no_sub_title: market.title,
      created_time: "2026-01-01T00:00:00Z",
      updated_time: new Date(clock.now()).toISOString(),
      open_time: "2026-01-01T00:00:00Z",
      close_time: market.closeTime,
      latest_expiration_time: market.closeTime,
      ...settlement(market.venueMarketId),
      yes_bid_dollars: dollars(yes?.bids[0]?.price),
      yes_bid_size_fp: yes?.bids[0] ? formatCount(yes.bids[0].shares) : "0.00",
      yes_ask_dollars: dollars(yes?.asks[0]?.price),
      yes_ask_size_fp: yes?.asks[0] ? formatCount(yes.asks[0].shares) : "0.00",
      no_bid_dollars: dollars(no?.bids[0]?.price),
      no_ask_dollars: dollars(no?.asks[0]?.price),
      last_price_dollars: dollars(yes?.bids[0]?.price),
      // volume in contracts whose $1 notional adds up to the engine's traded notional
      volume_fp: formatCount((market.volume / ONE) * ONE),
      volume_24h_fp: "0.00",
      open_interest_fp: "0.00",
      notional_value_dollars: "1.0000",
      can_close_early: true,
      previous_yes_bid_dollars: "0.0000",
      previous_yes_ask_dollars: "0.0000",
      previous_price_dollars: "0.0000",
      expiration_value: "",
      rules_primary: event.description,
      rules_secondary: "",
      price_level_structure: tapered.has(market.venueMarketId) ? "tapered_deci_cent" : market.tickSize === 10_000n ? "linear_cent" : "deci_cent",
      price_ranges: grid(market.venueMarketId),
      ...(isCombo(market.venueMarketId) ? { mve_collection_ticker: seriesOf(market.venueMarketId) } : {}),
    };
  }

  /**
   * The market's status and result as its lifecycle stands: `active`, then `closed`, then `determined` with
   * its `result` while the settlement timer runs, then `finalized` (paid out) with its `settlement_ts`.
   */
  function settlement(ticker: string): Record<string, unknown> {
    const l = exchange.lifecycle(ticker)!;
    const timer = { settlement_timer_seconds: Math.round(settlementTimerMs / 1000) };
    if (l.state !== "resolved") return { ...timer, status: l.state === "open" ? "active" : "closed", result: "", settlement_ts: null };
    const settledAt = l.at + settlementTimerMs;
    const finalized = clock.now() >= settledAt;
    return { ...timer, status: finalized ? "finalized" : "determined", result: l.outcome.toLowerCase(), settlement_ts: finalized ? new Date(settledAt).toISOString() : null };
  }

  /** Whether the market was finalized (paid out) before the historical cutoff: past it, Kalshi serves it under /historical only. */
  function settledBeforeCutoff(ticker: string): boolean {
    const l = exchange.lifecycle(ticker)!;
    return l.state === "resolved" && l.at + settlementTimerMs < cutoff();
  }

  function series(market: VenueMarket): Record<string, unknown> {
    return {
      ticker: seriesOf(market.venueMarketId),
      frequency: "custom",
      title: market.title,
      category: "Economics",
      categories: [],
      tags: [],
      settlement_sources: [],
      contract_url: "",
      contract_terms_url: "",
      ...seriesFees.get(seriesOf(market.venueMarketId))!,
      additional_prohibitions: [],
    };
  }

  /** An event as `GET /events` and `GET /events/{event_ticker}` state it (`EventData`), its fee override null where it has none. */
  function kalshiEvent(ticker: string, of: VenueMarket[]): Record<string, unknown> {
    const event = eventOf.get(of[0]!.venueMarketId)!;
    return {
      event_ticker: ticker,
      series_ticker: seriesOf(ticker),
      sub_title: event.title,
      title: event.title,
      collateral_return_type: "binary",
      mutually_exclusive: false,
      settlement_sources: [],
      fee_type_override: eventFees.get(ticker)?.fee_type_override ?? null,
      fee_multiplier_override: eventFees.get(ticker)?.fee_multiplier_override ?? null,
    };
  }

  function listMarkets(markets: VenueMarket[], q: URLSearchParams): SimReply {
    const tickers = q.get("tickers")?.split(",").filter(Boolean);
    const status = q.get("status");
    const event = q.get("event_ticker");
    // combos: "'only' returns only multivariate events, 'exclude' excludes multivariate events"; by default both
    const mve = q.get("mve_filter");
    if (mve !== null && mve !== "only" && mve !== "exclude") return error(400, "invalid_parameters", "mve_filter must be only or exclude");
    const list = markets
      .filter((k) => !settledBeforeCutoff(k.venueMarketId))
      .map(kalshiMarket)
      .filter(
        (k) =>
          (!tickers || tickers.includes(k.ticker as string)) &&
          (!event || k.event_ticker === event) &&
          (mve === null || (mve === "only") === isCombo(k.ticker as string)) &&
          (!status || (STATUS_FILTER[status] ?? []).includes(k.status as string)),
      );
    return page("markets", list, q);
  }

  function orderbook(ticker: string, depth: number): { yes_dollars: [string, string][]; no_dollars: [string, string][] } {
    // Kalshi lists each side ascending, its best bid last
    const side = (outcome: "YES" | "NO") =>
      (exchange.book(ticker, outcome)?.bids ?? [])
        .slice(0, depth)
        .reverse()
        .map((l): [string, string] => [formatDollars(l.price), formatCount(l.shares)]);
    return { yes_dollars: side("YES"), no_dollars: side("NO") };
  }

  const sim = await serveVenueSim(opts, {
    profile: KALSHI_SIM,
    exchange,
    markets,
    faults,
    streams: stream.sockets,
    credentials,
    restPath: KALSHI_REST_PREFIX,
    wsPath: KALSHI_WS_PATH,
    handle,
    // Rate limits (docs.kalshi.com): a 429 carries `{"error": "too many requests"}` and no Retry-After
    retryAfter: false,
    errorBody: (status, code, message) => (status === 429 ? { error: "too many requests" } : { error: { code, message } }),
    upgrade: (req, socket, head) => {
      const path = new URL(req.url ?? "/", "http://sim").pathname;
      const refusal = path === KALSHI_WS_PATH ? auth("GET", path, req.headers) : notFound();
      if (refusal) {
        socket.end(`HTTP/1.1 ${refusal.status} ${refusal.status === 401 ? "Unauthorized" : "Not Found"}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
        return;
      }
      stream.sockets.accept(req, socket, head);
    },
  });
  return { ...sim, takeResting: (orderId, shares) => orders.takeResting(orderId, shares) };
}

function checkAuth(
  publicKey: KeyObject,
  keyId: string,
  clock: Clock,
  method: string,
  path: string,
  headers: IncomingMessage["headers"],
): Exclude<SimReply, "hang" | "cut"> | undefined {
  const key = headers[KALSHI_HEADERS.key.toLowerCase()];
  const timestamp = headers[KALSHI_HEADERS.timestamp.toLowerCase()];
  const signature = headers[KALSHI_HEADERS.signature.toLowerCase()];
  if (typeof key !== "string" || typeof timestamp !== "string" || typeof signature !== "string") {
    return error(401, "authentication_error", "missing KALSHI-ACCESS-* headers");
  }
  if (key !== keyId) return error(401, "authentication_error", "unknown API key");
  if (!/^\d+$/.test(timestamp) || Math.abs(clock.now() - Number(timestamp)) > TIMESTAMP_WINDOW_MS) {
    return error(401, "authentication_error", "timestamp outside the accepted window");
  }
  if (!verifyKalshi(publicKey, timestamp, method, path, signature)) return error(401, "authentication_error", "invalid signature");
  return undefined;
}

/** The simulator's markets by event ticker, in the order they are listed. */
function byEvent(markets: VenueMarket[]): Map<string, VenueMarket[]> {
  const out = new Map<string, VenueMarket[]>();
  for (const m of markets) {
    const e = eventTickerOf(m.venueMarketId);
    out.set(e, [...(out.get(e) ?? []), m]);
  }
  return out;
}

/** The event a simulated market belongs to: the first two dash-separated parts of its ticker (KXBTCD-26DEC31-T150000 → KXBTCD-26DEC31). */
function eventTickerOf(ticker: string): string {
  return ticker.split("-").slice(0, 2).join("-");
}

/** A fee rate as the series' `fee_multiplier` of Kalshi's general taker rate. */
function multiplierOf(ratePpm: bigint): number {
  return Number(formatMicro((ratePpm * ONE) / KALSHI_TAKER_RATE_PPM));
}

/** The limits of the account's live lists, GET /portfolio/orders and /portfolio/fills: 100 a page when not given, at most 200. */
const LIVE_LIST = { byDefault: 100, max: 200 };

/**
 * One page of a list, with Kalshi's opaque cursor ("" on the last page); `limit` as the endpoint takes it (GET /markets: 100
 * when not given, at most 1000), one outside 1 to its most refused 400 as the API's validation does.
 */
function page(key: string, list: unknown[], q: URLSearchParams, limits = { byDefault: 100, max: 1000 }): SimReply {
  const limit = Number(q.get("limit") ?? limits.byDefault);
  if (!Number.isInteger(limit) || limit < 1 || limit > limits.max) return error(400, "invalid_parameters", `limit must be between 1 and ${limits.max}`);
  const cursor = q.get("cursor");
  const start = cursor ? Number(Buffer.from(cursor, "base64url").toString("utf8")) || 0 : 0;
  const slice = list.slice(start, start + limit);
  const next = start + limit < list.length ? Buffer.from(String(start + limit), "utf8").toString("base64url") : "";
  return ok({ [key]: slice, cursor: next });
}

/** A Unix-seconds query parameter, undefined where it is not given. */
function timestamp(value: string | null): number | undefined {
  return value === null ? undefined : Number(value);
}

function ok(body: unknown): SimReply {
  return { status: 200, body };
}

/** Kalshi's error body: `details` only where there is something to add, as Kalshi leaves it out otherwise. */
function error(status: number, code: string, message: string, details?: string): Exclude<SimReply, "hang" | "cut"> {
  return { status, body: { error: { code, message, ...(details === undefined ? {} : { details }) } } };
}

function notFound(what = "route"): Exclude<SimReply, "hang" | "cut"> {
  return error(404, "not_found", `${what} not found`);
}

/**
 * Scheduled changes in time order, each applied once when its time has come; one whose `scheduled_ts` is not a
 * time (which a venue may list by mistake) is listed but never applied.
 */
function timeline<C extends { scheduled_ts: string }>(changes: C[] | undefined, apply: (c: C) => void): { all: C[]; upcoming: () => C[]; applyDue: (now: number) => void } {
  const at = (c: C) => scheduledAt(c) ?? Infinity;
  const all = [...(changes ?? [])].sort((a, b) => (at(a) < at(b) ? -1 : at(a) > at(b) ? 1 : 0));
  let applied = 0;
  return {
    all,
    upcoming: () => all.slice(applied),
    applyDue: (now) => {
      for (; applied < all.length && at(all[applied]!) <= now; applied++) apply(all[applied]!);
    },
  };
}
