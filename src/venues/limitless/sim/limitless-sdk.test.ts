/**
 * The Limitless simulator checked with Limitless's own published client, `@limitless-exchange/sdk`
 * (1.1.0): its HttpClient (HMAC-signing every request with the simulator's API token), MarketFetcher,
 * OrderClient (EIP-712 signing with an ethers wallet) and WebSocketClient (socket.io-client) are
 * pointed at the simulator's URLs and must parse what it serves and be served what they ask for.
 *
 * Covered: a market by slug (tokens, venue exchange that the SDK signs for), the active-market list,
 * the orderbook, the `/markets` Socket.IO stream (`subscribe_market_prices` → `orderbookUpdate`), a
 * FAK buy built, signed and posted by the SDK's OrderClient that fills (its matches; the market's user
 * orders, which the SDK asks without `statuses`, list LIVE orders only, so the resting order of the
 * cancel test and not the matched one), a FAK buy held by a market's taker delay (`execution`
 * `DELAYED` with `eligibleAt`, as the SDK's `Execution` types it), and refusals the SDK reports as its own typed errors: a wrong API
 * secret (AuthenticationError, 401), and orders signed for another exchange contract or by another
 * wallet (ValidationError, 400). `OrderClient.cancel` (`DELETE /orders/{orderId}`) of an order left
 * resting by the simulator's `resting` fault, `PortfolioFetcher.getUserHistory` (`GET
 * /portfolio/history`, cursor pages) listing the account's trades, and an order signed with a passed
 * `expiration` refused as a ValidationError.
 *
 * A FAK SELL built by the SDK after a buy sells the tokens bought (its history entries say `Sell`), and
 * a SELL of tokens no longer held is refused as a ValidationError (400).
 *
 * Not covered, and why: the SDK's GTC/FOK orders, cancel-all and cancel-replace (the simulator, like
 * the adapter, only executes FAK orders and cancels one order by id); `OrderClient` fetches `GET
 * /profiles/{address}` for the ownerId and the rank's fee rate before its first order, which the
 * simulator serves for its one account only (the real endpoint's other fields are not reproduced);
 * positions, AMM, partner-account, API-token derivation and authenticated stream channels are not
 * simulated.
 */
import { Wallet } from "ethers";
import { APIError, AuthenticationError, HttpClient, MarketFetcher, OrderBuilder, OrderClient, OrderSigner, OrderType, PortfolioFetcher, Side, ValidationError, WebSocketClient, type OrderbookUpdate } from "@limitless-exchange/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MarketCatalog } from "../../../markets/catalog.ts";
import { LIMITLESS_CLOB_EXCHANGE, startLimitlessSim, type LimitlessSim } from "../index.ts";

const catalog = MarketCatalog.load();
const slug = catalog.events().flatMap((e) => e.listings.filter((l) => l.venue === "limitless-sim" && e.status === "open"))[0]!.venueMarketId;

describe("Limitless simulator with the official @limitless-exchange/sdk", () => {
  let sim: LimitlessSim;
  let http: HttpClient;
  let markets: MarketFetcher;

  beforeAll(async () => {
    sim = await startLimitlessSim({ catalog, seed: 43, latencyScale: 0, tickMs: 40 });
    http = new HttpClient({ baseURL: sim.url, hmacCredentials: { tokenId: sim.credentials.apiKey, secret: sim.credentials.secret }, timeout: 3_000, keepAlive: false });
    markets = new MarketFetcher(http);
  });
  afterAll(async () => {
    await sim.stop();
  });

  it("fetches a market, the active list and the orderbook as the SDK types them", async () => {
    const market = await markets.getMarket(slug);
    const venueMarket = sim.exchange.market(slug)!;
    expect(market.slug).toBe(slug);
    expect(market.title).toBe(venueMarket.title);
    expect(market.tokens).toEqual({ yes: venueMarket.outcomeIds.YES, no: venueMarket.outcomeIds.NO });
    expect(market.venue?.exchange).toBe(LIMITLESS_CLOB_EXCHANGE);
    expect(markets.getVenue(slug)?.exchange).toBe(LIMITLESS_CLOB_EXCHANGE);

    const active = await markets.getActiveMarkets({ limit: 25, page: 1 });
    expect(active.data.map((m) => m.slug)).toContain(slug);
    expect(active.totalMarketsCount).toBeGreaterThanOrEqual(active.data.length);

    const book = await markets.getOrderBook(slug);
    expect(book.tokenId).toBe(market.tokens!.yes);
    expect(book.bids.length).toBeGreaterThan(0);
    expect(book.asks.length).toBeGreaterThan(0);
    const bestBid = Math.max(...book.bids.map((l) => Number(l.price)));
    const bestAsk = Math.min(...book.asks.map((l) => Number(l.price)));
    expect(bestBid).toBeLessThan(bestAsk);
    expect(bestAsk).toBeLessThan(1);
  });

  it("streams the market's book to the SDK's WebSocketClient", async () => {
    const ws = new WebSocketClient({ url: sim.wsUrl, autoReconnect: false, timeout: 3_000 });
    try {
      const update = new Promise<OrderbookUpdate>((resolve) => ws.on("orderbookUpdate", (u: OrderbookUpdate) => u.marketSlug === slug && resolve(u)));
      await ws.connect();
      await ws.subscribe("subscribe_market_prices", { marketSlugs: [slug] });
      const u = await update;
      expect(u.orderbook.tokenId).toBe(sim.exchange.market(slug)!.outcomeIds.YES);
      expect(u.orderbook.asks.length).toBeGreaterThan(0);
    } finally {
      await ws.disconnect();
    }
  });

  it("fills a FAK buy built, signed and posted by the SDK's OrderClient", async () => {
    const market = await markets.getMarket(slug);
    const orders = new OrderClient({ httpClient: http, wallet: new Wallet(sim.credentials.privateKey), marketFetcher: markets });
    const book = await markets.getOrderBook(slug);
    const bestAsk = Math.min(...book.asks.map((l) => Number(l.price)));
    const price = Math.min(0.999, Math.round((bestAsk + 0.01) * 1000) / 1000);
    const size = Number(sim.exchange.market(slug)!.minOrderShares) / 1e6;
    const placed = await orders.createOrder({ tokenId: market.tokens!.yes, price, size, side: Side.BUY, orderType: OrderType.FAK, marketSlug: slug });
    expect(placed.order.id).toEqual(expect.any(String));
    expect(placed.makerMatches?.length ?? 0).toBeGreaterThan(0);
    const matched = placed.makerMatches!.reduce((sum, m) => sum + BigInt(m.matchedSize), 0n);
    expect(matched).toBeGreaterThan(0n);
    expect(matched).toBeLessThanOrEqual(BigInt(placed.order.takerAmount));
    // the buy's fee is withheld in contracts: the totals as the SDK's Execution types them
    const totals = placed.execution!.totalsRaw;
    const withheld = (matched * BigInt(placed.execution!.feeRateBps) + 9_999n) / 10_000n;
    expect(totals).toMatchObject({ contractsGross: String(matched), contractsFee: String(withheld), contractsNet: String(matched - withheld), usdFee: "0" });
    // the SDK asks without `statuses`, which the venue answers with LIVE orders only: a matched FAK order is not among them
    const listed = await market.getUserOrders();
    expect(listed.map((o: { id: string }) => o.id)).not.toContain(placed.order.id);
  });

  it("sells with a FAK SELL what the account bought, lists it in the history as a Sell, and refuses a SELL of tokens no longer held", async () => {
    const market = await markets.getMarket(slug);
    const orders = new OrderClient({ httpClient: http, wallet: new Wallet(sim.credentials.privateKey), marketFetcher: markets });
    const noBook = () => sim.exchange.book(slug, "NO")!;
    const size = 2 * Number(sim.exchange.market(slug)!.minOrderShares) / 1e6;
    const buyPrice = Math.min(0.999, Number(noBook().asks[0]!.price + 20_000n) / 1e6);
    const bought = await orders.createOrder({ tokenId: market.tokens!.no, price: buyPrice, size, side: Side.BUY, orderType: OrderType.FAK, marketSlug: slug });
    expect(bought.makerMatches!.reduce((sum, m) => sum + BigInt(m.matchedSize), 0n)).toBe(BigInt(size * 1e6));
    // the account holds what the buy delivered: its fee was withheld in contracts
    const held = Number(bought.execution!.totalsRaw.contractsNet) / 1e6;
    expect(held).toBeLessThan(size);
    const sellPrice = Math.max(0.001, Number(noBook().bids[0]!.price - 20_000n) / 1e6);
    const sold = await orders.createOrder({ tokenId: market.tokens!.no, price: sellPrice, size: held, side: Side.SELL, orderType: OrderType.FAK, marketSlug: slug });
    // the SDK's SELL: the shares offered, the USDC asked at the price
    expect(sold.order).toMatchObject({ side: Side.SELL, makerAmount: Math.round(held * 1e6) });
    expect(sold.makerMatches!.reduce((sum, m) => sum + BigInt(m.matchedSize), 0n)).toBe(BigInt(Math.round(held * 1e6)));
    const history = await new PortfolioFetcher(http).getUserHistory(undefined, 100);
    const matchIds = new Set(sold.makerMatches!.map((m) => m.id));
    const entries = history.data.filter((e) => matchIds.has((e as { matchId?: string }).matchId ?? ""));
    expect(entries.map((e) => [e.strategy, e.outcomeIndex])).toEqual(sold.makerMatches!.map(() => ["Sell", 1]));
    expect(entries.every((e) => Number(e.outcomeTokenPrice) >= sellPrice)).toBe(true);
    const again = orders.createOrder({ tokenId: market.tokens!.no, price: sellPrice, size: held, side: Side.SELL, orderType: OrderType.FAK, marketSlug: slug });
    await expect(again).rejects.toBeInstanceOf(ValidationError);
    await expect(again).rejects.toMatchObject({ status: 400, message: "Insufficient outcome token balance" });
  });

  it("cancels a resting order with OrderClient.cancel, lists its trades with getUserHistory, and refuses an expired order", async () => {
    const market = await markets.getMarket(slug);
    const orders = new OrderClient({ httpClient: http, wallet: new Wallet(sim.credentials.privateKey), marketFetcher: markets });
    const book = await markets.getOrderBook(slug);
    const price = Math.min(0.999, Math.round((Math.min(...book.asks.map((l) => Number(l.price))) + 0.01) * 1000) / 1000);
    const args = { tokenId: market.tokens!.yes, price, size: 2 * Number(sim.exchange.market(slug)!.minOrderShares) / 1e6, side: Side.BUY, orderType: OrderType.FAK, marketSlug: slug } as const;
    sim.faults.set({ resting: true });
    const placed = await orders.createOrder(args);
    sim.faults.reset();
    expect(placed.makerMatches?.length ?? 0).toBeGreaterThan(0);
    expect((await market.getUserOrders()).map((o: { id: string }) => o.id)).toContain(placed.order.id);
    await expect(orders.cancel(placed.order.id)).resolves.toEqual({ message: "Order canceled successfully" });
    await expect(orders.cancel(placed.order.id)).rejects.toMatchObject({ constructor: APIError, status: 404 });

    const portfolio = new PortfolioFetcher(http);
    const entries = [];
    for (let page = await portfolio.getUserHistory(undefined, 1); ; page = await portfolio.getUserHistory(page.nextCursor, 1)) {
      expect(page.data).toHaveLength(1);
      entries.push(...page.data);
      if (page.nextCursor === null) break;
    }
    expect(entries.length).toBeGreaterThanOrEqual(placed.makerMatches!.length);
    expect(entries[0]).toMatchObject({ market: { slug }, outcomeIndex: 0, strategy: "Buy", outcomeTokenAmount: placed.makerMatches!.at(-1)!.matchedSize });

    const expired = orders.createOrder({ ...args, expiration: String(Math.floor(Date.now() / 1000) - 1) });
    await expect(expired).rejects.toBeInstanceOf(ValidationError);
    await expect(expired).rejects.toMatchObject({ status: 400, message: "Order expired" });
  });

  it("refuses the SDK's requests under a wrong API secret (401) and orders signed for another contract or by another wallet (400)", async () => {
    const market = await markets.getMarket(slug);
    const wrongSecret = new HttpClient({ baseURL: sim.url, hmacCredentials: { tokenId: sim.credentials.apiKey, secret: Buffer.from("not the secret").toString("base64") }, keepAlive: false });
    const orders = new OrderClient({ httpClient: wrongSecret, wallet: new Wallet(sim.credentials.privateKey), marketFetcher: markets });
    const feeRateBps = Number(sim.exchange.market(slug)!.feeModel.ratePpm / 100n);
    const args = { tokenId: market.tokens!.yes, price: 0.99, size: Number(sim.exchange.market(slug)!.minOrderShares) / 1e6, side: Side.BUY, orderType: OrderType.FAK, marketSlug: slug } as const;
    const refused = orders.createOrder(args);
    await expect(refused).rejects.toBeInstanceOf(AuthenticationError);
    await expect(refused).rejects.toMatchObject({ status: 401 });

    // the token's wallet signing for another exchange contract than the market's venue.exchange
    const owner = new Wallet(sim.credentials.privateKey);
    const post = (order: object) => http.post("/orders", { order, orderType: OrderType.FAK, marketSlug: slug, ownerId: sim.credentials.ownerId });
    const unsigned = new OrderBuilder(owner.address, feeRateBps).buildOrder(args);
    const elsewhere = await new OrderSigner(owner).signOrder(unsigned, { chainId: 8453, contractAddress: Wallet.createRandom().address });
    const misdirected = post({ ...unsigned, signature: elsewhere });
    await expect(misdirected).rejects.toBeInstanceOf(ValidationError);
    await expect(misdirected).rejects.toMatchObject({ status: 400, message: "invalid order signature" });

    // a stranger's wallet signing its own order under this API token
    const stranger = Wallet.createRandom();
    const theirs = new OrderBuilder(stranger.address, feeRateBps).buildOrder(args);
    const signature = await new OrderSigner(stranger).signOrder(theirs, { chainId: 8453, contractAddress: LIMITLESS_CLOB_EXCHANGE });
    const foreign = post({ ...theirs, signature });
    await expect(foreign).rejects.toBeInstanceOf(ValidationError);
    await expect(foreign).rejects.toMatchObject({ status: 400, message: "maker and signer must be the API token's wallet" });
  });

  it("reads a market the venue locks, then resolves: LOCKED, then RESOLVED with winningOutcomeIndex, gone from the active list, refusing orders", async () => {
    // the last open market: the other tests trade the first
    const resolved = catalog.events().flatMap((e) => e.listings.filter((l) => l.venue === "limitless-sim" && e.status === "open")).at(-1)!.venueMarketId;
    expect(await markets.getMarket(resolved)).toMatchObject({ status: "FUNDED", expired: false, winningOutcomeIndex: null });
    sim.markets.close(resolved);
    expect(await markets.getMarket(resolved)).toMatchObject({ status: "LOCKED", expired: true, winningOutcomeIndex: null });
    sim.markets.resolve(resolved, "NO");
    const market = await markets.getMarket(resolved);
    expect(market).toMatchObject({ status: "RESOLVED", expired: true, winningOutcomeIndex: 1 });
    const active = await markets.getActiveMarkets({ limit: 25, page: 1 });
    expect(active.data.map((m) => m.slug)).not.toContain(resolved);
    const orders = new OrderClient({ httpClient: http, wallet: new Wallet(sim.credentials.privateKey), marketFetcher: markets });
    const size = Number(sim.exchange.market(resolved)!.minOrderShares) / 1e6;
    const refused = orders.createOrder({ tokenId: market.tokens!.no, price: 0.5, size, side: Side.BUY, orderType: OrderType.FAK, marketSlug: resolved });
    await expect(refused).rejects.toBeInstanceOf(ValidationError);
    await expect(refused).rejects.toMatchObject({ status: 400 });
  });

  it("reads an order held by a taker delay as the SDK types it: execution DELAYED, eligibleAt, no matches yet", async () => {
    const delayed = await startLimitlessSim({ catalog, seed: 47, latencyScale: 0, tickMs: 40, takerDelayMs: 2_000 });
    try {
      const client = new HttpClient({ baseURL: delayed.url, hmacCredentials: { tokenId: delayed.credentials.apiKey, secret: delayed.credentials.secret }, timeout: 3_000, keepAlive: false });
      const fetcher = new MarketFetcher(client);
      const market = await fetcher.getMarket(slug);
      const orders = new OrderClient({ httpClient: client, wallet: new Wallet(delayed.credentials.privateKey), marketFetcher: fetcher });
      const size = Number(delayed.exchange.market(slug)!.minOrderShares) / 1e6;
      const placed = await orders.createOrder({ tokenId: market.tokens!.yes, price: 0.99, size, side: Side.BUY, orderType: OrderType.FAK, marketSlug: slug });
      expect(placed.execution).toMatchObject({ matched: false, settlementStatus: "DELAYED" });
      expect(Date.parse(placed.execution!.eligibleAt!)).toBeGreaterThan(Date.now());
      expect(placed.makerMatches ?? []).toHaveLength(0);
    } finally {
      await delayed.stop();
    }
  });
});
