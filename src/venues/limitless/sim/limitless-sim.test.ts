import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { deliveredShares, grossForDelivered } from "../../../domain/fees.ts";
import { ONE } from "../../../domain/money.ts";
import { MarketCatalog } from "../../../markets/catalog.ts";
import type { ChildOrder } from "../../venue.ts";
import { LimitlessVenue } from "../limitless-venue.ts";
import { buyOrder, limitlessAuthHeaders, saltFor, signOrder, wireOrder } from "../signing.ts";
import { startRewritingProxy } from "../../../../test/helpers/rewriting-proxy.ts";
import { engineIoUrl } from "../socketio.ts";
import { LIMITLESS_CLOB_EXCHANGE, startLimitlessSim, type LimitlessSim } from "./limitless-sim.ts";

const catalog = MarketCatalog.load();
const slug = catalog.events().flatMap((e) => e.listings.filter((l) => l.venue === "limitless-sim" && e.status === "open"))[0]!.venueMarketId;
let n = 0;

describe("Limitless simulator", () => {
  let sim: LimitlessSim;
  let venue: LimitlessVenue;
  const adapter = (credentials = sim.credentials) => new LimitlessVenue({ baseUrl: sim.url, wsUrl: sim.wsUrl, credentials, catalog, requestTimeoutMs: 400, startTimeoutMs: 300 });
  /** A taking buy with 20 ticks of room above the best ask (capped below 1): the book ticks every 40 ms, and may before the order arrives. */
  const taking = (): ChildOrder => {
    const m = venue.market(slug)!;
    const room = venue.book(slug, "YES")!.asks[0]!.price + 20n * m.tickSize;
    const limitPrice = room < ONE ? room : ONE - m.tickSize;
    return { clientOrderId: `sim-${process.pid}-${++n}`, venueMarketId: slug, outcome: "YES", side: "buy", limitPrice, shares: deliveredShares(m.feeModel, m.minOrderShares), expiresAt: Date.now() + 60_000 };
  };

  beforeEach(async () => {
    sim = await startLimitlessSim({ catalog, seed: 41, latencyScale: 0, tickMs: 40 });
    venue = adapter();
    await venue.start();
  });
  afterEach(async () => {
    await venue.stop();
    await sim.stop();
  });

  it("pages /markets/active 25 at a time and refuses bigger pages", async () => {
    const own = MarketCatalog.load(new URL("./own-markets.json", import.meta.url)).events();
    const open = [...catalog.events(), ...own].filter((e) => e.status === "open" && e.listings.some((l) => l.venue === "limitless-sim")).length;
    const active = await venue.activeMarkets();
    expect(active.length).toBe(open);
    expect(active.every((m) => m.status === "FUNDED" && m.tradeType === "clob")).toBe(true);
    const res = await fetch(`${sim.url}/markets/active?page=1&limit=26`);
    expect(res.status).toBe(400);
  });

  it("discovers each unlisted market once though a market added between two reads of /markets/active shows one on both pages", async () => {
    const listed = new Set(catalog.events().flatMap((e) => e.listings.filter((l) => l.venue === venue.id).map((l) => l.venueMarketId)));
    const proxy = await startRewritingProxy(sim.url);
    const discovering = new LimitlessVenue({ baseUrl: proxy.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog });
    // 26 markets, 25 a page: the venue's own, with copies of an unlisted one under other slugs; one more is listed at the
    // head after the first page was read, so the second page starts with the first's last
    type Page = { data: { slug: string; title: string }[]; totalMarketsCount: number };
    let first: Page | undefined;
    proxy.rewrite = (path, body) => {
      if (!path.endsWith("/markets/active")) return body;
      if (first) return { data: first.data.slice(24, 26), totalMarketsCount: first.totalMarketsCount + 1 };
      const { data } = body as Page;
      const unlisted = data.find((m) => !listed.has(m.slug))!;
      first = { data: [...data, ...Array.from({ length: 26 - data.length }, (_, i) => ({ ...unlisted, slug: `${unlisted.slug}-${i}`, title: `${unlisted.title} (${i})` }))], totalMarketsCount: 26 };
      return { data: first.data.slice(0, 25), totalMarketsCount: 26 };
    };
    try {
      const found = (await discovering.discover()).map((m) => m.venueMarketId);
      expect(found.sort()).toEqual(first!.data.map((m) => m.slug).filter((slug) => !listed.has(slug)).sort());
    } finally {
      await proxy.stop();
    }
  });

  it("refuses a badly signed request with 401 and an order signed by another wallet with 400", async () => {
    const res = await fetch(`${sim.url}/markets/${slug}/user-orders`, { headers: { "lmts-api-key": sim.credentials.apiKey, "lmts-timestamp": new Date().toISOString(), "lmts-signature": "AAAA" } });
    expect(res.status).toBe(401);
    await expect(res.json()).resolves.toMatchObject({ statusCode: 401, message: "Invalid signature" });
    const impostor = adapter({ ...sim.credentials, privateKey: generatePrivateKey() });
    await impostor.markets();
    const r = await impostor.place(taking());
    expect(r).toMatchObject({ kind: "rejected", reason: expect.stringMatching(/HTTP 400.*(maker and signer|signature)/) });
  });

  it("refuses an order for the right wallet signed by another key, and one signed for another exchange contract", async () => {
    const m = venue.market(slug)!;
    const order = buyOrder({ maker: privateKeyToAccount(sim.credentials.privateKey).address, tokenId: m.outcomeIds.YES, limitPrice: 990_000n, shares: m.minOrderShares, feeRateBps: m.feeModel.ratePpm / 100n, salt: saltFor(`forged-${++n}`), expiration: 0n });
    const post = async (signature: string) => {
      const body = JSON.stringify({ order: { ...wireOrder(order), signature, price: 0.99 }, orderType: "FAK", marketSlug: slug, ownerId: sim.credentials.ownerId });
      const headers = { "content-type": "application/json", ...limitlessAuthHeaders(sim.credentials.apiKey, sim.credentials.secret, Date.now(), "POST", "/orders", body) };
      const res = await fetch(`${sim.url}/orders`, { method: "POST", headers, body });
      return { status: res.status, body: (await res.json()) as { message: string } };
    };
    expect(await post(await signOrder(privateKeyToAccount(generatePrivateKey()), order, LIMITLESS_CLOB_EXCHANGE))).toEqual({ status: 400, body: expect.objectContaining({ message: "invalid order signature" }) });
    expect(await post(await signOrder(privateKeyToAccount(sim.credentials.privateKey), order, "0x0000000000000000000000000000000000000001"))).toMatchObject({ status: 400 });
    expect((await post(await signOrder(privateKeyToAccount(sim.credentials.privateKey), order, LIMITLESS_CLOB_EXCHANGE))).status).toBe(201);
  });

  it("takes clientOrderId as an idempotency key: a second order under the same one is refused with 409, and the order shows it", async () => {
    const m = venue.market(slug)!;
    const post = async (salt: string, clientOrderId: string) => {
      const order = buyOrder({ maker: privateKeyToAccount(sim.credentials.privateKey).address, tokenId: m.outcomeIds.YES, limitPrice: 990_000n, shares: m.minOrderShares, feeRateBps: m.feeModel.ratePpm / 100n, salt: saltFor(salt), expiration: 0n });
      const signature = await signOrder(privateKeyToAccount(sim.credentials.privateKey), order, LIMITLESS_CLOB_EXCHANGE);
      const body = JSON.stringify({ order: { ...wireOrder(order), signature, price: 0.99 }, orderType: "FAK", marketSlug: slug, ownerId: sim.credentials.ownerId, clientOrderId });
      const headers = { "content-type": "application/json", ...limitlessAuthHeaders(sim.credentials.apiKey, sim.credentials.secret, Date.now(), "POST", "/orders", body) };
      const res = await fetch(`${sim.url}/orders`, { method: "POST", headers, body });
      return { status: res.status, body: (await res.json()) as { order?: { clientOrderId?: string } } };
    };
    const id = `idem-${process.pid}-${++n}`;
    expect(await post(`${id}-a`, id)).toMatchObject({ status: 201, body: { order: { clientOrderId: id } } });
    expect((await post(`${id}-b`, id)).status).toBe(409);
  });

  it("reconnects its stream after the venue drops it, and counts the connections", async () => {
    expect(venue.streamInfo()).toMatchObject({ state: "open", live: true, connections: 1 });
    sim.faults.dropStreams();
    const deadline = Date.now() + 10_000;
    while (!(venue.streamInfo().live && venue.streamInfo().connections === 2) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(venue.streamInfo()).toMatchObject({ state: "open", live: true, connections: 2, lastError: undefined });
  });

  it("joins /markets again when the venue leaves it on an open connection (a Socket.IO server disconnect), and its books follow the stream again", async () => {
    const waitFor = async (done: () => boolean) => {
      const deadline = Date.now() + 10_000;
      while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    };
    expect(venue.streamInfo()).toMatchObject({ state: "open", live: true, connections: 1 });
    sim.leaveNamespace();
    await waitFor(() => !venue.streamInfo().live);
    // the connection is still open, but the namespace sends no book on it: the books age
    expect(venue.streamInfo()).toMatchObject({ state: "open", live: false, connections: 1 });
    const left = venue.book(slug, "YES")!.updatedAt;
    await new Promise((r) => setTimeout(r, 200));
    expect(venue.book(slug, "YES")!.updatedAt).toBe(left);
    // within the watchdog's second another connection joins and subscribes again, and the book is current from it
    await waitFor(() => venue.streamInfo().live);
    expect(venue.streamInfo()).toMatchObject({ state: "open", live: true, connections: 2, lastError: undefined });
    await waitFor(() => venue.book(slug, "YES")!.updatedAt > Date.now() - 100);
    expect(venue.book(slug, "YES")!.updatedAt).toBeGreaterThan(Date.now() - 100);
  });

  it("finds an order again after a restart by the salt derived from its client order id", async () => {
    const order = taking();
    const placed = await venue.place(order);
    expect(placed.kind).toBe("filled");
    const restarted = adapter();
    await restarted.markets();
    await expect(restarted.status(order.clientOrderId)).rejects.toThrow(/pass the child order/);
    const st = await restarted.status(order.clientOrderId, order);
    expect(st).toEqual({ kind: "done", venueOrderId: placed.kind === "filled" ? placed.venueOrderId : "", fills: placed.kind === "filled" ? placed.fills : [] });
  });

  /** A signed request of the account straight to the simulator, answered with its status and body. */
  const call = async (method: "GET" | "DELETE", path: string) => {
    const res = await fetch(sim.url + path, { method, headers: limitlessAuthHeaders(sim.credentials.apiKey, sim.credentials.secret, Date.now(), method, path, "") });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it("refuses, with the venue's 400, an order whose signed expiration has passed, and keeps nothing of it", async () => {
    const order = { ...taking(), expiresAt: Date.now() - 1_000 };
    expect(await venue.place(order)).toEqual({ kind: "rejected", reason: "venue_rejected: HTTP 400: Order expired" });
    expect(await venue.status(order.clientOrderId, order)).toEqual({ kind: "not_found" });
    expect(sim.exchange.trades()).toEqual([]);
  });

  it("shows a resting order LIVE with what rests, cancels it with DELETE /orders/{id}, and answers 404 to a second cancel", async () => {
    sim.faults.set({ resting: true });
    const order = taking();
    const placed = await venue.place(order);
    expect(placed.kind).toBe("open");
    if (placed.kind !== "open") return;
    const path = `/orders/${placed.venueOrderId}`;
    // what rests is of the contracts signed for: the order's gross size less the contracts matched
    const m = venue.market(slug)!;
    const view = await call("GET", path);
    const { contractsGross, contractsNet } = (view.body.execution as { totalsRaw: { contractsGross: string; contractsNet: string } }).totalsRaw;
    expect(BigInt(contractsNet)).toBe(placed.fills.reduce((sum, f) => sum + f.shares, 0n));
    const rests = grossForDelivered(m.feeModel, m.lotShares, order.shares)! - BigInt(contractsGross);
    expect(view).toMatchObject({ status: 200, body: { order: { status: "LIVE", remainingSize: rests.toString() } } });
    expect(await call("DELETE", path)).toEqual({ status: 200, body: { message: "Order canceled successfully" } });
    expect(await call("GET", path)).toMatchObject({ status: 200, body: { order: { status: "CANCELED", remainingSize: "0" } } });
    expect(await call("DELETE", path)).toEqual({ status: 404, body: { message: "Order not found or already canceled", error: "Not Found", statusCode: 404 } });
  });

  it("repeats every match of every listing under the duplicate fault, and the adapter reports each once", async () => {
    sim.faults.set({ duplicateTrades: true });
    const placed = await venue.place(taking());
    expect(placed.kind).toBe("filled");
    if (placed.kind !== "filled") return;
    const view = (await call("GET", `/orders/${placed.venueOrderId}`)).body as { makerMatches: { id: string }[] };
    expect(view.makerMatches.map((m) => m.id)).toEqual(placed.fills.flatMap((f) => [f.tradeId, f.tradeId]));
    const history = (await call("GET", "/portfolio/history?cursor=&limit=100")).body as { data: { matchId: string }[] };
    expect(history.data.map((e) => e.matchId).sort()).toEqual(placed.fills.flatMap((f) => [f.tradeId, f.tradeId]).sort());
    expect(await venue.trades()).toEqual(placed.fills.map((f) => ({ ...f, clientOrderId: "" })));
  });

  it("pages the account's history behind an opaque cursor, newest first, and the adapter reads every page oldest first", async () => {
    const fills = [];
    for (let i = 0; i < 3; i++) {
      const placed = await venue.place(taking());
      if (placed.kind !== "filled") throw new Error(`order ${i} did not fill: ${placed.kind}`);
      fills.push(...placed.fills);
    }
    const first = (await call("GET", "/portfolio/history?cursor=&limit=1")).body as { data: { matchId: string }[]; nextCursor: string };
    expect(first.data.map((e) => e.matchId)).toEqual([fills.at(-1)!.tradeId]);
    const second = (await call("GET", `/portfolio/history?cursor=${first.nextCursor}&limit=100`)).body as { data: unknown[]; nextCursor: string | null };
    expect(second).toMatchObject({ data: expect.any(Array), nextCursor: null });
    expect(second.data).toHaveLength(fills.length - 1);
    expect(await venue.trades()).toEqual(fills.map((f) => ({ ...f, clientOrderId: "" })));
    expect((await call("GET", "/portfolio/history?cursor=&limit=101")).status).toBe(400);
    // from and to keep the entries of a block time within them, as Limitless's Get History filters them
    const later = new Date(Date.now() + 60_000).toISOString();
    expect((await call("GET", `/portfolio/history?cursor=&limit=100&from=${later}`)).body).toEqual({ data: [], nextCursor: null });
    expect(((await call("GET", `/portfolio/history?cursor=&limit=100&to=${later}`)).body as { data: unknown[] }).data).toHaveLength(fills.length);
    expect((await call("GET", "/portfolio/history?cursor=&limit=100&from=yesterday")).status).toBe(400);
  });

  it("speaks Engine.IO 4: handshake, namespace join, subscription, pings answered", async () => {
    const ws = new WebSocket(engineIoUrl(sim.wsUrl));
    const frames: string[] = [];
    ws.on("message", (d) => {
      const text = d.toString();
      frames.push(text);
      if (text.startsWith("0")) ws.send("40/markets,");
      if (text.startsWith("40/markets,")) ws.send(`42/markets,["subscribe_market_prices",{"marketSlugs":["${slug}"]}]`);
    });
    const deadline = Date.now() + 10_000;
    while (!frames.some((f) => f.startsWith('42/markets,["orderbookUpdate"')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    ws.terminate();
    expect(JSON.parse(frames[0]!.slice(1))).toMatchObject({ upgrades: [], pingInterval: 25_000, pingTimeout: 20_000 });
    const update = JSON.parse(frames.find((f) => f.startsWith('42/markets,["orderbookUpdate"'))!.slice("42/markets,".length));
    expect(update[1]).toMatchObject({ marketSlug: slug, orderbook: { bids: expect.any(Array), asks: expect.any(Array) } });
    expect(typeof update[1].orderbook.bids[0].size).toBe("string");
  });

  it("leaves an order answered 503 unknown, for the venue may have taken it, and finds its fills", async () => {
    // a gateway in front of the venue that answers 503 to every order, after the venue has taken it
    const gateway = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k.startsWith("lmts-") || k === "content-type")) as Record<string, string>;
      const answer = await fetch(sim.url + req.url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      const body = await answer.text();
      if (req.method === "POST" && req.url === "/orders") return res.writeHead(503, { "content-type": "application/json" }).end('{"message":"Service Unavailable","statusCode":503}');
      res.writeHead(answer.status, { "content-type": "application/json" }).end(body);
    });
    await new Promise<void>((r) => gateway.listen(0, "127.0.0.1", r));
    try {
      const behind = new LimitlessVenue({ baseUrl: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 400, startTimeoutMs: 300 });
      await behind.markets();
      const order = taking();
      expect(await behind.place(order)).toMatchObject({ kind: "unknown", reason: expect.stringContaining("HTTP 503") });
      expect(await venue.status(order.clientOrderId, order)).toMatchObject({ kind: "done", fills: [expect.objectContaining({ venueOrderId: expect.any(String) })] });
    } finally {
      await new Promise((r) => gateway.close(r));
    }
  });

  it("refuses a websocket that is not Engine.IO 4", async () => {
    const ws = new WebSocket(sim.wsUrl + "/socket.io/?EIO=3&transport=websocket");
    const status = await new Promise<number | undefined>((resolve) => {
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode));
      ws.on("error", () => resolve(undefined));
    });
    expect(status).toBe(400);
  });
});

describe("Limitless simulator with a taker delay", () => {
  it("answers a held order as unknown, never as taking nothing, and finds its fills once the delay has released it to the book", async () => {
    // A delay of seconds: the status read after the placement must come while the order is still held, which a loaded machine need not manage in 300 ms.
    const sim = await startLimitlessSim({ catalog, seed: 43, latencyScale: 0, tickMs: 40, takerDelayMs: 2_000 });
    const venue = new LimitlessVenue({ baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 400, startTimeoutMs: 300 });
    try {
      await venue.start();
      const m = venue.market(slug)!;
      const order: ChildOrder = { clientOrderId: `delayed-${process.pid}-${++n}`, venueMarketId: slug, outcome: "YES", side: "buy", limitPrice: 999_000n, shares: deliveredShares(m.feeModel, m.minOrderShares), expiresAt: Date.now() + 60_000 };
      const placed = await venue.place(order);
      expect(placed).toMatchObject({ kind: "unknown", reason: expect.stringMatching(/taker delay/) });
      await expect(venue.status(order.clientOrderId, order)).rejects.toThrow(/held by a taker delay/);
      // The simulator's timer releasing it was set before this one.
      await new Promise((r) => setTimeout(r, 2_100));
      const done = await venue.status(order.clientOrderId, order);
      expect(done).toMatchObject({ kind: "done", fills: [expect.objectContaining({ clientOrderId: order.clientOrderId })] });
      const fills = done.kind === "done" ? done.fills : [];
      expect((await venue.trades()).map((t) => t.tradeId)).toEqual(expect.arrayContaining(fills.map((f) => f.tradeId)));
    } finally {
      await venue.stop();
      await sim.stop();
    }
  });
});

describe("Limitless markets read again", () => {
  it("takes a fee rate the venue changes after start within the adapter's fee read interval", async () => {
    const sim = await startLimitlessSim({ catalog, seed: 47, latencyScale: 0, tickMs: 40 });
    const venue = new LimitlessVenue({ baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 400, startTimeoutMs: 300, feeReadIntervalMs: 50 });
    try {
      await venue.start();
      const raised = { kind: "limitless" as const, ratePpm: venue.market(slug)!.feeModel.ratePpm + 10_000n };
      sim.exchange.setFeeModel(slug, raised);
      await vi.waitFor(() => expect(venue.market(slug)!.feeModel).toEqual(raised), { timeout: 5_000, interval: 20 });
    } finally {
      await venue.stop();
      await sim.stop();
    }
  });
});
