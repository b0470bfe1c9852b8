import type { Account, Activity, Health, Market, Order, OrderRequest, Page, PriceRecord, Withdrawal } from "../sdk/types.ts";

export type { Account, Activity, Health, Market, Order, OrderRequest, Page, PriceRecord, Withdrawal };

export interface Session {
  account_id: string;
  email: string;
  csrf_token: string;
  expires_at: string;
}

export interface ApiKey {
  api_key: string;
  name: string;
  scopes: ("read" | "trade" | "withdraw")[];
  ip_allowlist: string[] | null;
  withdrawal_allowlist: string[] | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface NewApiKey extends ApiKey {
  api_secret: string;
}

export interface QuoteLeg {
  venue: string;
  shares: number;
  average_price: number;
  limit_price: number;
  notional_usdc: number;
  fee_usdc: number;
}

export interface Quote {
  market_id: string;
  outcome: string;
  side: "buy" | "sell";
  strategy: string;
  shares: number;
  average_price: number;
  /** A buy's cost a share with fees; a sell's net a share after them. */
  fee_adjusted_price: number;
  notional_usdc: number;
  fees_usdc: number;
  /** A buy's cost, fees included; null for a sell. */
  cost_usdc: number | null;
  /** A sell's USDC after fees; null for a buy. */
  proceeds_usdc: number | null;
  reference_price: number;
  limit_price: number;
  legs: QuoteLeg[];
  quoted_at: string;
}

/** An error the server answered, or the network failing; `message` is always a sentence for people. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly details?: Record<string, unknown>,
    /** A 429's Retry-After: how long to wait before asking again. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

// Where the server's sentence is written for API developers, the terminal says it for traders.
const WORDS: Record<string, string> = {
  not_signed_in: "Your session has ended. Please sign in again.",
  csrf_failed: "This page is out of date. Reload it and try again.",
  internal: "Something went wrong on our side. Please try again.",
};

function describe(status: number, body: unknown, retryAfter: string | null): ApiError {
  const error = (body as { error?: { code?: unknown; message?: unknown; details?: Record<string, unknown> } } | null)?.error;
  // Delta-seconds, as the server sends it; anything else (an HTTP date from a proxy) is no number to show.
  const wait = status === 429 && retryAfter !== null && /^\d{1,9}$/.test(retryAfter.trim()) ? Math.max(1, Number(retryAfter)) : undefined;
  if (status === 429) {
    const message = wait === undefined ? "Too many requests. Wait a moment and try again." : `Too many requests. Try again in ${wait} s.`;
    return new ApiError(error && typeof error.code === "string" ? error.code : "rate_limited", status, message, error?.details, wait);
  }
  if (error && typeof error.code === "string") {
    const message = WORDS[error.code] ?? (typeof error.message === "string" ? error.message : `The server refused the request (${status}).`);
    return new ApiError(error.code, status, message, error.details);
  }
  return new ApiError(`http_${status}`, status, `The server answered with an unexpected error (${status}).`);
}

let csrf: string | undefined;
/** The session's CSRF token, sent with every call that changes state. */
export function setCsrfToken(token: string | undefined): void {
  csrf = token;
}

let onSignedOut: () => void = () => {};
/** Called when any request finds the session gone, so the app can show the sign-in page. */
export function onSessionLost(listener: () => void): void {
  onSignedOut = listener;
}

/** How long a request may take, its answer read whole, before the terminal stops waiting for it: the CLI's default. */
const TIMEOUT_MS = 30_000;

export async function api<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const h: Record<string, string> = { accept: "application/json", ...headers };
  if (body !== undefined) h["content-type"] = "application/json";
  if (method !== "GET" && csrf !== undefined) h["x-csrf-token"] = csrf;
  // A timer, not AbortSignal.timeout: the answer's body is read under it too.
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), TIMEOUT_MS);
  let res: Response;
  let text: string;
  try {
    res = await fetch(path, { method, headers: h, credentials: "same-origin", signal: abort.signal, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    text = await res.text();
  } catch {
    // Status 0 either way: no answer to go by, so what was asked may have been done.
    throw abort.signal.aborted
      ? new ApiError("timeout", 0, `The server did not answer within ${TIMEOUT_MS / 1000} s. Check that crossfill is running, then try again.`)
      : new ApiError("network", 0, "The server cannot be reached. Check that crossfill is running, then try again.");
  } finally {
    clearTimeout(timer);
  }
  let parsed: unknown = null;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const err = describe(res.status, parsed, res.headers.get("retry-after"));
    // Without a session cookie the API asks for a key: to the terminal, both mean "sign in".
    if ((err.code === "not_signed_in" || err.code === "missing_api_key") && path !== "/v1/session") onSignedOut();
    throw err;
  }
  return parsed as T;
}

/** No answer to go by (the connection lost, none in time, a gateway's 5xx, the server's own failure): what was asked may have been done. */
export function noAnswer(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 0 || (error.status >= 500 && (error.code === "internal" || error.code.startsWith("http_"))));
}

/**
 * A new idempotency key (client_order_id, client_withdrawal_id): 128 random bits in hex. Not crypto.randomUUID, which
 * the browser gives a secure context only, and a page over plain http to another machine (http://192.168.1.5:8080) is none.
 */
export function newClientId(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The client id a request goes under (client_order_id, client_withdrawal_id): the one it was sent with before, unless the
 * answer to that was shown naming what was done, or a refusal that did nothing to a request never sent before
 * (`forgetClientId`), else a new one. Kept in the tab's sessionStorage, by the request, from before it is sent: asked
 * again as it was after no answer to go by (none at all, one that came after the page or dialog was left or reloaded, so
 * no one saw it, then a refusal before it was looked at), also from the page or
 * dialog opened anew, it goes under the same id, and the server answers what it did instead of doing it again. Another
 * request (another amount, another address) is one of its own. `again` says it was sent before: what the server answers is
 * what it did then (done once), which the page says, for a request sent again on purpose to be sent once more.
 */
export function clientIdFor(request: string): { clientId: string; again: boolean } {
  const kept = unanswered.getItem(`unanswered ${request}`);
  const clientId = kept ?? newClientId();
  unanswered.setItem(`unanswered ${request}`, clientId);
  return { clientId, again: kept !== null };
}

/** Once the answer naming what a request did is shown, or that it did nothing: the same request sent after it is a new one. */
export function forgetClientId(request: string): void {
  unanswered.removeItem(`unanswered ${request}`);
}

/**
 * The tab's sessionStorage; where the browser refuses it (site data blocked: reading `sessionStorage` throws, or writing
 * to it does), the page's memory, which keeps the ids while the page is open but not across a reload.
 */
const unanswered: Pick<Storage, "getItem" | "setItem" | "removeItem"> = (() => {
  try {
    sessionStorage.setItem("crossfill", "");
    sessionStorage.removeItem("crossfill");
    return sessionStorage;
  } catch {
    const kept = new Map<string, string>();
    return { getItem: (k) => kept.get(k) ?? null, setItem: (k, v) => void kept.set(k, v), removeItem: (k) => void kept.delete(k) };
  }
})();

export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s === "" ? "" : `?${s}`;
}
