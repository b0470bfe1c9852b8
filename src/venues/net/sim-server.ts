import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { systemClock, type Clock } from "../../domain/types.ts";
import { simulatedVenueEvents, type CatalogEvent, type MarketCatalog } from "../../markets/catalog.ts";
import { SimExchange } from "../simulated/exchange.ts";
import { SimMarketLifecycle, type ResolutionSchedule } from "../simulated/lifecycle.ts";
import { Rng, seedFor } from "../simulated/prng.ts";
import type { VenueProfile } from "../simulated/profiles.ts";
import { DEFAULT_TICK_MS } from "../simulated/simulated-venue.ts";
import { sleep } from "./rate-limiter.ts";
import { marketRoute } from "./sim-markets.ts";

/** What every venue simulator is started with. */
export interface VenueSimOptions {
  catalog: MarketCatalog;
  seed: number;
  /** Multiplies the venue's latency profile: 1 is realistic, 0 answers at once. */
  latencyScale: number;
  clock?: Clock;
  /** 0 or absent: any free loopback port. */
  port?: number;
  /** Books move every this many ms. */
  tickMs?: number;
  /** The catalog's open events resolve one after another on this schedule (SIM_RESOLVE_EVERY_S); absent: only when told. */
  resolveSchedule?: ResolutionSchedule;
  /** Where each simulator keeps its markets' closes and resolutions across restarts (`<dir>/<venue>-markets.json`); absent: in memory. */
  stateDir?: string;
}

/** A venue simulator running on loopback. */
export interface VenueSim<Credentials> {
  /** REST base URL, shaped as the venue's (Kalshi's ends in /trade-api/v2). */
  url: string;
  /** The stream's URL, shaped as the venue's. */
  wsUrl: string;
  /** The one account the simulator knows: hand it to the adapter. */
  credentials: Credentials;
  faults: SimFaults;
  /** The engine behind the simulator, for tests that move books or inspect state. */
  exchange: SimExchange;
  /** Closes and resolves markets, as its control routes do. */
  markets: SimMarketLifecycle;
  stop(): Promise<void>;
}

/**
 * A simulator's engine: the profile's exchange over the catalog's events on the venue and the simulator's own
 * markets, and their lifecycle as the options ask (the schedule, and the state file in `stateDir`).
 */
export function simExchange(
  opts: VenueSimOptions,
  profile: VenueProfile,
  ownMarkets: MarketCatalog,
): { clock: Clock; events: CatalogEvent[]; exchange: SimExchange; markets: SimMarketLifecycle } {
  const clock = opts.clock ?? systemClock;
  const events = simulatedVenueEvents(opts.catalog, ownMarkets, profile.id);
  const exchange = new SimExchange({ profile, events, seed: opts.seed, clock });
  const markets = new SimMarketLifecycle({
    exchange,
    catalog: opts.catalog,
    seed: opts.seed,
    clock,
    schedule: opts.resolveSchedule,
    stateFile: opts.stateDir === undefined ? undefined : join(opts.stateDir, `${profile.id}-markets.json`),
  });
  return { clock, events, exchange, markets };
}

/** Each answer's latency under the venue's profile, drawn from a stream of its own so it does not disturb the books' randomness. */
function profileLatency(profile: VenueProfile, seed: number, scale: number): () => number {
  const rng = new Rng(seedFor(seed, profile.id, "wire-latency"));
  return () => Math.max(0, profile.latency.meanMs + profile.latency.sdMs * rng.normal()) * scale;
}

/** Faults a simulator injects on the wire (the conformance suite's venue-neutral switches), plus outright refusals. */
export interface SimFaultSwitches {
  /** Extra delay before every REST answer, on top of the venue's latency profile. */
  latencyMs: number;
  /** Every REST request is held and never answered; an order sent meanwhile never reaches the engine. */
  timeout: boolean;
  /** The next n REST requests answer 500 and do nothing else. */
  serverErrors: number;
  /** The next `count` REST requests answer 429 with `Retry-After: retryAfterSeconds` (where the venue sends one) and do nothing else. */
  rateLimit: { count: number; retryAfterSeconds: number } | null;
  /** Orders execute, then the connection is cut before the answer is sent. */
  ackLost: boolean;
  /** Orders fill only half of what they ask (rounded down to the lot). */
  partialFills: boolean;
  /** Stream connections stay open but carry nothing, so the client's books go stale. */
  streamSilent: boolean;
  /** Every new order is refused as the venue refuses an invalid one. */
  reject: boolean;
  /** Orders take half of what they ask and the rest stays open on the book until cancelled. */
  resting: boolean;
  /** Every trade the venue reports is reported twice, with the same trade id. */
  duplicateTrades: boolean;
}

const OFF: SimFaultSwitches = {
  latencyMs: 0,
  timeout: false,
  serverErrors: 0,
  rateLimit: null,
  ackLost: false,
  partialFills: false,
  streamSilent: false,
  reject: false,
  resting: false,
  duplicateTrades: false,
};

/** The switches of one simulator, flipped by tests at run time; order-level ones reach the shared exchange. */
export class SimFaults {
  private s: SimFaultSwitches = { ...OFF };

  constructor(
    private readonly exchange: SimExchange,
    private readonly streams: Pick<SimStreams, "dropAll" | "connections">,
  ) {}

  get switches(): Readonly<SimFaultSwitches> {
    return this.s;
  }

  set(change: Partial<SimFaultSwitches>): void {
    this.s = { ...this.s, ...change, rateLimit: change.rateLimit === undefined ? this.s.rateLimit : change.rateLimit && { ...change.rateLimit } };
    this.exchange.faults.partial = this.s.partialFills;
    this.exchange.faults.reject = this.s.reject;
    this.exchange.faults.resting = this.s.resting;
    this.exchange.faults.duplicateTrades = this.s.duplicateTrades;
  }

  reset(): void {
    this.set({ ...OFF });
  }

  /** Cuts every open stream connection, as a load balancer restart would. */
  dropStreams(): void {
    this.streams.dropAll();
  }

  /** Stream connections accepted since start: a reconnection shows as an increase. */
  streamConnections(): number {
    return this.streams.connections();
  }

  /** The failure to inject into the current REST request, if any; consumes it. */
  takeInjected(errorBody: ErrorBody, retryAfter = true): SimReply | undefined {
    const limit = this.s.rateLimit;
    if (limit && limit.count > 0) {
      limit.count--;
      const headers = retryAfter ? { "retry-after": String(limit.retryAfterSeconds) } : undefined;
      return { status: 429, ...(headers ? { headers } : {}), body: errorBody(429, "too_many_requests", "rate limit exceeded") };
    }
    if (this.s.serverErrors > 0) {
      this.s.serverErrors--;
      return { status: 500, body: errorBody(500, "internal_server_error", "injected failure") };
    }
    if (this.s.timeout) return "hang";
    return undefined;
  }
}

/** An error answer in the venue's own shape. */
export type ErrorBody = (status: number, code: string, message: string) => unknown;

const codeAndMessage: ErrorBody = (_status, code, message) => ({ error: { code, message } });

/** The simulator's own routes, outside the venue's API and untouched by its faults: the switches over HTTP, for a simulator in another process. */
function adminRoute(faults: SimFaults, method: string, path: string, body: unknown, errorBody: ErrorBody): Exclude<SimReply, "hang" | "cut"> {
  if (method === "GET" && path === "/_sim/faults") return { status: 200, body: faults.switches };
  if (method === "POST" && path === "/_sim/faults") {
    if (typeof body !== "object" || body === null) return { status: 400, body: errorBody(400, "bad_request", "send the switches to change as a JSON object") };
    const unknown = Object.keys(body).filter((k) => !(k in OFF));
    if (unknown.length > 0) return { status: 400, body: errorBody(400, "bad_request", `unknown switches: ${unknown.join(", ")}`) };
    faults.set(body as Partial<SimFaultSwitches>);
    return { status: 200, body: faults.switches };
  }
  if (method === "POST" && path === "/_sim/faults/reset") {
    faults.reset();
    return { status: 200, body: faults.switches };
  }
  if (method === "POST" && path === "/_sim/streams/drop") {
    faults.dropStreams();
    return { status: 200, body: { dropped: true } };
  }
  return { status: 404, body: errorBody(404, "not_found", "route not found") };
}

export interface SimRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  /** Path with the query string, as the client sent it. */
  rawPath: string;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  rawBody: string;
  body: unknown;
  /** Whether the client has given the request up (its connection closed) before the handler runs: Kalshi's simulator drops such an order. */
  connectionClosed: () => boolean;
}

/** A simulator's stream connections, as its server and fault switches reach them. */
export interface SimStreams {
  accept(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Connections accepted since start: a reconnection shows as an increase. */
  connections(): number;
  /** Runs `send` with the connections' writes held until it returns. */
  corked<T>(send: () => T): T;
  dropAll(): void;
  close(): void;
}

/** An answer; "hang": never answered (a timeout as the client sees it); "cut": the connection is dropped unanswered. */
export type SimReply = { status: number; body?: unknown; headers?: Record<string, string> } | "hang" | "cut";

interface SimServerOptions {
  port?: number;
  faults: SimFaults;
  /** Its markets' lifecycle: served on the control routes, its schedule run while the server runs. */
  markets: SimMarketLifecycle;
  /** This request's latency before the answer, in ms (the venue profile, scaled). */
  latencyMs: () => number;
  handle: (req: SimRequest) => Promise<SimReply> | SimReply;
  upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** The venue's error shape, for the answers the server makes itself; Kalshi's `{ error: { code, message } }` by default. */
  errorBody?: ErrorBody;
  /** Whether a 429 names its Retry-After (true unless the venue documents none, as Kalshi does). */
  retryAfter?: boolean;
}

interface SimServer {
  port: number;
  close(): Promise<void>;
}

/** A loopback HTTP server running every request through latency, injected faults and then the venue's handler. */
async function startSimServer(opts: SimServerOptions): Promise<SimServer> {
  const errorBody = opts.errorBody ?? codeAndMessage;
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    void serve(req, res).catch((err: unknown) => {
      if (!res.headersSent) reply(res, { status: 500, body: errorBody(500, "internal_server_error", String(err)) });
    });
  });
  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let closed = false;
    res.once("close", () => (closed = true));
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString("utf8");
    let body: unknown;
    try {
      body = rawBody === "" ? undefined : JSON.parse(rawBody);
    } catch {
      reply(res, { status: 400, body: errorBody(400, "bad_request", "body is not JSON") });
      return;
    }
    const url = new URL(req.url ?? "/", "http://sim");
    if (url.pathname.startsWith("/_sim/")) {
      const method = req.method ?? "GET";
      return reply(res, marketRoute(opts.markets, method, url.pathname, body, errorBody) ?? adminRoute(opts.faults, method, url.pathname, body, errorBody));
    }
    await sleep(opts.latencyMs() + opts.faults.switches.latencyMs);
    const answer =
      opts.faults.takeInjected(errorBody, opts.retryAfter ?? true) ??
      (await opts.handle({
        method: req.method ?? "GET",
        path: url.pathname,
        rawPath: url.pathname + url.search,
        query: url.searchParams,
        headers: req.headers,
        rawBody,
        body,
        connectionClosed: () => closed,
      }));
    if (answer === "cut") {
      res.socket?.destroy();
      return;
    }
    if (answer === "hang") {
      hanging.add(res);
      res.on("close", () => hanging.delete(res));
      return;
    }
    reply(res, answer);
  }
  server.on("upgrade", opts.upgrade);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("simulator has no TCP address");
  opts.markets.start();
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        opts.markets.stop();
        for (const res of hanging) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function reply(res: ServerResponse, answer: { status: number; body?: unknown; headers?: Record<string, string> }): void {
  const text = answer.body === undefined ? "" : JSON.stringify(answer.body);
  res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
  res.end(text);
}

/** What serveVenueSim runs: the venue's engine, faults and stream, its one account, and its routes. */
export interface VenueSimParts<Credentials> extends Pick<SimServerOptions, "handle" | "upgrade" | "errorBody" | "retryAfter"> {
  profile: VenueProfile;
  exchange: SimExchange;
  markets: SimMarketLifecycle;
  faults: SimFaults;
  streams: SimStreams;
  credentials: Credentials;
  /** The REST API's and the stream's paths on the server, shaped as the venue's. */
  restPath: string;
  wsPath: string;
  /** What else the simulator runs, closed first on stop(). */
  close?: () => void;
}

/** Serves a venue simulator on loopback: its REST API answering after the profile's latency, its stream, and its books moving every `tickMs`. */
export async function serveVenueSim<Credentials>(opts: VenueSimOptions, parts: VenueSimParts<Credentials>): Promise<VenueSim<Credentials>> {
  const { profile, exchange, markets, faults, streams, credentials, restPath, wsPath, close, ...routes } = parts;
  const server = await startSimServer({ ...routes, port: opts.port, faults, markets, latencyMs: profileLatency(profile, opts.seed, opts.latencyScale) });
  const timer = setInterval(() => streams.corked(() => exchange.step()), opts.tickMs ?? DEFAULT_TICK_MS);
  timer.unref();
  const base = `127.0.0.1:${server.port}`;
  return {
    url: `http://${base}${restPath}`,
    wsUrl: `ws://${base}${wsPath}`,
    credentials,
    faults,
    exchange,
    markets,
    stop: async () => {
      close?.();
      clearInterval(timer);
      streams.close();
      await server.close();
    },
  };
}
