import type { FastifyInstance } from "fastify";
import type { Static } from "@sinclair/typebox";
import { findOrCreateAccount, hasEmailForm, refuseHiddenCharacters } from "../../accounts/service.ts";
import { AppError } from "../../domain/errors.ts";
import type { AccountRecord } from "../../store/store.ts";
import type { HttpDeps } from "../deps.ts";
import { DECOY_HASH, hashPassword, verifyPassword } from "../../accounts/password.ts";
import { Credentials, SessionInfo } from "./schemas.ts";
import type { ActiveSession, Sessions } from "./session.ts";
import type { RateLimit } from "../rate-limit.ts";
import { addressNetwork } from "../../auth/ip.ts";

const errors = { 400: { $ref: "Error#" }, 401: { $ref: "Error#" }, 403: { $ref: "Error#" } };
/**
 * Guesses per address per window; a person mistyping stays far below it, a password sprayer does not.
 * By address whatever the request carries: an API key header of its own choosing must not buy a fresh budget.
 */
export const SIGN_IN_LIMIT: RateLimit = { max: 10, windowMs: 60_000, key: (req) => `ip:${addressNetwork(req.ip)}` };

/** Sign up, sign in, the current session, sign out. */
export function registerSessionRoutes(app: FastifyInstance, deps: HttpDeps, sessions: Sessions): void {
  const view = (account: AccountRecord, s: ActiveSession) => ({
    account_id: account.id,
    email: account.email,
    csrf_token: s.csrfToken,
    expires_at: s.record.expiresAt,
  });

  app.post<{ Body: Static<typeof Credentials> }>(
    "/v1/session/signup",
    {
      config: { rateLimit: SIGN_IN_LIMIT },
      schema: {
        summary: "Create an account with email and password, and sign in",
        description: "Sets the HttpOnly session cookie. The account is the one API keys and the CLI's --account <email> name.",
        tags: ["session"],
        body: Credentials,
        response: { 201: SessionInfo, ...errors, 409: { $ref: "Error#" }, 429: { $ref: "Error#" } },
      },
    },
    async (req, reply) => {
      const email = newEmail(req.body.email);
      const passwordHash = await hashPassword(req.body.password);
      const { account, created } = await findOrCreateAccount(deps.store, email, deps.terminal.encryptWalletKey, { passwordHash }).catch(
        async (err: unknown) => {
          // Two sign-ups of one email at once: the loser's insert hits the unique index.
          if ((await deps.store.accountByEmail(email)) !== undefined) return { account: undefined, created: false };
          throw err;
        },
      );
      // An existing account, even one the CLI made without a password, is never claimed by whoever signs up first.
      if (!created || account === undefined) throw new AppError("email_taken", `An account for ${email} already exists: sign in instead.`);
      const funded = await deps.account(account.id);
      const session = await sessions.open(req, reply, funded.id);
      return reply.status(201).send(view(funded, session));
    },
  );

  app.post<{ Body: Static<typeof Credentials> }>(
    "/v1/session/signin",
    {
      config: { rateLimit: SIGN_IN_LIMIT },
      schema: {
        summary: "Sign in with email and password",
        description: `Sets the HttpOnly session cookie. At most ${SIGN_IN_LIMIT.max} attempts a minute from one address; more answer rate_limited with Retry-After.`,
        tags: ["session"],
        body: Credentials,
        response: { 200: SessionInfo, ...errors, 429: { $ref: "Error#" } },
      },
    },
    async (req, reply) => {
      const account = await deps.store.accountByEmail(normalEmail(req.body.email));
      const hash = account?.passwordHash ?? (await DECOY_HASH);
      const ok = await verifyPassword(req.body.password, hash);
      if (!account?.passwordHash || !ok) throw new AppError("invalid_credentials");
      const session = await sessions.open(req, reply, account.id);
      return view(await deps.account(account.id), session);
    },
  );

  app.get(
    "/v1/session",
    {
      config: { session: "read" },
      schema: {
        summary: "The signed-in account and the session's CSRF token",
        tags: ["session"],
        security: [{ session: [] }],
        response: { 200: SessionInfo, 401: { $ref: "Error#" } },
      },
    },
    async (req, reply) => {
      // It carries the session's CSRF token: no cache keeps it.
      reply.header("cache-control", "no-store");
      return view(await deps.account(req.terminalSession!.record.accountId), req.terminalSession!);
    },
  );

  app.delete(
    "/v1/session",
    {
      config: { session: "write" },
      schema: {
        summary: "Sign out: end the session and clear its cookie",
        tags: ["session"],
        security: [{ session: [] }],
        response: { 204: { type: "null", description: "Signed out" }, ...errors },
      },
    },
    async (req, reply) => {
      await sessions.close(reply, req, req.terminalSession!);
      return reply.status(204).send();
    },
  );
}

/**
 * The email as accounts are stored under it (trimmed, lower-cased), refused only if it is no address at all. A hidden
 * character is not refused here: an account taken under one before they were refused signs in with it, and one that no
 * account has is answered as any such email, invalid_credentials, not told apart from one an account has.
 */
function normalEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (!hasEmailForm(email)) throw new AppError("invalid_request", "Enter a valid email address.", { fields: { email: "is not an email address" } });
  return email;
}

/** A new account's email: also refused holding a control or invisible formatting character. */
function newEmail(raw: string): string {
  const email = normalEmail(raw);
  refuseHiddenCharacters(email);
  return email;
}
