import type { FastifyInstance } from "fastify";
import { Type, type Static } from "@sinclair/typebox";
import { AppError, ERRORS, type ErrorCode } from "../../domain/errors.ts";
import { orderView } from "../../orders/view.ts";
import type { OrderRecord } from "../../store/store.ts";
import type { HttpDeps } from "../deps.ts";
import { ListQuery, Page } from "../schemas.ts";
import { quoteOrder } from "./quote.ts";
import { Quote, QuoteQuery } from "./schemas.ts";

const errors = { 400: { $ref: "Error#" }, 401: { $ref: "Error#" }, 403: { $ref: "Error#" }, 404: { $ref: "Error#" } };
const security = [{ session: [] }];
const tags = ["session"];
const MarketsQuery = Type.Object(
  {
    status: Type.Optional(Type.String({ enum: ["open", "closed", "resolved"] })),
    venue: Type.Optional(Type.String({ maxLength: 64 })),
    q: Type.Optional(Type.String({ maxLength: 200 })),
    ...ListQuery,
  },
  { additionalProperties: false },
);
const OrdersQuery = Type.Object({ ...ListQuery }, { additionalProperties: false });
const PricesQuery = Type.Object(
  {
    outcome: Type.Optional(Type.String({ enum: ["YES", "NO"], default: "YES" })),
    depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 20 })),
  },
  { additionalProperties: false },
);

/**
 * The API's reads and order placement, authenticated by the terminal's session instead of a key.
 * Each calls the very deps its /v1 twin calls, and orders go through the same OrderService.submit.
 */
export function registerTradingRoutes(app: FastifyInstance, deps: HttpDeps): void {
  const view = async (o: OrderRecord) => orderView(o, await deps.store.fills(o.id), deps.sotAssetId);
  const accountOf = (req: { terminalSession?: { record: { accountId: string } } }) => deps.account(req.terminalSession!.record.accountId);

  app.get<{ Querystring: Static<typeof MarketsQuery> }>(
    "/v1/session/markets",
    { config: { session: "read" }, schema: { summary: "GET /v1/markets for the session", tags, security, querystring: MarketsQuery, response: { 200: Page("Market"), ...errors } } },
    async (req) => {
      const { status, venue, q, limit, cursor } = req.query;
      const page = deps.markets({ status: status as "open" | undefined, venue, q, limit: limit ?? 50, cursor: cursor ?? null });
      return { data: page.data, next_cursor: page.nextCursor };
    },
  );

  app.get<{ Params: { event_id: string }; Querystring: Static<typeof PricesQuery> }>(
    "/v1/session/prices/:event_id",
    {
      config: { session: "read" },
      schema: {
        summary: "GET /v1/prices/{event_id} for the session",
        tags,
        security,
        params: Type.Object({ event_id: Type.String({ minLength: 1, maxLength: 128 }) }),
        querystring: PricesQuery,
        response: { 200: { $ref: "PriceRecord#" }, ...errors },
      },
    },
    async (req) => deps.prices(req.params.event_id, (req.query.outcome ?? "YES") as "YES" | "NO", req.query.depth ?? 20),
  );

  app.get<{ Querystring: Static<typeof QuoteQuery> }>(
    "/v1/session/quote",
    { config: { session: "read" }, schema: { summary: "GET /v1/quote for the session", tags, security, querystring: QuoteQuery, response: { 200: Quote, ...errors, 422: { $ref: "Error#" } } } },
    async (req) => quoteOrder(deps.terminal.quote, req.query, deps.terminal.clock.now()),
  );

  app.get(
    "/v1/session/account",
    { config: { session: "read" }, schema: { summary: "GET /v1/account for the session", tags, security, response: { 200: { $ref: "Account#" }, ...errors } } },
    async (req) => deps.accountView(await accountOf(req)),
  );

  app.get<{ Querystring: Static<typeof OrdersQuery> }>(
    "/v1/session/orders",
    { config: { session: "read" }, schema: { summary: "GET /v1/orders for the session", tags, security, querystring: OrdersQuery, response: { 200: Page("Order"), ...errors } } },
    async (req) => {
      const page = await deps.store.listOrders(req.terminalSession!.record.accountId, { limit: req.query.limit ?? 50, cursor: req.query.cursor ?? null });
      return { data: await Promise.all(page.data.map(view)), next_cursor: page.nextCursor };
    },
  );

  app.get<{ Params: { order_id: string } }>(
    "/v1/session/orders/:order_id",
    {
      config: { session: "read" },
      schema: {
        summary: "GET /v1/orders/{order_id} for the session",
        tags,
        security,
        params: Type.Object({ order_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: { $ref: "Order#" }, ...errors },
      },
    },
    async (req) => {
      const o = await deps.store.order(req.params.order_id);
      if (!o || o.accountId !== req.terminalSession!.record.accountId) throw new AppError("order_not_found", `No order ${req.params.order_id}.`);
      return view(o);
    },
  );

  app.post<{ Headers: { "idempotency-key"?: string } }>(
    "/v1/session/orders",
    {
      config: { session: "write" },
      // As on POST /v1/order: validateOrder reads the amounts exactly, where a schema validator would coerce them through floats.
      validatorCompiler: () => () => true,
      schema: {
        summary: "POST /v1/order for the session (X-CSRF-Token instead of a signature)",
        tags,
        security,
        body: { $ref: "OrderRequest#" },
        response: { 200: { $ref: "Order#" }, 202: { $ref: "Order#" }, ...errors, 409: { $ref: "Error#" }, 422: { $ref: "Error#" } },
      },
    },
    async (req, reply) => {
      const account = await accountOf(req);
      const key = req.headers["idempotency-key"];
      const order = await deps.orders.submit({ accountId: account.id, address: account.address as `0x${string}` }, req.body, typeof key === "string" ? key : undefined);
      const body = await view(order);
      if (order.status === "rejected" || order.status === "failed") {
        const code = (order.errorCode ?? "internal") in ERRORS ? (order.errorCode as ErrorCode) : "internal";
        throw new AppError(code, order.errorMessage ?? undefined, { order_id: order.id, status: order.status, order: body });
      }
      return reply.status(order.status === "filled" || order.status === "partially_filled" ? 200 : 202).send(body);
    },
  );
}
