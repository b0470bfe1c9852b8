import { createHash, randomBytes } from "node:crypto";
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Type } from "@sinclair/typebox";
import AjvCompiler, { type ValidatorFactory } from "@fastify/ajv-compiler";
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { Logger } from "pino";
import { AppError, invalidFields } from "../domain/errors.ts";
import type { AuthNeeds, Principal } from "../auth/authenticate.ts";
import { Account, Activity, ErrorBody, Health, Market, Order, OrderRequest, PriceRecord, Withdrawal, WithdrawalRequest } from "./schemas.ts";
import type { HttpDeps } from "./deps.ts";
import { accountRoutes } from "./routes/account.ts";
import { marketRoutes } from "./routes/markets.ts";
import { orderRoutes } from "./routes/orders.ts";
import { withdrawalRoutes } from "./routes/withdrawals.ts";
import { healthRoutes } from "./routes/health.ts";
import { terminalRoutes } from "./terminal/index.ts";
import { jsonProblem, parseJsonBody } from "./json-body.ts";
import { LazyLogger } from "./lazy-logger.ts";
import { handlerBudget, registerRateLimits } from "./rate-limit.ts";
import { AnswerBytes } from "./answer-bytes.ts";
import { fastPrices, trustedHop } from "./fast-prices.ts";
import { addressNetwork } from "../auth/ip.ts";
import { Sessions, sessionCookie, sessionIdHash } from "./terminal/session.ts";
import { SIGN_IN_LIMIT } from "./terminal/session-routes.ts";
import { servesFile, terminalServes } from "./terminal/static.ts";

declare module "fastify" {
  interface FastifyRequest {
    rawBody: Buffer | undefined;
    /** Why the body is refused (not JSON, or in a content coding or media type the API does not take), once the caller is admitted. */
    bodyError: AppError | undefined;
    /** Who is calling: the owner of the API key (and the key), or of the web terminal's session. */
    principal: Pick<Principal, "accountId" | "spendSignature"> & { apiKey?: string } | undefined;
  }
  interface FastifyContextConfig {
    /** Who may call the route: the scope a key needs, whether the request must be signed, and whether a repeat of a signature may pass. */
    auth?: AuthNeeds;
  }
}

export const BODY_LIMIT = 64 * 1024;
/** The body of a route that takes none: nothing, or an object without fields. */
const NO_BODY = Type.Object({}, { additionalProperties: false, nullable: true });
const REQUEST_ID = /^[\w.:-]{1,128}$/;
/** The files swagger-ui serves under /docs/static (@fastify/swagger-ui's own static directory). */
const DOCS_FILES = join(dirname(createRequire(import.meta.url).resolve("@fastify/swagger-ui")), "static");

type AjvServerOptions = { customOptions: Record<string, unknown>; plugins: unknown[] };
type RouteCompiler = (route: { schema: unknown; httpPart?: string }) => unknown;

/**
 * Fastify's Ajv coerces types and removes unknown properties. Query strings and paths are text, so
 * `?limit=5` must be read as 5; a JSON body is typed as sent, and reshaping it would turn
 * `"scopes":"read"` into `["read"]`. Nothing unknown is dropped: `"admin":true` in a body, or `?limt=5`
 * (which would page by the default limit), is refused as not a known field.
 */
function validators(): ValidatorFactory {
  // The package declares its pool as Ajv's compile(schema); what it returns, and Fastify calls, takes the route.
  const pool = AjvCompiler() as unknown as (externalSchemas: unknown, options: AjvServerOptions) => RouteCompiler;
  const build = (externalSchemas: unknown, options: AjvServerOptions): RouteCompiler => {
    const coercing = pool(externalSchemas, { ...options, customOptions: { ...options.customOptions, removeAdditional: false } });
    const asSent = pool(externalSchemas, { ...options, customOptions: { ...options.customOptions, coerceTypes: false, removeAdditional: false } });
    return (route) => (route.httpPart === "body" ? asSent : coercing)(route);
  };
  return build as unknown as ValidatorFactory;
}

export async function buildApp(deps: HttpDeps, logger: Logger | false): Promise<FastifyInstance> {
  const requestId = requestIds();
  const app = Fastify({
    ...(logger === false ? { logger: false } : { loggerInstance: new LazyLogger(logger as FastifyBaseLogger) as FastifyBaseLogger }),
    bodyLimit: BODY_LIMIT,
    // A request (headers and body) must arrive whole within this, or it is answered 408 and its connection
    // closed: a client sending a body slowly, or never finishing it, held a connection for good. The answer
    // is not timed, so the price stream runs on. Node takes the longer of this and its headers' timeout (60 s
    // by default) as the request's, so that is set alike; and it looks at its connections every 30 s by
    // default, here every second at most, so a request is cut close to its time.
    requestTimeout: deps.requestTimeoutMs,
    // An HTTP/1.1 request without Host is refused by a hook of ours (below), in the API's error body: Node's own refusal has none.
    // Node keeps the first of two Host headers and drops the rest; joined, they are seen and refused there too (RFC 9112 §3.2).
    http: { headersTimeout: deps.requestTimeoutMs, connectionsCheckingInterval: Math.min(1_000, deps.requestTimeoutMs), requireHostHeader: false, joinDuplicateHeaders: true },
    requestIdHeader: false,
    rewriteUrl: (req) => originForm(req.url!),
    genReqId: (req) => requestId(req.headers["x-request-id"]),
    // Every request logged twice (in and out) would dominate the log; errors are logged by the error handler.
    // A request's lines carry its id under the name error bodies give it; an order's add order_id (OrderService.submit).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: "request_id" }),
    trustProxy: deps.trustProxy ? trustedHop : false,
    // Refused by a hook of ours instead (below).
    return503OnClosing: false,
    // A route's schema says how long its ids may be (an event id 128, as an order's market_id), and refuses a
    // longer one naming it; find-my-way's own bound (100 by default) would make it no route at all, so it is
    // set beyond any request line Node takes (its headers' 16 KiB).
    routerOptions: { maxParamLength: 16 * 1024 },
    schemaController: { compilersFactory: { buildValidator: validators() } },
    // A path Fastify cannot percent-decode (`/v1/prices/%`) is refused before routing, outside every
    // hook, so the request id header the onSend hook adds is set here.
    frameworkErrors: (err, req, reply) => sendError(err, req, reply.header("x-request-id", req.id)),
    clientErrorHandler: (err, socket) => answerClientError(err, socket, requestId(pendingRequest(socket)?.headers["x-request-id"])),
  });

  // An expectation other than 100-continue is ignored, as RFC 9110 §10.1.1 allows: Node would answer it 417 itself,
  // with no body of the API's and no request id.
  app.server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => app.server.emit("request", req, res));
  // A CONNECT asks for a tunnel, which Node hands to this event, not to Fastify, and without a listener closes unanswered.
  app.server.on("connect", (req: IncomingMessage, socket: Socket) =>
    answerOnSocket(socket, new AppError("method_not_allowed", "CONNECT is not allowed: this server is not a proxy.", undefined, { allow: "" }), requestId(req.headers["x-request-id"])),
  );

  app.decorateRequest("rawBody", undefined);
  app.decorateRequest("bodyError", undefined);
  app.decorateRequest("principal", undefined);

  // JSON is the only body the API takes: without this, Fastify's own text/plain parser would accept one.
  app.removeAllContentTypeParsers();
  // The signature covers the raw bytes, so keep them. A body the API does not take (not JSON, compressed, of another
  // media type or none) is refused only after authentication, as Stripe does: an unauthenticated caller is told it
  // has no key, and learns nothing about the route.
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (req, body: Buffer, done) => {
    req.rawBody = body;
    // A compressed body is not decoded (RFC 9110 §15.5.16): read as it is, it was refused as JSON that is not UTF-8.
    const coding = req.headers["content-encoding"];
    if (coding !== undefined && coding.toLowerCase() !== "identity") {
      req.bodyError = new AppError("unsupported_media_type", `Send the body uncompressed: Content-Encoding ${coding.slice(0, 64)} is not taken.`);
      return done(null, undefined);
    }
    if (body.length === 0) return done(null, undefined);
    try {
      done(null, parseJsonBody(body));
    } catch (err) {
      req.bodyError = new AppError("invalid_json", `The request body is not valid JSON: ${jsonProblem(err)}.`);
      done(null, undefined);
    }
  });
  app.addContentTypeParser("*", { parseAs: "buffer" }, (req, body: Buffer, done) => {
    req.rawBody = body;
    req.bodyError = new AppError("unsupported_media_type");
    done(null, undefined);
  });

  // Closing waits for every connection to end, and a keep-alive connection whose request was in
  // flight when it began would otherwise stay open, idle, until its timeout: answers sent while
  // closing close their connection. A request arriving on one then is refused first of all, in the
  // API's error body (Fastify's own 503 has a body of its own, without the request id).
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onRequest", (req, _reply, done) => done(closing ? new AppError("shutting_down") : hostProblem(req.headers.host, req.raw.httpVersion)));
  // Callback hooks, not async ones: they run on every request, and a promise each is measurable.
  // An idempotent retry answered with an error, which its route does not keep for good, spends its signature before
  // the answer leaves, so that a copy sent once the account has changed is refused, not carried out; a failure to
  // record it still sends the answer.
  app.addHook("onSend", (req, reply, payload, done) => {
    reply.header("x-request-id", req.id);
    if (closing) reply.header("connection", "close");
    const spend = req.principal?.spendSignature;
    if (spend === undefined || reply.statusCode < 400) return done(null, payload);
    spend().then(
      () => done(null, payload),
      (err: unknown) => {
        req.log.error({ err }, "recording a refused idempotent retry's signature failed: a copy of it may still be carried out");
        done(null, payload);
      },
    );
  });
  // By route template, not path, so that every order id does not make a series of its own.
  app.addHook("onResponse", (req, reply, done) => {
    deps.metrics.request(req.method, req.routeOptions.url ?? "(unmatched)", reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  // Registered here, before every route, so that each route gets the limit unless it says otherwise
  // (health and metrics are exempt; sign-in has a tighter limit of its own, by address). Shared by every
  // instance on one Redis; without it, each process counts its own.
  const budget = registerRateLimits(app, deps.rateLimit.perMinute > 0 ? { max: deps.rateLimit.perMinute, windowMs: 60_000, key: limitKey } : undefined, deps.rateLimit.redis);
  const sessions = new Sessions(deps.store, deps.terminal.clock, handlerBudget("password-again", SIGN_IN_LIMIT, deps.rateLimit.redis));

  // One set of routes serves programs and the web terminal. A request that sends X-API-Key is
  // authenticated by its key (and signature); a browser that sends only the terminal's session cookie
  // by its session, where the session's CSRF token stands in for the signature on fund-moving calls.
  const bySession = (req: FastifyRequest) => req.headers["x-api-key"] === undefined && sessionCookie(req) !== undefined;
  const sessionCaller = (req: FastifyRequest, auth: AuthNeeds) =>
    sessions.require(req).then((session) => {
      if (auth.signed) sessions.checkCsrf(req, session);
      return { accountId: session.record.accountId };
    });
  const principalOf = (req: FastifyRequest): FastifyRequest["principal"] | Promise<FastifyRequest["principal"]> => {
    const auth = req.routeOptions.config.auth;
    if (!auth) return undefined;
    if (bySession(req)) return sessionCaller(req, auth);
    return deps.authenticate(authRequest(req), auth);
  };
  // A callback hook, not an async one: a read with a cached key is admitted without a promise (every read).
  app.addHook("preValidation", (req, _reply, done) => {
    const admit = (principal: FastifyRequest["principal"]) => {
      req.principal = principal;
      done(req.bodyError);
    };
    let principal: ReturnType<typeof principalOf>;
    try {
      principal = principalOf(req);
    } catch (err) {
      return done(err as Error);
    }
    if (principal instanceof Promise) principal.then(admit, done);
    else admit(principal);
  });

  // A request sent with `Expect: 100-continue` is told to send its body (100) only once what can be checked without
  // it passes: its size, and its key's or session's standing (the key known, not revoked, of the route's scope, and a
  // signed request's timestamp fresh and its signature's form) or CSRF token. Node sent the 100 as the headers arrived,
  // so a client sent a whole body to be refused for its key. A refusal before the 100 closes the connection: the client
  // may or may not send the body it held back. The signature, which covers the body, is compared once the body is
  // read, as any request's, and only then is the key's use recorded.
  app.server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => app.server.emit("request", req, res));
  app.addHook("preParsing", (req, reply, payload, done) => {
    if (req.headers.expect?.toLowerCase() !== "100-continue" || !hasBody(req) || req.is404) return done(null, payload);
    const refuse = (err: Error) => {
      reply.header("connection", "close");
      done(err);
    };
    if (Number(req.headers["content-length"]) > req.routeOptions.bodyLimit) return refuse(new AppError("payload_too_large", `The body exceeds ${req.routeOptions.bodyLimit} bytes.`));
    const auth = req.routeOptions.config.auth;
    new Promise((resolve) => resolve(auth && (bySession(req) ? sessionCaller(req, auth) : deps.checkHeaders(authRequest(req), auth)))).then(() => {
      reply.raw.writeContinue();
      done(null, payload);
    }, refuse);
  });

  /** The methods the server's routes take, for `OPTIONS *`. */
  const methods = new Set<string>();
  /**
   * Why a request has no route: a path of the server's routes (the API's, the terminal's pages and files, the docs,
   * /metrics) asked with a method they do not take (RFC 9110 §15.5.6), else none. The terminal's catch-all (the route
   * of `/`, a `*` param) takes only the paths it serves: no API path, no file missing from its build. Nor is a route
   * reached with an empty id (`/v1/orders/`): that is the list's path with a trailing slash, as `/v1/markets/` is, not
   * an order named "".
   */
  const noRoute = (req: FastifyRequest): AppError => {
    const path = req.url.split("?")[0]!;
    const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
    const allow: string[] = API_METHODS.filter((method) => {
      const route = app.findRoute({ method, url: path });
      if (route === null) return false;
      const { "*": rest, ...ids } = route.params;
      if (rest === undefined) return !Object.values(ids).includes("");
      // The terminal's catch-all is the route whose `*` is the whole path; the other (the docs' files) takes the files
      // swagger-ui has, a directory's being its index.html.
      const decoded = decodeURIComponent(path);
      return `/${rest}` === decoded ? terminalServes(deps.terminal.assetsDir, decoded) : servesFile(DOCS_FILES, `/${rest}`.replace(/\/$/, "/index.html"));
    });
    // Asked with a method its path takes, what it names is not there (a file missing from the terminal's build).
    if (allow.length === 0 || allow.includes(req.method)) return new AppError("not_found", `No route ${req.method} ${shown}.`);
    const use = allow.join(", ");
    return new AppError("method_not_allowed", `${req.method} is not allowed on ${shown}: use ${use}.`, undefined, { allow: use });
  };
  // An API route reached with an empty id is answered as a path with no route, before its session or key is
  // checked, as that is: a hook of the whole server's, so it runs before any of a route's own. A GET, HEAD or
  // DELETE with a body is refused before anything is done: the body would be ignored, and whatever the client
  // meant by it (a filter, a field) not done (docs/decisions.md).
  // The target `*` is OPTIONS's only (RFC 9110 §9.3.7): with another method the terminal's catch-all answered its page.
  app.addHook("onRequest", (req, _reply, done) => {
    if (req.url === "*" && req.method !== "OPTIONS") {
      return done(new AppError("invalid_request", `The target * is asked with OPTIONS only, not ${req.method}: send a path.`, { fields: { path: "must begin with /" } }));
    }
    const emptyId = req.routeOptions.url?.startsWith("/v1/") === true && Object.values(req.params as object).includes("");
    done(emptyId ? noRoute(req) : BODILESS.has(req.method) && hasBody(req) ? new AppError("invalid_request", `A ${req.method} request takes no body.`, { fields: { body: `must be empty for ${req.method}` } }) : undefined);
  });

  // An API route that describes no query, or (taking a body) no body, refuses one rather than drop it, as
  // a route's schema refuses a field it does not name. The query is checked by a hook, not a schema: a
  // route that validates its own body (POST /v1/order) has no validators of Fastify's for its other parts.
  // Only under /v1: the terminal's pages and files, the docs and /metrics are the browser's and scrapers'
  // (an asset's cache-busting `?v=`, a client route's own query).
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) methods.add(method);
    if (!route.url.startsWith("/v1/")) return;
    route.preValidation = [...[route.preValidation ?? []].flat(), refuseNul];
    const query = route.schema?.querystring as { properties?: Record<string, { type?: unknown }> } | undefined;
    route.preValidation = [...route.preValidation, query === undefined ? refuseQuery : refuseRepeated];
    const integers = Object.keys(query?.properties ?? {}).filter((name) => query!.properties![name]!.type === "integer");
    if (integers.length > 0) route.preValidation = [...route.preValidation, refuseLooseIntegers(integers)];
    if (route.method !== "GET" && route.method !== "HEAD" && route.schema?.body === undefined) route.schema = { ...route.schema, body: NO_BODY };
    // Any status a route does not name (a 400 for its query, a 5xx) answers the error body: the OpenAPI
    // document says so for every operation, so a client generated from it can read each refusal's code.
    // A route that spends a budget documents its 429 with the headers that say when to try again.
    const counted = route.config?.rateLimit ?? deps.rateLimit.perMinute > 0;
    route.schema = { ...route.schema, response: { "4xx": { $ref: "Error#" }, "5xx": { $ref: "Error#" }, ...(route.schema?.response as object), ...(counted && { 429: RATE_LIMITED }) } };
  });

  app.setErrorHandler(sendError);
  // `OPTIONS *` asks what the server as a whole takes (RFC 9110 §9.3.7): the methods of its routes.
  app.setNotFoundHandler((req, reply) =>
    req.method === "OPTIONS" && req.url === "*" ? reply.status(204).header("allow", API_METHODS.filter((m) => methods.has(m)).join(", ")).send() : sendError(noRoute(req), req, reply),
  );

  for (const schema of [ErrorBody, OrderRequest, Order, PriceRecord, Market, Account, Health, WithdrawalRequest, Withdrawal, Activity]) app.addSchema(schema);

  await app.register(swagger, {
    openapi: {
      openapi: "3.0.3",
      info: {
        title: "crossfill",
        version: deps.version,
        description:
          "One API to trade prediction-market outcomes across venues: unified events, a merged order book, and orders routed across venues and settled on an EVM vault.",
      },
      components: {
        securitySchemes: {
          apiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
          session: { type: "apiKey", in: "cookie", name: "crossfill_session", description: "The web terminal's session (POST /v1/session/signin); state-changing calls also send X-CSRF-Token." },
          signature: {
            type: "apiKey",
            in: "header",
            name: "X-Signature",
            description:
              "HMAC-SHA256 over X-Timestamp (Unix seconds) + METHOD + path with query + raw body, keyed with API_SECRET, lowercase hex. Send with X-Timestamp; requests more than 30 s off are refused.",
          },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _base, _frag, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: "/docs", uiConfig: { url: "/v1/openapi.json" } });
  // For Prometheus, outside /v1: operational, not part of the API (and so exempt from its rate limit).
  app.get("/metrics", { schema: { hide: true }, config: { rateLimit: false } }, async (_req, reply) => {
    const { contentType, body } = await deps.metrics.scrape();
    return reply.type(contentType).send(body);
  });
  app.get("/v1/openapi.json", { schema: { hide: true } }, async () => app.swagger());

  await app.register(healthRoutes(deps));
  const bytes = new AnswerBytes();
  await app.register(marketRoutes(deps, bytes));
  await app.register(orderRoutes(deps));
  await app.register(accountRoutes(deps));
  await app.register(withdrawalRoutes(deps, sessions));
  await app.register(terminalRoutes(deps, sessions, principalOf));

  // The hottest read skips Fastify's pipeline when its answer is at hand, unless the budget is counted on
  // Redis (a round trip). Fastify's handler is the server's one request listener; it takes the rest.
  if (budget !== undefined) {
    const fast = fastPrices({ deps, bytes, budget, budgetKey: keyBudget, requestId, closing: () => closing });
    const listeners = app.server.listeners("request") as ((req: IncomingMessage, res: ServerResponse) => void)[];
    const fastify = listeners[0];
    if (listeners.length !== 1 || fastify === undefined) throw new Error(`Expected Fastify's one request listener, found ${listeners.length}.`);
    app.server.removeListener("request", fastify);
    app.server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      if (!fast(req, res)) fastify(req, res);
    });
  }
  return app;
}

/**
 * A request's id: the client's X-Request-ID when it is one, else made unique across instances by a random
 * prefix and then a counter (no random bytes drawn per request).
 */
function requestIds(): (sent: string | string[] | undefined) => string {
  const prefix = `req_${randomBytes(9).toString("base64url")}`;
  let made = 0;
  return (sent) => (typeof sent === "string" && REQUEST_ID.test(sent) ? sent : `${prefix}${(++made).toString(36)}`);
}

/**
 * Whose budget a request spends, read from the request as it arrives: its API key, else its terminal
 * session, else its address (an IPv6 address by its /64, which one host usually holds whole). Read
 * before authentication, so a made-up key only spends a budget of its own; the API key is no secret
 * (reads are made with it alone), so spending another's budget with it is no more than using it.
 */
function limitKey(req: FastifyRequest): string {
  const key = req.headers["x-api-key"];
  if (typeof key === "string" && key !== "") return keyBudget(key);
  const session = sessionCookie(req);
  if (session !== undefined) return `session:${sessionIdHash(session)}`;
  return `ip:${addressNetwork(req.ip)}`;
}

/** The budget of an API key; hashed when long: an arbitrary header is not made a Redis key as it is. */
function keyBudget(key: string): string {
  return `key:${key.length <= 64 ? key : createHash("sha256").update(key).digest("hex")}`;
}

function authRequest(req: FastifyRequest) {
  return { method: req.method, url: req.url, headers: req.headers, rawBody: req.rawBody, ip: req.ip };
}

/** A request target's scheme and authority, when it has the absolute form (`http://host:8080/v1/markets`). */
const ABSOLUTE_FORM = /^[a-z][a-z\d+.-]*:\/\/[^/?#]*/i;

/**
 * A request target in origin form: one in absolute form (RFC 9112 §3.2.2, as a client set to use a proxy sends it)
 * is the same request as its path and query, which a server must take. Left as sent, it reached no route of its
 * API path's (the terminal's page for `/v1/prices`, a 404 for a method the path does not take) and its signature
 * was checked against the whole URL where the client signs the path.
 */
function originForm(target: string): string {
  const scheme = ABSOLUTE_FORM.exec(target);
  if (scheme === null) return target;
  const rest = target.slice(scheme[0].length);
  return rest.startsWith("/") ? rest : `/${rest}`;
}

/**
 * Why a request's Host is refused, as RFC 9112 §3.2 says: none in HTTP/1.1, or more than one (joined with a comma,
 * which no host holds) in any version.
 */
function hostProblem(host: string | undefined, httpVersion: string): AppError | undefined {
  if (host === undefined) return httpVersion === "1.1" ? new AppError("invalid_request", "An HTTP/1.1 request must send a Host header.", { fields: { Host: "is required" } }) : undefined;
  return host.includes(",") ? new AppError("invalid_request", "Send one Host header, naming one host.", { fields: { Host: "must be given once" } }) : undefined;
}

/** A counted route's refusal in the OpenAPI document: the error body, and the headers that say when to try again. */
const RATE_LIMITED = {
  description: "rate_limited: the caller's budget for this window is spent.",
  headers: {
    "retry-after": { type: "integer", description: "Seconds until the window ends and the request may be sent again." },
    "x-ratelimit-limit": { type: "integer", description: "Requests in a window (every answer of the route carries the three x-ratelimit headers)." },
    "x-ratelimit-remaining": { type: "integer", description: "Requests left in the window." },
    "x-ratelimit-reset": { type: "integer", description: "Seconds until the window ends." },
  },
  content: { "application/json": { schema: { $ref: "Error#" } } },
};

/** The methods whose requests carry no body. */
const BODILESS = new Set(["GET", "HEAD", "DELETE"]);

/** Whether a request's framing says a body follows: a Content-Length above 0, or any Transfer-Encoding. */
function hasBody(req: FastifyRequest): boolean {
  const length = req.headers["content-length"];
  return (length !== undefined && Number(length) > 0) || req.headers["transfer-encoding"] !== undefined;
}

/** The methods the API's routes take (HEAD with each GET): what an Allow header may name. */
const API_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;

function sendError(err: FastifyError | AppError, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const e = toAppError(err);
  if (e.status >= 500) req.log.error({ err }, "request failed");
  const body = { error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}), request_id: req.id } };
  return reply.status(e.status).headers(e.headers ?? {}).send(body);
}

/** A route's hook when it takes no query: each parameter sent is refused as not a known field. */
function refuseQuery(req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const names = Object.keys(req.query as object);
  if (names.length === 0) return done();
  const fields = Object.create(null) as Record<string, string>;
  for (const name of names) fields[name] = "is not a known field";
  done(invalidFields("querystring", fields));
}

/** A route's hook when it takes a query: a parameter sent more than once is refused as such, not as a wrong type. */
function refuseRepeated(req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const repeated = Object.entries(req.query as object).filter(([, value]) => Array.isArray(value));
  if (repeated.length === 0) return done();
  done(invalidFields("querystring", Object.fromEntries(repeated.map(([name]) => [name, "is given more than once"]))));
}

/**
 * A route's hook when its query takes integers (`integers`, by name): each is written in decimal digits, and
 * fits a double exactly. Ajv's coercion reads text as JavaScript's Number() does, so `0x10`, `+5`, ` 5`, `1e1`
 * or `5.0` were read as integers (a strict API refuses them, naming the parameter), and `1e400` or 400 digits
 * as Infinity, whose bounds Ajv does not check: a page of Infinity rows or a book of Infinity levels, a 5xx.
 */
function refuseLooseIntegers(integers: readonly string[]) {
  return (req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => {
    const query = req.query as Record<string, unknown>;
    const fields = Object.create(null) as Record<string, string>;
    for (const name of integers) {
      const value = query[name];
      if (typeof value !== "string") continue;
      if (!/^-?\d+$/.test(value)) fields[name] = "must be an integer";
      else if (!Number.isSafeInteger(Number(value))) fields[name] = "is out of range";
    }
    done(Object.keys(fields).length === 0 ? undefined : invalidFields("querystring", fields));
  };
}

/**
 * A route's hook: a NUL character in any text of a path, query or JSON body is refused, naming its field. No field
 * of the API takes one, and PostgreSQL's text cannot hold it: a lookup or a write with one failed there as a 5xx.
 */
function refuseNul(req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const fields = Object.create(null) as Record<string, string>;
  // Iterative, not recursive: a body may nest as deep as its 64 KiB allow.
  const pending: [string, unknown][] = [
    ["", req.params],
    ["", req.query],
    ["", req.body],
  ];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [name, value] = next;
    if (typeof value === "string") {
      if (value.includes("\0")) fields[name || "body"] = "must not hold a NUL character";
    } else if (typeof value === "object" && value !== null) {
      for (const [key, v] of Object.entries(value)) {
        const field = name === "" ? key : `${name}.${key}`;
        if (key.includes("\0")) fields[field] = "must not hold a NUL character";
        else pending.push([field, v]);
      }
    }
  }
  done(Object.keys(fields).length === 0 ? undefined : invalidFields("request", fields));
}

/**
 * The request a connection is still receiving when Node refuses it, if its headers arrived whole (a body too
 * slow for the request timeout): its id is the client's to quote. Node keeps it on the connection's parser
 * (`socket.parser.incoming`, no public API) from its headers until the next request begins.
 */
function pendingRequest(socket: Socket): IncomingMessage | undefined {
  return (socket as Socket & { parser?: { incoming?: IncomingMessage | null } | null }).parser?.incoming ?? undefined;
}

/**
 * A request Node refuses before Fastify sees it (not whole within the request timeout, headers too large,
 * not HTTP) is answered in the API's error body, as Fastify's own handler would otherwise answer it in its
 * own, and its connection closed.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket, id: string): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  const e =
    err.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? new AppError("request_timeout")
      : err.code === "HPE_HEADER_OVERFLOW"
        ? new AppError("headers_too_large")
        : new AppError("invalid_request", "The request is not valid HTTP/1.1.");
  answerOnSocket(socket, e, id);
}

/** Writes `e` to a socket Node no longer reads HTTP from, in the API's error body, and closes it. */
function answerOnSocket(socket: Socket, e: AppError, id: string): void {
  const body = JSON.stringify({ error: { code: e.code, message: e.message, request_id: id } });
  const headers = Object.entries(e.headers ?? {}).map(([name, value]) => `${name}: ${value}\r\n`).join("");
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\n${headers}Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** JSON's names of the types a schema takes, in the words an order's refusals use. */
const TYPE_WORDS: Record<string, string> = { string: "a string", integer: "an integer", number: "a number", boolean: "true or false", array: "an array", object: "a JSON object", null: "null" };

/**
 * Why a value is refused, in the words an order's refusals use, not Ajv's: its sentences say which values a list
 * takes nowhere ("must be equal to one of the allowed values"), name a missing field twice ("must have required
 * property 'x'"), and shout and compare in symbols ("must NOT have more than 64 characters", "must be >= 1").
 */
function inWords(keyword: string, params: Record<string, unknown>, message: string | undefined): string {
  const limit = params.limit as number;
  switch (keyword) {
    case "enum":
      return `must be one of ${(params.allowedValues as unknown[]).join(", ")}`;
    case "required":
      return "is required";
    case "type":
      return `must be ${String(params.type).split(",").map((t) => TYPE_WORDS[t] ?? t).join(" or ")}`;
    case "minLength":
      return limit === 1 ? "must not be empty" : `must be at least ${limit} characters`;
    case "maxLength":
      return `must be at most ${limit} characters`;
    case "minimum":
      return `must be at least ${limit}`;
    case "maximum":
      return `must be at most ${limit}`;
    case "minItems":
      return limit === 1 ? "must not be empty" : `must hold at least ${limit} entries`;
    case "maxItems":
      return `must hold at most ${limit} entries`;
    case "uniqueItems":
      return "must not hold the same entry twice";
  }
  return message ?? "is invalid";
}

function toAppError(err: FastifyError | AppError): AppError {
  if (err instanceof AppError) return err;
  const fe = err as FastifyError;
  if (fe.validation) {
    // No prototype: an unknown "__proto__" field must be named like any other, not hit the __proto__ setter.
    const fields = Object.create(null) as Record<string, string>;
    for (const v of fe.validation) {
      const { missingProperty, additionalProperty } = v.params as { missingProperty?: string; additionalProperty?: string };
      if (additionalProperty !== undefined) {
        fields[`${v.instancePath}/${additionalProperty}`.slice(1).replaceAll("/", ".")] = "is not a known field";
        continue;
      }
      const name = (v.instancePath || "/" + String(missingProperty ?? "")).slice(1).replaceAll("/", ".");
      fields[name || fe.validationContext || "request"] = inWords(v.keyword, v.params, v.message);
    }
    return invalidFields(fe.validationContext ?? "request", fields);
  }
  switch (fe.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new AppError("payload_too_large", `The body exceeds ${BODY_LIMIT} bytes.`);
    case "FST_ERR_BAD_URL":
      return new AppError("invalid_request", "The path holds a malformed percent-encoding.", { fields: { path: "is not valid percent-encoded UTF-8" } });
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new AppError("invalid_request", fe.message);
  }
  if (typeof fe.statusCode === "number" && fe.statusCode >= 400 && fe.statusCode < 500) return new AppError("invalid_request", fe.message);
  return new AppError("internal");
}
