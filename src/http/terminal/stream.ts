import type { OutgoingHttpHeaders } from "node:http";
import type { Writable } from "node:stream";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { Type, type Static } from "@sinclair/typebox";
import { AppError } from "../../domain/errors.ts";
import type { Outcome } from "../../domain/types.ts";
import type { HttpDeps } from "../deps.ts";

const StreamQuery = Type.Object(
  {
    outcome: Type.Optional(Type.String({ enum: ["YES", "NO"], default: "YES" })),
    depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 20, description: "Levels per side" })),
    side: Type.Optional(Type.String({ enum: ["buy", "sell"], default: "buy", description: "The order side to rank for, as in GET /v1/prices/{event_id}" })),
  },
  { additionalProperties: false },
);

const HEARTBEAT_MS = 15_000;
/** How often an open stream's caller is authenticated again, so that a key revoked or a session signed out ends its streams too. */
const RECHECK_MS = 1_000;

/** Who a request's key or session says is calling; throws (or rejects with) why it may not. */
export type PrincipalOf = (req: FastifyRequest) => FastifyRequest["principal"] | Promise<FastifyRequest["principal"]>;

/**
 * GET /v1/stream/prices/{event_id}: server-sent events carrying the merged price record, sent at once
 * and then whenever it changes (looked at every ~500 ms). Server-sent events rather than a WebSocket
 * because the flow is one-way, they pass through any HTTP proxy, and a browser's EventSource
 * reconnects by itself and sends the session cookie. The caller is checked again every RECHECK_MS.
 */
export function registerPriceStream(app: FastifyInstance, deps: HttpDeps, principalOf: PrincipalOf, intervalMs: number): void {
  const open = new Set<() => void>();
  // Fastify's close waits for every connection to end, and a stream never does by itself.
  app.addHook("preClose", async () => {
    for (const end of open) end();
  });

  app.get<{ Params: { event_id: string }; Querystring: Static<typeof StreamQuery> }>(
    "/v1/stream/prices/:event_id",
    {
      config: { auth: { scope: "read", signed: false } },
      schema: {
        summary: "Live merged order book of an event (server-sent events)",
        description:
          "text/event-stream. Each `price` event's data is the PriceRecord of GET /v1/prices/{event_id}, sent on connect and whenever the merged book changes (checked about every 500 ms); a comment line every 15 s keeps proxies from closing an idle stream. Authenticate with X-API-Key (read scope) or, from the web terminal, the session cookie; the caller is checked again every second, and a key revoked or a session signed out gets an `error` event (data: the error as any request's) and the stream ends.",
        tags: ["markets"],
        security: [{ apiKey: [] }, { session: [] }],
        params: Type.Object({ event_id: Type.String({ minLength: 1, maxLength: 128 }) }),
        querystring: StreamQuery,
        response: {
          200: { description: "An event stream of `event: price` records", content: { "text/event-stream": { schema: { $ref: "PriceRecord#" } } } },
          401: { $ref: "Error#" },
          404: { $ref: "Error#" },
        },
      },
    },
    async (req, reply) => {
      const outcome = (req.query.outcome ?? "YES") as Outcome;
      const depth = req.query.depth ?? 20;
      const side = (req.query.side ?? "buy") as "buy" | "sell";
      const read = () => JSON.stringify(deps.prices(req.params.event_id, outcome, depth, side));
      const first = read(); // an unknown event throws here, and is answered as a normal 404

      reply.hijack();
      const res = reply.raw;
      // Hijacked, the reply sends none of the headers set on it so far: the rate limit's are among them.
      res.writeHead(200, {
        ...(reply.getHeaders() as OutgoingHttpHeaders),
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache, no-transform",
        connection: "keep-alive",
        "x-accel-buffering": "no",
        "x-request-id": req.id,
      });
      // HEAD (Fastify's, beside the GET) gets the stream's headers only: Node drops what a HEAD's body would be.
      if (req.method === "HEAD") return void res.end();
      const end = sendPrices(res, read, first, intervalMs, (err) => req.log.error({ err }, "price stream read failed"));
      // A caller refused now is told why in an `error` event before the stream ends (an EventSource then
      // reconnects and is refused at once); the store failing to answer ends it without one.
      const recheck = setInterval(() => {
        new Promise((resolve) => resolve(principalOf(req))).catch((err: unknown) => {
          if (res.writableEnded) return;
          if (err instanceof AppError) res.write(`event: error\ndata: ${JSON.stringify({ error: { code: err.code, message: err.message, request_id: req.id } })}\n\n`);
          else req.log.warn({ err }, "a price stream's caller could not be checked again; the stream ends");
          stop();
        });
      }, RECHECK_MS);
      const stop = () => {
        clearInterval(recheck);
        open.delete(stop);
        end();
      };
      open.add(stop);
      req.raw.on("close", stop);
    },
  );
}

/**
 * Writes `first` and then each record `read` answers that differs from the last one sent, looked at every
 * `intervalMs`, with a comment line every HEARTBEAT_MS; answers the function that stops it and ends `res`.
 * While the client reads slower than the records come (`res` holds more than its buffer's worth unsent),
 * nothing more is written: once it has caught up it gets the record as it is then, so what is held for
 * a client that stopped reading stays one buffer and one record. A read that throws is told to
 * `onError` and ends the stream.
 */
export function sendPrices(res: Writable, read: () => string, first: string, intervalMs: number, onError: (err: unknown) => void): () => void {
  let last = first;
  res.write(`retry: 2000\nevent: price\ndata: ${first}\n\n`);
  const tick = setInterval(() => {
    if (res.writableNeedDrain) return;
    try {
      const next = read();
      if (next !== last) res.write(`event: price\ndata: ${next}\n\n`);
      last = next;
    } catch (err) {
      onError(err);
      end();
    }
  }, intervalMs);
  const heartbeat = setInterval(() => {
    if (!res.writableNeedDrain) res.write(": keep-alive\n\n");
  }, HEARTBEAT_MS);
  const end = () => {
    clearInterval(tick);
    clearInterval(heartbeat);
    res.end();
  };
  return end;
}
