import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AppError } from "../domain/errors.ts";
import type { Redis } from "../redis.ts";
import { registerRateLimits, type ApiBudget, type RateLimit } from "./rate-limit.ts";

const byKey: RateLimit = { max: 3, windowMs: 60_000, key: (req) => String(req.headers["x-api-key"]) };

let budget: ApiBudget | undefined;

async function server(redis?: Redis): Promise<FastifyInstance> {
  const app = Fastify();
  app.setErrorHandler((err: AppError, _req, reply) => reply.status(err.status).headers(err.headers ?? {}).send({ code: err.code, details: err.details }));
  budget = registerRateLimits(app, byKey, redis);
  app.get("/counted", async () => ({ ok: true }));
  app.get("/free", { config: { rateLimit: false } }, async () => ({ ok: true }));
  app.post("/signin", { config: { rateLimit: { max: 1, windowMs: 60_000, key: () => "one address" } } }, async () => ({ ok: true }));
  await app.ready();
  return app;
}

const get = (app: FastifyInstance, url: string, key = "a") => app.inject({ method: "GET", url, headers: { "x-api-key": key } });

// The budgets' windows and their headers' seconds read Date.now(): on the real clock, a second passing
// between a test's requests (a loaded machine) would make its 60 a 59.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("registerRateLimits", () => {
  it("lets a key spend its budget, then refuses it with 429, Retry-After and the budget's headers; other keys keep theirs", async () => {
    const app = await server();
    for (let i = 1; i <= 3; i++) {
      const res = await get(app, "/counted");
      expect(res.statusCode).toBe(200);
      expect(res.headers).toMatchObject({ "x-ratelimit-limit": "3", "x-ratelimit-remaining": String(3 - i), "x-ratelimit-reset": "60" });
    }
    const refused = await get(app, "/counted");
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ code: "rate_limited", details: { retry_after_seconds: 60 } });
    expect(refused.headers).toMatchObject({ "retry-after": "60", "x-ratelimit-remaining": "0" });
    expect((await get(app, "/counted", "b")).statusCode).toBe(200);
  });

  it("gives the budget back when its window ends", async () => {
    const app = await server();
    for (let i = 0; i < 3; i++) await get(app, "/counted");
    vi.advanceTimersByTime(59_000);
    const late = await get(app, "/counted");
    expect(late.statusCode).toBe(429);
    expect(late.headers["retry-after"]).toBe("1");
    vi.advanceTimersByTime(1_000);
    expect((await get(app, "/counted")).statusCode).toBe(200);
  });

  it("counts a route with a budget of its own apart, and a route without one not at all", async () => {
    const app = await server();
    for (let i = 0; i < 5; i++) expect((await get(app, "/free")).headers["x-ratelimit-limit"]).toBeUndefined();
    expect((await app.inject({ method: "POST", url: "/signin" })).statusCode).toBe(200);
    expect((await app.inject({ method: "POST", url: "/signin" })).statusCode).toBe(429);
    // Neither touched the API-wide budget.
    expect((await get(app, "/counted")).headers["x-ratelimit-remaining"]).toBe("2");
  });

  it("lets requests through while Redis fails", async () => {
    const failing = {
      defineCommand: () => undefined,
      crossfillSpend: () => Promise.reject(new Error("Connection is closed.")),
    } as unknown as Redis;
    const app = await server(failing);
    for (let i = 0; i < 5; i++) expect((await get(app, "/counted")).statusCode).toBe(200);
  });

  it("gives a request answered outside the hooks the same budget, spending none of it once it is spent", async () => {
    const app = await server();
    expect((await get(app, "/counted")).statusCode).toBe(200);
    expect(budget!.spend("a")).toEqual(["x-ratelimit-limit", "3", "x-ratelimit-remaining", "1", "x-ratelimit-reset", "60"]);
    expect((await get(app, "/counted")).headers["x-ratelimit-remaining"]).toBe("0");
    expect(budget!.spend("a")).toBeUndefined();
    const refused = await get(app, "/counted");
    expect(refused.statusCode).toBe(429);
    expect(budget!.spend("b")).toEqual(["x-ratelimit-limit", "3", "x-ratelimit-remaining", "2", "x-ratelimit-reset", "60"]);
  });

  it("has no budget to give outside the hooks when counted on Redis, which needs a round trip", async () => {
    await server({ defineCommand: () => undefined } as unknown as Redis);
    expect(budget).toBeUndefined();
  });
});
