import type { FastifyPluginAsync } from "fastify";
import type { HttpDeps } from "../deps.ts";

export const accountRoutes =
  (deps: HttpDeps): FastifyPluginAsync =>
  async (app) => {
    app.get(
      "/v1/account",
      {
        config: { auth: { scope: "read", signed: false } },
        schema: {
          summary: "The key owner's vault balance and positions",
          tags: ["account"],
          security: [{ apiKey: [] }, { session: [] }],
          response: { 200: { $ref: "Account#" } },
        },
      },
      async (req) => deps.accountView(await deps.account(req.principal!.accountId)),
    );
  };
