import { readFileSync } from "node:fs";
import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { ChildOrder, PlaceResult, Venue, VenueHealth } from "../venues/venue.ts";
import { Metrics, meterPlacements } from "./metrics.ts";

const SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The lines of one metric family in a scrape. */
function family(body: string, name: string): string[] {
  return body.split("\n").filter((l) => [`# HELP ${name} `, `# TYPE ${name} `, `${name}{`, `${name}_`].some((start) => l.startsWith(start)));
}

describe("Metrics: the HTTP request series", () => {
  it("render as prom-client's own Counter and Histogram would render the same answers", async () => {
    const answers: [string, string, number, number][] = [
      ["GET", "/v1/prices/:event_id", 200, 0.0004],
      ["GET", "/v1/prices/:event_id", 200, 0.005],
      ["GET", "/v1/prices/:event_id", 404, 0.002],
      ["POST", "/v1/order", 200, 0.3],
      ["GET", "(unmatched)", 404, 45],
      ["GET", "/v1/prices/:event_id", 200, 0.01],
    ];
    const metrics = new Metrics({ venues: () => [], openOrders: async () => 0, inFlight: () => 0 });
    const registry = new Registry();
    const labelNames = ["method", "route", "status_code"] as const;
    const total = new Counter({ name: "http_requests_total", help: "HTTP requests answered, by method, route template and status", labelNames, registers: [registry] });
    const seconds = new Histogram({
      name: "http_request_duration_seconds",
      help: "Time from a request's arrival to its answer, by method, route template and status",
      labelNames,
      buckets: SECONDS,
      registers: [registry],
    });
    for (const [method, route, status, s] of answers) {
      metrics.request(method, route, status, s);
      const labels = { method, route, status_code: String(status) };
      total.inc(labels);
      seconds.observe(labels, s);
    }
    const ours = (await metrics.scrape()).body;
    const theirs = await registry.metrics();
    for (const name of ["http_requests_total", "http_request_duration_seconds"]) {
      expect(family(ours, name).sort()).toEqual(family(theirs, name).sort());
    }
    expect(family(ours, "http_requests_total")).toContain('http_requests_total{method="GET",route="/v1/prices/:event_id",status_code="200"} 3');
  });
});

describe("Metrics: a source that cannot be read", () => {
  it("a store that cannot count the open orders shows crossfill_orders_open as NaN; the rest of the scrape is served", async () => {
    const metrics = new Metrics({ venues: () => [], openOrders: () => Promise.reject(new Error("database unreachable")), inFlight: () => 2 });
    const { body } = await metrics.scrape();
    // prom-client writes NaN as "Nan", which Prometheus reads as NaN.
    expect(body).toMatch(/^crossfill_orders_open nan$/im);
    expect(body.split("\n")).toContain("crossfill_orders_in_flight 2");
    expect(body).toContain("process_cpu_seconds_total");
  });
});

describe("Metrics: docs/operations.md", () => {
  it("names in its table every series the server registers, and no other", async () => {
    const docs = readFileSync(new URL("../../docs/operations.md", import.meta.url), "utf8");
    const documented = [...docs.matchAll(/^\| `((?:http|crossfill)_\w+)` \|/gm)].map((m) => m[1]).sort();
    const metrics = new Metrics({ venues: () => [], openOrders: async () => 0, inFlight: () => 0 });
    const registered = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name).filter((name) => /^(http|crossfill)_/.test(name)).sort();
    expect(documented).toEqual(registered);
  });
});

describe("Metrics: the venue gauges", () => {
  it("show no series for a venue gone from the list, nor a book age for a venue that holds no book any more", async () => {
    const health: VenueHealth = { state: "up", latency: { p50Ms: undefined, p99Ms: undefined, samples: 0 }, bookAgeMs: 5_000 };
    const venue = (id: string) => ({ id, health: () => health }) as unknown as Venue;
    let venues = [venue("polymarket"), venue("kalshi")];
    const metrics = new Metrics({ venues: () => venues, openOrders: async () => 0, inFlight: () => 0 });
    const series = async (name: string) => family((await metrics.scrape()).body, name).filter((l) => !l.startsWith("#"));
    expect(await series("crossfill_venue_book_age_seconds")).toEqual(['crossfill_venue_book_age_seconds{venue="polymarket"} 5', 'crossfill_venue_book_age_seconds{venue="kalshi"} 5']);
    venues = [venue("kalshi")];
    health.bookAgeMs = undefined;
    expect(await series("crossfill_venue_book_age_seconds")).toEqual([]);
    expect(await series("crossfill_venue_state")).toEqual(['crossfill_venue_state{venue="kalshi",state="up"} 1', 'crossfill_venue_state{venue="kalshi",state="degraded"} 0', 'crossfill_venue_state{venue="kalshi",state="down"} 0']);
  });
});

describe("Metrics: crossfill_venue_child_orders_total", () => {
  it("counts a placement whose adapter threw as error, and its help names every result it counts", async () => {
    const metrics = new Metrics({ venues: () => [], openOrders: async () => 0, inFlight: () => 0 });
    const answers: (PlaceResult | Error)[] = [
      { kind: "filled", venueOrderId: "v1", fills: [] },
      { kind: "partial", venueOrderId: "v2", fills: [] },
      { kind: "open", venueOrderId: "v3", fills: [] },
      { kind: "rejected", reason: "no liquidity" },
      { kind: "unknown", reason: "timeout" },
      new Error("socket hang up"),
    ];
    const place = async () => {
      const answer = answers.shift()!;
      if (answer instanceof Error) throw answer;
      return answer;
    };
    const venue = meterPlacements({ id: "kalshi", place } as unknown as Venue, metrics);
    for (let i = 0; i < 6; i++) await venue.place({} as ChildOrder).catch(() => undefined);
    const lines = family((await metrics.scrape()).body, "crossfill_venue_child_orders_total");
    const results = lines.flatMap((l) => [...l.matchAll(/result="(\w+)"/g)].map((m) => m[1]!));
    expect(results).toEqual(["filled", "partial", "open", "rejected", "unknown", "error"]);
    const help = lines.find((l) => l.startsWith("# HELP"))!;
    for (const result of results) expect(help).toMatch(new RegExp(`\\b${result}\\b`));
  });
});
