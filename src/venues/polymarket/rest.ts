import type { Clock } from "../../domain/types.ts";
import { sendRequest, sendWithRetry, type HttpResult, type RetryPolicy } from "../net/http.ts";
import { allOf, RateLimiter } from "../net/rate-limiter.ts";
import { l2Headers, type PolymarketCredentials } from "./auth.ts";

/** A limit as the venue publishes it: at most `requests` per `windowMs`. */
export interface Limit {
  requests: number;
  windowMs: number;
}

const TEN_SECONDS = 10_000;

/**
 * Polymarket's published CLOB limits (docs.polymarket.com/api-reference/rate-limits): every
 * request counts against `general`, and against its endpoint's own limit where one is published.
 * Cloudflare throttles rather than refuses above them, which would show as latency on our orders.
 */
export const POLYMARKET_LIMITS: Record<string, Limit> = {
  general: { requests: 9_000, windowMs: TEN_SECONDS },
  book: { requests: 1_500, windowMs: TEN_SECONDS },
  books: { requests: 500, windowMs: TEN_SECONDS },
  tickSize: { requests: 200, windowMs: TEN_SECONDS },
  order: { requests: 900, windowMs: TEN_SECONDS },
  trades: { requests: 500, windowMs: TEN_SECONDS },
  postOrderBurst: { requests: 3_500, windowMs: TEN_SECONDS },
  postOrderSustained: { requests: 36_000, windowMs: 600_000 },
  cancelBurst: { requests: 3_000, windowMs: TEN_SECONDS },
  cancelSustained: { requests: 30_000, windowMs: 600_000 },
};

export interface RestRequest {
  method: "GET" | "POST" | "DELETE";
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  /** Sign with the L2 credentials. */
  auth?: boolean;
  /** The limits this request counts against besides `general`; a name without a published limit is unlimited. */
  limits: readonly string[];
}

export interface RestClientOptions {
  baseUrl: string;
  credentials: PolymarketCredentials;
  address: string;
  clock: Clock;
  limits: Record<string, Limit>;
  timeoutMs: number;
}

/** Polymarket's REST API over the shared classified HTTP: L2 signing and the published limits. */
export class RestClient {
  /** One bucket per limit, each refilled continuously: a burst of the whole window's requests, then requests/window. */
  private readonly limiters = new Map<string, RateLimiter>();

  constructor(private readonly opts: RestClientOptions) {
    for (const [name, { requests, windowMs }] of Object.entries(opts.limits)) this.limiters.set(name, new RateLimiter((requests * 1000) / windowMs, requests));
  }

  /** Sends under the request's limits, retrying as `policy` and `retryUnknown` allow (see sendWithRetry). */
  send(req: RestRequest, policy: RetryPolicy, retryUnknown: (f: HttpResult & { ok: false }) => boolean): Promise<HttpResult> {
    const limiters = ["general", ...req.limits].flatMap((n) => this.limiters.get(n) ?? []);
    return sendWithRetry(() => this.once(req), allOf(limiters), policy, retryUnknown);
  }

  /** How long a request counting against `limits` (and the general limit) would wait now, in ms, with `ahead` more before it (Throttle.delayMs). */
  delayMs(limits: readonly string[], ahead?: number): number {
    return allOf(["general", ...limits].flatMap((n) => this.limiters.get(n) ?? [])).delayMs(ahead);
  }

  private once(req: RestRequest): Promise<HttpResult> {
    const { credentials, address, clock } = this.opts;
    const bodyText = req.body === undefined ? undefined : JSON.stringify(req.body);
    // the L2 signature covers the path without its query string, and the exact body text sendRequest sends
    const headers = req.auth ? l2Headers(credentials, address, Math.floor(clock.now() / 1000), req.method, req.path, bodyText) : {};
    const qs = req.query ? `?${new URLSearchParams(req.query).toString()}` : "";
    return sendRequest(this.opts.baseUrl, { method: req.method, path: req.path + qs, body: req.body, headers, timeoutMs: this.opts.timeoutMs }).then(restarting);
  }
}

/**
 * A 425 (Too Early) is the matching engine restarting: it did nothing of the request, and the docs say to retry with
 * back-off (docs.polymarket.com/trading/matching-engine), so it is sent again as a 429 is.
 */
function restarting(res: HttpResult): HttpResult {
  return !res.ok && res.status === ENGINE_RESTARTING ? { ...res, kind: "retryable" } : res;
}

/** The status every order endpoint answers while the matching engine restarts (about 90 s a week). */
export const ENGINE_RESTARTING = 425;
