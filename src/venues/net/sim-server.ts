import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { SimExchange } from "../simulated/exchange.ts";
import { sleep } from "./rate-limiter.ts";

/** Faults a simulator injects on the wire (the conformance suite's venue-neutral switches), plus outright refusals. */
export interface SimFaultSwitches {
  /** Extra delay before every REST answer, on top of the venue's latency profile. */
  latencyMs: number;
  /** Every REST request is held and never answered; an order sent meanwhile never reaches the engine. */
  timeout: boolean;
  /** The next n REST requests answer 500 and do nothing else. */
  serverErrors: number;
  /** The next `count` REST requests answer 429 with `Retry-After: retryAfterSeconds` and do nothing else. */
  rateLimit: { count: number; retryAfterSeconds: number } | null;
  /** Orders execute, then the connection is cut before the answer is sent. */
  ackLost: boolean;
  /** Orders fill only half of what they ask (rounded down to the lot). */
  partialFills: boolean;
  /** Stream connections stay open but carry nothing, so the client's books go stale. */
  streamSilent: boolean;
  /** Every new order is refused as the venue refuses an invalid one. */
  reject: boolean;
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
};

/** The switches of one simulator, flipped by tests at run time; order-level ones reach the shared exchange. */
export class SimFaults {
  private s: SimFaultSwitches = { ...OFF };

  constructor(
    private readonly exchange: SimExchange,
    private readonly streams: { dropAll(): void; connections(): number },
  ) {}

  get switches(): Readonly<SimFaultSwitches> {
    return this.s;
  }

  set(change: Partial<SimFaultSwitches>): void {
    this.s = { ...this.s, ...change, rateLimit: change.rateLimit === undefined ? this.s.rateLimit : change.rateLimit && { ...change.rateLimit } };
    this.exchange.faults.partial = this.s.partialFills;
    this.exchange.faults.reject = this.s.reject;
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
  takeInjected(): SimReply | undefined {
    const limit = this.s.rateLimit;
    if (limit && limit.count > 0) {
      limit.count--;
      return {
        status: 429,
        headers: { "retry-after": String(limit.retryAfterSeconds) },
        body: { error: { code: "too_many_requests", message: "rate limit exceeded" } },
      };
    }
    if (this.s.serverErrors > 0) {
      this.s.serverErrors--;
      return { status: 500, body: { error: { code: "internal_server_error", message: "injected failure" } } };
    }
    if (this.s.timeout) return "hang";
    return undefined;
  }
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
}

/** An answer; "hang": never answered (a timeout as the client sees it); "cut": the connection is dropped unanswered. */
export type SimReply = { status: number; body?: unknown; headers?: Record<string, string> } | "hang" | "cut";

export interface SimServerOptions {
  port?: number;
  faults: SimFaults;
  /** This request's latency before the answer, in ms (the venue profile, scaled). */
  latencyMs: () => number;
  handle: (req: SimRequest) => Promise<SimReply> | SimReply;
  upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
}

export interface SimServer {
  port: number;
  close(): Promise<void>;
}

/** A loopback HTTP server running every request through latency, injected faults and then the venue's handler. */
export async function startSimServer(opts: SimServerOptions): Promise<SimServer> {
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    void serve(req, res).catch((err: unknown) => {
      if (!res.headersSent) reply(res, { status: 500, body: { error: { code: "internal_server_error", message: String(err) } } });
    });
  });
  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString("utf8");
    let body: unknown;
    try {
      body = rawBody === "" ? undefined : JSON.parse(rawBody);
    } catch {
      reply(res, { status: 400, body: { error: { code: "bad_request", message: "body is not JSON" } } });
      return;
    }
    const url = new URL(req.url ?? "/", "http://sim");
    await sleep(opts.latencyMs() + opts.faults.switches.latencyMs);
    const answer =
      opts.faults.takeInjected() ??
      (await opts.handle({
        method: req.method ?? "GET",
        path: url.pathname,
        rawPath: url.pathname + url.search,
        query: url.searchParams,
        headers: req.headers,
        rawBody,
        body,
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
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
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
