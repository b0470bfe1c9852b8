import { sign } from "../auth/hmac.ts";
import { HEADER_CLIENT_ID } from "../domain/types.ts";
import type {
  Account,
  Activity,
  ErrorBody,
  Health,
  ListQuery,
  Market,
  MarketsQuery,
  Order,
  OrderRequest,
  Page,
  PriceRecord,
  PricesQuery,
  Withdrawal,
  WithdrawalRequest,
} from "./types.ts";

export interface ClientOptions {
  /**
   * Where the API is served, e.g. "http://127.0.0.1:8080"; paths are appended to it. A path of its own
   * ("https://host/api", a proxy's that it strips before the server) is requested but not signed: the signature
   * covers the path the server receives, /v1/... with its query (docs/decisions.md). One without its http:// or
   * https:// scheme, or with a query or fragment, is refused (a TypeError): the paths would be appended to it. So is one
   * with a user name or password (fetch refuses it, quoting it).
   */
  baseUrl: string;
  apiKey: string;
  /** Needed only for signed (fund-moving) requests. */
  apiSecret?: string;
  fetch?: typeof fetch;
  /** Milliseconds since the Unix epoch; X-Timestamp is taken from it. */
  clock?: () => number;
  /**
   * Milliseconds a request may take, its answer read whole, before it is abandoned with fetch's TimeoutError
   * (a DOMException, not a CrossfillError: nothing answered). An order or withdrawal abandoned so may still go
   * through: send it again with the same client id. Unset: only Node's own bounds (5 minutes without an answer).
   * An integer from 1 to MAX_TIMEOUT_MS, else a TypeError.
   */
  timeoutMs?: number;
}

/** A timer's longest wait: AbortSignal.timeout fires at once past it, and refuses a wait that is not a whole number of milliseconds. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export interface RequestOptions {
  /** Already serialised: these exact bytes are signed and sent. */
  body?: string;
  signed?: boolean;
  headers?: Record<string, string>;
}

export interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** Parsed JSON; the text itself when the body is not JSON; null when there is none. */
  body: unknown;
}

/** A non-2xx answer, carrying the API's error code and the request id to quote to support. */
export class CrossfillError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly details: Record<string, unknown> | undefined,
    readonly requestId: string | undefined,
  ) {
    super(message);
    this.name = "CrossfillError";
  }

  static fromResponse(res: RawResponse): CrossfillError {
    const error = isErrorBody(res.body) ? res.body.error : undefined;
    // A body that is not the API's error shape came from something in between (a proxy, a load
    // balancer); it still gets a code so that callers can branch without parsing messages.
    return new CrossfillError(
      error?.code ?? `http_${res.status}`,
      res.status,
      error?.message ?? fallbackMessage(res),
      error?.details,
      error?.request_id ?? res.headers["x-request-id"],
    );
  }
}

function fallbackMessage(res: RawResponse): string {
  const location = res.headers["location"];
  if (location !== undefined) return `HTTP ${res.status}: redirected to ${location}, which is not followed; if the API is there, make that the base URL.`;
  // its text, or its JSON (a gateway's {"message": ...})
  const text = typeof res.body === "string" ? res.body : res.body === null ? "" : JSON.stringify(res.body);
  return text !== "" ? text.slice(0, 200) : `HTTP ${res.status}`;
}

function isErrorBody(body: unknown): body is ErrorBody {
  if (typeof body !== "object" || body === null || !("error" in body)) return false;
  const error = (body as { error: unknown }).error;
  return typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string";
}

/** Appends the defined entries of `query` to `path` as a query string. */
export function withQuery(path: string, query: object | undefined): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) params.append(k, String(v));
  const qs = params.toString();
  return qs === "" ? path : `${path}?${qs}`;
}

/**
 * `id` as one segment of a path, percent-encoded. "", "." and ".." are refused (a TypeError, before anything is sent):
 * the URL parser resolves them as a directory, so that /v1/orders/.. asks /v1/ and /v1/withdrawals/. the list.
 */
function segment(name: string, id: string): string {
  if (id === "" || id === "." || id === "..") throw new TypeError(`${name} must name one (got ${JSON.stringify(id)}, which the URL would resolve into another endpoint's path)`);
  return encodeURIComponent(id);
}

export class CrossfillClient {
  private readonly baseUrl: string;
  /** The base URL's own path, as the URL parser writes it ("" for none): not part of what is signed. */
  private readonly basePath: string;
  private readonly apiKey: string;
  private readonly apiSecret: string | undefined;
  private readonly fetch: typeof fetch;
  private readonly clock: () => number;
  private readonly timeoutMs: number | undefined;

  constructor(opts: ClientOptions) {
    // Without it ("localhost:8080") the address is another URL scheme's, which fetch refuses as if no server answered.
    if (!/^https?:\/\//i.test(opts.baseUrl) || !URL.canParse(opts.baseUrl)) {
      throw new TypeError(`baseUrl must be the API's http:// or https:// address, like http://127.0.0.1:8080 (got ${JSON.stringify(opts.baseUrl)})`);
    }
    // fetch refuses such a URL at each request with an error that quotes it, password included
    const url = new URL(opts.baseUrl);
    if (url.username || url.password) throw new TypeError("baseUrl must not carry a user name or password (the API takes its key in apiKey); it is not quoted here");
    // the route is put after it: behind a query or fragment, it would be no path
    if (/[?#]/.test(opts.baseUrl)) throw new TypeError(`baseUrl must be the API's address without a query or fragment, like http://127.0.0.1:8080 (got ${JSON.stringify(opts.baseUrl)})`);
    // 0 abandons every request at once, one past the bound too, and NaN, Infinity or a fraction fail each with a RangeError
    if (opts.timeoutMs !== undefined && !(Number.isInteger(opts.timeoutMs) && opts.timeoutMs >= 1 && opts.timeoutMs <= MAX_TIMEOUT_MS)) {
      throw new TypeError(`timeoutMs must be the milliseconds to wait for an answer, an integer from 1 to ${MAX_TIMEOUT_MS} (got ${opts.timeoutMs})`);
    }
    this.baseUrl = opts.baseUrl.replace(/\/+$/, "");
    this.basePath = url.pathname.replace(/\/+$/, "");
    this.apiKey = opts.apiKey;
    this.apiSecret = opts.apiSecret;
    this.fetch = opts.fetch ?? globalThis.fetch;
    this.clock = opts.clock ?? Date.now;
    this.timeoutMs = opts.timeoutMs;
  }

  markets(query?: MarketsQuery): Promise<Page<Market>> {
    return this.call("GET", withQuery("/v1/markets", query), PAGE);
  }

  async prices(eventId: string, query?: PricesQuery): Promise<PriceRecord> {
    return this.call("GET", withQuery(`/v1/prices/${segment("eventId", eventId)}`, query), PRICE_RECORD);
  }

  /**
   * Places an order (signed). Resolves with 200 (done) and 202 (a venue's answer is pending) alike. The
   * idempotency key is sent as the body's client_order_id (and, printable ASCII, the header, so that the server
   * refuses one that differs from the body's; a header carries no other character as it is): a retry within the same
   * second repeats the first's signature, and the server answers such a repeat with its order only when the signed
   * body names it and the first was not answered with an error (then it is replayed_request: retry a second later).
   */
  order(body: OrderRequest, opts: { idempotencyKey?: string } = {}): Promise<Order> {
    if (opts.idempotencyKey === undefined) return this.call("POST", "/v1/order", ORDER, { body: JSON.stringify(body), signed: true });
    const named = { ...body, client_order_id: body.client_order_id ?? opts.idempotencyKey };
    const headers: Record<string, string> = HEADER_CLIENT_ID.test(opts.idempotencyKey) ? { "Idempotency-Key": opts.idempotencyKey } : {};
    return this.call("POST", "/v1/order", ORDER, { body: JSON.stringify(named), signed: true, headers });
  }

  async getOrder(orderId: string): Promise<Order> {
    return this.call("GET", `/v1/orders/${segment("orderId", orderId)}`, ORDER);
  }

  orders(query?: ListQuery): Promise<Page<Order>> {
    return this.call("GET", withQuery("/v1/orders", query), PAGE);
  }

  account(): Promise<Account> {
    return this.call("GET", "/v1/account", ACCOUNT);
  }

  /** Every movement of the account's money, newest first. */
  activity(query?: ListQuery): Promise<Page<Activity>> {
    return this.call("GET", withQuery("/v1/activity", query), PAGE);
  }

  /** Pays available USDC to an address (signed; the key needs the withdraw scope). Resolves with 200 (paid) and 202 (on its way) alike. */
  withdraw(body: WithdrawalRequest): Promise<Withdrawal> {
    return this.call("POST", "/v1/withdrawals", WITHDRAWAL, { body: JSON.stringify(body), signed: true });
  }

  async getWithdrawal(withdrawalId: string): Promise<Withdrawal> {
    return this.call("GET", `/v1/withdrawals/${segment("withdrawalId", withdrawalId)}`, WITHDRAWAL);
  }

  withdrawals(query?: ListQuery): Promise<Page<Withdrawal>> {
    return this.call("GET", withQuery("/v1/withdrawals", query), PAGE);
  }

  health(): Promise<Health> {
    return this.call("GET", "/v1/health", HEALTH);
  }

  /** Sends one request and returns whatever came back, 4xx and 5xx included. */
  async request(method: string, pathWithQuery: string, opts: RequestOptions = {}): Promise<RawResponse> {
    const url = new URL(this.baseUrl + pathWithQuery);
    const headers = new Headers({ Accept: "application/json", "X-API-Key": this.apiKey });
    if (opts.body !== undefined) headers.set("Content-Type", "application/json");
    if (opts.signed) {
      if (this.apiSecret === undefined) throw new Error("This request must be signed: create the client with an apiSecret.");
      const timestamp = String(Math.floor(this.clock() / 1000));
      // The URL parser may percent-encode the path; what is signed is the target as it goes on the wire, less the
      // base URL's path, which a proxy in front of the server strips (the server serves /v1 only).
      const target = url.pathname.slice(this.basePath.length) + url.search;
      headers.set("X-Timestamp", timestamp);
      headers.set("X-Signature", sign(this.apiSecret, timestamp, method, target, opts.body));
    }
    // Set, not appended: a caller's header replaces ours whatever its case (tests send bad ones).
    for (const [name, value] of Object.entries(opts.headers ?? {})) headers.set(name, value);
    const res = await this.fetch(url, {
      method: method.toUpperCase(),
      headers,
      // Followed, a redirect would take the key and signature to wherever it points, and turn a 301'd POST into a GET.
      redirect: "manual",
      ...(opts.body === undefined ? {} : { body: opts.body }),
      ...(this.timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(this.timeoutMs) }),
    });
    const text = await res.text();
    return { status: res.status, headers: Object.fromEntries(res.headers), body: parseBody(text) };
  }

  private async call<T>(method: string, pathWithQuery: string, shape: Shape, opts?: RequestOptions): Promise<T> {
    const res = await this.request(method, pathWithQuery, opts);
    if (res.status < 200 || res.status > 299) throw CrossfillError.fromResponse(res);
    // Something else at the address (a web page where the API was expected, under a base URL with a path)
    // answers 2xx too: its text is no answer of the API's. Nor is a body labelled JSON that parseBody left as
    // text (cut off): the API's answers are objects.
    const type = res.headers["content-type"];
    const json = /^application\/json\b/i.test(type ?? "");
    const answered = `${method} ${this.baseUrl}${pathWithQuery} answered ${res.status} with`;
    const where = `is ${this.baseUrl} the API's address?`;
    if (res.body !== null && (!json || typeof res.body === "string")) {
      throw new CrossfillError("not_json", res.status, `${answered} ${type ?? "no content type"}${json ? " that does not parse as JSON" : ", not JSON"}: ${where}`, undefined, res.headers["x-request-id"]);
    }
    // Nor is JSON without the fields the method's answer always has (another service's, a proxy's empty 200, a 204):
    // handed back typed as the answer, it would be read as one.
    const unlike = mismatch(res.body, shape.fields);
    if (unlike !== undefined) throw new CrossfillError("unexpected_body", res.status, `${answered} ${unlike}, not ${shape.name}: ${where}`, undefined, res.headers["x-request-id"]);
    return res.body as T;
  }
}

/** What a method answers, and the fields that tell it from other JSON. */
interface Shape {
  name: string;
  fields: readonly string[];
}
const PAGE: Shape = { name: "a page of results", fields: ["data", "next_cursor"] };
const PRICE_RECORD: Shape = { name: "a price record", fields: ["event_id", "orderbook"] };
const ORDER: Shape = { name: "an order", fields: ["order_id", "status"] };
const ACCOUNT: Shape = { name: "an account", fields: ["account_id", "available_usdc"] };
const WITHDRAWAL: Shape = { name: "a withdrawal", fields: ["withdrawal_id", "status"] };
const HEALTH: Shape = { name: "the API's health", fields: ["status", "chain"] };

/** How `body` differs from an object with `fields`; undefined when it has them all. */
function mismatch(body: unknown, fields: readonly string[]): string | undefined {
  if (body === null) return "no body";
  if (Array.isArray(body)) return "a JSON array";
  if (typeof body !== "object") return `the JSON ${typeof body} ${JSON.stringify(body)}`;
  const missing = fields.filter((f) => !(f in body));
  return missing.length === 0 ? undefined : `a JSON object without ${missing.join(", ")}`;
}

function parseBody(text: string): unknown {
  if (text === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
