import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sellFeeAdjustedPrice, type FeeModel } from "../../src/domain/fees.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.stop());

describe("GET /v1/markets", () => {
  it("lists unified events, each on two or more venues, paginated", async () => {
    const first = await s.client.markets({ limit: 5 });
    expect(first.data).toHaveLength(5);
    expect(first.next_cursor).toEqual(expect.any(String));
    const m = first.data[0]!;
    expect(m).toMatchObject({
      event_id: expect.any(String),
      title: expect.any(String),
      outcomes: ["YES", "NO"],
      status: expect.stringMatching(/^(open|closed|resolved)$/),
      close_time: expect.any(String),
    });
    expect(m.venues.length).toBeGreaterThanOrEqual(2);
    expect(m.venues[0]).toMatchObject({ venue: expect.any(String), venue_market_id: expect.any(String), tick_size: expect.any(Number), min_order_size: expect.any(Number) });

    const all = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await s.client.markets({ limit: 7, ...(cursor ? { cursor } : {}) });
      for (const e of page.data) all.add(e.event_id);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(all.size).toBeGreaterThanOrEqual(20);
    expect(all.has("fed-cut-2026-12")).toBe(true);
  });

  it("filters by status and searches text", async () => {
    const open = await s.client.markets({ status: "open", limit: 500 });
    expect(open.data.every((m) => m.status === "open")).toBe(true);
    const found = await s.client.markets({ q: "fed", limit: 500 });
    expect(found.data.map((m) => m.event_id)).toContain("fed-cut-2026-12");
  });

  it("refuses an unknown filter value with invalid_request", async () => {
    const r = await s.client.request("GET", "/v1/markets?status=sideways");
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: { code: "invalid_request" } });
  });

  it("refuses an empty venue (a script's unset variable) with invalid_request naming it, rather than list every venue's events", async () => {
    const r = await s.client.request("GET", "/v1/markets?venue=");
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: { code: "invalid_request", details: { fields: { venue: expect.any(String) } } } });
  });

  it("refuses a venue no event lists (polymarket for polymarket-sim) with invalid_request naming the venues, rather than list none", async () => {
    const r = await s.client.request("GET", "/v1/markets?venue=polymarket");
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      error: { code: "invalid_request", details: { fields: { venue: "must be one of kalshi-sim, limitless-sim, opinion-sim, polymarket-sim" } } },
    });
  });
});

describe("GET /v1/prices/{event_id}", () => {
  it("returns the SPEC's price record: a merged book whose levels name their venues", async () => {
    const p = await s.client.prices("fed-cut-2026-12");
    expect(p.event_id).toBe("fed-cut-2026-12");
    expect(p.best_execution).toMatchObject({ venue: expect.any(String), price: expect.any(Number), fee_adjusted_price: expect.any(Number) });
    expect(p.best_execution!.fee_adjusted_price).toBeGreaterThanOrEqual(p.best_execution!.price);
    for (const side of [p.orderbook.bids, p.orderbook.asks]) {
      expect(side.length).toBeGreaterThan(0);
      for (const entry of side) {
        expect(entry).toHaveLength(3);
        expect(entry[0]).toBeGreaterThan(0);
        expect(entry[0]).toBeLessThan(1);
        expect(entry[1]).toBeGreaterThan(0);
        expect(typeof entry[2]).toBe("string");
      }
    }
    const bidPrices = p.orderbook.bids.map((e) => e[0]);
    const askPrices = p.orderbook.asks.map((e) => e[0]);
    expect(bidPrices).toEqual([...bidPrices].sort((a, b) => b - a));
    expect(askPrices).toEqual([...askPrices].sort((a, b) => a - b));
    const venues = new Set([...p.orderbook.bids, ...p.orderbook.asks].map((e) => e[2]));
    expect(venues.size).toBeGreaterThanOrEqual(2);
  });

  it("honours depth and outcome=NO", async () => {
    const p = await s.client.prices("fed-cut-2026-12", { depth: 3, outcome: "NO" });
    expect(p.orderbook.bids.length).toBeLessThanOrEqual(3);
    expect(p.orderbook.asks.length).toBeLessThanOrEqual(3);
  });

  it("ranks for a sell with side=sell: bids by what a seller nets per share after each venue's fee, best_execution the venue whose best bid nets most", async () => {
    const micro = (x: number) => BigInt(Math.round(x * 1e6));
    // Each venue's fee model as GET /v1/markets describes it.
    const listed = (await s.client.markets({ q: "fed", limit: 500 })).data.find((m) => m.event_id === "fed-cut-2026-12")!;
    const fees = new Map(
      listed.venues.map((v): [string, FeeModel] => {
        const f = v.fee_model as { type: FeeModel["kind"]; rate?: number; fee_rate?: number; exponent?: 0 | 1 | 2; min_fee?: number };
        const ratePpm = micro(f.rate ?? f.fee_rate ?? 0);
        if (f.type === "polymarket") return [v.venue, { kind: "polymarket", ratePpm, exponent: f.exponent! }];
        return [v.venue, f.type === "opinion" ? { kind: "opinion", ratePpm, minFee: micro(f.min_fee!) } : { kind: f.type, ratePpm }];
      }),
    );
    const p = await s.client.prices("fed-cut-2026-12", { side: "sell", depth: 60 });
    expect(p.best_execution).toMatchObject({ venue: expect.any(String), price: expect.any(Number), fee_adjusted_price: expect.any(Number) });
    expect(p.best_execution!.fee_adjusted_price).toBeLessThanOrEqual(p.best_execution!.price);
    expect(new Set(p.orderbook.bids.map((e) => e[2])).size).toBeGreaterThanOrEqual(2);
    const nets = p.orderbook.bids.map(([price, size, venue]) => sellFeeAdjustedPrice(fees.get(venue)!, { price: micro(price), shares: micro(size) }));
    expect(nets).toEqual([...nets].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)));
    const askPrices = p.orderbook.asks.map((e) => e[0]);
    expect(askPrices).toEqual([...askPrices].sort((a, b) => a - b));
  });

  it("refuses a side that is neither buy nor sell with invalid_request", async () => {
    const r = await s.client.request("GET", "/v1/prices/fed-cut-2026-12?side=short");
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: { code: "invalid_request", details: { fields: { side: expect.any(String) } } } });
  });

  it("answers unknown_event for an id that is not in the catalog", async () => {
    const r = await s.client.request("GET", "/v1/prices/no-such-event");
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ error: { code: "unknown_event", message: expect.any(String), request_id: expect.any(String) } });
  });
});

describe("POST /v1/order", () => {
  it("returns the SPEC's order response for a filled order (or one the simulators' moving books filled in part)", async () => {
    const o = await s.client.order({ market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 25, max_slippage: 0.05, strategy: "optimize_price" });
    expect(o).toMatchObject({
      order_id: expect.any(String),
      status: expect.stringMatching(/^(partially_)?filled$/),
      executed_price: expect.any(Number),
      routed_to: expect.any(String),
      sot_minted: expect.stringMatching(/^eip155:\d+\/erc1155:0x[0-9a-f]{40}\/\d+$/),
      tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    expect(o.executed_price).toBeGreaterThan(0);
    expect(o.executed_price).toBeLessThan(1);
    expect(o.spent_usdc).toBeLessThanOrEqual(25);
    expect(o.fills.length).toBeGreaterThan(0);
  });
});

describe("conventions", () => {
  it("echoes X-Request-Id, and makes one when none is sent", async () => {
    const echoed = await s.client.request("GET", "/v1/markets?limit=1", { headers: { "X-Request-Id": "trace-123" } });
    expect(echoed.headers["x-request-id"]).toBe("trace-123");
    const made = await s.client.request("GET", "/v1/nowhere");
    expect(made.status).toBe(404);
    expect(made.headers["x-request-id"]).toMatch(/^req_/);
    expect(made.body).toMatchObject({ error: { code: "not_found", request_id: made.headers["x-request-id"] } });
  });

  it("serves an OpenAPI 3 document describing the three SPEC endpoints", async () => {
    const r = await fetch(`${s.url}/v1/openapi.json`);
    const doc = (await r.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/v1/order", "/v1/prices/{event_id}", "/v1/markets"]));
  });

  it("reports health without a key: chain and each venue", async () => {
    const r = await fetch(`${s.url}/v1/health`);
    const h = (await r.json()) as { status: string; chain: { chain_id: number; rpc_url: string; contracts: Record<string, string> }; venues: { venue: string }[] };
    expect(r.status).toBe(200);
    expect(h.chain.chain_id).toBeGreaterThan(0);
    expect(h.chain.rpc_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
    expect(Object.keys(h.chain.contracts).sort()).toEqual(["sot", "usdc", "vault"]);
    expect(h.venues.map((v) => v.venue).sort()).toEqual(["kalshi-sim", "limitless-sim", "opinion-sim", "polymarket-sim"]);
    const poly = h.venues.find((v) => v.venue === "polymarket-sim") as unknown as { adapter: string; base_url: string; stream_state: string };
    expect(poly).toMatchObject({ adapter: "polymarket-clob", base_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:/), stream_state: "open" });
  });

  it("reads the chain once for the health requests that arrive while it is read: a flood of the keyless, unlimited route is no flood of JSON-RPC calls", async () => {
    const { vault, venues } = s.crossfill;
    const [venue] = venues;
    const [blockNumber, describe] = [vault.blockNumber, venue!.describe];
    let reads = 0;
    let arrived = 0;
    let allArrived = () => {};
    const all = new Promise<void>((resolve) => (allArrived = resolve));
    try {
      // each health request describes every venue just before it reads the chain: the read is held until the 20th has
      vault.blockNumber = async () => {
        reads++;
        await all;
        return 1n;
      };
      venue!.describe = () => {
        if (++arrived === 20) allArrived();
        return describe.call(venue);
      };
      const answers = await Promise.all(Array.from({ length: 20 }, async () => ((await (await fetch(`${s.url}/v1/health`)).json()) as { chain: { state: string } }).chain.state));
      expect(answers).toEqual(Array(20).fill("up"));
      expect(reads).toBe(1);
    } finally {
      vault.blockNumber = blockNumber;
      venue!.describe = describe;
    }
  });

  it("says which part is down, the chain or the store, as degraded with 200: each is read, neither hidden behind a 5xx", async () => {
    const read = async () => {
      const r = await fetch(`${s.url}/v1/health`);
      expect(r.status).toBe(200);
      return (await r.json()) as { status: string; chain: { state: string }; store: { state: string } };
    };
    expect(await read()).toMatchObject({ status: "ok", chain: { state: "up" }, store: { state: "up" } });
    const { vault, store } = s.crossfill;
    const [blockNumber, order] = [vault.blockNumber, store.order];
    try {
      vault.blockNumber = () => Promise.reject(new Error("the node is unreachable"));
      expect(await read()).toMatchObject({ status: "degraded", chain: { state: "down" }, store: { state: "up" } });
      vault.blockNumber = blockNumber;
      store.order = () => Promise.reject(new Error("the database is unreachable"));
      expect(await read()).toMatchObject({ status: "degraded", chain: { state: "up" }, store: { state: "down" } });
    } finally {
      vault.blockNumber = blockNumber;
      store.order = order;
    }
  });
});
