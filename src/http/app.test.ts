import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterEach, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { openSqliteStore } from "../store/sqlite/sqlite-store.ts";
import { buildApp } from "./app.ts";
import type { HttpDeps } from "./deps.ts";

let app: FastifyInstance | undefined;
let assetsDir: string | undefined;
afterEach(async () => {
  await app?.close();
  if (assetsDir !== undefined) rmSync(assetsDir, { recursive: true, force: true });
});

it("sends an idempotent retry's error answer when recording its signature fails, and logs the failure", async () => {
  assetsDir = mkdtempSync(join(tmpdir(), "crossfill-app-"));
  writeFileSync(join(assetsDir, "index.html"), "<!doctype html><title>crossfill</title>");
  const clock = { now: () => Date.now() };
  const lines: { level: number; msg: string }[] = [];
  const log = pino({ level: "info" }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(chunk.toString())), done()) }));
  const spent: string[] = [];
  const deps = {
    version: "test",
    trustProxy: false,
    requestTimeoutMs: 30_000,
    store: await openSqliteStore(":memory:", { clock }),
    authenticate: () => ({ apiKey: "ck_1", accountId: "acc_1", scopes: ["trade"], spendSignature: () => (spent.push("ck_1"), Promise.reject(new Error("replay cache down"))) }),
    metrics: { request: () => undefined } as Partial<HttpDeps["metrics"]> as HttpDeps["metrics"],
    rateLimit: { perMinute: 0, redis: undefined },
    terminal: { clock, assetsDir } as Partial<HttpDeps["terminal"]> as HttpDeps["terminal"],
  } as Partial<HttpDeps> as HttpDeps;
  app = await buildApp(deps, log);
  await app.listen({ port: 0, host: "127.0.0.1" });
  const res = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1/order`, { method: "POST", headers: { "x-api-key": "ck_1", "content-type": "text/plain" }, body: "{}" });
  expect(res.status).toBe(415);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unsupported_media_type");
  expect(spent).toEqual(["ck_1"]);
  expect(lines.filter((l) => l.level === 50).map((l) => l.msg)).toEqual([expect.stringMatching(/idempotent retry's signature failed/)]);
});
