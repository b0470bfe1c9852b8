import { afterEach, describe, expect, it } from "vitest";
import { startRewritingProxy } from "../../../test/helpers/rewriting-proxy.ts";
import { orderFee } from "../../domain/fees.ts";
import { MarketCatalog } from "../../markets/catalog.ts";
import type { ChildOrder } from "../venue.ts";
import { OpinionVenue, startOpinionSim } from "./index.ts";
import { OPINION_MIN_FEE } from "./wire.ts";

const catalog = MarketCatalog.load();
const running: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of running.splice(0).reverse()) await r.stop();
});

async function setup() {
  const sim = await startOpinionSim({ catalog, seed: 31, latencyScale: 0, tickMs: 40 });
  running.push(sim);
  const venue = new OpinionVenue({ baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, startTimeoutMs: 300 });
  await venue.start();
  running.push(venue);
  const marketId = catalog
    .events()
    .flatMap((e) => e.listings)
    .find((l) => l.venue === venue.id && venue.market(l.venueMarketId)?.status === "open")!.venueMarketId;
  return { sim, venue, marketId };
}

describe("OpinionVenue", () => {
  it("reads the fill its resting order made as a maker, taken by another's order, without fee, and charges its taker fills their own fee", async () => {
    const { sim, venue, marketId } = await setup();
    const asks = venue.book(marketId, "YES")!.asks;
    const order: ChildOrder = { clientOrderId: "maker-fill", venueMarketId: marketId, outcome: "YES", side: "buy", limitPrice: asks[asks.length - 1]!.price, shares: 400_000_000n, expiresAt: Date.now() + 60_000 };
    sim.faults.set({ resting: true });
    const placed = await venue.place(order);
    if (placed.kind !== "open") throw new Error(`the order did not rest: ${placed.kind}`);
    sim.faults.reset();
    // the taker part's curve fee is over the minimum, so that a fee on the maker part would show
    expect(orderFee(venue.market(marketId)!.feeModel, placed.fills)).toBeGreaterThan(OPINION_MIN_FEE);
    const taken = 50_000_000n;
    const tradeId = sim.takeResting(placed.venueOrderId, taken);
    const made = { tradeId, venueOrderId: placed.venueOrderId, clientOrderId: order.clientOrderId, side: "buy", price: order.limitPrice, shares: taken, fee: 0n };
    // what the order service settles: cancelled, with every share the order bought, the maker's without fee
    expect(await venue.cancel(order.clientOrderId)).toEqual({ kind: "done", venueOrderId: placed.venueOrderId, fills: [...placed.fills, made] });
    expect(await venue.trades()).toEqual([...placed.fills, made].map((f) => ({ ...f, clientOrderId: "" })));
  });

  it("does not take an order whose status it does not know for ended: status and cancel throw, as it may still rest and fill", async () => {
    const sim = await startOpinionSim({ catalog, seed: 31, latencyScale: 0, tickMs: 40 });
    running.push(sim);
    const proxy = await startRewritingProxy(sim.url);
    running.push(proxy);
    const venue = new OpinionVenue({ baseUrl: proxy.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, startTimeoutMs: 300 });
    await venue.start();
    running.push(venue);
    const marketId = catalog.events().flatMap((e) => e.listings).find((l) => l.venue === venue.id && venue.market(l.venueMarketId)?.status === "open")!.venueMarketId;
    const asks = venue.book(marketId, "YES")!.asks;
    const order: ChildOrder = { clientOrderId: "unknown-status", venueMarketId: marketId, outcome: "YES", side: "buy", limitPrice: asks[asks.length - 1]!.price, shares: 400_000_000n, expiresAt: Date.now() + 60_000 };
    sim.faults.set({ resting: true });
    const placed = await venue.place(order);
    if (placed.kind !== "open") throw new Error(`the order did not rest: ${placed.kind}`);
    sim.faults.reset();
    const withStatus = (status: number) => (path: string, body: unknown) => {
      if (!path.endsWith(`/order/${placed.venueOrderId}`)) return body;
      const b = body as { result: { orderData: object } };
      return { ...b, result: { ...b.result, orderData: { ...b.result.orderData, status } } };
    };
    proxy.rewrite = withStatus(6);
    await expect(venue.status(order.clientOrderId)).rejects.toThrow(/status 6/);
    await expect(venue.cancel(order.clientOrderId)).rejects.toThrow(/status 6/);
    proxy.rewrite = withStatus(3);
    expect(await venue.cancel(order.clientOrderId)).toMatchObject({ kind: "done", venueOrderId: placed.venueOrderId });
  });

  it("discovers each unlisted market once though a market added between two reads of the market list shows one on both pages", async () => {
    const { sim, venue } = await setup();
    const listed = new Set(catalog.events().flatMap((e) => e.listings.filter((l) => l.venue === venue.id).map((l) => l.venueMarketId)));
    const proxy = await startRewritingProxy(sim.url);
    running.push(proxy);
    // discover() reads only the REST API: the adapter is not started
    const discovering = new OpinionVenue({ baseUrl: proxy.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog });
    // 21 markets, 20 a page: the venue's own, with copies of its unlisted one under other ids; one more is listed at the
    // head after the first page was read, so the second page starts with the first's last
    type Page = { total: number; list: { marketId: number; marketTitle: string }[] };
    let first: Page | undefined;
    const copy = (m: Page["list"][number], marketId: number) => ({ ...m, marketId, marketTitle: `${m.marketTitle} (${marketId})` });
    proxy.rewrite = (path, body) => {
      const page = (body as { result: Page | null }).result;
      if (!path.endsWith("/market") || page?.list === undefined) return body;
      if (first) return { ...(body as object), result: { total: first.total + 1, list: [first.list[19]!, first.list[20]!] } };
      const unlisted = page.list.find((m) => !listed.has(String(m.marketId)))!;
      first = { total: 21, list: [...page.list, ...Array.from({ length: 21 - page.list.length }, (_, i) => copy(unlisted, 90_001 + i))] };
      return { ...(body as object), result: { ...first, list: first.list.slice(0, 20) } };
    };
    const found = (await discovering.discover()).map((m) => m.venueMarketId);
    expect(found.sort()).toEqual(first!.list.map((m) => String(m.marketId)).filter((id) => !listed.has(id)).sort());
  });

  it("finds a child after a restart though an order placed between two reads of the order list shows it on both pages", async () => {
    const { sim, venue, marketId } = await setup();
    const expiresAt = Date.now() + 60_000;
    // 500 shares at 0.01, the minimum order: nothing to take, but the venue keeps the order
    const resting = (i: number): ChildOrder => ({ clientOrderId: `unmatched-${i}`, venueMarketId: marketId, outcome: "YES", side: "buy", limitPrice: 10_000n, shares: 500_000_000n, expiresAt });
    expect((await venue.place(resting(0))).kind).toBe("rejected");
    const asks = venue.book(marketId, "YES")!.asks;
    const child: ChildOrder = { clientOrderId: "child", venueMarketId: marketId, outcome: "YES", side: "buy", limitPrice: asks[asks.length - 1]!.price, shares: 100_000_000n, expiresAt };
    const placed = await venue.place(child);
    if (placed.kind !== "filled") throw new Error(`the child did not fill: ${placed.kind}`);
    // 21 orders, 20 a page newest first: the child is the last of the first page
    for (let i = 1; i <= 19; i++) await venue.place(resting(i));
    const proxy = await startRewritingProxy(sim.url);
    running.push(proxy);
    const restarted = new OpinionVenue({ baseUrl: proxy.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, startTimeoutMs: 300 });
    await restarted.start();
    running.push(restarted);
    // an order placed after the first page was read shifts the list by one: the second page starts with the first's last
    const pages: { total: number; list: { orderId: string }[] }[] = [];
    proxy.rewrite = (path, body) => {
      const page = (body as { result: { total: number; list?: { orderId: string }[] } }).result;
      if (!path.endsWith("/order") || page.list === undefined) return body;
      pages.push({ total: page.total, list: page.list });
      const first = pages[0]!;
      return pages.length === 1 ? body : { ...(body as object), result: { total: page.total + 1, list: [first.list[first.list.length - 1]!, ...page.list] } };
    };
    expect(await restarted.status(child.clientOrderId, child)).toEqual({ kind: "done", venueOrderId: placed.venueOrderId, fills: placed.fills });
    expect(pages.map((p) => p.list.length)).toEqual([20, 1]);
  });
});
