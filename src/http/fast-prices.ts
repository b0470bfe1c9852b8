import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import proxyAddr from "@fastify/proxy-addr";
import type { AuthRequest } from "../auth/authenticate.ts";
import type { Outcome } from "../domain/types.ts";
import type { OrderSide } from "../markets/merged-book.ts";
import type { AnswerBytes } from "./answer-bytes.ts";
import type { HttpDeps } from "./deps.ts";
import type { ApiBudget } from "./rate-limit.ts";
import { JSON_TYPE, PRICES_DEFAULTS, PRICES_MAX_DEPTH, PRICES_ROUTE, READ } from "./routes/markets.ts";

/** The route's path up to its event id. */
const PREFIX = PRICES_ROUTE.slice(0, PRICES_ROUTE.indexOf(":"));
/** Ids that need no percent-decoding and that the route's schema takes (1–128 characters). */
const EVENT_ID = /^[\w.~-]{1,128}$/;
const DEPTH = /^[1-9]\d{0,2}$/;
/**
 * The proxies trusted with TRUST_PROXY: the one in front of the server. The client is the address it saw,
 * the last of X-Forwarded-For; the entries before it are whatever the client sent, forgeable, so trusting
 * them would let any client pick the address its rate limits and its key's IP allowlist see.
 */
export const trustedHop = (_address: string, hop: number): boolean => hop < 1;

type PricesQuery = { outcome: Outcome; depth: number; side: OrderSide };

export interface FastPricesParts {
  deps: Pick<HttpDeps, "prices" | "authenticateCached" | "metrics" | "trustProxy">;
  bytes: AnswerBytes;
  budget: ApiBudget;
  /** Whose budget a request with this API key spends (the rate limit's key). */
  budgetKey(apiKey: string): string;
  /** The request's id, from its X-Request-ID header or made. */
  requestId(sent: string | string[] | undefined): string;
  /** Whether the server is closing (the route then answers 503 shutting_down and closes the connection). */
  closing(): boolean;
}

/**
 * GET /v1/prices/{event_id} answered from node:http's request event, before Fastify, when all its answer
 * needs is at hand: a query written plainly, an event whose current record has been serialised, a cached
 * key that may read, and budget left. The answer is the route's: the same bytes, the same headers, the
 * same budget spent, the same request id and metrics. Any other request, or one that would be refused,
 * is left untouched (false) to Fastify, the one place that answers it otherwise. Fastify's pipeline
 * (routing, request and reply objects, hooks, the query's schema) was most of what a read cost beyond a
 * bare server (docs/bench.md).
 */
export function fastPrices(parts: FastPricesParts): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { deps, bytes, budget } = parts;
  return (req, res) => {
    const url = req.url!;
    if (req.method !== "GET" || !url.startsWith(PREFIX) || parts.closing()) return false;
    const start = performance.now();
    const apiKey = req.headers["x-api-key"];
    const host = req.headers.host;
    if (typeof apiKey !== "string" || apiKey === "" || host === undefined || host.includes(",") || req.headers["content-length"] !== undefined || req.headers["transfer-encoding"] !== undefined) return false;
    const q = url.indexOf("?");
    const eventId = q === -1 ? url.slice(PREFIX.length) : url.slice(PREFIX.length, q);
    const query = q === -1 ? PRICES_DEFAULTS : readQuery(url.slice(q + 1));
    if (query === undefined || !EVENT_ID.test(eventId)) return false;
    let body: Buffer | undefined;
    try {
      body = bytes.of(deps.prices(eventId, query.outcome, query.depth, query.side));
      if (body === undefined) return false;
      const caller = deps.authenticateCached(new Read(req, url, deps.trustProxy), READ);
      if (caller === undefined) return false;
    } catch {
      return false;
    }
    const limited = budget.spend(parts.budgetKey(apiKey));
    if (limited === undefined) return false;
    res.writeHead(200, ["content-type", JSON_TYPE, "content-length", String(body.length), ...limited, "x-request-id", parts.requestId(req.headers["x-request-id"])]);
    res.end(body);
    deps.metrics.request("GET", PRICES_ROUTE, 200, (performance.now() - start) / 1000);
    return true;
  };
}

/** The read as authenticate takes it, its caller's address read only when asked (by a key with an address allowlist). */
class Read implements AuthRequest {
  readonly method = "GET";
  readonly rawBody = undefined;
  readonly headers: IncomingHttpHeaders;

  constructor(
    private readonly req: IncomingMessage,
    readonly url: string,
    private readonly trustProxy: boolean,
  ) {
    this.headers = req.headers;
  }

  /** As Fastify reads it. */
  get ip(): string {
    return this.trustProxy ? proxyAddr(this.req, trustedHop) : this.req.socket.remoteAddress!;
  }
}

/** A query of outcome, depth and side, each at most once, written as the schema takes them with no decoding; else undefined. */
function readQuery(text: string): PricesQuery | undefined {
  const query: PricesQuery = { ...PRICES_DEFAULTS };
  const seen = new Set<string>();
  for (const pair of text.split("&")) {
    const eq = pair.indexOf("=");
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    if (eq === -1 || seen.has(name)) return undefined;
    seen.add(name);
    if (name === "outcome" && (value === "YES" || value === "NO")) query.outcome = value;
    else if (name === "side" && (value === "buy" || value === "sell")) query.side = value;
    else if (name === "depth" && DEPTH.test(value) && Number(value) <= PRICES_MAX_DEPTH) query.depth = Number(value);
    else return undefined;
  }
  return query;
}
