import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { orderFee } from "../../domain/fees.ts";
import { mirroredSides } from "../mirror-book.ts";
import { OpinionBookStream } from "./book-stream.ts";
import { buyOrder, orderBody, orderFromBody, saltFor } from "./signing.ts";
import { fillsFromTrades, levelMap, opinionFeeModel, opinionResolution, toVenueMarket, tradesFromList, type OpinionMarket, type OpinionOrder, type OpinionTrade } from "./wire.ts";

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../../test/fixtures/opinion/${name}`, import.meta.url), "utf8"));
const YES = "51768305139453436224981416349232961934419863217466138151328564183743096702813";

describe("Opinion wire: the documented shapes", () => {
  it("reads a market: id, YES/NO tokens, close time, status, volume, and the fee model of its taker rate", () => {
    const model = opinionFeeModel(fixture("fee-rates.json").result.takerFeeBps);
    expect(model).toEqual({ kind: "opinion", ratePpm: 80_000n, minFee: 250_000n });
    const m = toVenueMarket(fixture("market.json").result.data as OpinionMarket, model);
    expect(m).toMatchObject({
      venueMarketId: "2101",
      title: "Fed rate cut in December 2026?",
      outcomeIds: { YES, NO: "71982930418207135640512096457312685092311938728051625634971104418253702958402" },
      status: "open",
      closeTime: "2026-12-09T19:00:00.000Z",
      tickSize: 1_000n,
      lotShares: 10_000n,
      minOrderShares: 1_000_000n,
      minOrderAmount: { buy: 5_000_000n, sell: 5_000_000n },
      volume: 152_340_250_000n,
    });
  });

  it("reads a market's resolution: activated open, resolved to the token resultTokenId names, any other status closed", () => {
    const m = fixture("market.json").result.data as OpinionMarket;
    const NO = m.noTokenId;
    expect(opinionResolution({ ...m, status: 2 })).toEqual({ state: "open" });
    expect(opinionResolution({ ...m, status: 3, resultTokenId: "" })).toEqual({ state: "closed" });
    expect(opinionResolution({ ...m, status: 4, resultTokenId: YES })).toEqual({ state: "resolved", outcome: "YES" });
    expect(opinionResolution({ ...m, status: 4, resultTokenId: NO })).toEqual({ state: "resolved", outcome: "NO" });
    // resolved, but naming neither token: no outcome to act on
    expect(opinionResolution({ ...m, status: 4, resultTokenId: "" })).toEqual({ state: "closed" });
    for (const status of [1, 5, 6]) expect(opinionResolution({ ...m, status })).toEqual({ state: "closed" });
    expect(toVenueMarket({ ...m, status: 4, resultTokenId: NO }, opinionFeeModel("0")).status).toBe("resolved");
    expect(toVenueMarket({ ...m, status: 3 }, opinionFeeModel("0")).status).toBe("closed");
  });

  it("reads the orderbook: decimal strings exactly, levels sorted, repeats added, empty levels dropped; NO mirrors YES", () => {
    const book = fixture("orderbook.json").result;
    const books = mirroredSides(levelMap(book.bids, "bids"), levelMap(book.asks, "asks"));
    expect(books.YES.bids).toEqual([
      { price: 618_000n, shares: 1_250_000_000n },
      { price: 615_000n, shares: 300_000_000n },
    ]);
    expect(books.YES.asks).toEqual([
      { price: 624_000n, shares: 88_120_000n },
      { price: 630_000n, shares: 2_500_000_000n },
    ]);
    expect(books.NO.asks.map((l) => l.price)).toEqual([382_000n, 385_000n]);
  });

  it("applies depth diffs to a synced book once the stream shows its subscription live, and ignores the NO token's", async () => {
    const book = fixture("orderbook.json").result;
    const sent: string[] = [];
    const stream = new OpinionBookStream({
      venue: "opinion",
      marketIds: ["2101"],
      send: (t) => sent.push(t) > 0,
      now: () => 1_000,
      onBook: () => undefined,
      onDrop: () => undefined,
      snapshot: async () => ({ bids: levelMap(book.bids, "bids"), asks: levelMap(book.asks, "asks") }),
      silentMs: 5_000,
      subscribeSettleMs: 60_000,
    });
    stream.opened();
    expect(JSON.parse(sent[0]!)).toEqual({ action: "SUBSCRIBE", channel: "market.depth.diff", marketId: 2101 });
    const [added, removed, noToken] = fixture("depth-diff.json") as object[];
    stream.onMessage(JSON.stringify(added));
    await new Promise((r) => setImmediate(r));
    expect(stream.synced()).toBe(true);
    const before = stream.book("2101", "YES")!.asks;
    expect(stream.book("2101", "YES")!.asks).toBe(before);
    for (const m of [added, removed, noToken]) stream.onMessage(JSON.stringify(m));
    expect(before).toEqual([
      { price: 622_000n, shares: 40_000_000n },
      { price: 624_000n, shares: 88_120_000n },
      { price: 630_000n, shares: 2_500_000_000n },
    ]);
    expect(stream.book("2101", "YES")!.asks).toEqual([
      { price: 622_000n, shares: 40_000_000n },
      { price: 630_000n, shares: 2_500_000_000n },
    ]);
    expect(stream.book("2101", "YES")!.bids[0]).toEqual({ price: 618_000n, shares: 1_250_000_000n });
  });

  it("reads a book again after a diff it could not read, showing it meanwhile as of its last snapshot, not as fresh", async () => {
    const book = fixture("orderbook.json").result;
    let now = 1_000;
    let reads = 0;
    const stream = new OpinionBookStream({
      venue: "opinion",
      marketIds: ["2101"],
      send: () => true,
      now: () => now,
      onBook: () => undefined,
      onDrop: () => undefined,
      snapshot: async () => (reads++, { bids: levelMap(book.bids, "bids"), asks: levelMap(book.asks, "asks") }),
      silentMs: 5_000,
      subscribeSettleMs: 60_000,
    });
    stream.opened();
    const [added] = fixture("depth-diff.json") as object[];
    stream.onMessage(JSON.stringify(added));
    await new Promise((r) => setImmediate(r));
    now = 2_000;
    stream.onMessage(JSON.stringify({ ...added, price: "1.2" }));
    expect(stream.synced()).toBe(false);
    expect(stream.book("2101", "YES")!.updatedAt).toBe(1_000);
    await new Promise((r) => setImmediate(r));
    expect(reads).toBe(2);
    now = 3_000;
    stream.onMessage(JSON.stringify(added));
    expect(stream.synced()).toBe(true);
    expect(stream.book("2101", "YES")!.updatedAt).toBe(3_000);
  });

  it("reads a quiet market's book once its subscription has had time to take, and keeps it as current as the connection's frames, though no diff comes", async () => {
    const book = fixture("orderbook.json").result;
    let now = 1_000;
    const stream = new OpinionBookStream({
      venue: "opinion",
      marketIds: ["2101", "2102"],
      send: () => true,
      now: () => now,
      onBook: () => undefined,
      onDrop: () => undefined,
      snapshot: async () => ({ bids: levelMap(book.bids, "bids"), asks: levelMap(book.asks, "asks") }),
      silentMs: 5_000,
      subscribeSettleMs: 20,
    });
    stream.opened();
    // 2102 trades, 2101 does not
    const [added] = fixture("depth-diff.json") as object[];
    stream.onMessage(JSON.stringify({ ...added, marketId: 2102 }));
    await new Promise((r) => setTimeout(r, 60));
    expect(stream.synced()).toBe(true);
    now = 9_000;
    stream.onMessage(JSON.stringify({ ...added, marketId: 2102 }));
    expect(stream.book("2101", "YES")).toMatchObject({ asks: [{ price: 624_000n, shares: 88_120_000n }, { price: 630_000n, shares: 2_500_000_000n }], updatedAt: 9_000 });
    expect(stream.oldestAt()).toBe(9_000);
  });

  it("reads a quiet market again when the read after its subscription failed", async () => {
    const book = fixture("orderbook.json").result;
    let reads = 0;
    const stream = new OpinionBookStream({
      venue: "opinion",
      marketIds: ["2101"],
      send: () => true,
      now: () => 1_000,
      onBook: () => undefined,
      onDrop: () => undefined,
      snapshot: async () => (++reads === 1 ? undefined : { bids: levelMap(book.bids, "bids"), asks: levelMap(book.asks, "asks") }),
      silentMs: 5_000,
      subscribeSettleMs: 20,
    });
    stream.opened();
    await new Promise((r) => setTimeout(r, 100));
    stream.disconnected();
    expect(reads).toBe(2);
    expect(stream.book("2101", "YES")!.asks[0]).toEqual({ price: 624_000n, shares: 88_120_000n });
  });

  it("reads an order's trades as fills whose fees add up to the order's fee under the market's curve", () => {
    const order = fixture("order-detail.json").result.orderData as OpinionOrder;
    const model = opinionFeeModel("800");
    const fills = fillsFromTrades(order.trades!, order.orderId, "child-1", model);
    expect(fills.map((f) => [f.tradeId, f.price, f.shares])).toEqual([
      ["t-7781", 624_000n, 40_000_000n],
      ["t-7782", 626_000n, 60_000_000n],
    ]);
    expect(fills.reduce((s, f) => s + f.fee, 0n)).toBe(orderFee(model, fills));
  });

  it("takes no fill of a trade whose status is 5 (Failed): it never settled, so nothing was bought", () => {
    const order = fixture("order-detail.json").result.orderData as OpinionOrder;
    const model = opinionFeeModel("800");
    const [settled, failed] = order.trades!;
    const trades = [settled!, { ...failed!, status: 5, statusEnum: "Failed" }];
    const fills = fillsFromTrades(trades, order.orderId, "child-1", model);
    expect(fills.map((f) => [f.tradeId, f.shares, f.fee])).toEqual([["t-7781", 40_000_000n, orderFee(model, fills)]]);
    expect(fillsFromTrades([trades[1]!], order.orderId, "child-1", model)).toEqual([]);
    expect(tradesFromList(trades, () => model).map((t) => t.tradeId)).toEqual(["t-7781"]);
  });

  it("lists the account's trades oldest first, each once, keyed by order", () => {
    const page = fixture("trades.json").result as { list: OpinionTrade[] };
    const trades = tradesFromList([...page.list].reverse(), () => opinionFeeModel("800"));
    expect(trades.map((t) => [t.tradeId, t.venueOrderId, t.clientOrderId])).toEqual([
      ["t-7781", "b3c1f0e2a4d64f8e9a7b5c3d1e2f4a6b", ""],
      ["t-7782", "b3c1f0e2a4d64f8e9a7b5c3d1e2f4a6b", ""],
    ]);
  });

  it("lists both sides of a self-trade, one trade number under two of the account's orders, each as its order's fill", () => {
    const [bought] = (fixture("trades.json").result as { list: OpinionTrade[] }).list;
    const sold = { ...bought!, orderNo: "c7d2e1f0a3b54c6d8e9f0a1b2c3d4e5f", side: "Sell" };
    const trades = tradesFromList([bought!, sold, bought!], () => opinionFeeModel("800"));
    expect(trades.map((t) => [t.tradeId, t.venueOrderId, t.side, t.shares])).toEqual([
      ["t-7782", bought!.orderNo, "buy", 60_000_000n],
      ["t-7782", sold.orderNo, "sell", 60_000_000n],
    ]);
  });

  it("posts the order as the SDK does: its fields as strings, limit price, orderExpTime in seconds, and reads it back", () => {
    const struct = buyOrder({ maker: "0x1111111111111111111111111111111111111111", signer: "0x2222222222222222222222222222222222222222", tokenId: YES, limitPrice: 630_000n, shares: 100_000_000n, decimals: 18, salt: saltFor("child-1") });
    const body = orderBody({ order: struct, signature: "0xabcd", marketId: 2101, currency: "0x55d398326f99059fF775485246999027B3197955", limitPrice: 630_000n, expiresAtSeconds: 1_764_000_030, nowSeconds: 1_764_000_000 });
    expect(body).toMatchObject({ topicId: 2101, makerAmount: "63000000000000000000", takerAmount: "100000000000000000000", side: "0", signatureType: "2", price: "0.63", tradingMethod: 2, orderExpTime: "1764000030", expiration: "0", feeRateBps: "0" });
    expect(orderFromBody(body)).toEqual(struct);
    expect(saltFor("child-1")).toBe(saltFor("child-1"));
    expect(saltFor("child-1")).not.toBe(saltFor("child-2"));
  });
});
