import { Type, type Static } from "@sinclair/typebox";
import type { FastifyPluginAsync } from "fastify";
import { activityView } from "../../funds/view.ts";
import type { HttpDeps } from "../deps.ts";
import { ListQuery, Page } from "../schemas.ts";

const ActivityQuery = Type.Object({ ...ListQuery }, { additionalProperties: false });

export const accountRoutes =
  (deps: HttpDeps): FastifyPluginAsync =>
  async (app) => {
    app.get(
      "/v1/account",
      {
        config: { auth: { scope: "read", signed: false } },
        schema: {
          summary: "The key owner's vault balance, deposit address and positions",
          tags: ["account"],
          security: [{ apiKey: [] }, { session: [] }],
          response: { 200: { $ref: "Account#" } },
        },
      },
      async (req) => deps.accountView(await deps.account(req.principal!.accountId)),
    );

    app.get<{ Querystring: Static<typeof ActivityQuery> }>(
      "/v1/activity",
      {
        config: { auth: { scope: "read", signed: false } },
        schema: {
          summary: "Every movement of the key owner's money, newest first, each with its transaction",
          tags: ["account"],
          security: [{ apiKey: [] }, { session: [] }],
          querystring: ActivityQuery,
          response: { 200: Page("Activity"), 400: { $ref: "Error#" }, 401: { $ref: "Error#" }, 403: { $ref: "Error#" } },
        },
      },
      async (req) => {
        const page = await deps.store.activity(req.principal!.accountId, { limit: req.query.limit ?? 50, cursor: req.query.cursor ?? null });
        return { data: page.data.map(activityView), next_cursor: page.nextCursor };
      },
    );
  };
