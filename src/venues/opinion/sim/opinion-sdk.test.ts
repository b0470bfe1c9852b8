/**
 * The Opinion simulator checked with Opinion's own published client, `@opinion-labs/opinion-clob-sdk`
 * (0.6.1, with its generated `@opinion-labs/opinion-api` 0.3.1): its Client is pointed at the
 * simulator's OpenAPI root and market websocket and must parse what it serves and be served what it asks.
 *
 * Covered: quote tokens (the exchange contract the SDK signs for), the market list and one market, a
 * token's orderbook, a limit buy built, EIP-712 signed (Safe as maker, its owner as signer) and posted
 * by `placeOrder` that fills, the order with its trades (`getOrderById`), the account's trades and
 * orders, `cancelOrder` of an order left pending by the simulator's `resting` fault, the
 * `market.depth.diff` websocket channel, and refusals: a wrong API key (the SDK's OpenApiError) and
 * an order signed by a wallet that does not own the Safe (a non-zero errno).
 *
 * A limit SELL placed by the SDK after a buy sells the shares bought (its trades say `Sell`), and a
 * SELL of shares no longer held is refused with a non-zero errno. A buy or sell under the $5 minimum
 * order is refused with a non-zero errno.
 *
 * Not covered, and why: everything the SDK does on chain through its RPC (`enableTrading`, `split`,
 * `merge`, `redeem`, `getFeeRates`, which reads the FeeManager contract; the simulator serves the
 * OpenAPI's `GET /token/fee-rates` instead), given an RPC URL that points at nothing; market orders
 * (the simulator executes limit orders only); categorical markets, labels, positions, balances,
 * price history, builder mode and the authenticated user channels of the websocket.
 */
import { Client, OpenApiError, OrderSide, OrderType, TopicStatusFilter, type WebSocketClient } from "@opinion-labs/opinion-clob-sdk";
import { generatePrivateKey } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ceilDiv, formatMicro, parseMicro } from "../../../domain/money.ts";
import { MarketCatalog } from "../../../markets/catalog.ts";
import { OPINION_SIM_EXCHANGE, startOpinionSim, type OpinionSim } from "../index.ts";
import { OPINION_MIN_FEE, OPINION_MIN_ORDER } from "../wire.ts";
import { ERRNO_INVALID, MIN_ORDER } from "./orders.ts";

const catalog = MarketCatalog.load();
const marketId = catalog.events().flatMap((e) => e.listings.filter((l) => l.venue === "opinion-sim" && e.status === "open"))[0]!.venueMarketId;
/** No chain is reachable here: the SDK's on-chain calls would fail, and none is made by what is tested. */
const NO_RPC = "http://127.0.0.1:9";

interface Envelope<T> {
  errno: number;
  errmsg: string;
  result: T;
}

describe("Opinion simulator with the official @opinion-labs/opinion-clob-sdk", () => {
  let sim: OpinionSim;
  let client: Client;
  const clientFor = (over: { apiKey?: string; privateKey?: `0x${string}` } = {}) =>
    new Client({
      host: sim.url,
      apiKey: over.apiKey ?? sim.credentials.apiKey,
      chainId: 56,
      rpcUrl: NO_RPC,
      privateKey: over.privateKey ?? sim.credentials.privateKey,
      multiSigAddress: sim.credentials.multiSigAddress,
    });
  /**
   * A limit price that takes the best ask of the YES book, with room for the book to move 50 ticks
   * before the order arrives (the simulator ticks every 40 ms, and a loaded machine is slow).
   */
  const takingPrice = () => {
    const ask = sim.exchange.book(marketId, "YES")!.asks[0]!.price + 50_000n;
    return formatMicro(ask < 990_000n ? ask : 990_000n);
  };

  beforeAll(async () => {
    sim = await startOpinionSim({ catalog, seed: 44, latencyScale: 0, tickMs: 40 });
    client = clientFor();
  });
  afterAll(async () => {
    await sim.stop();
  });

  it("serves a token's fee rates for the chain the generated client requires (`chain_id`), and refuses a request that names none", async () => {
    const token = (await client.getMarket(Number(marketId), false)).result.data.yesTokenId;
    const read = async (query: Record<string, string>) =>
      (await (await fetch(`${sim.url}/token/fee-rates?${new URLSearchParams(query)}`, { headers: { apikey: sim.credentials.apiKey } })).json()) as Envelope<{ tokenId: string; takerFeeBps: string }>;
    expect(await read({ token_id: token, chain_id: "56" })).toMatchObject({ errno: 0, result: { tokenId: token, takerFeeBps: expect.stringMatching(/^\d+$/) } });
    expect((await read({ token_id: token })).errno).toBe(ERRNO_INVALID);
  });

  it("reads quote tokens, markets and a token's orderbook as the SDK types them", async () => {
    const tokens = await client.getQuoteTokens(false);
    expect(tokens.result.list[0]).toMatchObject({ ctfExchangeAddress: OPINION_SIM_EXCHANGE, decimal: 18 });

    const list = await client.getMarkets({ status: TopicStatusFilter.ACTIVATED, limit: 20 });
    expect(list.errno).toBe(0);
    expect(list.result.list.map((m) => String(m.marketId))).toContain(marketId);

    const market = await client.getMarket(Number(marketId), false);
    const venueMarket = sim.exchange.market(marketId)!;
    expect(market.result.data).toMatchObject({ marketId: Number(marketId), marketTitle: venueMarket.title, yesTokenId: venueMarket.outcomeIds.YES, noTokenId: venueMarket.outcomeIds.NO, status: 2 });

    const book = await client.getOrderbook(venueMarket.outcomeIds.YES);
    expect(book.result.tokenId).toBe(venueMarket.outcomeIds.YES);
    expect(Number(book.result.asks![0]!.price)).toBeGreaterThan(Number(book.result.bids![0]!.price));
  });

  it("places a signed limit buy that fills, and lists the order and its trades", async () => {
    const venueMarket = sim.exchange.market(marketId)!;
    const placed = (await client.placeOrder({ marketId: Number(marketId), tokenId: venueMarket.outcomeIds.YES, side: OrderSide.BUY, orderType: OrderType.LIMIT_ORDER, price: takingPrice(), makerAmountInBaseToken: "10" })) as Envelope<{ orderData: { orderId: string; filledShares: string; statusEnum: string } }>;
    expect(placed.errmsg).toBe("");
    expect(placed.result.orderData).toMatchObject({ filledShares: "10", statusEnum: "Finished" });
    const orderId = placed.result.orderData.orderId;

    const detail = (await client.getOrderById(orderId)) as Envelope<{ orderData: { trades: { tradeNo: string; shares: string }[] } }>;
    const trades = detail.result.orderData.trades;
    expect(trades.reduce((s, t) => s + Number(t.shares), 0)).toBe(10);

    const mine = await client.getMyTrades({ limit: 20 });
    expect(mine.result.list!.map((t: { tradeNo?: string }) => t.tradeNo)).toEqual(expect.arrayContaining(trades.map((t) => t.tradeNo)));
    expect(mine.result.list![0]!.fee).toMatch(/^\d+(\.\d+)?$/);
    // 10 shares cost a few cents by Opinion's fee curve: the venue charges its minimum fee, 0.25, split over the order's trades
    const ours = mine.result.list!.filter((t: { tradeNo?: string }) => trades.some((x) => x.tradeNo === t.tradeNo)) as { fee: string | number }[];
    expect(ours.reduce((s, t) => s + parseMicro(String(t.fee), "fee"), 0n)).toBe(OPINION_MIN_FEE);
    const orders = await client.getMyOrders({ marketId: Number(marketId), limit: 20 });
    expect(orders.result.list!.map((o: { orderId?: string }) => o.orderId)).toContain(orderId);
  });

  it("sells with a limit SELL the shares the Safe bought, lists its trades as Sell, and refuses a SELL of shares no longer held", async () => {
    const venueMarket = sim.exchange.market(marketId)!;
    const no = () => sim.exchange.book(marketId, "NO")!;
    const buyAt = no().asks[0]!.price + 50_000n;
    const bid = no().bids[0]!.price - 50_000n;
    const sellAt = bid > 10_000n ? bid : 10_000n;
    // the whole shares whose sale at sellAt reaches the $5 minimum order
    const shares = ceilDiv(OPINION_MIN_ORDER, sellAt).toString();
    const bought = (await client.placeOrder({ marketId: Number(marketId), tokenId: venueMarket.outcomeIds.NO, side: OrderSide.BUY, orderType: OrderType.LIMIT_ORDER, price: formatMicro(buyAt < 990_000n ? buyAt : 990_000n), makerAmountInBaseToken: shares })) as Envelope<{ orderData: { filledShares: string } }>;
    expect(bought.result.orderData.filledShares).toBe(shares);
    const sell = () => client.placeOrder({ marketId: Number(marketId), tokenId: venueMarket.outcomeIds.NO, side: OrderSide.SELL, orderType: OrderType.LIMIT_ORDER, price: formatMicro(sellAt), makerAmountInBaseToken: shares });
    const sold = (await sell()) as Envelope<{ orderData: { orderId: string; filledShares: string; statusEnum: string; sideEnum: string; outcomeSideEnum: string } }>;
    expect(sold.errmsg).toBe("");
    expect(sold.result.orderData).toMatchObject({ filledShares: shares, statusEnum: "Finished", sideEnum: "Sell", outcomeSideEnum: "No" });
    const detail = (await client.getOrderById(sold.result.orderData.orderId)) as Envelope<{ orderData: { trades: { side: string; price: string; shares: string }[] } }>;
    const trades = detail.result.orderData.trades;
    expect(trades.every((t) => t.side === "Sell" && Number(t.price) >= Number(formatMicro(sellAt)))).toBe(true);
    expect(trades.reduce((s, t) => s + Number(t.shares), 0)).toBe(Number(shares));
    const refused = await sell();
    expect(refused).toMatchObject({ errmsg: "insufficient balance of the outcome token" });
    expect(refused.errno).not.toBe(0);
  });

  it("refuses a buy and a sell whose quote-token amount is under the $5 minimum order, and takes one of exactly $5", async () => {
    const venueMarket = sim.exchange.market(marketId)!;
    const order = (side: OrderSide, price: string, shares: string) => client.placeOrder({ marketId: Number(marketId), tokenId: venueMarket.outcomeIds.YES, side, orderType: OrderType.LIMIT_ORDER, price, makerAmountInBaseToken: shares });
    // 9.99 shares at 0.5 sign 4.995 USDT: refused before matching, whatever the book
    expect(await order(OrderSide.BUY, "0.5", "9.99")).toMatchObject({ errno: ERRNO_INVALID, errmsg: MIN_ORDER });
    expect(await order(OrderSide.SELL, "0.5", "9.99")).toMatchObject({ errno: ERRNO_INVALID, errmsg: MIN_ORDER });
    // 10 shares at 0.5 sign 5 USDT: taken
    expect((await order(OrderSide.BUY, "0.5", "10")).errno).toBe(0);
  });

  it("cancels an order left pending, which then reads Canceled", async () => {
    const venueMarket = sim.exchange.market(marketId)!;
    sim.faults.set({ resting: true });
    try {
      const placed = (await client.placeOrder({ marketId: Number(marketId), tokenId: venueMarket.outcomeIds.YES, side: OrderSide.BUY, orderType: OrderType.LIMIT_ORDER, price: takingPrice(), makerAmountInBaseToken: "10" })) as Envelope<{ orderData: { orderId: string; statusEnum: string } }>;
      expect(placed.result.orderData.statusEnum).toBe("Pending");
      const cancelled = await client.cancelOrder(placed.result.orderData.orderId);
      expect(cancelled).toMatchObject({ errno: 0, result: { result: true } });
      const after = (await client.getOrderById(placed.result.orderData.orderId)) as Envelope<{ orderData: { statusEnum: string; filledShares: string } }>;
      expect(after.result.orderData).toMatchObject({ statusEnum: "Canceled", filledShares: "5" });
      expect((await client.cancelOrder(placed.result.orderData.orderId)).errno).not.toBe(0);
    } finally {
      sim.faults.reset();
    }
  });

  it("streams market.depth.diff messages to the SDK's websocket client", async () => {
    const ws: WebSocketClient = client.createWebSocketClient({ wsUrl: sim.wsUrl, heartbeatInterval: 1 });
    await ws.connect();
    try {
      const diff = await new Promise<{ marketId: number; side: string; price: string; size: string }>((resolve) => ws.subscribeMarketDepthDiff(Number(marketId), resolve));
      expect(diff.marketId).toBe(Number(marketId));
      expect(["bids", "asks"]).toContain(diff.side);
      expect(Number(diff.price)).toBeGreaterThan(0);
    } finally {
      // the SDK's README calls it disconnect(); 0.6.1's WebSocketClient has close()
      ws.close();
    }
  });

  it("reads a market resolving, then resolved: status 3 then 4 with resultTokenId, listed as resolved, refusing orders", async () => {
    // the last open market: the other tests trade the first
    const resolved = catalog.events().flatMap((e) => e.listings.filter((l) => l.venue === "opinion-sim" && e.status === "open")).at(-1)!.venueMarketId;
    const venueMarket = sim.exchange.market(resolved)!;
    sim.markets.close(resolved);
    expect((await client.getMarket(Number(resolved), false)).result.data).toMatchObject({ status: 3, statusEnum: "Resolving", resultTokenId: "" });
    sim.markets.resolve(resolved, "NO");
    const market = (await client.getMarket(Number(resolved), false)).result.data;
    expect(market).toMatchObject({ status: 4, statusEnum: "Resolved", resultTokenId: venueMarket.outcomeIds.NO });
    expect(market.resolvedAt).toBeGreaterThan(0);
    const listed = await client.getMarkets({ status: TopicStatusFilter.RESOLVED, limit: 20 });
    expect(listed.result.list.map((m) => String(m.marketId))).toContain(resolved);
    expect(listed.result.list.every((m) => m.status === 4)).toBe(true);
    const placed = await client.placeOrder({ marketId: Number(resolved), tokenId: venueMarket.outcomeIds.NO, side: OrderSide.BUY, orderType: OrderType.LIMIT_ORDER, price: "0.5", makerAmountInBaseToken: "10" });
    expect(placed.errno).not.toBe(0);
  });

  it("refuses a wrong API key, and an order not signed by the Safe's owner", async () => {
    await expect(clientFor({ apiKey: "not-the-key" }).getQuoteTokens(false)).rejects.toBeInstanceOf(OpenApiError);
    const venueMarket = sim.exchange.market(marketId)!;
    const stranger = clientFor({ privateKey: generatePrivateKey() });
    const placed = await stranger.placeOrder({ marketId: Number(marketId), tokenId: venueMarket.outcomeIds.YES, side: OrderSide.BUY, orderType: OrderType.LIMIT_ORDER, price: takingPrice(), makerAmountInBaseToken: "5" });
    expect(placed.errno).not.toBe(0);
    expect(placed.errmsg).toMatch(/signer/);
  });
});
