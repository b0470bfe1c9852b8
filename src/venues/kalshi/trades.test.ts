import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { MarketCatalog } from "../../markets/catalog.ts";
import { openMarket, readsOf, takingChild, tradeOn } from "../../../test/helpers/kalshi-child.ts";
import { KalshiVenue } from "./kalshi-venue.ts";
import { startKalshiSim } from "./sim/kalshi-sim.ts";

const catalog = MarketCatalog.load();
const HOUR_MS = 3600 * 1000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The simulator behind a proxy that, the first time it answers a GET whose path (without query) is one of `after`'s keys,
 * runs that hook once the venue's answer is in and before passing it on: something that happens between two of the adapter's reads.
 */
async function between(target: string, after: Map<string, () => Promise<void>>): Promise<{ url: string; close: () => Promise<void> }> {
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    const route = (req.url ?? "").split("?")[0]!.slice(to.pathname.length);
    const hook = req.method === "GET" ? after.get(route) : undefined;
    if (hook) after.delete(route);
    const up = request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      const chunks: Buffer[] = [];
      r.on("data", (c: Buffer) => chunks.push(c));
      r.on("end", () => {
        void (hook ?? (async () => {}))().then(() => res.writeHead(r.statusCode ?? 502, r.headers).end(Buffer.concat(chunks)));
      });
    });
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}${to.pathname}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe("Kalshi trades(): the account's fills while it trades and while the historical cutoff moves", () => {
  it("lists every fill once, and no fill's order is missing, whatever happens between its reads", async () => {
    const clock = { offset: 0, now: () => Date.now() + clock.offset };
    const sim = await startKalshiSim({ catalog, seed: 21, latencyScale: 0, tickMs: 40, clock, historicalAfterMs: 90 * DAY_MS });
    const after = new Map<string, () => Promise<void>>();
    const proxy = await between(sim.url, after);
    const venue = new KalshiVenue({ baseUrl: proxy.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, clock, requestTimeoutMs: 2_000 });
    await venue.start();
    try {
      const place = async (n: number) => {
        const placed = await venue.place(takingChild(venue, catalog, { name: `trades-${n}`, now: clock.now() }));
        if (placed.kind !== "filled") throw new Error(`child ${n} was not filled: ${placed.kind}`);
        return placed.fills;
      };
      const first = await place(1);
      // a child fills after the audit read the account's orders: its fill is not one of an order the account does not have
      let second: Awaited<ReturnType<typeof place>> = [];
      after.set("/portfolio/orders", async () => {
        second = await place(2);
      });
      const traded = (await venue.trades()).map((f) => f.tradeId);
      expect(traded).toEqual(expect.arrayContaining(first.map((f) => f.tradeId)));
      expect(second.length).toBeGreaterThan(0);

      // the cutoff passes the fills between the reads of the two tiers: each fill is in one or the other
      clock.offset += 90 * DAY_MS - HOUR_MS;
      for (const list of ["/portfolio/fills", "/historical/fills"]) {
        after.set(list, async () => {
          after.clear();
          clock.offset += 2 * HOUR_MS;
        });
      }
      expect((await venue.trades()).map((f) => f.tradeId)).toEqual([...first, ...second].map((f) => f.tradeId));
    } finally {
      await venue.stop();
      await proxy.close();
      await sim.stop();
    }
  });

  it("reads at each call only the fills and orders made since the last one began (less an hour for the clocks), every page of them", async () => {
    const clock = { offset: 0, now: () => Date.now() + clock.offset };
    const sim = await startKalshiSim({ catalog, seed: 22, latencyScale: 0, tickMs: 40, clock });
    const after = new Map<string, () => Promise<void>>();
    const proxy = await between(sim.url, after);
    const venue = new KalshiVenue({ baseUrl: proxy.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, clock, requestTimeoutMs: 2_000 });
    await venue.start();
    try {
      const ticker = openMarket(venue, catalog).venueMarketId;
      const ids = async () => (await venue.trades()).map((f) => f.tradeId);
      // a history of three pages, read whole by the first call
      await tradeOn(sim, ticker, 450, clock.now());
      clock.offset += 2 * HOUR_MS;
      const first = await ids();
      expect(new Set(first).size).toBe(450);

      // two pages more; a fill made while the second call reads its first page is listed by the third
      await tradeOn(sim, ticker, 210, clock.now());
      after.set("/portfolio/fills", () => tradeOn(sim, ticker, 1, clock.now()));
      const reads = readsOf(venue);
      const second = await ids();
      expect(second.slice(0, 450)).toEqual(first);
      expect(new Set(second).size).toBe(660);
      const listed = (path: string) => reads().then((rs) => rs.filter((r) => r.path === path).reduce((n, r) => n + r.listed, 0));
      // the earlier history is not read again: the new fills, and the one the page after the inserted fill repeats
      expect(await listed("/portfolio/fills")).toBe(211);
      expect(await listed("/portfolio/orders")).toBe(211);

      const third = await ids();
      expect(third.slice(0, 660)).toEqual(second);
      expect(new Set(third).size).toBe(661);
    } finally {
      await venue.stop();
      await proxy.close();
      await sim.stop();
    }
  });

  it("names the order of a fill in its window that was made before it, an order that rested, from an earlier read", async () => {
    const clock = { offset: 0, now: () => Date.now() + clock.offset };
    const sim = await startKalshiSim({ catalog, seed: 23, latencyScale: 0, tickMs: 40, clock });
    const venue = new KalshiVenue({ baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, clock, requestTimeoutMs: 2_000 });
    await venue.start();
    try {
      sim.faults.set({ resting: true });
      const child = takingChild(venue, catalog, { name: "rests", now: clock.now() });
      const placed = await venue.place({ ...child, shares: 2n * child.shares });
      sim.faults.set({ resting: false });
      if (placed.kind !== "open") throw new Error(`the child did not rest: ${placed.kind}`);
      // two hours on, another trader takes what rests: the order was made before the window of the read after this one
      clock.offset += 2 * HOUR_MS;
      expect(await venue.trades()).toEqual(placed.fills);
      const taken = sim.takeResting(placed.venueOrderId, child.shares);
      const traded = await venue.trades();
      expect(traded.map((f) => f.tradeId)).toEqual([...placed.fills.map((f) => f.tradeId), taken]);
      expect(traded.at(-1)).toMatchObject({ clientOrderId: child.clientOrderId, venueOrderId: placed.venueOrderId, shares: child.shares, fee: 0n });
    } finally {
      await venue.stop();
      await sim.stop();
    }
  });
});
