import { ClobClient, OrderType, Side, type OrderBookSummary } from "@polymarket/clob-client";
import { createWalletClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { polygon } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MarketCatalog } from "../../../markets/catalog.ts";
import { startPolymarketSim, type PolymarketSim } from "./index.ts";

/**
 * Polymarket's own TypeScript client, pointed at the simulator: if it can read books and place,
 * find and list orders here, the simulator speaks the protocol the adapter will meet in production.
 */
describe("@polymarket/clob-client against the simulator", () => {
  const catalog = MarketCatalog.load();
  let sim: PolymarketSim;
  let client: ClobClient;
  const wallet = () => createWalletClient({ account: privateKeyToAccount(sim.credentials.privateKey), chain: polygon, transport: http("http://127.0.0.1:9") });
  const creds = () => ({ key: sim.credentials.apiKey, secret: sim.credentials.secret, passphrase: sim.credentials.passphrase });
  const openListing = () => catalog.events().find((e) => e.status === "open" && e.listings.some((l) => l.venue === "polymarket-sim"))!.listings.find((l) => l.venue === "polymarket-sim")!;

  beforeAll(async () => {
    // one item a page, so that every listing takes the client through the cursor
    sim = await startPolymarketSim({ catalog, seed: 42, latencyScale: 0, tickMs: 1_000_000, pageSize: 1 });
    client = new ClobClient(sim.url, 137, wallet(), creds());
  });
  afterAll(async () => {
    await sim.stop();
  });

  it("pages through the markets until the end cursor", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.getMarkets(cursor);
      seen.push(...page.data.map((m: { condition_id: string }) => m.condition_id));
      cursor = page.next_cursor;
    } while (cursor !== "LTE=");
    const own = MarketCatalog.load(new URL("./own-markets.json", import.meta.url)).events();
    const expected = [...catalog.events(), ...own].flatMap((e) => e.listings.filter((l) => l.venue === "polymarket-sim").map((l) => l.venueMarketId));
    expect(seen.sort()).toEqual(expected.sort());
  });

  it("reads a book, its batch form, its hash, tick size, neg-risk flag and fee rate", async () => {
    const token = openListing().outcomeIds.YES;
    const book: OrderBookSummary = await client.getOrderBook(token);
    expect(book.asset_id).toBe(token);
    expect(book.bids.length).toBeGreaterThan(0);
    expect(book.asks.length).toBeGreaterThan(0);
    for (const l of [...book.bids, ...book.asks]) expect(l.price).toMatch(/^0\.\d+$/);
    expect(await client.getOrderBookHash({ ...book })).toBe(book.hash);
    const [again] = await client.getOrderBooks([{ token_id: token } as never]);
    expect(again).toEqual(book);
    expect(await client.getTickSize(token)).toBe("0.01");
    expect(await client.getNegRisk(token)).toBe(false);
    expect(await client.getFeeRateBps(token)).toBe(0);
  });

  it("creates, signs and posts a FAK buy; finds the order and its trades", async () => {
    const token = openListing().outcomeIds.YES;
    const book: OrderBookSummary = await client.getOrderBook(token);
    const bestAsk = book.asks[book.asks.length - 1]!; // Polymarket lists asks worst first
    const signed = await client.createOrder({ tokenID: token, price: Number(bestAsk.price), size: 5, side: Side.BUY }, { tickSize: "0.01" });
    const res = await client.postOrder(signed, OrderType.FAK);
    expect(res).toMatchObject({ success: true, status: "matched", takingAmount: "5" });
    const order = await client.getOrder(res.orderID);
    expect(order).toMatchObject({ id: res.orderID, status: "MATCHED", asset_id: token, size_matched: "5", side: "BUY" });
    const trades = await client.getTrades({ asset_id: token });
    expect(trades.map((t) => t.taker_order_id)).toContain(res.orderID);
    expect(trades.reduce((s, t) => s + Number(t.size), 0)).toBe(5);
  });

  it("shows a resting order as LIVE, cancels it by DELETE /order, and lists every trade over the trade cursor's pages", async () => {
    const token = openListing().outcomeIds.YES;
    const book: OrderBookSummary = await client.getOrderBook(token);
    const bestAsk = book.asks[book.asks.length - 1]!;
    sim.faults.set({ resting: true });
    try {
      const signed = await client.createOrder({ tokenID: token, price: Number(bestAsk.price), size: 10, side: Side.BUY }, { tickSize: "0.01" });
      const res = await client.postOrder(signed, OrderType.FAK);
      expect(res).toMatchObject({ success: true, status: "live", takingAmount: "5" });
      expect(await client.getOrder(res.orderID)).toMatchObject({ status: "LIVE", original_size: "10", size_matched: "5" });
      expect(await client.cancelOrder({ orderID: res.orderID })).toEqual({ canceled: [res.orderID], not_canceled: {} });
      expect(await client.getOrder(res.orderID)).toMatchObject({ status: "CANCELED", size_matched: "5" });
      expect(await client.cancelOrder({ orderID: res.orderID })).toMatchObject({ canceled: [], not_canceled: { [res.orderID]: expect.any(String) } });
    } finally {
      sim.faults.reset();
    }
    const trades = await client.getTrades();
    expect(trades.length).toBeGreaterThan(1);
    expect(new Set(trades.map((t) => t.id)).size).toBe(trades.length);
    expect(trades.map((t) => t.id).sort()).toEqual(sim.exchange.trades().map((t) => t.tradeId).sort());
  });

  it("refuses an order whose signed expiration has passed when it arrives, in the venue's words", async () => {
    const token = openListing().outcomeIds.YES;
    const signed = await client.createOrder({ tokenID: token, price: 0.99, size: 5, side: Side.BUY, expiration: Math.floor(Date.now() / 1000) - 1 }, { tickSize: "0.01" });
    expect(await client.postOrder(signed, OrderType.FAK)).toMatchObject({ status: 400, error: "invalid expiration" });
  });

  it("refuses an order signed with another API secret, as the venue does", async () => {
    const forger = new ClobClient(sim.url, 137, wallet(), { ...creds(), secret: Buffer.alloc(32, 1).toString("base64") });
    const token = openListing().outcomeIds.YES;
    const signed = await forger.createOrder({ tokenID: token, price: 0.99, size: 5, side: Side.BUY }, { tickSize: "0.01" });
    const res = await forger.postOrder(signed, OrderType.FAK);
    expect(res).toMatchObject({ status: 401, error: "Unauthorized/Invalid api key" });
  });
});
