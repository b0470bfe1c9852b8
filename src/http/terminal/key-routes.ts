import type { FastifyInstance } from "fastify";
import { Type, type Static } from "@sinclair/typebox";
import { AppError } from "../../domain/errors.ts";
import type { ApiKeyRecord } from "../../store/store.ts";
import type { HttpDeps } from "../deps.ts";
import { SIGN_IN_LIMIT } from "./session-routes.ts";
import { ApiKeyInfo, NewKey, NewKeyRequest } from "./schemas.ts";
import type { Sessions } from "./session.ts";

const errors = { 400: { $ref: "Error#" }, 401: { $ref: "Error#" }, 403: { $ref: "Error#" } };
const security = [{ session: [] }];

export function keyView(k: ApiKeyRecord) {
  return {
    api_key: k.apiKey,
    name: k.name,
    scopes: k.scopes,
    ip_allowlist: k.ipAllowlist,
    withdrawal_allowlist: k.withdrawalAllowlist,
    created_at: k.createdAt,
    last_used_at: k.lastUsedAt,
    revoked_at: k.revokedAt,
  };
}

/** Settings → Developer → API Keys: the signed-in account's keys. Session only: a key cannot mint keys. */
export function registerKeyRoutes(app: FastifyInstance, deps: HttpDeps, sessions: Sessions): void {
  app.get(
    "/v1/keys",
    {
      config: { session: "read" },
      schema: {
        summary: "The signed-in account's API keys, oldest first (secrets are never returned)",
        tags: ["keys"],
        security,
        response: { 200: Type.Object({ data: Type.Array(ApiKeyInfo) }), 401: { $ref: "Error#" } },
      },
    },
    async (req) => ({ data: (await deps.store.listApiKeys(req.terminalSession!.record.accountId)).map(keyView) }),
  );

  app.post<{ Body: Static<typeof NewKeyRequest> }>(
    "/v1/keys",
    {
      config: { session: "write" },
      schema: {
        summary: "Generate a new API key; the secret is in this response and nowhere else",
        description: `A key with the withdraw scope pays money out without the password, so making one asks for the account's password again, as a withdrawal from the session does (the same ${SIGN_IN_LIMIT.max} tries a minute per account, then rate_limited with Retry-After).`,
        tags: ["keys"],
        security,
        body: NewKeyRequest,
        response: { 201: NewKey, ...errors },
      },
    },
    async (req, reply) => {
      const accountId = req.terminalSession!.record.accountId;
      if (req.body.scopes.includes("withdraw")) {
        const { password } = req.body;
        if (password === undefined) {
          throw new AppError("invalid_request", "A key that can withdraw needs the account's password again.", { fields: { password: "is required with the withdraw scope" } });
        }
        await sessions.confirmPassword(accountId, password, "The password is wrong: no key was made.");
      }
      const { apiSecret, record } = await deps.terminal.createApiKey({
        accountId,
        name: req.body.name,
        scopes: req.body.scopes,
        ipAllowlist: req.body.ip_allowlist ?? null,
        withdrawalAllowlist: req.body.withdrawal_allowlist ?? null,
      });
      reply.header("cache-control", "no-store");
      return reply.status(201).send({ ...keyView(record), api_secret: apiSecret });
    },
  );

  app.delete<{ Params: { api_key: string } }>(
    "/v1/keys/:api_key",
    {
      config: { session: "write" },
      schema: {
        summary: "Revoke an API key; requests with it are refused (key_revoked) from the next one on",
        tags: ["keys"],
        security,
        params: Type.Object({ api_key: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: ApiKeyInfo, ...errors, 404: { $ref: "Error#" } },
      },
    },
    async (req) => {
      const accountId = req.terminalSession!.record.accountId;
      const key = await deps.store.apiKey(req.params.api_key);
      // Another account's key is answered exactly like a missing one, so keys cannot be probed.
      if (!key || key.accountId !== accountId) throw new AppError("key_not_found", `No API key ${req.params.api_key} on this account.`);
      await deps.store.revokeApiKey(key.apiKey, new Date(deps.terminal.clock.now()).toISOString());
      return keyView((await deps.store.apiKey(key.apiKey))!);
    },
  );
}
