import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decimalLike, outcome } from "../../domain/arbitraries.ts";
import { ONE } from "../../domain/money.ts";
import { parseDecimal, WireError } from "./decimal.ts";
import {
  applyLevel,
  END_CURSOR,
  orderTrades,
  parseBook,
  parseCancelResult,
  parseClobMarketFee,
  parseClobMarketTick,
  parseMarket,
  parseMarketsPage,
  parseOpenOrder,
  parseOrderAck,
  parseStreamFrame,
  parseTradesPage,
  rejectionReason,
  withTick,
} from "./wire.ts";

/** A response recorded from Polymarket's public documentation (test/fixtures/polymarket). */
function fixture(name: string): { source: string; body: unknown } {
  return JSON.parse(readFileSync(new URL(`../../../test/fixtures/polymarket/${name}.json`, import.meta.url), "utf8"));
}

const micro = (d: string) => parseDecimal(d, "test");

describe("Polymarket wire formats, read from the documentation's examples", () => {
  it("reads a REST book and sorts it best first, whatever order the levels come in", () => {
    const raw = fixture("book").body as { bids: unknown[]; asks: unknown[] };
    const book = parseBook(raw);
    expect(book.bids).toEqual([{ price: micro("0.48"), shares: micro("1000") }, { price: micro("0.47"), shares: micro("2500") }]);
    expect(book.asks).toEqual([{ price: micro("0.52"), shares: micro("800") }, { price: micro("0.53"), shares: micro("1500") }]);
    expect(book.tickSize).toBe(10_000n);
    // Polymarket's live REST book lists levels worst first
    expect(parseBook({ ...raw, bids: [...raw.bids].reverse(), asks: [...raw.asks].reverse() })).toEqual(book);
  });

  it("reads a WebSocket book event, prices without their leading zero included", () => {
    const [event] = parseStreamFrame(JSON.stringify(fixture("ws-book").body));
    expect(event?.type).toBe("book");
    if (event?.type !== "book") return;
    expect(event.book.bids.map((l) => l.price)).toEqual([500_000n, 490_000n, 480_000n]);
    expect(event.book.asks.map((l) => l.price)).toEqual([520_000n, 530_000n, 540_000n]);
    expect(event.book.asks[1]!.shares).toBe(60n * ONE);
  });

  it("reads price_change deltas: BUY changes a bid, SELL an ask, size is the level's new total", () => {
    const [event] = parseStreamFrame(JSON.stringify(fixture("ws-price-change").body));
    expect(event).toEqual({
      type: "price_change",
      changes: [
        { assetId: "71321045679252212594626385532706912750332728571942532289631379312455583992563", side: "bids", price: 500_000n, size: 200n * ONE },
        { assetId: "52114319501245915516055106046884209969926127482827954674443846427813813222426", side: "asks", price: 500_000n, size: 200n * ONE },
      ],
    });
  });

  it("reads a markets page into the port's market, with the end cursor", () => {
    const page = parseMarketsPage(fixture("markets-page").body);
    expect(page.nextCursor).toBe(END_CURSOR);
    expect(parseMarket(page.data[0])).toMatchObject({
      negRisk: false,
      market: {
        venueMarketId: "0xbd31dc8a20211944f6b70f31557f1001557b59905b7738480ca09bd4532f84af",
        status: "open",
        tickSize: 10_000n,
        minOrderShares: 5n * ONE,
        lotShares: ONE,
        outcomeIds: {
          YES: "71321045679252212594626385532706912750332728571942532289631379312455583992563",
          NO: "52114319501245915516055106046884209969926127482827954674443846427813813222426",
        },
        feeModel: { kind: "polymarket", ratePpm: 0n, exponent: 1 },
      },
    });
  });

  it("lots a market so that a whole number of lots costs whole cents at every price of its grid, the minimum as listed", () => {
    const listed = (fixture("markets-page").body as { data: Record<string, unknown>[] }).data[0]!;
    const grids: [string, bigint][] = [
      ["0.01", ONE],
      ["0.001", 10n * ONE],
      ["0.005", 2n * ONE],
      ["0.0025", 4n * ONE],
      ["0.0001", 100n * ONE],
      ["0.1", 100_000n],
    ];
    for (const [tick, lot] of grids) {
      const { market } = parseMarket({ ...listed, minimum_tick_size: tick, minimum_order_size: 5 });
      expect(market.lotShares).toBe(lot);
      // the venue's minimum, which a sell meets in its 0.01-share steps and a buy rounds up to its lot (the router's Ladder.minLots)
      expect(market.minOrderShares).toBe(5n * ONE);
      // a sell goes in the venue's 0.01-share step at every tick, not in the buy's lot
      expect(market.sellLotShares).toBe(10_000n);
      for (let price = market.tickSize; price < ONE; price += market.tickSize) expect((price * lot) % (ONE * 10_000n)).toBe(0n);
    }
    const m = parseMarket({ ...listed, minimum_tick_size: "0.01", minimum_order_size: 5 });
    const finer = withTick(m, 1_000n);
    expect(finer.market).toMatchObject({ tickSize: 1_000n, lotShares: 10n * ONE, minOrderShares: 5n * ONE });
    expect(withTick(finer, 10_000n).market).toMatchObject({ tickSize: 10_000n, lotShares: ONE, minOrderShares: 5n * ONE });
    // finer than 0.0001, a fill could take more fee than worstFee locks for an exponent-0 buy
    expect(() => parseMarket({ ...listed, minimum_tick_size: "0.00005", minimum_order_size: 5 })).toThrow(/finer than 0.0001/);
    expect(() => withTick(m, 50n)).toThrow(/finer than 0.0001/);
  });

  it("reads a market's resolution: a closed market's winner token, a 50/50 split, or no winner yet", () => {
    const listed = (fixture("markets-page").body as { data: Record<string, unknown>[] }).data[0]!;
    const tokens = listed["tokens"] as Record<string, unknown>[];
    const as = (o: Record<string, unknown>, yes: Record<string, unknown>, no: Record<string, unknown>) =>
      parseMarket({ ...listed, ...o, tokens: [{ ...tokens[0], ...yes }, { ...tokens[1], ...no }] });
    expect(parseMarket(listed).resolution).toEqual({ state: "open" });
    const resolvedNo = as({ closed: true, accepting_orders: false }, { winner: false, price: 0 }, { winner: true, price: 1 });
    expect(resolvedNo.resolution).toEqual({ state: "resolved", outcome: "NO" });
    expect(resolvedNo.market.status).toBe("resolved");
    expect(as({ closed: true }, { winner: true, price: 1 }, { winner: false, price: 0 }).resolution).toEqual({ state: "resolved", outcome: "YES" });
    // Unknown/50-50: each token redeems for 0.50, neither wins
    const split = as({ closed: true }, { winner: false, price: 0.5 }, { winner: false, price: 0.5 });
    expect(split.resolution).toEqual({ state: "voided" });
    expect(split.market.status).toBe("closed");
    // stopped, the outcome not reported yet (proposal in its challenge period, or disputed)
    expect(as({ closed: true }, { winner: false, price: 0.97 }, { winner: false, price: 0.03 }).resolution).toEqual({ state: "closed" });
    expect(as({ accepting_orders: false }, {}, {}).resolution).toEqual({ state: "closed" });
  });

  it("reads a market's fee curve from its CLOB market info", () => {
    expect(parseClobMarketFee(fixture("clob-market-info").body)).toEqual({ kind: "polymarket", ratePpm: 20_000n, exponent: 2 });
    expect(parseClobMarketFee({ mts: 0.01 })).toEqual({ kind: "polymarket", ratePpm: 0n, exponent: 1 });
  });

  it("reads a market's tick from its CLOB market info, and none where it states none", () => {
    expect(parseClobMarketTick(fixture("clob-market-info").body)).toBe(10_000n);
    expect(parseClobMarketTick({ mts: 0.001 })).toBe(1_000n);
    expect(parseClobMarketTick({ fd: { r: 0.02, e: 1 } })).toBeUndefined();
  });

  it("reads an fd without e as exponent 0, a fee of C × rate, as clob-client-v2 1.1.0 does (`result.fd?.e ?? 0`), and refuses an exponent it has no curve for", () => {
    const { fd } = fixture("clob-market-info").body as { fd: { r: number; to: boolean } };
    expect(parseClobMarketFee({ fd: { r: fd.r, to: fd.to } })).toEqual({ kind: "polymarket", ratePpm: 20_000n, exponent: 0 });
    expect(parseClobMarketFee({ fd: { ...fd, e: 0 } })).toEqual({ kind: "polymarket", ratePpm: 20_000n, exponent: 0 });
    expect(() => parseClobMarketFee({ fd: { ...fd, e: 3 } })).toThrow(/exponent 3 is not 0, 1 or 2/);
    expect(() => parseClobMarketFee({ fd: { ...fd, e: 0.5 } })).toThrow(/exponent 0.5/);
  });

  it("reads an order acknowledgement, an order and a trades page", () => {
    expect(parseOrderAck(fixture("order-response").body)).toEqual({
      success: true,
      errorMsg: "",
      orderId: "0xabcdef1234567890abcdef1234567890abcdef12",
      status: "matched",
      tradeIds: ["28c4d2eb-bbea-40e7-a9f0-b2fdb56b2c2e"],
    });
    expect(parseOpenOrder(fixture("open-order").body)).toMatchObject({ status: "open", sizeMatched: 0n, associateTrades: [] });
    const trades = parseTradesPage(fixture("trades-page").body);
    expect(trades.nextCursor).toBe("MTAw");
    // the docs' example writes this size unscaled next to a price of 0.5; it is read as written
    expect(trades.data[0]).toMatchObject({
      tradeId: "trade-123",
      takerOrderId: "0xabcdef1234567890abcdef1234567890abcdef12",
      side: "buy",
      price: 500_000n,
      size: 100_000_000n * ONE,
      traderSide: "TAKER",
      status: "CONFIRMED",
      matchTime: 1_700_000_000,
    });
  });

  it("reads each maker order's part in a trade: the opposite side on the taker's token, the same side on the other outcome's", () => {
    const body = fixture("trades-page").body as { data: Record<string, unknown>[] };
    const row = body.data[0]!;
    const makers = [
      { order_id: "0xsells", maker_address: "0x01", asset_id: row["asset_id"], matched_amount: "3", price: "0.5" },
      { order_id: "0xbuysno", maker_address: "0x02", asset_id: "42", matched_amount: "2.5", price: "0.5" },
    ];
    const [trade] = parseTradesPage({ ...body, data: [{ ...row, size: "5.5", maker_orders: makers }] }).data;
    expect(orderTrades(trade!).map(({ orderId, side, price, size, makerAddress }) => ({ orderId, side, price, size, makerAddress }))).toEqual([
      { orderId: "0xabcdef1234567890abcdef1234567890abcdef12", side: "buy", price: 500_000n, size: 5_500_000n, makerAddress: undefined },
      { orderId: "0xsells", side: "sell", price: 500_000n, size: 3_000_000n, makerAddress: "0x01" },
      { orderId: "0xbuysno", side: "buy", price: 500_000n, size: 2_500_000n, makerAddress: "0x02" },
    ]);
  });

  it("reads a cancel's answer: the ids cancelled and why the others were not", () => {
    expect(parseCancelResult(fixture("cancel-response").body)).toEqual({ canceled: ["0xabcdef1234567890abcdef1234567890abcdef12"], notCanceled: {} });
    expect(parseCancelResult({ canceled: [], not_canceled: { "0x01": "order not found" } })).toEqual({ canceled: [], notCanceled: { "0x01": "order not found" } });
  });

  it("names a documented rejection", () => {
    expect(rejectionReason((fixture("error-fak").body as { error: string }).error, "buy")).toBe("no_match");
    expect(rejectionReason("order is invalid. Price (0.555) breaks minimum tick size rule: 0.01", "buy")).toBe("invalid_tick");
    expect(rejectionReason("order is invalid. Size (1) lower than the minimum: 5", "sell")).toBe("below_min_size");
    // INVALID_ORDER_EXPIRATION, docs.polymarket.com/developers/CLOB/orders/create-order
    expect(rejectionReason("invalid expiration", "buy")).toBe("order_expired");
    // docs.polymarket.com/resources/error-codes: the maker's asset is short, pUSD on a buy, the outcome's shares on a sell
    expect(rejectionReason("not enough balance / allowance", "buy")).toBe("insufficient_balance");
    expect(rejectionReason("not enough balance / allowance", "sell")).toBe("insufficient_position");
  });
});

describe("Polymarket decimals", () => {
  it("parses exactly, with or without a leading zero, and refuses what it cannot represent", () => {
    expect(micro(".48")).toBe(480_000n);
    expect(micro("0.001")).toBe(1_000n);
    expect(micro("1234.5")).toBe(1_234_500_000n);
    expect(micro("0.5000000")).toBe(500_000n);
    for (const bad of ["", ".", "1e5", "-1", "0.1234567", "NaN"]) expect(() => micro(bad), bad).toThrow(WireError);
    expect(parseDecimal("10.1234567", "size", true)).toBe(10_123_456n);
  });
  it("reads the plain forms of a stream's prices and sizes on its fast path as the full parse reads them", () => {
    // a leading space takes the full parse (it trims): how every value was read before the fast path
    fc.assert(
      fc.property(decimalLike(), fc.boolean(), (v, floor) => {
        expect(outcome(() => parseDecimal(v, "x", floor))).toEqual(outcome(() => parseDecimal(` ${String(v)}`, "x", floor)));
      }),
      { numRuns: 20_000 },
    );
  });
});

describe("Polymarket price_change applied to a held side", () => {
  it("sets, replaces or removes the level and keeps the side best first (seeded, 2,000 cases)", () => {
    const side = fc.uniqueArray(fc.bigInt({ min: 1n, max: 99n }), { maxLength: 12 }).map((ps) => ps.map((p) => ({ price: p * 10_000n, shares: p * 7n })));
    fc.assert(
      fc.property(side, fc.constantFrom("asc" as const, "desc" as const), fc.bigInt({ min: 1n, max: 99n }), fc.bigInt({ min: 0n, max: 3n }), (levels, order, tick, size) => {
        const best = [...levels].sort((a, b) => (order === "asc" ? Number(a.price - b.price) : Number(b.price - a.price)));
        const price = tick * 10_000n;
        const shares = size * 1_000_000n;
        const after = applyLevel(best, order, price, shares);
        const expected = [...best.filter((l) => l.price !== price), ...(shares > 0n ? [{ price, shares }] : [])].sort((a, b) =>
          order === "asc" ? Number(a.price - b.price) : Number(b.price - a.price),
        );
        expect(after).toEqual(expected);
      }),
      { seed: 41, numRuns: 2000 },
    );
  });
});
