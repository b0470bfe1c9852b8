import type { Clock } from "../../domain/types.ts";
import { l2Headers, type PolymarketCredentials } from "./auth.ts";
import type { RateLimiter } from "./rate-limiter.ts";

/** How one REST exchange failed, in the terms that decide what the caller may conclude. */
export type RestFailure =
  /** The venue answered with an error status. */
  | { kind: "http"; status: number; error: string; retryAfterMs: number | undefined }
  /** Sent, and no answer within the timeout: it may or may not have been acted on. */
  | { kind: "timeout"; detail: string }
  /** The connection was refused or the host not found: the request never reached the venue. */
  | { kind: "refused"; detail: string }
  /** The connection broke after the request may have been sent. */
  | { kind: "lost"; detail: string };

export class RestError extends Error {
  override readonly name = "RestError";
  constructor(readonly failure: RestFailure) {
    super(describe(failure));
  }
}

export interface RestRequest {
  method: "GET" | "POST";
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  /** Sign with the L2 credentials. */
  auth?: boolean;
  /** The rate-limit buckets this request draws on besides `general`. */
  limits: readonly string[];
}

export interface RetryPolicy {
  attempts: number;
  /** Whether a failure may be retried: the caller decides, because only it knows whether a repeat is safe. */
  retryable(f: RestFailure): boolean;
}

export interface RestClientOptions {
  baseUrl: string;
  credentials: PolymarketCredentials | undefined;
  address: string | undefined;
  clock: Clock;
  limiter: RateLimiter;
  timeoutMs: number;
  /** First back-off after a failure; doubles each retry. */
  backoffMs: number;
  /** A Retry-After longer than this is not waited for: the request fails with the 429. */
  maxRetryAfterMs: number;
}

const REFUSED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** Polymarket's REST API: signing, rate limits, timeouts and retries, with every failure classified. */
export class RestClient {
  constructor(private readonly opts: RestClientOptions) {}

  /** Sends a request, retrying the failures the policy allows; throws RestError with the last failure. */
  async send(req: RestRequest, policy: RetryPolicy): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(req);
      } catch (err) {
        if (!(err instanceof RestError)) throw err;
        const f = err.failure;
        if (attempt >= policy.attempts || !policy.retryable(f)) throw err;
        const wait = f.kind === "http" && f.status === 429 ? this.retryAfter(f) : this.opts.backoffMs * 2 ** (attempt - 1);
        if (wait === undefined) throw err;
        await sleep(wait);
      }
    }
  }

  /** One attempt, no retry. */
  async once(req: RestRequest): Promise<unknown> {
    await this.opts.limiter.acquire(["general", ...req.limits]);
    const bodyText = req.body === undefined ? undefined : JSON.stringify(req.body);
    const headers: Record<string, string> = { accept: "application/json" };
    if (bodyText !== undefined) headers["content-type"] = "application/json";
    if (req.auth) {
      const { credentials, address } = this.opts;
      if (!credentials || !address) throw new Error("this request needs Polymarket API credentials");
      Object.assign(headers, l2Headers(credentials, address, Math.floor(this.opts.clock.now() / 1000), req.method, req.path, bodyText));
    }
    const qs = req.query ? `?${new URLSearchParams(req.query).toString()}` : "";
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${this.opts.baseUrl}${req.path}${qs}`, {
        method: req.method,
        headers,
        body: bodyText,
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      throw new RestError(classifyNetworkError(err, this.opts.timeoutMs));
    }
    const json = parseJson(text);
    if (res.ok) return json;
    const error = typeof (json as { error?: unknown } | undefined)?.error === "string" ? (json as { error: string }).error : text.slice(0, 200);
    throw new RestError({ kind: "http", status: res.status, error, retryAfterMs: parseRetryAfter(res.headers.get("retry-after"), this.opts.clock) });
  }

  private retryAfter(f: { retryAfterMs: number | undefined }): number | undefined {
    const wait = f.retryAfterMs ?? this.opts.backoffMs;
    return wait <= this.opts.maxRetryAfterMs ? wait : undefined;
  }
}

/** Safe to repeat: the request changes nothing on the venue. */
export const READ_POLICY: RetryPolicy = {
  attempts: 4,
  retryable: (f) => f.kind !== "http" || f.status === 429 || f.status >= 500,
};

function classifyNetworkError(err: unknown, timeoutMs: number): RestFailure {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === "TimeoutError" || e.name === "AbortError") return { kind: "timeout", detail: `no answer within ${timeoutMs} ms` };
  const code = e.cause?.code ?? "";
  const detail = `${e.message ?? "fetch failed"}${code ? ` (${code})` : ""}`;
  return REFUSED.has(code) ? { kind: "refused", detail } : { kind: "lost", detail };
}

function parseRetryAfter(header: string | null, clock: Clock): number | undefined {
  if (header === null) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - clock.now());
}

function parseJson(text: string): unknown {
  try {
    return text === "" ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

function describe(f: RestFailure): string {
  switch (f.kind) {
    case "http":
      return `HTTP ${f.status}: ${f.error}`;
    default:
      return `${f.kind}: ${f.detail}`;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
