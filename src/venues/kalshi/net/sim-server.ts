import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { SimExchange } from "../../simulated/exchange.ts";
import { sleep } from "./rate-limiter.ts";

/**
 * Fault switches of a wire-protocol simulator, flipped by tests at run time. Exchange-level faults
 * (partial fills, refusals, a frozen market) go to the shared SimExchange; transport faults live here.
 */
export class SimFaults {
  /** Added to every REST answer, on top of the venue's latency profile. */
  latencyMs = 0;
  /**
   * Order placement never answers: `request_lost` before the venue acted on it, `ack_lost` after it
   * executed. The connection stays open until the client gives up, as a lost packet would leave it.
   */
  timeout: false | "request_lost" | "ack_lost" = false;
  /** Streams keep their connections but publish nothing, so the client's books go stale. */
  silent = false;
  private errors = { status: 500, remaining: 0 };
  private limited = { retryAfterS: 1, remaining: 0 };

  constructor(
    private readonly exchange: SimExchange,
    private readonly dropAll: () => void,
  ) {}

  /** Fill only half of what each order asks for. */
  get partial(): boolean {
    return this.exchange.faults.partial;
  }
  set partial(on: boolean) {
    this.exchange.faults.partial = on;
  }
  /** Refuse every new order as the venue would refuse an invalid one. */
  get reject(): boolean {
    return this.exchange.faults.reject;
  }
  set reject(on: boolean) {
    this.exchange.faults.reject = on;
  }
  /** Books stop moving (no steps, no stream updates). */
  get frozen(): boolean {
    return this.exchange.faults.down;
  }
  set frozen(on: boolean) {
    this.exchange.faults.down = on;
  }

  /** The next `times` REST requests are answered with `status` (500, 502, 503, ...) before any work is done. */
  failNext(status: number, times = 1): void {
    this.errors = { status, remaining: times };
  }

  /** The next `times` REST requests are answered 429 with `Retry-After: retryAfterS`. */
  rateLimitNext(retryAfterS: number, times = 1): void {
    this.limited = { retryAfterS, remaining: times };
  }

  /** Cuts every open stream connection, as a load balancer restart would. */
  dropStreams(): void {
    this.dropAll();
  }

  reset(): void {
    this.latencyMs = 0;
    this.timeout = false;
    this.silent = false;
    this.partial = false;
    this.reject = false;
    this.frozen = false;
    this.errors.remaining = 0;
    this.limited.remaining = 0;
  }

  /** The failure to inject into the current request, if any; consumes one. */
  takeInjected(): SimReply | undefined {
    if (this.limited.remaining > 0) {
      this.limited.remaining--;
      return {
        status: 429,
        headers: { "retry-after": String(this.limited.retryAfterS) },
        body: { error: { code: "too_many_requests", message: "rate limit exceeded" } },
      };
    }
    if (this.errors.remaining > 0) {
      this.errors.remaining--;
      return { status: this.errors.status, body: { error: { code: "internal_server_error", message: "injected failure" } } };
    }
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

/** An answer, or "hang": the request is never answered (a timeout as the client sees it). */
export type SimReply = { status: number; body?: unknown; headers?: Record<string, string> } | "hang";

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
    await sleep(opts.latencyMs() + opts.faults.latencyMs);
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
