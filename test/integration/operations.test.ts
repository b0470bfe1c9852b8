import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const ORDER = { market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 10, max_slippage: 0.05, strategy: "optimize_price" };

/** A logger writing JSON lines into `lines`, as the server's would to stdout. */
function capturingLogger(lines: Record<string, unknown>[]) {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString("utf8").split("\n")) if (line.trim() !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return pino({ level: "debug" }, sink);
}

/** The value of one series in a Prometheus text exposition, or undefined. */
function sample(body: string, series: string): number | undefined {
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("metrics and logs of the order path", () => {
  let s: TestServer;
  const lines: Record<string, unknown>[] = [];
  let orderId: string;

  beforeAll(async () => {
    s = await startTestServer({}, { logger: capturingLogger(lines) });
    const res = await s.client.request("POST", "/v1/order", { body: JSON.stringify(ORDER), signed: true, headers: { "X-Request-Id": "req_ops_order_1" } });
    expect(res.status).toBe(200);
    orderId = (res.body as { order_id: string }).order_id;
  });
  afterAll(async () => s?.stop());

  it("GET /metrics is Prometheus text with every series of the order path, not the terminal's page", async () => {
    const res = await fetch(`${s.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const body = await res.text();
    expect(body).not.toMatch(/<!doctype/i);

    // requests by route template and status, with latency histograms
    expect(sample(body, 'http_requests_total{method="POST",route="/v1/order",status_code="200"}')).toBe(1);
    expect(sample(body, 'http_request_duration_seconds_count{method="POST",route="/v1/order",status_code="200"}')).toBe(1);
    expect(body).toContain('http_request_duration_seconds_bucket{le="0.5",method="POST",route="/v1/order",status_code="200"}');
    // order latency by step: every step boundary the order passed, timed from the one before
    for (const step of ["order.lock.sent", "order.locked", "order.routing", "order.placed", "order.fills.stored", "order.settle.sent", "order.finished"]) {
      expect(sample(body, `crossfill_order_step_seconds_count{step="${step}"}`), step).toBeGreaterThanOrEqual(1);
    }
    // fills and rejections by venue, and venue latency: the order filled on some venue
    const filled = body.split("\n").filter((l) => /^crossfill_venue_child_orders_total\{venue="[\w-]+",result="(filled|partial)"\} [1-9]/.test(l));
    expect(filled.length).toBeGreaterThanOrEqual(1);
    expect(body).toMatch(/^crossfill_venue_place_seconds_count\{venue="[\w-]+"\} [1-9]/m);
    // book age and state of every venue
    for (const venue of ["polymarket-sim", "kalshi-sim", "limitless-sim", "opinion-sim"]) {
      expect(sample(body, `crossfill_venue_book_age_seconds{venue="${venue}"}`), venue).toBeGreaterThanOrEqual(0);
      expect(sample(body, `crossfill_venue_state{venue="${venue}",state="up"}`), venue).toBeDefined();
    }
    // chain transaction latency (the lock and the settle) and batch size
    expect(sample(body, 'crossfill_chain_tx_seconds_count{label="Vault.lock",outcome="mined"}')).toBeGreaterThanOrEqual(1);
    expect(sample(body, 'crossfill_chain_tx_seconds_count{label="Vault.settle",outcome="mined"}')).toBeGreaterThanOrEqual(1);
    expect(sample(body, "crossfill_chain_batch_size_count")).toBeGreaterThanOrEqual(2);
    // reconciliation backlog: nothing left open
    expect(sample(body, "crossfill_orders_open")).toBe(0);
    expect(sample(body, "crossfill_orders_in_flight")).toBe(0);
    expect(sample(body, "crossfill_reconciled_orders_total")).toBe(0);
    // the process's own
    expect(body).toMatch(/^process_cpu_seconds_total /m);
  });

  it("an unknown path still falls to the terminal, and unknown API paths to the JSON 404", async () => {
    expect((await fetch(`${s.url}/some/page`)).headers.get("content-type")).not.toMatch(/^text\/plain; version/);
    const res = await fetch(`${s.url}/v1/nope`);
    expect(res.status).toBe(404);
    const body = await (await fetch(`${s.url}/metrics`)).text();
    expect(sample(body, 'http_requests_total{method="GET",route="(unmatched)",status_code="404"}')).toBe(1);
  });

  it("each of the order's log lines carries its request_id and order_id", () => {
    const mine = lines.filter((l) => l.order_id === orderId);
    expect(mine.map((l) => l.msg)).toContain("order finished");
    for (const l of mine) expect(l.request_id).toBe("req_ops_order_1");
  });
});

describe("the API-wide rate limit", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ RATE_LIMIT_PER_MINUTE: "5" });
  });
  afterAll(async () => s?.stop());

  it("answers 429 rate_limited with Retry-After once a key has spent its budget, and other keys keep theirs", async () => {
    for (let i = 0; i < 5; i++) expect((await s.client.request("GET", "/v1/markets")).status).toBe(200);
    const res = await s.client.request("GET", "/v1/markets");
    expect(res.status).toBe(429);
    const body = res.body as { error: { code: string; request_id: string; details: { retry_after_seconds: number } } };
    expect(body.error.code).toBe("rate_limited");
    expect(body.error.request_id).toBe(res.headers["x-request-id"]);
    const retryAfter = Number(res.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(body.error.details.retry_after_seconds).toBe(retryAfter);
    // Signed requests spend the same budget, and are refused before their signature is taken.
    expect((await s.client.request("POST", "/v1/order", { body: JSON.stringify(ORDER), signed: true })).status).toBe(429);

    const other = await s.newKey();
    expect((await other.client.request("GET", "/v1/markets")).status).toBe(200);
  });

  it("does not count GET /v1/health or GET /metrics", async () => {
    for (let i = 0; i < 8; i++) {
      expect((await fetch(`${s.url}/v1/health`)).status).toBe(200);
      expect((await fetch(`${s.url}/metrics`)).status).toBe(200);
    }
  });

  it("counts requests without a key by address", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await fetch(`${s.url}/v1/openapi.json`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });
});

describe("a server run on some of the venues (VENUES)", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ VENUES: "polymarket,kalshi" });
  });
  afterAll(async () => s?.stop());

  it("lists under ?venue= only events whose record shows that venue: a venue not connected lists none", async () => {
    const kalshi = await s.client.markets({ venue: "kalshi-sim", limit: 500 });
    expect(kalshi.data.length).toBeGreaterThan(0);
    for (const m of kalshi.data) expect(m.venues.map((v) => v.venue)).toContain("kalshi-sim");
    expect((await s.client.markets({ venue: "limitless-sim", limit: 500 })).data).toEqual([]);
  });
});
