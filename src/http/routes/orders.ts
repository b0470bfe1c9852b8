import { Type, type Static } from "@sinclair/typebox";
import type { FastifyPluginAsync } from "fastify";
import { AppError, type ErrorCode, ERRORS } from "../../domain/errors.ts";
import { orderView } from "../../orders/view.ts";
import type { OrderRecord } from "../../store/store.ts";
import type { HttpDeps } from "../deps.ts";
import { namesClientId } from "../json-body.ts";
import { ListQuery, Page } from "../schemas.ts";

const OrdersQuery = Type.Object({ ...ListQuery }, { additionalProperties: false });
const errors = { 400: { $ref: "Error#" }, 401: { $ref: "Error#" }, 403: { $ref: "Error#" }, 404: { $ref: "Error#" } };

export const orderRoutes =
  (deps: HttpDeps): FastifyPluginAsync =>
  async (app) => {
    const view = async (o: OrderRecord) => orderView(o, await deps.store.fills(o.id), deps.sotAssetId);

    app.post<{ Headers: { "idempotency-key"?: string } }>(
      "/v1/order",
      {
        config: { auth: { scope: "trade", signed: true, idempotentReplay: namesClientId("client_order_id") } },
        // The body is validated by validateOrder, which reads amounts exactly; a schema validator would coerce them through floats.
        validatorCompiler: () => () => true,
        schema: {
          summary: "Submit an order: lock USDC in the vault, route across venues, settle and mint the position token",
          description:
            "Signed request (from the web terminal: its session, with the session's X-CSRF-Token instead of a signature). Returns 200 with the order when it filled (or partially filled), 202 while a venue's answer is still being reconciled; a rejected or failed order answers with its error code and the order in details. The same client_order_id (or Idempotency-Key header) with the same body answers the same order (one rejected with a 503 before anything was locked, chain_unavailable, venue_unavailable or order_interrupted, is run again; any other 5xx, after its lock was taken, is its answer for good, and its message says to send a new client_order_id to try again); with another body, idempotency_conflict. A signed request sent again answers replayed_request, unless its body names a client_order_id and its first copy was not answered with an error: then it is the idempotent retry and answers that order. To retry a refused order, sign it again (a new X-Timestamp).",
          tags: ["orders"],
          security: [{ apiKey: [], signature: [] }, { session: [] }],
          body: { $ref: "OrderRequest#" },
          headers: Type.Object({ "idempotency-key": Type.Optional(Type.String({ description: "Same as client_order_id, of printable ASCII characters only (an id of others goes in client_order_id)" })) }),
          response: { 200: { $ref: "Order#" }, 202: { $ref: "Order#" }, ...errors, 409: { $ref: "Error#" }, 422: { $ref: "Error#" } },
        },
      },
      async (req, reply) => {
        const principal = req.principal!;
        const account = await deps.account(principal.accountId);
        const key = req.headers["idempotency-key"];
        // The request's logger: the order's lines carry its request_id beside its order_id.
        const order = await deps.orders.submit({ accountId: account.id, address: account.address as `0x${string}` }, req.body, typeof key === "string" ? key : undefined, req.log);
        const body = await view(order);
        deps.metrics.orderAnswered(order.id, reply.elapsedTime / 1000);
        if (order.status === "rejected" || order.status === "failed") {
          const code = (order.errorCode ?? "internal") in ERRORS ? (order.errorCode as ErrorCode) : "internal";
          throw new AppError(code, body.error?.message || undefined, { ...order.errorDetails, order_id: order.id, status: order.status, order: body });
        }
        return reply.status(order.status === "filled" || order.status === "partially_filled" ? 200 : 202).send(body);
      },
    );

    app.get<{ Params: { order_id: string } }>(
      "/v1/orders/:order_id",
      {
        config: { auth: { scope: "read", signed: false } },
        schema: {
          summary: "One of the key owner's orders",
          tags: ["orders"],
          security: [{ apiKey: [] }, { session: [] }],
          params: Type.Object({ order_id: Type.String({ minLength: 1, maxLength: 64 }) }),
          response: { 200: { $ref: "Order#" }, ...errors },
        },
      },
      async (req) => {
        const o = await deps.store.order(req.params.order_id);
        if (!o || o.accountId !== req.principal!.accountId) throw new AppError("order_not_found", `No order ${req.params.order_id}.`);
        return view(o);
      },
    );

    app.get<{ Querystring: Static<typeof OrdersQuery> }>(
      "/v1/orders",
      {
        config: { auth: { scope: "read", signed: false } },
        schema: {
          summary: "The key owner's orders, newest first",
          tags: ["orders"],
          security: [{ apiKey: [] }, { session: [] }],
          querystring: OrdersQuery,
          response: { 200: Page("Order"), ...errors },
        },
      },
      async (req) => {
        const page = await deps.store.listOrders(req.principal!.accountId, { limit: req.query.limit ?? 50, cursor: req.query.cursor ?? null });
        return { data: await Promise.all(page.data.map(view)), next_cursor: page.nextCursor };
      },
    );
  };
