import type { FastifyPluginAsync } from "fastify";
import type { Static } from "@sinclair/typebox";
import type { HttpDeps } from "../deps.ts";
import { registerFaucetRoute } from "./faucet.ts";
import { registerKeyRoutes } from "./key-routes.ts";
import { quoteView } from "./quote.ts";
import { Quote, QuoteQuery } from "./schemas.ts";
import { registerSessionRoutes } from "./session-routes.ts";
import type { ActiveSession, Sessions } from "./session.ts";
import { registerTerminalAssets } from "./static.ts";
import { registerPriceStream, type PrincipalOf } from "./stream.ts";

declare module "fastify" {
  interface FastifyRequest {
    terminalSession: ActiveSession | undefined;
  }
  interface FastifyContextConfig {
    /** A route of the web terminal: it needs a session, and "write" routes also the session's CSRF token. */
    session?: "read" | "write";
  }
}

/**
 * The web terminal: its session, key and trading routes, the quote and price-stream additions to
 * the API (which keys may use too), and the built single-page app at `/`.
 */
export const terminalRoutes =
  (deps: HttpDeps, sessions: Sessions, principalOf: PrincipalOf): FastifyPluginAsync =>
  async (app) => {
    app.decorateRequest("terminalSession", undefined);
    // onRequest, before the body is read: a request without a session or token is refused unparsed.
    app.addHook("onRequest", async (req) => {
      const needs = req.routeOptions.config.session;
      if (needs === undefined) return;
      req.terminalSession = await sessions.require(req);
      if (needs === "write") sessions.checkCsrf(req, req.terminalSession);
    });

    registerSessionRoutes(app, deps, sessions);
    registerKeyRoutes(app, deps, sessions);
    registerFaucetRoute(app, deps);
    registerPriceStream(app, deps, principalOf, deps.terminal.streamIntervalMs ?? 500);

    app.get<{ Querystring: Static<typeof QuoteQuery> }>(
      "/v1/quote",
      {
        config: { auth: { scope: "read", signed: false } },
        schema: {
          summary: "Plan an order on the current books without placing it: legs per venue, average price, fees",
          description:
            "Runs the same router as POST /v1/order on the books as they are now; nothing is locked or sent. The order is planned again when it is submitted, on the books of that moment. A request the router would refuse answers its code (slippage_exceeded, insufficient_liquidity, order_too_small) with 422, or venue_unavailable with 503 when no venue quotes the event now.",
          tags: ["orders"],
          security: [{ apiKey: [] }, { session: [] }],
          querystring: QuoteQuery,
          response: { 200: Quote, 400: { $ref: "Error#" }, 401: { $ref: "Error#" }, 403: { $ref: "Error#" }, 404: { $ref: "Error#" }, 422: { $ref: "Error#" }, 503: { $ref: "Error#" } },
        },
      },
      async (req) => {
        const { intent, plan } = await deps.orders.quote({ ...req.query, side: req.query.side ?? "buy" });
        return quoteView(intent, plan, deps.terminal.clock.now());
      },
    );

    await registerTerminalAssets(app, deps.terminal.assetsDir);
  };

export type { TerminalDeps } from "./deps.ts";
