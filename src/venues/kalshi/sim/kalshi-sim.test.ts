import { generateKeyPairSync } from "node:crypto";
import axios from "axios";
import { Configuration, MarketApi, OrdersApi, PortfolioApi, type CreateOrderV2Request } from "kalshi-typescript";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ONE } from "../../../domain/money.ts";
import { MarketCatalog } from "../../../markets/catalog.ts";
import { KalshiVenue } from "../kalshi-venue.ts";
import { startKalshiSim, type KalshiSim } from "./kalshi-sim.ts";

const catalog = MarketCatalog.load();
const TICKER = "KXFEDCUT-26DEC-T25";
const TAPERED = "KXTIMEPOY-26-AI";
let sim: KalshiSim;

beforeAll(async () => {
  sim = await startKalshiSim({ catalog, seed: 11, latencyScale: 0, tickMs: 40, tapered: [TAPERED] });
});
afterAll(async () => {
  await sim.stop();
});
afterEach(() => sim.faults.reset());

const until = async (cond: () => boolean, ms = 10_000) => {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
};

/**
 * One of the SDK's API classes. Each gets its own axios: the SDK installs its signing interceptor on the
 * instance it is given. any: the SDK types its axios parameter from its own copy of axios.
 */
const api = <T>(Api: new (...args: any[]) => T, c: Configuration) => new Api(c, undefined, axios.create());

describe("kalshi-typescript, Kalshi's published client, against the simulator", () => {
  const config = () => new Configuration({ basePath: sim.url, apiKey: sim.credentials.keyId, privateKeyPem: sim.credentials.privateKeyPem });
  const client = <T>(Api: new (...args: any[]) => T, c = config()) => api(Api, c);
  /**
   * An immediate-or-cancel bid for YES with 20 ticks of room above the best ask (capped below 1), in the SDK's
   * own request type: the book ticks every 40 ms, and may before the order arrives.
   */
  const iocBid = (clientOrderId: string, count: string, extra: Partial<CreateOrderV2Request> = {}): CreateOrderV2Request => {
    const tick = sim.exchange.market(TICKER)!.tickSize;
    const room = sim.exchange.book(TICKER, "YES")!.asks[0]!.price + 20n * tick;
    return {
      ticker: TICKER,
      client_order_id: clientOrderId,
      side: "bid",
      count,
      price: (Number(room < ONE ? room : ONE - tick) / 1e6).toFixed(2),
      time_in_force: "immediate_or_cancel",
      self_trade_prevention_type: "taker_at_cross",
      ...extra,
    };
  };

  it("serves a tapered market's price ranges, and refuses an order off them as invalid", async () => {
    const { market } = (await client(MarketApi).getMarket(TAPERED)).data;
    expect(market).toMatchObject({ price_level_structure: "tapered_deci_cent" });
    expect(market.price_ranges.map((r) => [r.start, r.end, r.step])).toEqual([
      ["0.0000", "0.1000", "0.0010"],
      ["0.1000", "0.9000", "0.0100"],
      ["0.9000", "1.0000", "0.0010"],
    ]);
    await expect(client(OrdersApi).createOrderV2({ ...iocBid("sdk-off-grid", "1"), ticker: TAPERED, price: "0.505" })).rejects.toMatchObject({
      response: { status: 400, data: { error: { code: "invalid_order" } } },
    });
  });

  it("lists markets with cursor pagination and reads an orderbook", async () => {
    const markets = client(MarketApi);
    const first = await markets.getMarkets(5);
    expect(first.data.markets).toHaveLength(5);
    expect(first.data.cursor).not.toBe("");
    const second = await markets.getMarkets(5, first.data.cursor);
    expect(second.data.markets[0]!.ticker).not.toBe(first.data.markets[0]!.ticker);
    const book = await markets.getMarketOrderbook(TICKER);
    const yes = book.data.orderbook_fp.yes_dollars;
    expect(yes.length).toBeGreaterThan(0);
    expect(Number(yes[yes.length - 1]![0])).toBeGreaterThan(Number(yes[0]![0]));
  });

  it("places a V2 order, then reads it back with its fills", async () => {
    const created = await client(OrdersApi).createOrderV2(iocBid("sdk-order-1", "2"));
    expect(created.status).toBe(201);
    expect(created.data.fill_count).toBe("2.00");
    const order = await client(OrdersApi).getOrder(created.data.order_id);
    expect(order.data.order.client_order_id).toBe("sdk-order-1");
    const fills = await client(PortfolioApi).getFills(undefined, created.data.order_id);
    expect(fills.data.fills.reduce((s, f) => s + Number(f.count_fp), 0)).toBe(2);
  });

  it("sells YES back with an ask on the one YES book, netted against the YES held; reduce_only caps an ask at the position and refuses one with nothing to reduce", async () => {
    // a market no other case trades, so that the position is this case's alone
    const ticker = sim.exchange.markets().find((m) => m.status === "open" && m.venueMarketId !== TICKER)!.venueMarketId;
    const dollars = (micro: bigint) => (Number(micro) / 1e6).toFixed(2);
    const ioc = (client_order_id: string, side: "bid" | "ask", price: string, count: string, extra: Partial<CreateOrderV2Request> = {}): CreateOrderV2Request => ({
      ticker,
      client_order_id,
      side,
      count,
      price,
      time_in_force: "immediate_or_cancel",
      self_trade_prevention_type: "taker_at_cross",
      ...extra,
    });
    const orders = client(OrdersApi);
    const bought = await orders.createOrderV2(ioc("sdk-sell-0", "bid", dollars(sim.exchange.book(ticker, "YES")!.asks[0]!.price + 50_000n), "3"));
    expect(bought.data.fill_count).toBe("3.00");
    const floor = dollars(sim.exchange.book(ticker, "YES")!.bids[0]!.price - 50_000n);
    const sold = await orders.createOrderV2(ioc("sdk-sell-1", "ask", floor, "5", { reduce_only: true }));
    expect(sold.data).toMatchObject({ fill_count: "3.00", remaining_count: "0.00" });
    expect((await orders.getOrder(sold.data.order_id)).data.order).toMatchObject({ initial_count_fp: "3.00", book_side: "ask", outcome_side: "no" });
    // a sell of YES is a fill toward NO, priced on the YES leg at or above the ask's price
    const fills = (await client(PortfolioApi).getFills(ticker, sold.data.order_id)).data.fills;
    expect(fills.every((f) => f.book_side === "ask" && f.outcome_side === "no" && Number(f.yes_price_dollars) >= Number(floor))).toBe(true);
    expect(fills.reduce((n, f) => n + Number(f.count_fp), 0)).toBe(3);
    await expect(orders.createOrderV2(ioc("sdk-sell-2", "ask", floor, "1", { reduce_only: true }))).rejects.toMatchObject({
      response: { status: 400, data: { error: { code: "invalid_order" } } },
    });
    // without reduce_only the same ask is taken: with no YES left it buys NO
    expect((await orders.createOrderV2(ioc("sdk-sell-3", "ask", floor, "1"))).data.fill_count).toBe("1.00");
    expect(sim.exchange.positions.held("own", ticker, "YES") - sim.exchange.positions.held("own", ticker, "NO")).toBe(-1_000_000n);
  });

  it("leaves a V2 order resting under the resting fault, cancels it with Cancel Order (V2), and reads it back cancelled", async () => {
    sim.faults.set({ resting: true });
    const orders = client(OrdersApi);
    const created = await orders.createOrderV2(iocBid("sdk-order-2", "2"));
    expect(created.data).toMatchObject({ fill_count: "1.00", remaining_count: "1.00" });
    expect((await orders.getOrder(created.data.order_id)).data.order).toMatchObject({ status: "resting", remaining_count_fp: "1.00" });
    // market_ticker: the client's auto-routing of the cancel to the order's exchange shard; routed by another market's, it finds nothing
    const other = sim.exchange.markets().find((m) => m.venueMarketId !== TICKER)!.venueMarketId;
    await expect(orders.cancelOrderV2(created.data.order_id, undefined, undefined, other)).rejects.toMatchObject({ response: { status: 404 } });
    const cancelled = await orders.cancelOrderV2(created.data.order_id, undefined, undefined, TICKER);
    expect(cancelled.data).toMatchObject({ order_id: created.data.order_id, client_order_id: "sdk-order-2", reduced_by: "1.00" });
    expect((await orders.getOrder(created.data.order_id)).data.order).toMatchObject({ status: "canceled", fill_count_fp: "1.00", remaining_count_fp: "0.00" });
    await expect(orders.cancelOrderV2(created.data.order_id)).rejects.toMatchObject({ response: { status: 404 } });
  });

  it("refuses an immediate-or-cancel V2 order that carries expiration_time, as Kalshi's Create Order (V2) says it cannot be combined, and keeps nothing of it", async () => {
    const expiring = client(OrdersApi).createOrderV2(iocBid("sdk-order-3", "1", { expiration_time: Math.floor(Date.now() / 1000) + 60 }));
    await expect(expiring).rejects.toMatchObject({
      response: { status: 400, data: { error: { code: "invalid_parameters", message: "immediate_or_cancel cannot be combined with expiration_time" } } },
    });
    expect((await client(OrdersApi).getOrders(TICKER)).data.orders.some((o) => o.client_order_id === "sdk-order-3")).toBe(false);
  });

  it("refuses a V2 order without self_trade_prevention_type, which Create Order (V2) requires, and keeps nothing of it", async () => {
    const unsure = client(OrdersApi).createOrderV2(iocBid("sdk-order-4", "1", { self_trade_prevention_type: undefined as never }));
    await expect(unsure).rejects.toMatchObject({
      response: { status: 400, data: { error: { code: "invalid_parameters", message: "self_trade_prevention_type must be taker_at_cross or maker" } } },
    });
    expect((await client(OrdersApi).getOrders(TICKER)).data.orders.some((o) => o.client_order_id === "sdk-order-4")).toBe(false);
  });

  it("refuses a page of the account's live fills or orders of more than 200, as Get Fills and Get Orders validate limit", async () => {
    await expect(client(PortfolioApi).getFills(TICKER, undefined, undefined, undefined, 1000)).rejects.toMatchObject({
      response: { status: 400, data: { error: { code: "invalid_parameters", message: "limit must be between 1 and 200" } } },
    });
    await expect(client(PortfolioApi).getFills(TICKER, undefined, undefined, undefined, 200)).resolves.toMatchObject({ status: 200 });
  });

  it("filters the account's live fills by min_ts and max_ts, as Get Fills does", async () => {
    await client(OrdersApi).createOrderV2(iocBid("sdk-ts-1", "1"));
    const fills = (from?: number, to?: number) => client(PortfolioApi).getFills(TICKER, undefined, from, to, 200).then((r) => r.data.fills);
    const all = await fills();
    const newest = Math.max(...all.map((f) => f.ts!));
    const since = await fills(newest);
    expect(since.length).toBeGreaterThan(0);
    expect(since.every((f) => f.ts === newest)).toBe(true);
    expect([...since, ...(await fills(undefined, newest - 1))].map((f) => f.trade_id).sort()).toEqual(all.map((f) => f.trade_id).sort());
  });

  it("lists every fill twice, under the same trade id, under the duplicate-trades fault", async () => {
    const once = await client(PortfolioApi).getFills(TICKER, undefined, undefined, undefined, 200);
    sim.faults.set({ duplicateTrades: true });
    const twice = await client(PortfolioApi).getFills(TICKER, undefined, undefined, undefined, 200);
    expect(twice.data.fills.map((f) => f.trade_id).sort()).toEqual(once.data.fills.flatMap((f) => [f.trade_id, f.trade_id]).sort());
  });

  it("answers a rate-limited request as Kalshi does: 429, `{\"error\": \"too many requests\"}`, no Retry-After", async () => {
    sim.faults.set({ rateLimit: { count: 1, retryAfterSeconds: 1 } });
    const refused = await client(PortfolioApi).getFills().catch((err: { response: { status: number; data: unknown; headers: Record<string, string> } }) => err.response);
    expect(refused).toMatchObject({ status: 429, data: { error: "too many requests" } });
    expect(refused.headers).not.toHaveProperty("retry-after");
  });

  it("refuses a request signed with another key with 401", async () => {
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const api = client(PortfolioApi, new Configuration({ basePath: sim.url, apiKey: sim.credentials.keyId, privateKeyPem: other }));
    await expect(api.getFills()).rejects.toMatchObject({ response: { status: 401 } });
  });
});

describe("KalshiVenue against the simulator", () => {
  let venue: KalshiVenue;
  /** How far the venue's clock runs ahead of the system's. */
  let ahead = () => 0;
  let n = 0;
  const id = () => `t-${++n}-${Date.now()}`;
  const order = (shares = 3_000_000n) => {
    const ask = venue.book(TICKER, "YES")!.asks;
    return { clientOrderId: id(), venueMarketId: TICKER, outcome: "YES" as const, side: "buy" as const, limitPrice: ask[ask.length - 1]!.price, shares, expiresAt: Date.now() + 60_000 };
  };

  beforeAll(async () => {
    venue = new KalshiVenue({ baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 400, freshnessMs: 300, clock: { now: () => Date.now() + ahead() } });
    await venue.start();
  });
  afterAll(async () => {
    await venue.stop();
  });
  afterEach(() => {
    ahead = () => 0;
  });

  it("keeps its books equal to the venue's through the delta stream", async () => {
    await new Promise((r) => setTimeout(r, 200));
    await until(() => {
      const mine = venue.book(TICKER, "NO")!;
      const theirs = sim.exchange.book(TICKER, "NO")!;
      return JSON.stringify(mine.asks.map((l) => [String(l.price), String(l.shares)])) === JSON.stringify(theirs.asks.map((l) => [String(l.price), String(l.shares)]));
    });
    expect(venue.health().state).toBe("up");
  });

  it("backs off on a 429, which Kalshi sends without Retry-After, then fills", async () => {
    sim.faults.set({ rateLimit: { count: 1, retryAfterSeconds: 0.3 } });
    const t0 = performance.now();
    const r = await venue.place(order());
    expect(r.kind).toBe("filled");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(250);
  });

  it("gives an order up at its expiry, and an order whose client gave up never executes when it reaches the simulator", async () => {
    const late = { ...order(), expiresAt: Date.now() + 300 };
    // The venue's clock stands still until the order is given up: a busy machine's pause before the sending cannot eat its 300 ms.
    const now = Date.now();
    ahead = () => now - Date.now();
    sim.faults.set({ latencyMs: 700 });
    expect((await venue.place(late)).kind).toBe("unknown");
    ahead = () => 0;
    await new Promise((r) => setTimeout(r, 600));
    sim.faults.reset();
    expect(await venue.status(late.clientOrderId, late)).toEqual({ kind: "not_found" });
  });

  it("stops retrying an order at its expiry and calls it unknown, not refused, once an attempt may have reached the venue", async () => {
    const o = { ...order(), expiresAt: Date.now() + 30_000 };
    sim.faults.set({ serverErrors: 10 });
    // The venue's clock passes the expiry as the simulator answers the first attempt with a 500, however long that took on a busy machine.
    ahead = () => (sim.faults.switches.serverErrors < 10 ? 30_000 : 0);
    expect(await venue.place(o)).toMatchObject({ kind: "unknown", reason: expect.stringMatching(/^order_expired/) });
    // The retry was not sent.
    expect(sim.faults.switches.serverErrors).toBe(9);
    sim.faults.reset();
    expect(await venue.status(o.clientOrderId, o)).toEqual({ kind: "not_found" });
  });

  it("refuses, without sending it, an order whose expiry has passed", async () => {
    const expired = { ...order(), expiresAt: Date.now() - 1 };
    expect(await venue.place(expired)).toMatchObject({ kind: "rejected", reason: expect.stringMatching(/^order_expired/) });
    expect(await venue.status(expired.clientOrderId, expired)).toEqual({ kind: "not_found" });
  });

  it("retries a 500 under the same client order id and fills once", async () => {
    sim.faults.set({ serverErrors: 2 });
    const o = order();
    const r = await venue.place(o);
    expect(r.kind).toBe("filled");
    expect(await venue.status(o.clientOrderId)).toMatchObject({ kind: "done", fills: r.kind === "filled" ? r.fills : [] });
  });

  it("reports a lost request and a lost acknowledgement as unknown; status tells them apart", async () => {
    const lost = order();
    sim.faults.set({ timeout: true });
    expect((await venue.place(lost)).kind).toBe("unknown");
    sim.faults.reset();
    expect(await venue.status(lost.clientOrderId)).toEqual({ kind: "not_found" });
    const acked = order();
    sim.faults.set({ ackLost: true });
    expect((await venue.place(acked)).kind).toBe("unknown");
    sim.faults.reset();
    expect((await venue.status(acked.clientOrderId)).kind).toBe("done");
    const again = await venue.place(acked);
    expect(again.kind).toBe("filled");
  });

  it("reports partial fills and definite rejections", async () => {
    sim.faults.set({ partialFills: true });
    expect((await venue.place(order(4_000_000n))).kind).toBe("partial");
    sim.faults.set({ partialFills: false, reject: true });
    expect((await venue.place(order())).kind).toBe("rejected");
  });

  it("reconnects a dropped stream and resubscribes", async () => {
    const before = venue.streamInfo().connections;
    sim.faults.dropStreams();
    await until(() => venue.streamInfo().connections > before && venue.streamInfo().live);
    await until(() => venue.health().state === "up");
  });

  it("marks its books stale while the stream is silent, and resyncs after the gap", async () => {
    sim.faults.set({ streamSilent: true });
    await until(() => venue.health().state === "degraded");
    const stale = venue.book(TICKER, "YES")!;
    expect(Date.now() - stale.updatedAt).toBeGreaterThan(300);
    const resyncs = venue.streamInfo().resyncs;
    sim.faults.set({ streamSilent: false });
    await until(() => venue.streamInfo().resyncs > resyncs && venue.health().state === "up");
  });

  it("is refused by the venue when it signs with the wrong key", async () => {
    const wrong = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const bad = new KalshiVenue({ baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: { keyId: sim.credentials.keyId, privateKeyPem: wrong }, catalog });
    await bad.markets();
    const r = await bad.place(order());
    expect(r).toMatchObject({ kind: "rejected" });
    expect(r.kind === "rejected" && r.reason).toMatch(/401/);
  });
});

describe("a market's resolution on the Kalshi simulator, read by kalshi-typescript and by KalshiVenue", () => {
  const SETTLEMENT_MS = 600;
  const RESOLVED = "KXRECSSNBER-26";
  let timed: KalshiSim;
  let venue: KalshiVenue;
  const markets = () => api(MarketApi, new Configuration({ basePath: timed.url }));

  beforeAll(async () => {
    timed = await startKalshiSim({ catalog, seed: 12, latencyScale: 0, tickMs: 40, settlementTimerMs: SETTLEMENT_MS });
    venue = new KalshiVenue({ baseUrl: timed.url, wsUrl: timed.wsUrl, credentials: timed.credentials, catalog, requestTimeoutMs: 400, freshnessMs: 300 });
    await venue.start();
  });
  afterAll(async () => {
    await venue.stop();
    await timed.stop();
  });

  it("is `determined` with its result while the settlement timer runs, which pays nothing yet, then `finalized`: paid out", async () => {
    expect((await markets().getMarket(RESOLVED)).data.market).toMatchObject({ status: "active", result: "" });
    timed.markets.resolve(RESOLVED, "NO");
    const determined = (await markets().getMarket(RESOLVED)).data.market;
    expect(determined).toMatchObject({ status: "determined", result: "no", settlement_timer_seconds: 1, settlement_ts: null });
    expect(await venue.resolution(RESOLVED)).toEqual({ state: "closed" });
    expect(venue.market(RESOLVED)!.status).toBe("closed");

    await new Promise((r) => setTimeout(r, SETTLEMENT_MS));
    const finalized = (await markets().getMarket(RESOLVED)).data.market;
    expect(finalized).toMatchObject({ status: "finalized", result: "no" });
    expect(Date.parse(finalized.settlement_ts!)).toBeGreaterThan(0);
    expect(await venue.resolution(RESOLVED)).toEqual({ state: "resolved", outcome: "NO" });
    expect(venue.market(RESOLVED)!.status).toBe("resolved");
  });

  it("lists finalized markets under the `settled` filter and the others under theirs, as Kalshi's GET /markets?status= maps them", async () => {
    const listed = async (status: "open" | "closed" | "settled") => (await markets().getMarkets(1000, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, status)).data.markets;
    expect((await listed("settled")).map((m) => m.ticker)).toContain(RESOLVED);
    expect((await listed("settled")).every((m) => m.status === "finalized")).toBe(true);
    expect((await listed("open")).every((m) => m.status === "active")).toBe(true);
    expect((await listed("closed")).map((m) => m.ticker)).toContain("CONTROLH-2026-D");
  });

  it("refuses an order on the resolved market in Kalshi's error shape, keeping nothing of it", async () => {
    const refused = await api(OrdersApi, new Configuration({ basePath: timed.url, apiKey: timed.credentials.keyId, privateKeyPem: timed.credentials.privateKeyPem }))
      .createOrderV2({ ticker: RESOLVED, client_order_id: "after-resolution", side: "bid", count: "1", price: "0.5000", time_in_force: "immediate_or_cancel", self_trade_prevention_type: "taker_at_cross" })
      .catch((err: { response: { status: number; data: unknown } }) => err.response);
    expect(refused).toMatchObject({ status: 400, data: { error: { code: "market_closed" } } });
  });
});
