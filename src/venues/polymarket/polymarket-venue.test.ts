import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { getGlobalDispatcher, request as fetchJson, type Agent } from "undici";
import { privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { startRewritingProxy } from "../../../test/helpers/rewriting-proxy.ts";
import { AppError } from "../../domain/errors.ts";
import { orderFee } from "../../domain/fees.ts";
import { ONE } from "../../domain/money.ts";
import { MarketCatalog } from "../../markets/catalog.ts";
import type { ChildOrder } from "../venue.ts";
import { expirationFor } from "./order-signing.ts";
import { PolymarketVenue, type PolymarketVenueOptions } from "./polymarket-venue.ts";
import { startPolymarketSim, type PolymarketSimOptions } from "./sim/index.ts";
import { parseBook } from "./wire.ts";

const catalog = MarketCatalog.load();
const running: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of running.splice(0).reverse()) await r.stop();
});

async function setup(extra: Partial<PolymarketVenueOptions> = {}, simExtra: Partial<PolymarketSimOptions> = {}) {
  const sim = await startPolymarketSim({ catalog, seed: 9, latencyScale: 0, tickMs: 50, ...simExtra });
  running.push(sim);
  const options: PolymarketVenueOptions = {
    baseUrl: sim.url,
    wsUrl: sim.wsUrl,
    credentials: sim.credentials,
    catalog,
    freshnessMs: 600,
    retryBackoffMs: 20,
    reconnect: { initialMs: 50, maxMs: 400 },
    ...extra,
  };
  const venue = new PolymarketVenue(options);
  await venue.start();
  running.push(venue);
  return { sim, venue, options };
}

/** A venue on a fresh simulator behind laggingTrades, both stopped after the test. */
async function lagging() {
  const sim = await startPolymarketSim({ catalog, seed: 9, latencyScale: 0, tickMs: 50 });
  running.push(sim);
  const proxy = await laggingTrades(sim.url);
  running.push(proxy);
  return { ...(await setup({ baseUrl: proxy.url, wsUrl: sim.wsUrl, credentials: sim.credentials })), sim, proxy };
}

/**
 * The simulator's REST behind a proxy whose listings lag the orders, as a venue's may: while `on`, it lists by id
 * (`GET /data/trades?id=`) only the first trade it is asked for; while `bare`, its orders (`GET /data/order/{id}`)
 * name no `associate_trades`; while `phantom`, they name besides their own a trade that no listing ever has.
 */
async function laggingTrades(target: string): Promise<{ url: string; on: boolean; bare: boolean; phantom: boolean; stop(): Promise<void> }> {
  const to = new URL(target);
  let first: string | undefined;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://proxy");
    const id = url.searchParams.get("id");
    if (proxy.on && req.method === "GET" && id !== null && (first ??= id) !== id) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: [], next_cursor: "LTE=", limit: 100, count: 0 }));
      return;
    }
    const bare = (proxy.bare || proxy.phantom) && url.pathname.includes("/data/order/");
    const up = request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      if (!bare) {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      r.on("data", (c: Buffer) => chunks.push(c));
      r.on("end", () => {
        const order = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        const named = proxy.bare ? [] : [...order.associate_trades, "phantom-trade"];
        res.writeHead(r.statusCode ?? 502, { "content-type": "application/json" }).end(JSON.stringify({ ...order, associate_trades: named }));
      });
    });
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const proxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${to.pathname.replace(/\/$/, "")}`,
    on: false,
    bare: false,
    phantom: false,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return proxy;
}

/**
 * The simulator's market channel behind a relay that, while `garble` is set, passes on every frame that names a
 * price with its prices unreadable: the books change on the venue, and the adapter cannot read how.
 */
async function garblingStream(target: string): Promise<{ url: string; garble: boolean; stop(): Promise<void> }> {
  const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise<void>((resolve) => wss.once("listening", resolve));
  const relay = {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    garble: false,
    stop: () => new Promise<void>((resolve) => {
      for (const c of wss.clients) c.terminate();
      wss.close(() => resolve());
    }),
  };
  wss.on("connection", (client) => {
    const up = new WebSocket(target);
    const held: string[] = [];
    up.on("open", () => held.splice(0).forEach((m) => up.send(m)));
    client.on("message", (d) => (up.readyState === WebSocket.OPEN ? up.send(d.toString()) : held.push(d.toString())));
    up.on("message", (d) => client.send(relay.garble ? d.toString().replace(/"price":"[^"]*"/g, '"price":"?"') : d.toString()));
    client.on("close", () => up.terminate());
    up.on("close", () => client.terminate());
    up.on("error", () => client.terminate());
  });
  return relay;
}

let seq = 0;
/** A taking buy with 20 ticks of room above the best ask (capped below 1): the book ticks every 50 ms, and may before the order arrives. */
function buy(venue: PolymarketVenue, expiresAt = Date.now() + 60_000, venueMarketId = catalog.events().find((e) => e.status === "open" && e.listings.some((l) => l.venue === venue.id))!.listings.find((l) => l.venue === venue.id)!.venueMarketId): ChildOrder {
  const m = venue.market(venueMarketId)!;
  const room = venue.book(venueMarketId, "YES")!.asks[0]!.price + 20n * m.tickSize;
  return { clientOrderId: `pm-test-${++seq}`, venueMarketId, outcome: "YES", side: "buy", limitPrice: room < ONE ? room : ONE - m.tickSize, shares: m.minOrderShares, expiresAt };
}

describe("PolymarketVenue", () => {
  it("takes a market whose fd has no e as exponent 0, and charges its buy rate × shares bought, exactly what the venue took", async () => {
    const listing = catalog.events().flatMap((e) => (e.status === "open" ? e.listings : [])).find((l) => l.venue === "polymarket-sim" && (l.feeRatePpm ?? 0n) > 0n)!;
    const rate = listing.feeRatePpm!;
    const { sim, venue } = await setup({}, { feeExponents: { [listing.venueMarketId]: 0 } });
    const m = venue.market(listing.venueMarketId)!;
    expect(m.feeModel).toEqual({ kind: "polymarket", ratePpm: rate, exponent: 0 });
    const placed = await venue.place(buy(venue, undefined, m.venueMarketId));
    if (placed.kind !== "filled") throw new Error(`the order did not fill: ${placed.kind}`);
    const bought = placed.fills.reduce((s, f) => s + f.shares, 0n);
    const fee = placed.fills.reduce((s, f) => s + f.fee, 0n);
    // C × rate, floored to 5 decimals, whatever the prices
    expect(fee).toBe(((rate * bought) / 10_000_000n) * 10n);
    expect(fee).toBeGreaterThan(0n);
    const taken = sim.exchange.matches(placed.venueOrderId);
    expect(placed.fills.map((f) => f.fee)).toEqual(taken.map((f) => f.fee));
    expect(placed.fills.map((f) => f.shares)).toEqual(taken.map((f) => f.shares));
  });

  it("finds an order placed before a restart from the child order, and says why it cannot without it", async () => {
    const { venue, options } = await setup();
    const order = buy(venue);
    const placed = await venue.place(order);
    expect(placed.kind).toBe("filled");
    const restarted = new PolymarketVenue(options);
    await restarted.markets();
    await expect(restarted.status(order.clientOrderId)).rejects.toBeInstanceOf(AppError);
    expect(await restarted.status(order.clientOrderId, order)).toEqual(await venue.status(order.clientOrderId));
  });

  it("finds and cancels an order placed before a restart on a market it no longer loads, from the venue's own market by id", async () => {
    const { sim, venue, options } = await setup();
    const filled = buy(venue);
    const resting = buy(venue);
    const first = await venue.place(filled);
    expect(first).toMatchObject({ kind: "filled" });
    sim.faults.set({ resting: true });
    const placed = await venue.place(resting);
    if (placed.kind !== "open") throw new Error(`the order did not rest: ${placed.kind}`);
    sim.faults.reset();
    const left = MarketCatalog.fromEvents(catalog.events().filter((e) => !e.listings.some((l) => l.venue === venue.id && l.venueMarketId === filled.venueMarketId)));
    const restarted = new PolymarketVenue({ ...options, catalog: left });
    await restarted.markets();
    expect(restarted.market(filled.venueMarketId)).toBeUndefined();
    expect(await restarted.status(filled.clientOrderId, filled)).toEqual(await venue.status(filled.clientOrderId));
    expect(await restarted.cancel(resting.clientOrderId, resting)).toEqual({ kind: "done", venueOrderId: placed.venueOrderId, fills: placed.fills });
    expect(sim.exchange.resting(placed.venueOrderId)).toBe(0n);
  });

  it("charges the fee the venue took of a fill found after a restart on a market it no longer loads", async () => {
    const listing = catalog.events().flatMap((e) => (e.status === "open" ? e.listings : [])).find((l) => l.venue === "polymarket-sim" && (l.feeRatePpm ?? 0n) > 0n)!;
    const { sim, venue, options } = await setup();
    const order = buy(venue, undefined, listing.venueMarketId);
    const placed = await venue.place(order);
    if (placed.kind !== "filled") throw new Error(`the order did not fill: ${placed.kind}`);
    expect(placed.fills.reduce((s, f) => s + f.fee, 0n)).toBeGreaterThan(0n);
    const left = MarketCatalog.fromEvents(catalog.events().filter((e) => !e.listings.includes(listing)));
    const restarted = new PolymarketVenue({ ...options, catalog: left });
    await restarted.markets();
    const found = await restarted.status(order.clientOrderId, order);
    expect(found).toEqual({ kind: "done", venueOrderId: placed.venueOrderId, fills: placed.fills });
    expect(placed.fills.map((f) => f.fee)).toEqual(sim.exchange.matches(placed.venueOrderId).map((f) => f.fee));
    // What the audit reads, from an adapter that has looked for no order.
    const fresh = new PolymarketVenue({ ...options, catalog: left });
    expect((await fresh.trades()).map((f) => f.fee)).toEqual(placed.fills.map((f) => f.fee));
  });

  it("after a lost acknowledgement, placing the same order again returns the fill that happened, not a second one", async () => {
    const { sim, venue } = await setup();
    const order = buy(venue);
    sim.faults.set({ ackLost: true });
    expect((await venue.place(order)).kind).toBe("unknown");
    sim.faults.reset();
    const again = await venue.place(order);
    expect(again.kind).toBe("filled");
    expect(await venue.status(order.clientOrderId)).toMatchObject({ kind: "done", fills: again.kind === "filled" ? again.fills : [] });
  });

  it("takes a fee the venue changes after start within its fee read interval, and charges an order placed after it the new fee", async () => {
    const { sim, venue } = await setup({ feeReadIntervalMs: 50 });
    const order = buy(venue);
    const raised = { kind: "polymarket" as const, ratePpm: 72_000n, exponent: 1 as const };
    expect(venue.market(order.venueMarketId)!.feeModel).not.toEqual(raised);
    sim.exchange.setFeeModel(order.venueMarketId, raised);
    await vi.waitFor(() => expect(venue.market(order.venueMarketId)!.feeModel).toEqual(raised), { timeout: 10_000, interval: 20 });
    const placed = await venue.place(order);
    expect(placed.kind).toBe("filled");
    const fills = placed.kind === "filled" ? placed.fills : [];
    expect(fills.reduce((sum, f) => sum + f.fee, 0n)).toBe(orderFee(raised, fills));
  });

  it("leaves out a market whose fee the venue changes after start to a curve it cannot model, rather than charge the fee read before", async () => {
    const sim = await startPolymarketSim({ catalog, seed: 9, latencyScale: 0, tickMs: 50 });
    running.push(sim);
    const proxy = await startRewritingProxy(sim.url);
    running.push(proxy);
    const { venue } = await setup({ baseUrl: proxy.url, wsUrl: sim.wsUrl, credentials: sim.credentials, feeReadIntervalMs: 50 });
    const order = buy(venue);
    proxy.rewrite = (path, body) => (path.endsWith(`/clob-markets/${order.venueMarketId}`) ? { ...(body as object), fd: { r: 0.072, e: 3, to: true } } : body);
    await vi.waitFor(() => expect(venue.market(order.venueMarketId)).toBeUndefined(), { timeout: 10_000, interval: 20 });
    expect(await venue.place(order)).toMatchObject({ kind: "rejected", reason: expect.stringMatching(/^unknown_market/) });
  });

  it("trades on the tick the venue announces on its stream, and leaves out a market whose new tick it cannot model", async () => {
    const { sim, venue } = await setup();
    const id = buy(venue).venueMarketId;
    expect(venue.market(id)).toMatchObject({ tickSize: 10_000n, lotShares: 1_000_000n, minOrderShares: 5_000_000n });
    // the change is announced on the market channel only, to those subscribed then: the first book the stream brings shows the venue took the subscription
    await new Promise<void>((resolve) => venue.onBook(() => resolve()));
    sim.changeTick(id, 1_000n);
    // 0.001: a lot of 10 shares costs whole cents at any price on it; the 5-share minimum stays the venue's, a sell's in its 0.01-share steps
    await vi.waitFor(() => expect(venue.market(id)).toMatchObject({ tickSize: 1_000n, lotShares: 10_000_000n, minOrderShares: 5_000_000n }), { timeout: 10_000, interval: 20 });
    // on the new tick, off the old one, with 15 to 25 new ticks of room above the ask
    const room = (venue.book(id, "YES")!.asks[0]!.price / 10_000n) * 10_000n + 25_000n;
    const fine: ChildOrder = { ...buy(venue), limitPrice: room < ONE ? room : ONE - 1_000n, shares: 10_000_000n };
    expect(fine.limitPrice % 10_000n).not.toBe(0n);
    expect((await venue.place(fine)).kind).toBe("filled");
    sim.changeTick(id, 50n);
    await vi.waitFor(() => expect(venue.market(id)).toBeUndefined(), { timeout: 10_000, interval: 20 });
    expect(await venue.place({ ...fine, clientOrderId: `pm-test-${++seq}` })).toMatchObject({ kind: "rejected", reason: expect.stringMatching(/^unknown_market/) });
  });

  it("takes a tick change its stream did not bring within its fee read interval", async () => {
    const { sim, venue } = await setup({ feeReadIntervalMs: 50 });
    const id = buy(venue).venueMarketId;
    sim.faults.set({ streamSilent: true });
    sim.changeTick(id, 1_000n);
    await vi.waitFor(() => expect(venue.market(id)).toMatchObject({ tickSize: 1_000n, lotShares: 10_000_000n }), { timeout: 10_000, interval: 20 });
  });

  it("signs the child's expiry in whole seconds, rounded down so that the venue never takes the order after the child expired", () => {
    expect(expirationFor(1_764_000_000_000)).toBe(1_764_000_000n);
    expect(expirationFor(1_764_000_000_999)).toBe(1_764_000_000n);
  });

  it("is refused, definitely, when the venue processes it after its expiry, however long it took to arrive, and never trades", async () => {
    const { sim, venue } = await setup({ requestTimeoutMs: 5_000 });
    // the expiry rounds up to at most 1.1 s from now; the order reaches the engine 1.2 s after it was sent
    sim.faults.set({ latencyMs: 1_200 });
    const late = buy(venue, Date.now() + 100);
    expect(await venue.place(late)).toMatchObject({ kind: "rejected", reason: expect.stringMatching(/^order_expired: invalid expiration/) });
    sim.faults.reset();
    expect(await venue.status(late.clientOrderId, late)).toEqual({ kind: "not_found" });
    expect(sim.exchange.trades()).toEqual([]);
  });

  it("cancels a resting order found from the child order after a restart, and throws rather than answer when the venue cannot be asked", async () => {
    // the timeout fault hangs every attempt until the adapter gives it up: 1 s each, not the 3 s default
    const { sim, venue, options } = await setup({ requestTimeoutMs: 1_000 });
    const order = buy(venue);
    sim.faults.set({ resting: true });
    const placed = await venue.place(order);
    expect(placed.kind).toBe("open");
    const restarted = new PolymarketVenue(options);
    await restarted.markets();
    await expect(restarted.cancel(order.clientOrderId)).rejects.toBeInstanceOf(AppError);
    sim.faults.set({ timeout: true });
    await expect(restarted.cancel(order.clientOrderId, order)).rejects.toBeInstanceOf(AppError);
    sim.faults.set({ timeout: false });
    expect(await restarted.cancel(order.clientOrderId, order)).toEqual({ kind: "done", venueOrderId: placed.kind === "open" ? placed.venueOrderId : "", fills: placed.kind === "open" ? placed.fills : [] });
    expect(sim.exchange.resting(placed.kind === "open" ? placed.venueOrderId : "")).toBe(0n);
  });

  it("lists every trade across the trade listing's pages once, oldest first, with the fees status reports", async () => {
    const { sim, venue, options } = await setup();
    const placed = [];
    for (let i = 0; i < 3; i++) {
      const order = buy(venue);
      const r = await venue.place(order);
      if (r.kind !== "filled") throw new Error(`order ${i} did not fill: ${r.kind}`);
      placed.push({ order, fills: r.fills });
    }
    sim.faults.set({ duplicateTrades: true });
    const all = placed.flatMap((p) => p.fills);
    // the simulator pages by 4 and repeats each trade, so the listing spans pages
    expect(all.length * 2).toBeGreaterThan(4);
    expect(await venue.trades()).toEqual(all);
    for (const p of placed) expect(await venue.status(p.order.clientOrderId)).toEqual({ kind: "done", venueOrderId: p.fills[0]!.venueOrderId, fills: p.fills });
    const restarted = new PolymarketVenue(options);
    await restarted.markets();
    expect(await restarted.trades()).toEqual(all.map((f) => ({ ...f, clientOrderId: "" })));
  });

  it("lists the account's taker side of a trade the listing also shows it on as a maker (a self-trade, listed once per side)", async () => {
    const sim = await startPolymarketSim({ catalog, seed: 9, latencyScale: 0, tickMs: 50 });
    running.push(sim);
    const proxy = await startRewritingProxy(sim.url);
    running.push(proxy);
    const { venue } = await setup({ baseUrl: proxy.url, wsUrl: sim.wsUrl, credentials: sim.credentials });
    const placed = await venue.place(buy(venue));
    if (placed.kind !== "filled") throw new Error(`the order did not fill: ${placed.kind}`);
    // the same trade, its maker the account's resting order, listed once per side, the MAKER row first
    const maker = (t: Record<string, unknown>) => ({ order_id: "0xresting", maker_address: privateKeyToAccount(sim.credentials.privateKey).address, matched_amount: t["size"], price: t["price"], asset_id: t["asset_id"] });
    const selfTrade = (t: Record<string, unknown>) => ({ ...t, maker_orders: [maker(t)] });
    proxy.rewrite = (path, body) =>
      path.endsWith("/data/trades")
        ? { ...(body as object), data: (body as { data: Record<string, unknown>[] }).data.flatMap((t) => [{ ...selfTrade(t), trader_side: "MAKER" }, selfTrade(t)]) }
        : body;
    // each side once: the resting order sold what the taker bought, at its price, and pays no fee
    const sold = placed.fills.map((f) => ({ ...f, venueOrderId: "0xresting", clientOrderId: "", side: "sell", fee: 0n }));
    expect(await venue.trades()).toEqual(placed.fills.flatMap((f, i) => [sold[i], f]));
  });

  it("does not take an order whose status it does not know for done: it may still rest, and fill after it is settled", async () => {
    const sim = await startPolymarketSim({ catalog, seed: 9, latencyScale: 0, tickMs: 50 });
    running.push(sim);
    const proxy = await startRewritingProxy(sim.url);
    running.push(proxy);
    const { venue } = await setup({ baseUrl: proxy.url, wsUrl: sim.wsUrl, credentials: sim.credentials });
    const order = buy(venue);
    sim.faults.set({ resting: true });
    const placed = await venue.place(order);
    if (placed.kind !== "open") throw new Error(`the order did not rest: ${placed.kind}`);
    sim.faults.reset();
    proxy.rewrite = (path, body) => (path.includes("/data/order/") ? { ...(body as object), status: "ORDER_STATUS_PENDING" } : body);
    await expect(venue.status(order.clientOrderId)).rejects.toThrow(/ORDER_STATUS_PENDING/);
    expect(sim.exchange.resting(placed.venueOrderId)).toBeGreaterThan(0n);
    for (const status of ["MATCHED", "ORDER_STATUS_CANCELED", "ORDER_STATUS_CANCELED_MARKET_RESOLVED", "ORDER_STATUS_INVALID", "unmatched"]) {
      proxy.rewrite = (path, body) => (path.includes("/data/order/") ? { ...(body as object), status } : body);
      expect(await venue.status(order.clientOrderId)).toMatchObject({ kind: "done", venueOrderId: placed.venueOrderId });
    }
  });

  it("reads the fills its resting order made as a maker, taken by another's order, at its own price and without fee", async () => {
    const { sim, venue } = await setup();
    const order = buy(venue);
    sim.faults.set({ resting: true });
    const placed = await venue.place(order);
    if (placed.kind !== "open") throw new Error(`the order did not rest: ${placed.kind}`);
    sim.faults.reset();
    const lot = venue.market(order.venueMarketId)!.lotShares;
    expect(sim.exchange.resting(placed.venueOrderId)).toBeGreaterThan(lot);
    const tradeId = sim.takeResting(placed.venueOrderId, lot);
    const made = { tradeId, venueOrderId: placed.venueOrderId, clientOrderId: order.clientOrderId, side: "buy", price: order.limitPrice, shares: lot, fee: 0n };
    // what the order service settles: cancelled, with every share the order bought
    expect(await venue.cancel(order.clientOrderId)).toEqual({ kind: "done", venueOrderId: placed.venueOrderId, fills: [...placed.fills, made] });
    expect(await venue.trades()).toEqual([...placed.fills, made]);
  });

  it("fills an order while its trades are still unsettled (matched, no transaction yet), and drops a trade whose settlement failed", async () => {
    const { sim, venue } = await setup();
    const first = buy(venue);
    const placed = await venue.place(first);
    if (placed.kind !== "filled") throw new Error(`the order did not fill: ${placed.kind}`);
    const second = buy(venue);
    const kept = await venue.place(second);
    if (kept.kind !== "filled") throw new Error(`the order did not fill: ${kept.kind}`);
    for (const f of placed.fills) sim.failSettlement(f.tradeId);
    expect(await venue.status(first.clientOrderId)).toEqual({ kind: "done", venueOrderId: placed.venueOrderId, fills: [] });
    expect(await venue.trades()).toEqual(kept.fills);
  });

  it("does not report an order whose trades the venue names but does not list yet as filled by those it lists", async () => {
    const { sim, proxy, venue } = await lagging();
    const id = buy(venue).venueMarketId;
    const m = venue.market(id)!;
    const asks = venue.book(id, "YES")!.asks;
    // the two best asks' shares, at up to 20 ticks over the third ask: two trades at least, should the book move meanwhile
    const shares = asks[0]!.shares + asks[1]!.shares;
    const order: ChildOrder = { ...buy(venue), limitPrice: asks[2]!.price + 20n * m.tickSize, shares: shares - (shares % m.lotShares) };
    proxy.on = true;
    const before = sim.exchange.trades().length;
    const placed = await venue.place(order);
    const made = sim.exchange.trades().length - before;
    expect(made).toBeGreaterThan(1);
    expect(placed.kind).toBe("unknown");
    await expect(venue.status(order.clientOrderId, order)).rejects.toThrow(/trade/);
    proxy.on = false;
    const status = await venue.status(order.clientOrderId, order);
    expect(status.kind === "done" && status.fills.length).toBe(made);
  });

  it("does not report an order the venue matched, but whose trades it does not name yet, as one that took nothing", async () => {
    const { proxy, venue, options } = await lagging();
    const order = buy(venue);
    const placed = await venue.place(order);
    if (placed.kind !== "filled") throw new Error(`the order did not fill: ${placed.kind}`);
    proxy.bare = true;
    // after a restart, the placement's answer and its trade ids are gone: only the order can tell
    const restarted = new PolymarketVenue(options);
    await restarted.markets();
    await expect(restarted.status(order.clientOrderId, order)).rejects.toThrow(/trade/);
    proxy.bare = false;
    expect(await restarted.status(order.clientOrderId, order)).toEqual({ kind: "done", venueOrderId: placed.venueOrderId, fills: placed.fills });
  });

  it("ends the status of a done order naming a trade that is never listed once its listed trades account for every share it matched", async () => {
    const { proxy, venue } = await lagging();
    const order = buy(venue);
    const placed = await venue.place(order);
    if (placed.kind !== "filled") throw new Error(`the order did not fill: ${placed.kind}`);
    proxy.phantom = true;
    expect(await venue.status(order.clientOrderId)).toEqual({ kind: "done", venueOrderId: placed.venueOrderId, fills: placed.fills });
  });

  it("ends the status of an order whose trade failed and which names a trade never listed: the failed trade holds the shares it matched", async () => {
    const { sim, proxy, venue } = await lagging();
    const order = buy(venue);
    const placed = await venue.place(order);
    if (placed.kind !== "filled") throw new Error(`the order did not fill: ${placed.kind}`);
    for (const f of placed.fills) sim.failSettlement(f.tradeId);
    proxy.phantom = true;
    // size_matched keeps the shares of a match whose settlement failed (github.com/Polymarket/py-clob-client-v2/issues/34)
    expect(await venue.status(order.clientOrderId)).toEqual({ kind: "done", venueOrderId: placed.venueOrderId, fills: [] });
  });

  it("does not call a persistent server error a rejection: the order may have been taken", async () => {
    const { sim, venue } = await setup();
    sim.faults.set({ serverErrors: 100 });
    const r = await venue.place(buy(venue));
    expect(r).toMatchObject({ kind: "unknown", reason: expect.stringMatching(/^venue_error/) });
  });

  it("refuses definitely an order sent while the venue's trading is disabled or cancel-only: its 503 says no order is taken", async () => {
    const { sim, venue } = await setup();
    for (const mode of ["disabled", "cancel-only"] as const) {
      sim.pauseTrading(mode);
      const order = buy(venue);
      expect(await venue.place(order)).toMatchObject({ kind: "rejected", reason: expect.stringMatching(/^trading_paused: Trading is currently/) });
      sim.pauseTrading(undefined);
      expect(await venue.status(order.clientOrderId)).toEqual({ kind: "not_found" });
    }
  });

  it("places an order again while the matching engine restarts (425 Too Early), and refuses it as unavailable if the restart outlasts its retries", async () => {
    const { sim, venue } = await setup();
    sim.restartEngine(2);
    expect(await venue.place(buy(venue))).toMatchObject({ kind: "filled" });
    sim.restartEngine(100);
    const order = buy(venue);
    expect(await venue.place(order)).toMatchObject({ kind: "rejected", reason: expect.stringMatching(/^venue_unavailable: matching engine restarting/) });
    sim.restartEngine(0);
    expect(await venue.status(order.clientOrderId)).toEqual({ kind: "not_found" });
  });

  it("refuses definitely when told to wait longer than it may, and when the venue is unreachable", async () => {
    const { sim, venue } = await setup({ maxRetryAfterMs: 500 });
    sim.faults.set({ rateLimit: { count: 1, retryAfterSeconds: 30 } });
    expect(await venue.place(buy(venue))).toMatchObject({ kind: "rejected", reason: expect.stringMatching(/^rate_limited/) });
    const order = buy(venue);
    await sim.stop();
    // let the client see its pooled connections close: a request written to one of those is "lost" (unknown), not refused
    const pool = () => (getGlobalDispatcher() as Agent).stats[new URL(sim.url).origin];
    await vi.waitFor(() => expect(pool()?.connected ?? 0).toBe(0), { timeout: 10_000, interval: 20 });
    expect(await venue.place(order)).toMatchObject({ kind: "rejected", reason: expect.stringMatching(/^venue_unreachable/) });
    expect(venue.health().state).toBe("down");
  });

  it("takes its books afresh after a stream frame it cannot read, rather than show the books it missed a change of as current", async () => {
    const sim = await startPolymarketSim({ catalog, seed: 9, latencyScale: 0, tickMs: 60_000 });
    running.push(sim);
    const relay = await garblingStream(sim.wsUrl);
    running.push(relay);
    const { venue } = await setup({ baseUrl: sim.url, wsUrl: relay.url, credentials: sim.credentials });
    await vi.waitFor(() => expect(venue.describe().stream).toMatchObject({ state: "open", connections: 1 }), { timeout: 5_000 });
    const order = buy(venue);
    const token = venue.market(order.venueMarketId)!.outcomeIds.YES;
    relay.garble = true;
    expect(await venue.place(order)).toMatchObject({ kind: "filled" });
    // the trade's book change and snapshot reach the adapter unreadable; the connection then only answers PINGs
    await new Promise((resolve) => setTimeout(resolve, 300));
    relay.garble = false;
    const res = await fetchJson(`${sim.url}/book?token_id=${token}`);
    const onVenue = parseBook(await res.body.json());
    await vi.waitFor(() => expect(venue.book(order.venueMarketId, "YES")!.asks).toEqual(onVenue.asks), { timeout: 5_000 });
    expect(venue.describe().stream.connections).toBeGreaterThan(1);
  });

  it("describes where it points and its stream, for the health endpoint", async () => {
    const { sim, venue } = await setup();
    await vi.waitFor(() => expect(venue.describe()).toMatchObject({ adapter: "polymarket-clob", baseUrl: sim.url, wsUrl: sim.wsUrl, stream: { state: "open", connections: 1 } }), { timeout: 5_000 });
  });

  it("serves fault switches on the simulator's admin routes", async () => {
    const { sim } = await setup();
    const res = await fetch(`${sim.url}/_sim/faults`, { method: "POST", body: JSON.stringify({ latencyMs: 5, partialFills: true }) });
    expect(await res.json()).toMatchObject({ latencyMs: 5, partialFills: true, timeout: false });
    expect((await fetch(`${sim.url}/_sim/faults`, { method: "POST", body: JSON.stringify({ nonsense: 1 }) })).status).toBe(400);
    await fetch(`${sim.url}/_sim/faults/reset`, { method: "POST" });
    expect(sim.faults.switches.partialFills).toBe(false);
  });
});
