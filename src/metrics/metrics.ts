import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, Summary } from "prom-client";
import type { Checkpoint } from "../orders/service.ts";
import type { Venue } from "../venues/venue.ts";
import { BoundedMap } from "../domain/bounded-map.ts";

/** What the gauges read at each scrape. */
export interface MetricSources {
  venues(): readonly Venue[];
  /** Orders not in a terminal state, whoever executes them: what recovery has left to finish. */
  openOrders(): Promise<number>;
  /** Orders this instance is executing now. */
  inFlight(): number;
}

/** Latency buckets in seconds, from a cached read to a chain transaction waiting on a slow block. */
const SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const BATCH_SIZES = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];
const VENUE_STATES = ["up", "degraded", "down"] as const;
/** The steps that wait on the chain (a lock, a settlement or release) or on the venues (placing), not on this service. */
const WAITS: ReadonlySet<Checkpoint> = new Set(["order.locked", "order.turns", "order.placed", "order.finished"]);
/** Orders whose last step is remembered; an order left to recovery in another instance is never heard of again, so the oldest are let go. */
const STEP_TIMERS = 10_000;

/** The answers of one route template with one method and status. */
interface RequestSeries {
  labels: { method: string; route: string; status_code: string };
  /** Answers per bucket of SECONDS (not cumulative); the last counts those slower than every bound. */
  counts: number[];
  seconds: number;
  count: number;
}

/**
 * `http_requests_total` and `http_request_duration_seconds`, counted here rather than by prom-client's
 * Counter and Histogram: each of their observations builds a labels object, checks it and joins it into
 * a key, which on a cached read cost as much as the route's own work. A series is found by its values
 * (no key is built), and both render through the registry as prom-client's own would.
 */
class RequestMetrics {
  private readonly series = new Map<string, Map<string, Map<number, RequestSeries>>>();

  constructor(registry: Registry) {
    const metric = (name: string, help: string, type: "counter" | "histogram", values: () => MetricValue[]) => {
      const about = { name, help, type, aggregator: "sum" };
      return { ...about, get: async () => ({ ...about, values: values() }), reset: () => this.series.clear() };
    };
    // The registry takes any metric that renders itself with get(); its types name only prom-client's classes.
    registry.registerMetric(
      metric("http_requests_total", "HTTP requests answered, by method, route template and status", "counter", () => [...this.all()].map((s) => ({ labels: s.labels, value: s.count }))) as unknown as Counter,
    );
    registry.registerMetric(
      metric("http_request_duration_seconds", "Time from a request's arrival to its answer, by method, route template and status", "histogram", () => [...this.all()].flatMap(histogramValues)) as unknown as Histogram,
    );
  }

  observe(method: string, route: string, statusCode: number, seconds: number): void {
    let methods = this.series.get(route);
    if (methods === undefined) this.series.set(route, (methods = new Map()));
    let statuses = methods.get(method);
    if (statuses === undefined) methods.set(method, (statuses = new Map()));
    let series = statuses.get(statusCode);
    if (series === undefined) {
      series = { labels: { method, route, status_code: String(statusCode) }, counts: new Array<number>(SECONDS.length + 1).fill(0), seconds: 0, count: 0 };
      statuses.set(statusCode, series);
    }
    let bucket = 0;
    while (bucket < SECONDS.length && seconds > SECONDS[bucket]!) bucket++;
    series.counts[bucket]!++;
    series.seconds += seconds;
    series.count++;
  }

  private *all(): Generator<RequestSeries> {
    for (const methods of this.series.values()) for (const statuses of methods.values()) yield* statuses.values();
  }
}

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** A series as prom-client renders a histogram's: cumulative buckets by `le`, then +Inf, the sum and the count. */
function histogramValues(s: RequestSeries): MetricValue[] {
  const name = "http_request_duration_seconds";
  let below = 0;
  const buckets = SECONDS.map((le, i) => ({ labels: { le, ...s.labels }, value: (below += s.counts[i]!), metricName: `${name}_bucket` }));
  return [
    ...buckets,
    { labels: { le: "+Inf", ...s.labels }, value: s.count, metricName: `${name}_bucket` },
    { labels: s.labels, value: s.seconds, metricName: `${name}_sum` },
    { labels: s.labels, value: s.count, metricName: `${name}_count` },
  ];
}

/**
 * The Prometheus metrics of one server (GET /metrics). A registry of its own, not prom-client's global
 * one, so that several servers in one process (the tests) each count their own.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: RequestMetrics;
  private readonly orderSteps: Histogram<"step">;
  private readonly childOrders: Counter<"venue" | "result">;
  private readonly placeSeconds: Histogram<"venue">;
  private readonly chainTxSeconds: Histogram<"label" | "outcome">;
  private readonly chainBatchSize: Histogram;
  private readonly chainBatchSeconds: Histogram;
  private readonly chainCallsPerTx: Histogram;
  private readonly reconciled: Counter;
  private readonly orderOwn: Summary;
  /** When each order last passed a checkpoint (performance.now()), in the order they started. */
  private readonly lastStep = new BoundedMap<string, number>(STEP_TIMERS);
  /** Seconds each order has spent waiting on the chain and the venues, until its answer is sent. */
  private readonly waited = new BoundedMap<string, number>(STEP_TIMERS);

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new RequestMetrics(this.registry);
    this.orderSteps = new Histogram({
      name: "crossfill_order_step_seconds",
      help: "Time an order took to reach each checkpoint of the order flow from the one before (order.inserted starts the clock; reconcile.outcomes restarts it in recovery)",
      labelNames: ["step"],
      buckets: SECONDS,
      registers,
    });
    this.childOrders = new Counter({
      name: "crossfill_venue_child_orders_total",
      help: "Child orders placed, by venue and what the venue answered: filled, partial, open (cancelled then), rejected, unknown (left to reconciliation), error (the adapter threw)",
      labelNames: ["venue", "result"],
      registers,
    });
    this.placeSeconds = new Histogram({ name: "crossfill_venue_place_seconds", help: "Round trip of placing a child order, by venue", labelNames: ["venue"], buckets: SECONDS, registers });
    new Gauge({
      name: "crossfill_venue_book_age_seconds",
      help: "Age of the oldest order book the venue's adapter holds; no series while it holds none",
      labelNames: ["venue"],
      registers,
      // Set afresh at each scrape: a venue gone, or one whose books are all gone, shows no age it had before.
      collect() {
        this.reset();
        for (const v of sources.venues()) {
          const age = v.health().bookAgeMs;
          if (age !== undefined) this.set({ venue: v.id }, age / 1000);
        }
      },
    });
    new Gauge({
      name: "crossfill_venue_state",
      help: "1 for the state each venue is in (up, degraded, down), 0 for the others",
      labelNames: ["venue", "state"],
      registers,
      collect() {
        this.reset();
        for (const v of sources.venues()) {
          const now = v.health().state;
          for (const state of VENUE_STATES) this.set({ venue: v.id, state }, state === now ? 1 : 0);
        }
      },
    });
    this.chainTxSeconds = new Histogram({
      name: "crossfill_chain_tx_seconds",
      help: "Time from handing an operator transaction to the sender to its answer (queue, batch, dry run, mining, receipt), by call and outcome: mined, reverted, unknown",
      labelNames: ["label", "outcome"],
      buckets: SECONDS,
      registers,
    });
    this.chainBatchSize = new Histogram({ name: "crossfill_chain_batch_size", help: "Operator transactions per batch sent together", buckets: BATCH_SIZES, registers });
    this.chainBatchSeconds = new Histogram({ name: "crossfill_chain_batch_seconds", help: "Time one batch took, from its dry run to its last receipt", buckets: SECONDS, registers });
    this.chainCallsPerTx = new Histogram({
      name: "crossfill_chain_calls_per_tx",
      help: "Vault calls (locks, settles, releases of as many orders) carried by one Vault.batch transaction",
      buckets: BATCH_SIZES,
      registers,
    });
    new Gauge({
      name: "crossfill_orders_open",
      help: "Orders not in a terminal state, over every instance: the reconciliation backlog (NaN when the store cannot count them)",
      registers,
      // A store that cannot answer must not fail the whole scrape (every other series with it) when it is most needed.
      async collect() {
        this.set(await sources.openOrders().catch(() => NaN));
      },
    });
    new Gauge({
      name: "crossfill_orders_in_flight",
      help: "Orders this instance is executing now",
      registers,
      collect() {
        this.set(sources.inFlight());
      },
    });
    this.orderOwn = new Summary({
      name: "crossfill_order_own_seconds",
      help: "POST /v1/order's own work per order: from the request's arrival to its answer, less the steps that wait on the chain and the venues",
      percentiles: [0.5, 0.9, 0.99],
      registers,
    });
    this.reconciled = new Counter({ name: "crossfill_reconciled_orders_total", help: "Orders finished by recovery (at start-up and in its periodic passes)", registers });
  }

  request(method: string, route: string, statusCode: number, seconds: number): void {
    this.requests.observe(method, route, statusCode, seconds);
  }

  /** The order flow passed a checkpoint: the time since the order's previous one is that step's. */
  orderStep(step: Checkpoint, orderId: string): void {
    const now = performance.now();
    const previous = this.lastStep.get(orderId);
    this.lastStep.delete(orderId);
    // A checkpoint that starts a flow has no step before it in this process worth timing.
    if (step !== "order.inserted" && step !== "reconcile.outcomes" && previous !== undefined) {
      const seconds = (now - previous) / 1000;
      this.orderSteps.observe({ step }, seconds);
      if (WAITS.has(step)) this.waited.set(orderId, (this.waited.get(orderId) ?? 0) + seconds);
    }
    if (step === "order.finished") return;
    this.lastStep.set(orderId, now);
  }

  /** POST /v1/order answers the order, `seconds` after the request arrived. */
  orderAnswered(orderId: string, seconds: number): void {
    this.orderOwn.observe(seconds - (this.waited.get(orderId) ?? 0));
    this.waited.delete(orderId);
  }

  childOrder(venue: string, result: string, seconds: number): void {
    this.childOrders.inc({ venue, result });
    this.placeSeconds.observe({ venue }, seconds);
  }

  chainTransaction(label: string, seconds: number, outcome: string): void {
    this.chainTxSeconds.observe({ label, outcome }, seconds);
  }

  chainBatch(size: number, seconds: number): void {
    this.chainBatchSize.observe(size);
    this.chainBatchSeconds.observe(seconds);
  }

  chainCalls(count: number): void {
    this.chainCallsPerTx.observe(count);
  }

  reconciledOrders(n: number): void {
    this.reconciled.inc(n);
  }

  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/**
 * Counts and times the venue's placements: its `place` is replaced, on the adapter itself, by one that
 * records each answer. Every other member stays the adapter's own, read as fast as before: the quotes
 * and books read several of them per venue on every order and every tick.
 */
export function meterPlacements(venue: Venue, metrics: Metrics): Venue {
  const place = venue.place.bind(venue);
  venue.place = async (order) => {
    const started = performance.now();
    // Adapters answer "unknown" rather than throw; one that throws anyway is counted apart.
    let result = "error";
    try {
      const answer = await place(order);
      result = answer.kind;
      return answer;
    } finally {
      metrics.childOrder(venue.id, result, (performance.now() - started) / 1000);
    }
  };
  return venue;
}
