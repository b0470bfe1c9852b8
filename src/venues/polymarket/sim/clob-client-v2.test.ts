import { adjustBuyAmountForFees, ClobClient, OrderType, Side, type ApiKeyCreds, type OrderBookSummary } from "@polymarket/clob-client-v2";
import { createWalletClient, http, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { polygon } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatMicro, parseMicro } from "../../../domain/money.ts";
import { MarketCatalog } from "../../../markets/catalog.ts";
import { startPolymarketSim, type PolymarketSim } from "./index.ts";

/**
 * Polymarket's current official client (CLOB V2), pointed at the simulator as a new user would point
 * it at clob.polymarket.com: if it reads the version, markets and books, derives API keys for a fresh
 * wallet, and places, lists and cancels V2-signed orders here, the simulator speaks the protocol the
 * adapter will meet in production.
 */
describe("@polymarket/clob-client-v2 against the simulator", () => {
  const catalog = MarketCatalog.load();
  const SETTLE_MS = 400;
  let sim: PolymarketSim;
  const wallet = (key: Hex) => createWalletClient({ account: privateKeyToAccount(key), chain: polygon, transport: http("http://127.0.0.1:9") });
  const client = (key: Hex, creds?: ApiKeyCreds) => new ClobClient({ host: sim.url, chain: 137, signer: wallet(key), ...(creds ? { creds } : {}) });
  const openListing = () => catalog.events().find((e) => e.status === "open" && e.listings.some((l) => l.venue === "polymarket-sim"))!.listings.find((l) => l.venue === "polymarket-sim")!;
  /** An open market with a fee rate, which the simulator serves as of fee exponent 0. */
  const unexponented = catalog.events().flatMap((e) => (e.status === "open" ? e.listings : [])).find((l) => l.venue === "polymarket-sim" && (l.feeRatePpm ?? 0n) > 0n)!;
  /** The best ask level: Polymarket lists asks worst first. */
  const bestAsk = (book: OrderBookSummary) => book.asks[book.asks.length - 1]!;
  let trader: ClobClient;

  beforeAll(async () => {
    // one item a page, so that every listing takes the client through the cursor
    sim = await startPolymarketSim({ catalog, seed: 42, latencyScale: 0, tickMs: 1_000_000, pageSize: 1, settleMs: SETTLE_MS, feeExponents: { [unexponented.venueMarketId]: 0 } });
    const fresh = generatePrivateKey();
    trader = client(fresh, await client(fresh).createOrDeriveApiKey());
  });
  afterAll(async () => {
    await sim.stop();
  });

  it("answers version 2, so the client signs V2 orders", async () => {
    expect(await client(sim.credentials.privateKey).getVersion()).toBe(2);
  });

  it("pages through the markets until the end cursor", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await trader.getMarkets(cursor);
      seen.push(...page.data.map((m: { condition_id: string }) => m.condition_id));
      cursor = page.next_cursor;
    } while (cursor !== "LTE=");
    const own = MarketCatalog.load(new URL("./own-markets.json", import.meta.url)).events();
    const expected = [...catalog.events(), ...own].flatMap((e) => e.listings.filter((l) => l.venue === "polymarket-sim").map((l) => l.venueMarketId));
    expect(seen.sort()).toEqual(expected.sort());
  });

  it("reads a book, its batch form and hash, and the market's tick size, neg-risk flag and fee curve", async () => {
    const listing = openListing();
    const token = listing.outcomeIds.YES;
    const book = await trader.getOrderBook(token);
    expect(book.asset_id).toBe(token);
    expect(book.bids.length).toBeGreaterThan(0);
    expect(book.asks.length).toBeGreaterThan(0);
    expect(await trader.getOrderBookHash({ ...book })).toBe(book.hash);
    const [again] = await trader.getOrderBooks([{ token_id: token } as never]);
    expect(again).toEqual(book);
    expect(await trader.getTickSize(token)).toBe("0.01");
    expect(await trader.getNegRisk(token)).toBe(false);
    const fee = sim.exchange.market(listing.venueMarketId)!.feeModel;
    const info = await trader.getClobMarketInfo(listing.venueMarketId);
    expect(info.fd).toMatchObject({ r: Number(fee.ratePpm) / 1e6, to: true });
    expect(await trader.getFeeExponent(token)).toBe(fee.kind === "polymarket" ? fee.exponent : 1);
  });

  it("serves a market of fee exponent 0 as an fd without e, which the client reads as 0, and charges a buy the fee the client counts on: rate × shares", async () => {
    const token = unexponented.outcomeIds.YES;
    const rate = Number(unexponented.feeRatePpm!) / 1e6;
    expect((await trader.getClobMarketInfo(unexponented.venueMarketId)).fd).toEqual({ r: rate, to: true });
    expect(await trader.getFeeExponent(token)).toBe(0);
    const price = Number(bestAsk(await trader.getOrderBook(token)).price);
    const amount = Math.round(price * 10 * 100) / 100;
    const res = await trader.createAndPostMarketOrder({ tokenID: token, amount, side: Side.BUY }, { tickSize: "0.01" }, OrderType.FOK);
    expect(res).toMatchObject({ success: true, status: "matched", takingAmount: "10" });
    // what the client sets aside from a balance of just the amount: amount / price × rate × (p(1 − p))^0
    const expected = amount - adjustBuyAmountForFees(amount, price, amount, rate, 0, 0);
    const charged = sim.exchange.matches(res.orderID).reduce((s, f) => s + f.fee, 0n);
    expect(charged).toBe(BigInt(Math.round(expected * 1e5)) * 10n);
    expect(charged).toBe(unexponented.feeRatePpm! * 10n);
  });

  it("creates API keys for a fresh wallet with L1 auth, and derives the same keys again", async () => {
    const fresh = generatePrivateKey();
    const created = await client(fresh).createOrDeriveApiKey();
    expect(created.key).toMatch(/^[0-9a-f]{8}-/);
    expect(await client(fresh).createOrDeriveApiKey()).toEqual(created);
    expect(await client(fresh).deriveApiKey()).toEqual(created);
    expect(await client(generatePrivateKey()).deriveApiKey()).toMatchObject({ key: undefined });
  });

  it("fills a V2-signed FOK market buy: trade ids in the answer, the settlement's transaction hash later, the trade in getTrades", async () => {
    const token = openListing().outcomeIds.YES;
    const level = bestAsk(await trader.getOrderBook(token));
    // 10 shares' worth at the best ask, which has them: a whole number of shares, as the simulator needs
    const amount = Math.round(Number(level.price) * 10 * 100) / 100;
    expect(Number(level.size)).toBeGreaterThanOrEqual(10);
    const res = await trader.createAndPostMarketOrder({ tokenID: token, amount, side: Side.BUY }, { tickSize: "0.01" }, OrderType.FOK);
    expect(res).toMatchObject({ success: true, status: "matched", takingAmount: "10" });
    const tradeIds = res.tradeIDs ?? [];
    expect(tradeIds.length).toBeGreaterThan(0);
    const trades = await trader.getTrades({ asset_id: token });
    expect(trades.map((t) => t.id).sort()).toEqual([...tradeIds].sort());
    for (const t of trades) expect(t).toMatchObject({ taker_order_id: res.orderID, status: expect.stringMatching(/^(MINED|CONFIRMED)$/) });
    // the client waited for the hashes: the answer named the trades, the trades name their transactions once mined
    expect(res.transactionsHashes?.sort()).toEqual(trades.map((t) => t.transaction_hash).sort());
    expect(await trader.getOrder(res.orderID)).toMatchObject({ id: res.orderID, status: "MATCHED", size_matched: "10" });
  });

  it("fills a FAK BUY by spending its whole maker amount: at asks below its limit it takes more shares than it names", async () => {
    const token = openListing().outcomeIds.YES;
    const best = Number(bestAsk(await trader.getOrderBook(token)).price);
    const limit = Math.round((best + 0.05) * 100) / 100;
    const signed = await trader.createOrder({ tokenID: token, price: limit, size: 10, side: Side.BUY }, { tickSize: "0.01" });
    const res = await trader.postOrder(signed, OrderType.FAK);
    expect(res).toMatchObject({ success: true, status: "matched" });
    const maker = parseMicro(signed.makerAmount, "maker") / 1_000_000n;
    const spent = parseMicro(res.makingAmount, "making");
    expect(spent).toBeLessThanOrEqual(maker);
    expect(spent).toBeGreaterThan(maker - 100n);
    expect(parseMicro(res.takingAmount, "taking")).toBeGreaterThan(10_000_000n);
    expect(await trader.getOrder(res.orderID)).toMatchObject({ status: "MATCHED", original_size: "10", size_matched: res.takingAmount });
  });

  it("refuses a FAK BUY of more than 2 decimals of pUSD, in the venue's words", async () => {
    // 10.01 shares at 0.57: 5.7057 pUSD
    const signed = await trader.createOrder({ tokenID: openListing().outcomeIds.YES, price: 0.57, size: 10.01, side: Side.BUY }, { tickSize: "0.01" });
    expect(signed.makerAmount).toBe("5705700");
    expect(await trader.postOrder(signed, OrderType.FAK)).toMatchObject({
      status: 400,
      error: "invalid amounts, the market buy orders maker amount supports a max accuracy of 2 decimals, taker amount a max of 4 decimals",
    });
  });

  it("refuses a FAK BUY that spends under $1, in the venue's words", async () => {
    const res = await trader.createAndPostMarketOrder({ tokenID: openListing().outcomeIds.YES, amount: 0.99, side: Side.BUY }, { tickSize: "0.01" }, OrderType.FAK);
    expect(res).toMatchObject({ status: 400, error: "invalid amount for a marketable BUY order ($0.99), min size: $1" });
  });

  it("sells what a wallet bought with a FAK market SELL (its amount in shares), lists the trades as SELL, and refuses a SELL of shares the wallet no longer holds", async () => {
    const fresh = generatePrivateKey();
    const seller = client(fresh, await client(fresh).createOrDeriveApiKey());
    const token = openListing().outcomeIds.NO;
    const ask = bestAsk(await seller.getOrderBook(token));
    const bought = await seller.createAndPostMarketOrder({ tokenID: token, amount: Math.round(Number(ask.price) * 10 * 100) / 100, side: Side.BUY }, { tickSize: "0.01" }, OrderType.FOK);
    expect(bought).toMatchObject({ success: true, takingAmount: "10" });
    const bid = (await seller.getOrderBook(token)).bids.at(-1)!;
    expect(Number(bid.size)).toBeGreaterThanOrEqual(10);
    const sold = await seller.createAndPostMarketOrder({ tokenID: token, amount: 10, side: Side.SELL }, { tickSize: "0.01" }, OrderType.FAK);
    // a SELL makes shares and takes pUSD: 10 shares at the best bid
    expect(sold).toMatchObject({ success: true, status: "matched", makingAmount: "10", takingAmount: formatMicro(parseMicro(bid.price, "bid") * 10n) });
    const trades = await seller.getTrades({ asset_id: token });
    expect(trades.filter((t) => t.taker_order_id === sold.orderID).map((t) => [t.side, t.price, t.size])).toEqual([["SELL", bid.price, "10"]]);
    expect(await seller.getOrder(sold.orderID)).toMatchObject({ side: "SELL", status: "MATCHED", size_matched: "10" });
    expect(await seller.createAndPostMarketOrder({ tokenID: token, amount: 5, side: Side.SELL }, { tickSize: "0.01" }, OrderType.FAK)).toMatchObject({ status: 400, error: "not enough balance / allowance" });
  });

  it("shows a resting order as LIVE and cancels it by DELETE /order", async () => {
    const token = openListing().outcomeIds.YES;
    const level = bestAsk(await trader.getOrderBook(token));
    sim.faults.set({ resting: true });
    try {
      const signed = await trader.createOrder({ tokenID: token, price: Number(level.price), size: 10, side: Side.BUY }, { tickSize: "0.01" });
      const res = await trader.postOrder(signed, OrderType.FAK);
      expect(res).toMatchObject({ success: true, status: "live", takingAmount: "5" });
      expect(await trader.getOrder(res.orderID)).toMatchObject({ status: "LIVE", original_size: "10", size_matched: "5" });
      expect(await trader.cancelOrder({ orderID: res.orderID })).toEqual({ canceled: [res.orderID], not_canceled: {} });
      expect(await trader.getOrder(res.orderID)).toMatchObject({ status: "CANCELED", size_matched: "5" });
      expect(await trader.cancelOrder({ orderID: res.orderID })).toMatchObject({ canceled: [], not_canceled: { [res.orderID]: expect.any(String) } });
    } finally {
      sim.faults.reset();
    }
  });

  it("refuses a V1-signed order with the venue's order_version_mismatch", async () => {
    const token = openListing().outcomeIds.YES;
    const v1 = await trader.createOrder({ tokenID: token, price: 0.99, size: 5, side: Side.BUY }, { tickSize: "0.01", version: 1 });
    expect(await trader.postOrder(v1, OrderType.FAK)).toMatchObject({ status: 400, error: "order_version_mismatch" });
  });

  it("refuses an order whose expiration has passed when it arrives, in the venue's words", async () => {
    const token = openListing().outcomeIds.YES;
    const signed = await trader.createOrder({ tokenID: token, price: 0.99, size: 5, side: Side.BUY, expiration: Math.floor(Date.now() / 1000) - 1 }, { tickSize: "0.01" });
    expect(await trader.postOrder(signed, OrderType.FAK)).toMatchObject({ status: 400, error: "invalid expiration" });
  });

  it("reads a resolved market as closed with its winning token priced 1, and refuses orders on it", async () => {
    // the last open market: the other tests trade the first
    const listing = catalog.events().filter((e) => e.status === "open").flatMap((e) => e.listings.filter((l) => l.venue === "polymarket-sim")).at(-1)!;
    expect(await trader.getMarket(listing.venueMarketId)).toMatchObject({ closed: false, accepting_orders: true });
    const price = Number(bestAsk(await trader.getOrderBook(listing.outcomeIds.YES)).price);
    sim.markets.resolve(listing.venueMarketId, "YES");
    const market = await trader.getMarket(listing.venueMarketId);
    expect(market).toMatchObject({ condition_id: listing.venueMarketId, closed: true, accepting_orders: false });
    expect(market.tokens).toEqual([
      expect.objectContaining({ token_id: listing.outcomeIds.YES, outcome: "Yes", winner: true, price: 1 }),
      expect.objectContaining({ token_id: listing.outcomeIds.NO, outcome: "No", winner: false, price: 0 }),
    ]);
    const signed = await trader.createOrder({ tokenID: listing.outcomeIds.YES, price, size: 5, side: Side.BUY }, { tickSize: "0.01" });
    expect(await trader.postOrder(signed, OrderType.FAK)).toMatchObject({ status: 400, error: "the market is not yet ready to process new orders" });
  });

  it("refuses an order signed with another API secret, as the venue does", async () => {
    const forger = client(sim.credentials.privateKey, { key: sim.credentials.apiKey, secret: Buffer.alloc(32, 1).toString("base64"), passphrase: sim.credentials.passphrase });
    const signed = await forger.createOrder({ tokenID: openListing().outcomeIds.YES, price: 0.99, size: 5, side: Side.BUY }, { tickSize: "0.01" });
    expect(await forger.postOrder(signed, OrderType.FAK)).toMatchObject({ status: 401, error: "Unauthorized/Invalid api key" });
  });
});
