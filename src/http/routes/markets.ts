import { Type, type Static } from "@sinclair/typebox";
import type { FastifyPluginAsync, FastifyReply } from "fastify";
import type { HttpDeps } from "../deps.ts";
import { ListQuery, Page } from "../schemas.ts";
import { MARKET_STATUSES, type MarketStatus, type Outcome } from "../../domain/types.ts";
import type { OrderSide } from "../../markets/merged-book.ts";
import type { AnswerBytes } from "../answer-bytes.ts";

export const PRICES_MAX_DEPTH = 500;
export const JSON_TYPE = "application/json; charset=utf-8";
/** What GET /v1/prices/{event_id} reads when its query leaves a parameter out. */
export const PRICES_DEFAULTS = { outcome: "YES", depth: 20, side: "buy" } as const;

const MarketsQuery = Type.Object(
  {
    status: Type.Optional(Type.String({ enum: [...MARKET_STATUSES] })),
    venue: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "A venue id (as in each record's venues): the events whose venues list it. A venue no event lists is invalid_request naming those that are." })),
    q: Type.Optional(Type.String({ maxLength: 200, description: "Text search over title and description" })),
    ...ListQuery,
  },
  { additionalProperties: false },
);
const PricesQuery = Type.Object(
  {
    outcome: Type.Optional(Type.String({ enum: ["YES", "NO"], default: PRICES_DEFAULTS.outcome })),
    depth: Type.Optional(Type.Integer({ minimum: 1, maximum: PRICES_MAX_DEPTH, default: PRICES_DEFAULTS.depth, description: "Levels per side" })),
    side: Type.Optional(
      Type.String({
        enum: ["buy", "sell"],
        default: PRICES_DEFAULTS.side,
        description:
          "The order side to rank for. buy: best_execution is the venue whose best ask costs least after its fee. sell: bids are ordered by what a seller nets per share after each venue's fee, and best_execution is the venue whose best bid nets most, null when none nets anything.",
      }),
    ),
  },
  { additionalProperties: false },
);
/** Who may read a market or its prices: a key with the read scope, unsigned. */
export const READ = { scope: "read", signed: false } as const;
export const PRICES_ROUTE = "/v1/prices/:event_id";
const read = { auth: READ };
const security: { [scheme: string]: string[] }[] = [{ apiKey: [] }, { session: [] }];

export const marketRoutes =
  (deps: HttpDeps, bytes: AnswerBytes): FastifyPluginAsync =>
  async (app) => {
    // Not async, nor are the handlers: a promise per request for an answer that is at hand was measurable.
    const send = (reply: FastifyReply, value: object): void => {
      reply.type(JSON_TYPE).send(bytes.make(value, (v) => reply.serialize(v) as string));
    };
    app.get<{ Querystring: Static<typeof MarketsQuery> }>(
      "/v1/markets",
      {
        config: read,
        schema: {
          summary: "List unified markets (events), each with the venues that list it",
          tags: ["markets"],
          security,
          querystring: MarketsQuery,
          response: { 200: Page("Market") },
        },
      },
      (req, reply) => {
        const { status, venue, q, limit, cursor } = req.query;
        send(reply, deps.markets({ status: status as MarketStatus | undefined, venue, q, limit: limit ?? 50, cursor: cursor ?? null }));
      },
    );

    app.get<{ Params: { event_id: string }; Querystring: Static<typeof PricesQuery> }>(
      PRICES_ROUTE,
      {
        config: read,
        schema: {
          summary: "Merged order book across venues and the best fee-adjusted execution",
          tags: ["markets"],
          security,
          params: Type.Object({ event_id: Type.String({ minLength: 1, maxLength: 128 }) }),
          querystring: PricesQuery,
          response: { 200: { $ref: "PriceRecord#" } },
        },
      },
      (req, reply) => {
        const { outcome, depth, side } = { ...PRICES_DEFAULTS, ...req.query };
        send(reply, deps.prices(req.params.event_id, outcome as Outcome, depth, side as OrderSide));
      },
    );
  };
