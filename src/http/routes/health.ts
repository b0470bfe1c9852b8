import type { FastifyPluginAsync } from "fastify";
import type { HttpDeps } from "../deps.ts";

export const healthRoutes =
  (deps: HttpDeps): FastifyPluginAsync =>
  async (app) => {
    app.get(
      "/v1/health",
      // Exempt from the rate limit: load balancers and monitors poll it.
      { config: { rateLimit: false }, schema: { summary: "Service, chain and venue health (no authentication)", tags: ["meta"], response: { 200: { $ref: "Health#" } } } },
      async () => deps.health(),
    );
  };
