import { request, type Dispatcher } from "undici";
import { withDeadline } from "../../deadline.ts";
import { sleep, type Throttle } from "./rate-limiter.ts";

/**
 * How a failed call to a venue ended, which decides what the caller may do next:
 * - rejected: the venue answered and refused; nothing happened, retrying the same request is pointless;
 * - retryable: the venue was not reached (connection refused) or asks to be asked again (429, 503); the same request may be sent
 *   again, but only a 429 or an unreached venue is sure to have done nothing (a placement answered 503 may have been taken);
 * - unknown: the request may have been acted on (timeout after sending, connection cut, 500/502/504);
 *   a write must be reconciled, never assumed refused.
 */
export type FailureKind = "rejected" | "retryable" | "unknown";

export type HttpResult =
  | { ok: true; status: number; body: unknown }
  | { ok: false; kind: FailureKind; status?: number; reason: string; body?: unknown; retryAfterMs?: number };

export interface HttpRequest {
  method: "GET" | "POST" | "DELETE";
  /** Path below the base URL, with its query string. */
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  timeoutMs: number;
}

/** Error codes with which the connection failed before a byte of the request could reach the venue. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/**
 * One HTTP exchange with a venue, classified; never throws for a network or HTTP failure. Sent with
 * undici's request, not fetch: fetch's web streams cost ~0.5 ms of CPU a request, one to several
 * requests a child order.
 */
export function sendRequest(baseUrl: string, req: HttpRequest): Promise<HttpResult> {
  const text = req.body === undefined ? undefined : JSON.stringify(req.body);
  return withDeadline(req.timeoutMs, async (signal) => {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(baseUrl + req.path, {
        method: req.method,
        headers: { accept: "application/json", ...(text === undefined ? {} : { "content-type": "application/json" }), ...req.headers },
        body: text,
        signal,
      });
    } catch (err) {
      return networkFailure(err, req.timeoutMs);
    }
    const ok = res.statusCode >= 200 && res.statusCode <= 299;
    let body: unknown;
    try {
      const raw = await res.body.text();
      body = raw === "" ? undefined : JSON.parse(raw);
    } catch (err) {
      // the status line arrived, so for a write the venue did act on it or refuse it: only the body was lost
      if (ok) return { ok: false, kind: "unknown", status: res.statusCode, reason: `unreadable ${res.statusCode} answer: ${describe(err)}` };
      body = undefined;
    }
    if (ok) return { ok: true, status: res.statusCode, body };
    const retryAfter = res.headers["retry-after"];
    return classifyStatus(res.statusCode, body, typeof retryAfter === "string" ? retryAfter : null);
  });
}

export function classifyStatus(status: number, body: unknown, retryAfter: string | null): HttpResult {
  const reason = `HTTP ${status}${errorText(body)}`;
  if (status === 429) return { ok: false, kind: "retryable", status, reason, body, retryAfterMs: parseRetryAfter(retryAfter) ?? 1_000 };
  if (status === 503) {
    const retryAfterMs = parseRetryAfter(retryAfter);
    return { ok: false, kind: "retryable", status, reason, body, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  }
  if (status === 408 || status >= 500) return { ok: false, kind: "unknown", status, reason, body };
  return { ok: false, kind: "rejected", status, reason, body };
}

/** Retry-After as delta-seconds or an HTTP date, in ms from now. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function networkFailure(err: unknown, timeoutMs: number): HttpResult {
  const e = err as { name?: string; code?: unknown; cause?: { code?: string } } | null;
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return { ok: false, kind: "unknown", reason: `timeout: no answer within ${timeoutMs} ms` };
  const code = typeof e?.code === "string" ? e.code : e?.cause?.code;
  if (code && NOT_SENT.has(code)) return { ok: false, kind: "retryable", reason: `unreachable: ${code}` };
  return { ok: false, kind: "unknown", reason: `connection lost: ${code ?? describe(err)}` };
}

function errorText(body: unknown): string {
  if (typeof body !== "object" || body === null) return "";
  const o = body as Record<string, unknown>;
  const e = (typeof o.error === "object" && o.error !== null ? o.error : o) as Record<string, unknown>;
  const parts = [e.code, e.message, e.details].filter((x) => typeof x === "string" && x !== "");
  if (parts.length === 0 && typeof o.error === "string") parts.push(o.error);
  return parts.length ? `: ${parts.join(" ")}` : "";
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export interface RetryPolicy {
  attempts: number;
  /** First back-off; doubles each attempt, unless the venue named a Retry-After. */
  baseDelayMs: number;
  /** Give up retrying once this long has passed since the first attempt. */
  budgetMs: number;
  /** A Retry-After longer than this is neither waited for nor paused for: the failure is returned at once. */
  maxRetryAfterMs?: number;
}

/**
 * Sends through `limiter`, retrying what the venue certainly did not act on, and the unknown
 * outcomes `retryUnknown` accepts (reads; writes the venue deduplicates).
 */
export async function sendWithRetry(
  attempt: () => Promise<HttpResult>,
  limiter: Throttle,
  policy: RetryPolicy,
  retryUnknown: (failure: HttpResult & { ok: false }) => boolean,
): Promise<HttpResult> {
  const started = performance.now();
  let result: HttpResult | undefined;
  for (let i = 0; i < policy.attempts; i++) {
    await limiter.acquire();
    result = await attempt();
    if (result.ok || result.kind === "rejected" || (result.kind === "unknown" && !retryUnknown(result))) return result;
    if (result.retryAfterMs !== undefined && result.retryAfterMs > (policy.maxRetryAfterMs ?? Infinity)) return result;
    const wait = result.retryAfterMs ?? policy.baseDelayMs * 2 ** i;
    if (result.retryAfterMs !== undefined) limiter.pause(result.retryAfterMs);
    if (i + 1 >= policy.attempts || performance.now() - started + wait > policy.budgetMs) break;
    if (result.retryAfterMs === undefined) await sleep(wait);
  }
  return result!;
}
