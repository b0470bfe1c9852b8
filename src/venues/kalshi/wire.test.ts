import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { orderFee, worstFee } from "../../domain/fees.ts";
import { parseMicro } from "../../domain/money.ts";
import { KalshiBookSync } from "./book-sync.ts";
import { kalshiAuthHeaders, kalshiSigningText, signKalshi, verifyKalshi } from "./signing.ts";
import { formatCount, formatDollars, kalshiFeeModel, kalshiMarketFeeModel, kalshiResolution, kalshiSides, levelMap, parseSignedCount, toVenueMarket } from "./wire.ts";

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../../test/fixtures/kalshi/${name}`, import.meta.url), "utf8"));

describe("Kalshi request signing", () => {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();

  it("signs timestamp + METHOD + path, without the query string", () => {
    expect(kalshiSigningText("1703123456789", "get", "/trade-api/v2/portfolio/orders?limit=5")).toBe("1703123456789GET/trade-api/v2/portfolio/orders");
  });

  it("produces an RSA-PSS signature the public key verifies, and only for what was signed", () => {
    const sig = signKalshi(pem, "1703123456789", "POST", "/trade-api/v2/portfolio/events/orders");
    expect(verifyKalshi(publicKey, "1703123456789", "POST", "/trade-api/v2/portfolio/events/orders", sig)).toBe(true);
    expect(verifyKalshi(publicKey, "1703123456789", "POST", "/trade-api/v2/portfolio/events/orders?x=1", sig)).toBe(true);
    expect(verifyKalshi(publicKey, "1703123456790", "POST", "/trade-api/v2/portfolio/events/orders", sig)).toBe(false);
    expect(verifyKalshi(publicKey, "1703123456789", "GET", "/trade-api/v2/portfolio/events/orders", sig)).toBe(false);
  });

  it("sends the three KALSHI-ACCESS headers with a millisecond timestamp", () => {
    const h = kalshiAuthHeaders("key-1", pem, 1_703_123_456_789.7, "GET", "/trade-api/ws/v2");
    expect(h["KALSHI-ACCESS-KEY"]).toBe("key-1");
    expect(h["KALSHI-ACCESS-TIMESTAMP"]).toBe("1703123456789");
    expect(verifyKalshi(publicKey, "1703123456789", "GET", "/trade-api/ws/v2", h["KALSHI-ACCESS-SIGNATURE"]!)).toBe(true);
  });
});

describe("Kalshi book conversion", () => {
  it("builds both outcomes from the bids-only documented orderbook: YES ask = 1 − NO bid", () => {
    const book = fixture("orderbook.json").response.orderbook_fp;
    const books = kalshiSides(levelMap(book.yes_dollars, "yes_dollars"), levelMap(book.no_dollars, "no_dollars"));
    const show = (ls: readonly { price: bigint; shares: bigint }[]) => ls.map((l) => [Number(l.price) / 1e6, Number(l.shares) / 1e6]);
    expect(show(books.YES.bids)).toEqual([[0.45, 100], [0.44, 25], [0.42, 150]]);
    expect(show(books.YES.asks)).toEqual([[0.46, 200], [0.47, 10], [0.5, 80]]);
    expect(show(books.NO.bids)).toEqual([[0.54, 200], [0.53, 10], [0.5, 80]]);
    expect(show(books.NO.asks)).toEqual([[0.55, 100], [0.56, 25], [0.58, 150]]);
  });

  it("parses the documented market with its series fee into the Venue port's terms", () => {
    const f = fixture("market.json");
    const m = toVenueMarket(f.response.markets[0], kalshiFeeModel(f.series.series.fee_type, f.series.series.fee_multiplier));
    expect(m).toMatchObject({ venueMarketId: "KXBTCD-26DEC31-T150000", status: "open", tickSize: 10_000n, lotShares: 1_000_000n, minOrderShares: 1_000_000n });
    expect(m.feeModel).toEqual({ kind: "kalshi", ratePpm: 70_000n, wholeCents: true });
    expect(m.volume).toBe(184_532_000_000n);
    expect(kalshiFeeModel("quadratic_with_maker_fees", 0.5)).toEqual({ kind: "kalshi", ratePpm: 35_000n });
  });

  it("reads a market's resolution: paid out only once finalized, to its result", () => {
    const f = fixture("market.json").response.markets[0];
    const fee = { kind: "kalshi" as const, ratePpm: 70_000n };
    expect(kalshiResolution({ status: "active", result: "" })).toEqual({ state: "open" });
    for (const status of ["initialized", "inactive", "closed"]) expect(kalshiResolution({ status, result: "" })).toEqual({ state: "closed" });
    // the result is known, but the settlement timer still runs or the result is challenged: nothing paid yet
    for (const status of ["determined", "disputed", "amended"]) expect(kalshiResolution({ status, result: "yes" })).toEqual({ state: "closed" });
    expect(kalshiResolution({ status: "finalized", result: "yes" })).toEqual({ state: "resolved", outcome: "YES" });
    expect(kalshiResolution({ status: "finalized", result: "no" })).toEqual({ state: "resolved", outcome: "NO" });
    expect(kalshiResolution({ status: "finalized", result: "void" })).toEqual({ state: "voided" });
    expect(toVenueMarket({ ...f, status: "finalized", result: "no" }, fee).status).toBe("resolved");
    expect(toVenueMarket({ ...f, status: "determined", result: "no" }, fee).status).toBe("closed");
  });

  it("formats and parses fixed-point strings exactly", () => {
    expect(formatDollars(560_000n)).toBe("0.5600");
    expect(formatCount(10_000_000n)).toBe("10.00");
    expect(parseSignedCount("-54.00", "d")).toBe(-54_000_000n);
    expect(() => formatDollars(123n)).toThrow();
  });
});

describe("Kalshi fees", () => {
  it("matches every row of the published general fee table", () => {
    const model = kalshiFeeModel("quadratic", 1);
    for (const row of fixture("fee-table.json").rows) {
      const price = parseMicro(row.price, "price");
      expect(orderFee(model, [{ price, shares: 1_000_000n }]), `1 @ ${row.price}`).toBe(parseMicro(row.one, "one"));
      expect(orderFee(model, [{ price, shares: 100_000_000n }]), `100 @ ${row.price}`).toBe(parseMicro(row.hundred, "hundred"));
    }
  });

  it("rounds a rate that is not whole ppm up, toward the venue: the fee quoted and locked is never below what it charges", () => {
    // 0.07 × 0.00125 = 0.0000875: 4,576 contracts at 0.50 pay 0.1001, 0.11 rounded up to the cent (87 ppm quoted 0.10)
    const model = kalshiFeeModel("quadratic", 0.00125);
    expect(model).toEqual({ kind: "kalshi", ratePpm: 88n });
    expect(orderFee(model, [{ price: 500_000n, shares: 4_576_000_000n }])).toBe(110_000n);
    // 10,000 contracts at 0.22 pay 0.15015, 0.16; 87 ppm locked 0.15 on a whole-cent market, and the operator paid the cent
    expect(worstFee({ kind: "kalshi", ratePpm: model.ratePpm, wholeCents: true }, 220_000n, 10_000_000_000n)).toBe(160_000n);
    expect(kalshiFeeModel("quadratic", 0.000001)).toEqual({ kind: "kalshi", ratePpm: 1n });
  });

  it("reads a multiplier of more than 6 decimals exactly, its rate rounded up, rather than leaving its markets out", () => {
    // 0.07 × 0.0012345 = 0.000086415: 87 ppm, the fee of 10,000 contracts at 0.50 (0.2160375) quoted and locked 0.22, as Kalshi charges
    const model = kalshiFeeModel("quadratic", 0.0012345);
    expect(model).toEqual({ kind: "kalshi", ratePpm: 87n });
    expect(orderFee(model, [{ price: 500_000n, shares: 10_000_000_000n }])).toBe(220_000n);
    // a multiplier written to more places than it needs, or in a fixed-point string, is the same multiplier
    expect(kalshiFeeModel("quadratic", "0.50000000")).toEqual({ kind: "kalshi", ratePpm: 35_000n });
    expect(kalshiFeeModel("quadratic", 1e-9)).toEqual({ kind: "kalshi", ratePpm: 1n });
    expect(kalshiFeeModel("quadratic", 0)).toEqual({ kind: "kalshi", ratePpm: 0n });
    const market = fixture("market.json").response.markets[0];
    expect(toVenueMarket(market, kalshiMarketFeeModel({ fee_type: "quadratic", fee_multiplier: 1 }, { fee_multiplier_override: 0.33333333 })).feeModel).toEqual({ kind: "kalshi", ratePpm: 23_334n, wholeCents: true });
  });
});

describe("Kalshi event fee overrides", () => {
  const series = fixture("market.json").series.series;

  it("charges a market its event's override, not its series' fee", () => {
    const { event } = fixture("event.json").response;
    const market = fixture("market.json").response.markets[0];
    expect(market.event_ticker).toBe(event.event_ticker);
    expect(series).toMatchObject({ fee_type: "quadratic", fee_multiplier: 1 });
    expect(toVenueMarket(market, kalshiMarketFeeModel(series, event)).feeModel).toEqual({ kind: "kalshi", ratePpm: 105_000n, wholeCents: true });
  });

  it("marks a market whole-cent only where every price is whole cents and every contract whole", () => {
    const market = fixture("market.json").response.markets[0];
    const fee = { kind: "kalshi" as const, ratePpm: 70_000n };
    const range = (start: string, end: string, step: string) => ({ start, end, step });
    expect(toVenueMarket(market, fee).feeModel).toEqual({ ...fee, wholeCents: true });
    expect(toVenueMarket({ ...market, price_ranges: [] }, fee).feeModel).toEqual({ ...fee, wholeCents: true });
    expect(toVenueMarket({ ...market, price_level_structure: "deci_cent", price_ranges: [range("0.0000", "1.0000", "0.0010")] }, fee).feeModel).toEqual(fee);
    const tapered = [range("0.0000", "0.1000", "0.0010"), range("0.1000", "0.9000", "0.0100"), range("0.9000", "1.0000", "0.0010")];
    expect(toVenueMarket({ ...market, price_level_structure: "tapered_deci_cent", price_ranges: tapered }, fee).feeModel).toEqual(fee);
    expect(toVenueMarket({ ...market, fractional_trading_enabled: true }, fee).feeModel).toEqual(fee);
  });

  it("keeps the series' fee where the event overrides nothing, and the series' other field where it overrides one", () => {
    expect(kalshiMarketFeeModel(series, {})).toEqual({ kind: "kalshi", ratePpm: 70_000n });
    expect(kalshiMarketFeeModel(series, { fee_type_override: null, fee_multiplier_override: null })).toEqual({ kind: "kalshi", ratePpm: 70_000n });
    expect(kalshiMarketFeeModel(series, { fee_multiplier_override: 0.5 })).toEqual({ kind: "kalshi", ratePpm: 35_000n });
    expect(kalshiMarketFeeModel({ fee_type: "quadratic", fee_multiplier: 0.5 }, { fee_type_override: "quadratic_with_maker_fees" })).toEqual({ kind: "kalshi", ratePpm: 35_000n });
    expect(() => kalshiMarketFeeModel(series, { fee_type_override: "flat" })).toThrow(/flat/);
  });
});

describe("Kalshi orderbook_delta stream", () => {
  const make = () => {
    const sent: string[] = [];
    const updates: string[] = [];
    let now = 1_000;
    const sync = new KalshiBookSync({ venue: "kalshi", tickers: ["FED-23DEC-T3.00"], send: (t) => (sent.push(t), true), now: () => now, onBook: (t) => updates.push(t) });
    return { sync, sent, updates, tick: (ms: number) => (now += ms) };
  };

  it("applies the documented snapshot and deltas", () => {
    const { sync, updates } = make();
    sync.subscribe();
    for (const m of fixture("ws-orderbook.json").messages) sync.onMessage(JSON.stringify(m));
    const yes = sync.book("FED-23DEC-T3.00", "YES")!;
    expect(yes.bids.map((l) => [l.price, l.shares])).toEqual([[220_000n, 279_000_000n], [80_000n, 300_000_000n]]);
    expect(yes.asks.map((l) => [l.price, l.shares])).toEqual([[440_000n, 146_000_000n], [450_000n, 10_000_000n], [460_000n, 20_000_000n]]);
    expect(updates).toHaveLength(3);
    expect(sync.resyncs).toBe(0);
  });

  it("builds a book once per change: readers share it until a delta, which shows from the next read on and leaves earlier reads as they were", () => {
    const { sync } = make();
    sync.subscribe();
    const [subscribed, snapshot, ...deltas] = fixture("ws-orderbook.json").messages;
    sync.onMessage(JSON.stringify(subscribed));
    sync.onMessage(JSON.stringify(snapshot));
    const before = sync.book("FED-23DEC-T3.00", "YES")!;
    expect(sync.book("FED-23DEC-T3.00", "YES")!.bids).toBe(before.bids);
    for (const d of deltas) sync.onMessage(JSON.stringify(d));
    const after = sync.book("FED-23DEC-T3.00", "YES")!;
    expect(after.bids.map((l) => [l.price, l.shares])).toEqual([[220_000n, 279_000_000n], [80_000n, 300_000_000n]]);
    expect(before.bids.map((l) => [l.price, l.shares])).toEqual([[220_000n, 333_000_000n], [80_000n, 300_000_000n]]);
    expect(sync.book("FED-23DEC-T3.00", "NO")!.asks).toBe(sync.book("FED-23DEC-T3.00", "NO")!.asks);
  });

  it("resubscribes on a sequence gap and keeps the last book, ageing", () => {
    const { sync, sent, tick } = make();
    sync.subscribe();
    const [subscribed, snapshot, delta] = fixture("ws-orderbook.json").messages;
    sync.onMessage(JSON.stringify(subscribed));
    sync.onMessage(JSON.stringify(snapshot));
    const at = sync.book("FED-23DEC-T3.00", "YES")!.updatedAt;
    tick(500);
    sync.onMessage(JSON.stringify({ ...delta, seq: 5 }));
    expect(sync.resyncs).toBe(1);
    expect(sent.map((s) => JSON.parse(s).cmd)).toEqual(["subscribe", "unsubscribe", "subscribe"]);
    expect(sync.live).toBe(false);
    const book = sync.book("FED-23DEC-T3.00", "YES")!;
    expect(book.updatedAt).toBe(at);
    expect(book.bids).toHaveLength(2);
  });
});
