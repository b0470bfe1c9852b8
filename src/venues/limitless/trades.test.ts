import { describe, expect, it, vi } from "vitest";
import { deliveredShares } from "../../domain/fees.ts";
import { ONE } from "../../domain/money.ts";
import { MarketCatalog } from "../../markets/catalog.ts";
import type { HttpResult } from "../net/http.ts";
import type { ChildOrder } from "../venue.ts";
import { LimitlessVenue } from "./limitless-venue.ts";
import { startLimitlessSim } from "./sim/limitless-sim.ts";

const catalog = MarketCatalog.load();
const slug = catalog.events().flatMap((e) => e.listings.filter((l) => l.venue === "limitless-sim" && e.status === "open"))[0]!.venueMarketId;
const HOUR_MS = 3_600_000;

describe("Limitless trades(): the account's history read a window at a time", () => {
  it("reads at each call only the history made since the last one began (less an hour for the clocks), every page of it, and each new order once", async () => {
    const clock = { offset: 0, now: () => Date.now() + clock.offset };
    const sim = await startLimitlessSim({ catalog, seed: 43, latencyScale: 0, tickMs: 40, clock });
    const venue = new LimitlessVenue({ baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, clock, requestTimeoutMs: 2_000 });
    await venue.start();
    let n = 0;
    const place = async (count: number) => {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const m = venue.market(slug)!;
        const room = venue.book(slug, "YES")!.asks[0]!.price + 20n * m.tickSize;
        const child: ChildOrder = { clientOrderId: `window-${process.pid}-${++n}`, venueMarketId: slug, outcome: "YES", side: "buy", limitPrice: room < ONE ? room : ONE - m.tickSize, shares: deliveredShares(m.feeModel, m.minOrderShares), expiresAt: clock.now() + 60_000 };
        const placed = await venue.place(child);
        if (placed.kind !== "filled") throw new Error(`order ${n} did not fill: ${placed.kind}`);
        ids.push(...placed.fills.map((f) => f.tradeId));
      }
      return ids;
    };
    // every GET the venue sends from here, with what a history page lists; `during` runs once after the next history page
    const send = vi.spyOn(venue as unknown as { send: (method: string, path: string) => Promise<HttpResult> }, "send");
    const original = (LimitlessVenue.prototype as unknown as { send: (...args: unknown[]) => Promise<HttpResult> }).send;
    let during: (() => Promise<unknown>) | undefined;
    const reads: { path: string; listed: number }[] = [];
    send.mockImplementation(async (method: string, path: string, ...rest: unknown[]) => {
      const res = await original.call(venue, method, path, ...rest);
      if (method !== "GET") return res;
      const route = path.split("?")[0]!;
      reads.push({ path: route, listed: ((res as { body?: { data?: unknown[] } }).body?.data ?? []).length });
      if (route === "/portfolio/history" && during) {
        const run = during;
        during = undefined;
        const mark = reads.length;
        await run();
        reads.splice(mark);
      }
      return res;
    });
    try {
      const ids = async () => (await venue.trades()).map((f) => f.tradeId);
      const listed = (path: string) => reads.filter((r) => r.path === path).reduce((k, r) => k + r.listed, 0);
      const orderReads = () => reads.filter((r) => r.path.startsWith("/orders/")).length;

      // a history of two pages at least, read whole by the first call
      const early = await place(110);
      clock.offset += 2 * HOUR_MS;
      const first = await ids();
      expect(new Set(first)).toEqual(new Set(early));

      // more of the account's trading; an order filled while the second call reads its first page is listed by the third
      const later = await place(30);
      let between: string[] = [];
      during = async () => (between = await place(1));
      reads.length = 0;
      const second = await ids();
      expect(second.slice(0, first.length)).toEqual(first);
      expect(new Set(second)).toEqual(new Set([...early, ...later]));
      // the earlier history is not read again: the new entries, and the one the page after the inserted order repeats
      expect(listed("/portfolio/history")).toBeLessThanOrEqual(later.length + between.length);
      expect(orderReads()).toBe(30);

      const third = await ids();
      expect(third.slice(0, second.length)).toEqual(second);
      expect(new Set(third)).toEqual(new Set([...early, ...later, ...between]));
    } finally {
      await venue.stop();
      await sim.stop();
    }
  });
});
