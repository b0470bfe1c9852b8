import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { orderFee } from "../../domain/fees.ts";
import { notional, proceedsOf } from "../../domain/money.ts";
import { LimitlessBookStream } from "./book-stream.ts";
import { decode, encodeConnect, encodeEvent, engineIoUrl } from "./socketio.ts";
import { fillsFromMatches, limitlessFeeModel, limitlessResolution, mirroredSides, orderFills, parseOrderbook, parsePrice, parseRaw, toVenueMarket, tradesFromHistory, type LimitlessHistoryPage, type LimitlessMarket } from "./wire.ts";

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../../test/fixtures/limitless/${name}`, import.meta.url), "utf8"));

describe("Limitless wire: the documented shapes", () => {
  it("reads the REST orderbook: numeric prices exactly, raw sizes, levels sorted, repeats added, empty levels dropped; NO mirrors YES", () => {
    const { bids, asks } = parseOrderbook(fixture("orderbook.json"));
    const books = mirroredSides(bids, asks);
    expect(books.YES.bids).toEqual([
      { price: 540_000n, shares: 120_500_000n },
      { price: 535_000n, shares: 30_000_000n },
      { price: 500_000n, shares: 1_000_000_000n },
    ]);
    expect(books.YES.asks).toEqual([
      { price: 551_000n, shares: 42_010_000n },
      { price: 580_000n, shares: 300_000_000n },
    ]);
    expect(books.NO.asks.map((l) => l.price)).toEqual([460_000n, 465_000n, 500_000n]);
    expect(books.NO.bids).toEqual([
      { price: 449_000n, shares: 42_010_000n },
      { price: 420_000n, shares: 300_000_000n },
    ]);
  });

  it("reads the documented orderbookUpdate, whose sizes are strings", () => {
    const update = fixture("orderbook-update.json");
    const { bids, asks } = parseOrderbook(update.orderbook);
    expect([...bids]).toEqual([[740_000n, 100_000_000n]]);
    expect([...asks]).toEqual([[760_000n, 150_000_000n]]);
  });

  it("reads a market: slug, YES/NO tokens, minimum size, close time, status and fee model", () => {
    const m = toVenueMarket(fixture("market.json") as LimitlessMarket);
    expect(m).toMatchObject({
      venueMarketId: "btc-100k-2024",
      outcomeIds: { YES: "19633204485790857949828516737993423758628930235371629943999544859324645414627", NO: "59488366814164541111277457205683376934541954961614829576144806470851104638710" },
      status: "open",
      closeTime: "2025-01-01T00:00:00.000Z",
      tickSize: 1_000n,
      minOrderShares: 1_000_000n,
      lotShares: 10_000n,
      feeModel: { kind: "limitless", ratePpm: 30_000n },
      volume: 1_523_400_000_000n,
    });
    expect(() => toVenueMarket({ ...fixture("market.json"), tradeType: "amm" })).toThrow(/only CLOB/);
  });

  it("reads a market's resolution: FUNDED trades until expired, RESOLVED names winningOutcomeIndex (0 YES, 1 NO), LOCKED waits", () => {
    expect(limitlessResolution({ status: "FUNDED" })).toEqual({ state: "open" });
    expect(limitlessResolution({ status: "FUNDED_FLAGGED", expired: false })).toEqual({ state: "open" });
    expect(limitlessResolution({ status: "FUNDED", expired: true })).toEqual({ state: "closed" });
    expect(limitlessResolution({ status: "LOCKED", expired: true, winningOutcomeIndex: null })).toEqual({ state: "closed" });
    expect(limitlessResolution({ status: "RESOLVED", winningOutcomeIndex: 0 })).toEqual({ state: "resolved", outcome: "YES" });
    expect(limitlessResolution({ status: "RESOLVED", winningOutcomeIndex: 1 })).toEqual({ state: "resolved", outcome: "NO" });
    // resolved, but naming no winner yet: nothing to act on
    expect(limitlessResolution({ status: "RESOLVED", winningOutcomeIndex: null })).toEqual({ state: "closed" });
    expect(toVenueMarket({ ...fixture("market.json"), status: "RESOLVED", expired: true, winningOutcomeIndex: 1 }).status).toBe("resolved");
    expect(toVenueMarket({ ...fixture("market.json"), status: "LOCKED", expired: true }).status).toBe("closed");
  });

  it("turns a buy's makerMatches into the contracts delivered, net of the fee withheld in contracts, charging exactly what the venue took", () => {
    const answer = fixture("order-created.json");
    const model = limitlessFeeModel(answer.order.feeRateBps);
    const fills = fillsFromMatches(answer.makerMatches, answer.order.id, "child-1", "buy", model, answer.execution.totalsRaw);
    // 3 of the 100 contracts withheld, split 1.8 / 1.2 over the matches
    expect(fills.map((f) => [f.tradeId, f.price, f.shares, f.fee])).toEqual([
      ["a1b2c3d4-0001-4000-8000-000000000001", 640_000n, 58_200_000n, 1_152_000n],
      ["a1b2c3d4-0002-4000-8000-000000000002", 650_000n, 38_800_000n, 780_000n],
    ]);
    expect(fills.reduce((s, f) => s + notional(f.price, f.shares) + f.fee, 0n)).toBe(BigInt(answer.execution.totalsRaw.usdGross));
    expect(fills.every((f) => f.venueOrderId === answer.order.id && f.clientOrderId === "child-1")).toBe(true);
  });

  it("refuses a buy whose totals disagree with its matches, or that names no totals", () => {
    const answer = fixture("order-created.json");
    const model = limitlessFeeModel(answer.order.feeRateBps);
    const totals = answer.execution.totalsRaw;
    const read = (t: unknown) => fillsFromMatches(answer.makerMatches, answer.order.id, "child-1", "buy", model, t as typeof totals);
    expect(() => read(undefined)).toThrow(/totalsRaw/);
    expect(() => read({ ...totals, contractsGross: "99000000", contractsNet: "96000000" })).toThrow(/contractsGross/);
    expect(() => read({ ...totals, contractsNet: "98000000" })).toThrow(/contractsNet/);
    expect(() => read({ ...totals, usdGross: "65000000", usdNet: "65000000" })).toThrow(/usdGross/);
    expect(() => read({ ...totals, usdFee: "1932000", usdNet: "62468000" })).toThrow(/USDC fee/);
    // a sell with no totals pays its fee in USDC at the signed rate, split over its matches
    const sold = fillsFromMatches(answer.makerMatches, answer.order.id, "child-1", "sell", model, undefined);
    expect(sold.map((f) => f.shares)).toEqual([60_000_000n, 40_000_000n]);
    expect(sold.reduce((s, f) => s + f.fee, 0n)).toBe(orderFee(model, sold));
  });

  it("charges a sell the USDC fee its totals say the venue took, below the signed ceiling, so its proceeds are exactly usdNet", () => {
    const answer = fixture("order-created.json");
    const model = limitlessFeeModel(answer.order.feeRateBps);
    // signed 300 bps (1.932 USDC on 64.4), applied 150 (effectiveFeeBps): 0.966 USDC, split by notional 38.4 / 26
    const totals = { contractsGross: "100000000", contractsFee: "0", contractsNet: "100000000", usdGross: "64400000", usdFee: "966000", usdNet: "63434000" };
    const sold = fillsFromMatches(answer.makerMatches, answer.order.id, "child-1", "sell", model, totals);
    expect(sold.map((f) => [f.shares, f.fee])).toEqual([[60_000_000n, 576_000n], [40_000_000n, 390_000n]]);
    expect(sold.reduce((s, f) => s + proceedsOf(f.price, f.shares) - f.fee, 0n)).toBe(63_434_000n);
    const read = (t: Partial<typeof totals>) => () => fillsFromMatches(answer.makerMatches, answer.order.id, "child-1", "sell", model, { ...totals, ...t });
    expect(read({ contractsGross: "99000000", contractsNet: "99000000" })).toThrow(/contracts/);
    expect(read({ contractsFee: "1000000", contractsNet: "99000000" })).toThrow(/contracts/);
    expect(read({ usdGross: "64000000" })).toThrow(/usdGross/);
    expect(read({ usdNet: "64400000" })).toThrow(/usdNet/);
    expect(read({ usdFee: "64400001", usdNet: "-1" })).toThrow(/usdNet|usdFee/);
  });

  it("fills nothing of an order whose settlement FAILED: its matches never settled, so no shares were bought", () => {
    const answer = fixture("order-created.json");
    const model = limitlessFeeModel(answer.order.feeRateBps);
    const fills = (settlementStatus: string) => orderFills({ ...answer, execution: { ...answer.execution, settlementStatus } }, answer.order.id, "child-1", "buy", model);
    expect(fills("FAILED")).toEqual([]);
    // matched, or still settling: the matches are the order's fills
    for (const stage of ["MATCHED", "MINED", "CONFIRMED", "RETRYING"]) expect(fills(stage).map((f) => f.shares)).toEqual([58_200_000n, 38_800_000n]);
  });

  it("takes a repeated match once, so the contracts withheld are split over the order's own matches", () => {
    const answer = fixture("order-created.json");
    const model = limitlessFeeModel(answer.order.feeRateBps);
    const repeated = answer.makerMatches.flatMap((m: unknown) => [m, m]);
    const totals = answer.execution.totalsRaw;
    expect(fillsFromMatches(repeated, answer.order.id, "child-1", "buy", model, totals)).toEqual(fillsFromMatches(answer.makerMatches, answer.order.id, "child-1", "buy", model, totals));
  });

  it("reads the account's trades from its history: trades only, each once, with the shares and fees their fills carry and no client order id", () => {
    const page = fixture("history.json") as LimitlessHistoryPage;
    const answer = fixture("order-created.json");
    const model = limitlessFeeModel(answer.order.feeRateBps);
    const oldestFirst = page.data.flatMap((e) => [e, e]).reverse();
    const totals = (orderId: string) => (orderId === answer.order.id ? answer.execution.totalsRaw : undefined);
    const trades = tradesFromHistory(
      oldestFirst,
      (slug) => {
        expect(slug).toBe("btc-100k-2024");
        return model;
      },
      totals,
    );
    expect(trades).toEqual(fillsFromMatches(answer.makerMatches, answer.order.id, "", "buy", model, answer.execution.totalsRaw));
    expect(() => tradesFromHistory([{ ...page.data[0]!, orderId: undefined }], () => model, totals)).toThrow(/orderId/);
    // the strategy names the side: "Sell", "Limit Sell" and "Market Sell" are sells
    for (const strategy of ["Sell", "Limit Sell", "Market Sell"]) {
      expect(tradesFromHistory([{ ...page.data[0]!, strategy }], () => model, () => undefined).map((t) => t.side)).toEqual(["sell"]);
    }
  });

  it("gives a buy's trades the contracts the venue withheld, as its fills, where it applied less than the signed rate", () => {
    const page = fixture("history.json") as LimitlessHistoryPage;
    const answer = fixture("order-created.json");
    const model = limitlessFeeModel(answer.order.feeRateBps);
    // signed 300 bps, applied 120 bps: 1.2 of the 100 contracts withheld, not 3
    const applied = { ...answer.execution.totalsRaw, contractsFee: "1200000", contractsNet: "98800000" };
    const trades = tradesFromHistory([...page.data].reverse(), () => model, () => applied);
    const fills = fillsFromMatches(answer.makerMatches, answer.order.id, "", "buy", model, applied);
    expect(trades.map((t) => t.shares)).toEqual(fills.map((f) => f.shares));
    expect(trades).toEqual(fills);
    // a buy whose order answer has no totals: the contracts withheld are not known
    expect(() => tradesFromHistory([...page.data].reverse(), () => model, () => undefined)).toThrow(/totalsRaw/);
  });

  it("gives a sell's trades the USDC fee the venue applied, as its fills, where it applied less than the signed rate", () => {
    const page = fixture("history.json") as LimitlessHistoryPage;
    const answer = fixture("order-created.json");
    const model = limitlessFeeModel(answer.order.feeRateBps);
    // signed 300 bps (1.932 USDC on 64.4), applied 150 (effectiveFeeBps): 0.966 USDC
    const applied = { contractsGross: "100000000", contractsFee: "0", contractsNet: "100000000", usdGross: "64400000", usdFee: "966000", usdNet: "63434000" };
    const sold = [...page.data].reverse().map((e) => ({ ...e, strategy: "Sell" }));
    const trades = tradesFromHistory(sold, () => model, () => applied);
    const fills = fillsFromMatches(answer.makerMatches, answer.order.id, "", "sell", model, applied);
    expect(trades.map((t) => t.fee)).toEqual([576_000n, 390_000n]);
    expect(trades).toEqual(fills);
    // a sell whose order answer has no totals: the fee at the signed rate, as its fills take it
    expect(tradesFromHistory(sold, () => model, () => undefined)).toEqual(fillsFromMatches(answer.makerMatches, answer.order.id, "", "sell", model, undefined));
  });

  it("refuses a market fee rate of 100 % or more", () => {
    expect(() => limitlessFeeModel(10_000)).toThrow(/below 100 %/);
    expect(limitlessFeeModel(9_999).ratePpm).toBe(999_900n);
  });

  it("refuses amounts that are not exact: fractional or unsafe raw numbers, prices outside (0, 1), more than 6 decimals", () => {
    expect(() => parseRaw(1.5, "size")).toThrow();
    expect(() => parseRaw(2 ** 60, "size")).toThrow();
    expect(parseRaw("123456789012345678901234567890", "size")).toBe(123456789012345678901234567890n);
    expect(() => parsePrice(1, "price")).toThrow();
    expect(() => parsePrice(0.0000001, "price")).toThrow();
    expect(parsePrice(0.001, "price")).toBe(1_000n);
  });
});

describe("Limitless book stream", () => {
  it("shows a book whose update it could not read as of that update, not as fresh as the connection's later frames", () => {
    let now = 1_000;
    const stream = new LimitlessBookStream({ venue: "limitless", slugs: ["btc-100k-2024"], send: () => true, now: () => now, onBook: () => undefined, onDrop: () => undefined });
    const update = fixture("orderbook-update.json");
    stream.opened();
    stream.onMessage('0{"sid":"s","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}');
    stream.onMessage('40/markets,{"sid":"x"}');
    stream.onMessage(`42/markets,${JSON.stringify(["orderbookUpdate", update])}`);
    now = 2_000;
    stream.onMessage(`42/markets,${JSON.stringify(["orderbookUpdate", { ...update, orderbook: { ...update.orderbook, asks: [{ price: "x", size: "1" }] } }])}`);
    now = 30_000;
    stream.onMessage("2");
    expect(stream.book("btc-100k-2024", "YES")).toMatchObject({ asks: [{ price: 760_000n, shares: 150_000_000n }], updatedAt: 2_000 });
    now = 31_000;
    stream.onMessage(`42/markets,${JSON.stringify(["orderbookUpdate", update])}`);
    expect(stream.book("btc-100k-2024", "YES")!.updatedAt).toBe(31_000);
  });

  it("opens the connection again when the server leaves the /markets namespace, whose books it no longer sends, and keeps them as of that frame meanwhile", () => {
    let now = 1_000;
    const sent: string[] = [];
    const stream = new LimitlessBookStream({ venue: "limitless", slugs: ["btc-100k-2024"], send: (t) => sent.push(t) > 0, now: () => now, onBook: () => undefined, onDrop: () => undefined });
    const update = fixture("orderbook-update.json");
    stream.opened();
    stream.onMessage('0{"sid":"s","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}');
    stream.onMessage('40/markets,{"sid":"x"}');
    stream.onMessage(`42/markets,${JSON.stringify(["orderbookUpdate", update])}`);
    now = 2_000;
    // Socket.IO's "io server disconnect": the connection stays up and pinged, but the namespace sends nothing more
    stream.onMessage("41/markets,");
    expect(stream.live).toBe(false);
    now = 3_000;
    stream.onMessage("2");
    expect(stream.book("btc-100k-2024", "YES")!.updatedAt).toBe(2_000);
    // the adapter's watchdog reopens an overdue connection; the new one joins and subscribes again
    expect(stream.overdue()).toBe(true);
    stream.disconnected();
    expect(stream.overdue()).toBe(false);
    stream.opened();
    sent.length = 0;
    stream.onMessage('0{"sid":"t","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}');
    stream.onMessage('40/markets,{"sid":"y"}');
    expect(sent).toEqual(["40/markets,", '42/markets,["subscribe_market_prices",{"marketSlugs":["btc-100k-2024"]}]']);
    now = 4_000;
    stream.onMessage(`42/markets,${JSON.stringify(["orderbookUpdate", update])}`);
    expect(stream.live).toBe(true);
    expect(stream.book("btc-100k-2024", "YES")!.updatedAt).toBe(4_000);
  });
});

describe("Socket.IO v4 framing", () => {
  it("addresses the Engine.IO endpoint below the documented server URL", () => {
    expect(engineIoUrl("wss://ws.limitless.exchange")).toBe("wss://ws.limitless.exchange/socket.io/?EIO=4&transport=websocket");
  });

  it("encodes a namespace join and an event, and decodes the frames a Socket.IO server sends", () => {
    expect(encodeConnect("/markets")).toBe("40/markets,");
    expect(encodeEvent("/markets", "subscribe_market_prices", { marketSlugs: ["btc-100k-2024"] })).toBe('42/markets,["subscribe_market_prices",{"marketSlugs":["btc-100k-2024"]}]');
    expect(decode('0{"sid":"abc","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}')).toMatchObject({ kind: "open", handshake: { pingInterval: 25000 } });
    expect(decode("2")).toEqual({ kind: "ping" });
    expect(decode('40/markets,{"sid":"x"}')).toEqual({ kind: "connect", nsp: "/markets", data: { sid: "x" } });
    expect(decode(`42/markets,["orderbookUpdate",${JSON.stringify(fixture("orderbook-update.json"))}]`)).toMatchObject({ kind: "event", nsp: "/markets", name: "orderbookUpdate", args: [{ marketSlug: "btc-100k-2024" }] });
    expect(decode('4212["ack",1]')).toEqual({ kind: "event", nsp: "/", name: "ack", args: [1] });
    expect(decode('44/markets,{"message":"Invalid namespace"}')).toEqual({ kind: "connect_error", nsp: "/markets", data: { message: "Invalid namespace" } });
    expect(decode("6")).toBeUndefined();
  });
});
