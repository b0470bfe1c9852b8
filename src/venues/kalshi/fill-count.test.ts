import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MarketCatalog } from "../../markets/catalog.ts";
import { openMarket, takingChild } from "../../../test/helpers/kalshi-child.ts";
import { startRewritingProxy } from "../../../test/helpers/rewriting-proxy.ts";
import type { ChildOrder } from "../venue.ts";
import { KalshiVenue } from "./kalshi-venue.ts";
import { startKalshiSim, type KalshiSim } from "./sim/kalshi-sim.ts";

const catalog = MarketCatalog.load();

/**
 * The simulator behind a proxy that, while `hiding`, answers `GET /portfolio/fills` with no fills, and leaves out of it
 * the fills whose trade ids are in `hidden`: the venue's fill listing behind the order it has just executed (its create
 * answer and its order already count them). `beforeCancel` runs as a `DELETE` arrives, before the venue gets it.
 * `seen` is every request's method and path, with its query.
 */
async function lagging(target: string): Promise<{ url: string; hiding: { on: boolean }; hidden: Set<string>; beforeCancel: { run: () => void }; seen: string[]; close: () => Promise<void> }> {
  const hiding = { on: false };
  const hidden = new Set<string>();
  const beforeCancel = { run: () => {} };
  const seen: string[] = [];
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const listing = req.method === "GET" && req.url?.startsWith(`${to.pathname}/portfolio/fills`);
    if (hiding.on && listing) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ fills: [], cursor: "" }));
      return;
    }
    if (req.method === "DELETE") beforeCancel.run();
    const up = request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      if (!listing || hidden.size === 0) {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      r.on("data", (c: Buffer) => chunks.push(c));
      r.on("end", () => {
        const page = JSON.parse(Buffer.concat(chunks).toString()) as { fills: { trade_id: string }[]; cursor: string };
        res.writeHead(r.statusCode ?? 502, { "content-type": "application/json" }).end(JSON.stringify({ ...page, fills: page.fills.filter((f) => !hidden.has(f.trade_id)) }));
      });
    });
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}${to.pathname}`, hiding, hidden, beforeCancel, seen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe("Kalshi: an order the venue executed whose fills it does not list yet", () => {
  let sim: KalshiSim;
  let proxy: Awaited<ReturnType<typeof lagging>>;
  let venue: KalshiVenue;

  beforeAll(async () => {
    sim = await startKalshiSim({ catalog, seed: 5, latencyScale: 0, tickMs: 40 });
    proxy = await lagging(sim.url);
    venue = new KalshiVenue({ baseUrl: proxy.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 2_000 });
    await venue.start();
  });
  afterAll(async () => {
    await venue.stop();
    await proxy.close();
    await sim.stop();
  });

  it("is reported unknown, and its status is not 'never placed', until its fills can be read", async () => {
    const child = takingChild(venue, catalog, { name: "lag", ticks: 20n });
    proxy.hiding.on = true;
    proxy.seen.length = 0;
    // the venue took it: a fill the adapter reports as none would be released as never bought
    expect((await venue.place(child)).kind).toBe("unknown");
    expect(sim.exchange.trades().some((t) => t.clientOrderId === child.clientOrderId)).toBe(true);
    // an order made a moment ago has no fill past the historical cutoff (months back): the placement does not read the
    // market's whole historical fills for it, on the read path that goes ahead of the others
    expect(proxy.seen.filter((r) => r.includes("/historical/"))).toEqual([]);
    await expect(venue.status(child.clientOrderId, child)).rejects.toThrow(/fills/);
    // status reads the order, and with it when it was made: the historical fills it reads start then
    expect(proxy.seen.filter((r) => r.includes("/historical/fills")).every((r) => /[?&]min_ts=\d+/.test(r))).toBe(true);
    await expect(venue.cancel(child.clientOrderId, child)).rejects.toThrow(/fills/);
    proxy.hiding.on = false;
    expect(await venue.status(child.clientOrderId, child)).toMatchObject({ kind: "done", fills: [expect.objectContaining({ shares: child.shares })] });
  });

  it("reads no fills for an order that ended having filled nothing: its status and cancel cost the order's read only", async () => {
    const m = openMarket(venue, catalog);
    const below = venue.book(m.venueMarketId, "YES")!.bids[0]!.price;
    const child: ChildOrder = { clientOrderId: `nomatch-${process.pid}-${Date.now()}`, venueMarketId: m.venueMarketId, outcome: "YES", side: "buy", limitPrice: below, shares: m.minOrderShares, expiresAt: Date.now() + 30_000 };
    expect((await venue.place(child)).kind).toBe("rejected");
    proxy.seen.length = 0;
    expect(await venue.status(child.clientOrderId, child)).toEqual({ kind: "not_found" });
    expect(await venue.cancel(child.clientOrderId, child)).toEqual({ kind: "not_found" });
    expect(proxy.seen.filter((r) => r.includes("/fills"))).toEqual([]);
  });

  it("counts a fill that raced its cancel, which the order counts once cancelled, and is unknown until the fills list it", async () => {
    sim.faults.set({ resting: true });
    const child = takingChild(venue, catalog, { name: "race" });
    const placed = await venue.place({ ...child, shares: 2n * child.shares });
    sim.faults.set({ resting: false });
    if (placed.kind !== "open") throw new Error(`the child did not rest: ${placed.kind}`);
    // another trader takes what rests as the cancel is on its way, after the adapter read the order; the listing lags behind it
    let raced: string | undefined;
    proxy.beforeCancel.run = () => {
      raced = sim.takeResting(placed.venueOrderId, child.shares);
      if (raced !== undefined) proxy.hidden.add(raced);
    };
    try {
      await expect(venue.cancel(child.clientOrderId, { ...child, shares: 2n * child.shares })).rejects.toThrow(/fills/);
    } finally {
      proxy.beforeCancel.run = () => {};
      proxy.hidden.clear();
    }
    expect(raced).toBeDefined();
    const after = await venue.cancel(child.clientOrderId, { ...child, shares: 2n * child.shares });
    expect(after).toMatchObject({ kind: "done", venueOrderId: placed.venueOrderId });
    expect(after.kind === "done" && after.fills.map((f) => f.tradeId)).toEqual([...placed.fills.map((f) => f.tradeId), raced]);
  });
});

describe("Kalshi: an order whose status the adapter does not know", () => {
  it("is not taken for ended: status and cancel throw, as it may still rest and fill", async () => {
    const sim = await startKalshiSim({ catalog, seed: 7, latencyScale: 0, tickMs: 40 });
    const proxy = await startRewritingProxy(sim.url);
    const venue = new KalshiVenue({ baseUrl: proxy.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 2_000 });
    await venue.start();
    try {
      sim.faults.set({ resting: true });
      const child = takingChild(venue, catalog, { name: "unknown-status" });
      const placed = await venue.place({ ...child, shares: 2n * child.shares });
      sim.faults.set({ resting: false });
      if (placed.kind !== "open") throw new Error(`the child did not rest: ${placed.kind}`);
      const withStatus = (status: string) => (path: string, body: unknown) =>
        path.endsWith(`/portfolio/orders/${placed.venueOrderId}`) ? { order: { ...(body as { order: object }).order, status } } : body;
      proxy.rewrite = withStatus("pending");
      await expect(venue.status(child.clientOrderId, child)).rejects.toThrow(/pending/);
      await expect(venue.cancel(child.clientOrderId, child)).rejects.toThrow(/pending/);
      proxy.rewrite = withStatus("executed");
      expect(await venue.status(child.clientOrderId, child)).toMatchObject({ kind: "done", venueOrderId: placed.venueOrderId });
    } finally {
      await venue.stop();
      await proxy.stop();
      await sim.stop();
    }
  });
});
