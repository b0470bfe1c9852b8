import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { verifyPassword } from "../../accounts/password.ts";
import { AppError } from "../../domain/errors.ts";
import type { Clock } from "../../domain/types.ts";
import type { SessionRecord, Store } from "../../store/store.ts";

export const SESSION_COOKIE = "crossfill_session";
export const CSRF_HEADER = "x-csrf-token";
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** The session id is a bearer secret: only its hash is stored, so the table alone opens no session. */
export function sessionIdHash(id: string): string {
  return createHash("sha256").update(id).digest("hex");
}

/**
 * The CSRF token is derived from the session id, which only the HttpOnly cookie carries: a page of
 * another origin can make the browser send the cookie, but cannot read the token to put it in a
 * header. Derived rather than stored, so it needs no column and dies with the session.
 */
export function csrfToken(sessionId: string): string {
  return createHash("sha256").update(`csrf\n${sessionId}`).digest("base64url");
}

export interface ActiveSession {
  record: SessionRecord;
  csrfToken: string;
}

export class Sessions {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** Spends one of an account's tries at its password given again (handlerBudget). */
    private readonly passwordTries: (accountId: string) => Promise<void>,
  ) {}

  /** Opens a session for the account and sets its cookie on the reply. */
  async open(req: FastifyRequest, reply: FastifyReply, accountId: string): Promise<ActiveSession> {
    const id = randomBytes(32).toString("base64url");
    const now = this.clock.now();
    const record: SessionRecord = {
      idHash: sessionIdHash(id),
      accountId,
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + SESSION_TTL_MS).toISOString(),
    };
    // Expired rows would otherwise only pile up; sign-in is rare enough to carry the sweep.
    await this.store.purgeSessions(record.createdAt);
    await this.store.insertSession(record);
    reply.header("set-cookie", sessionCookieHeader(req, id, SESSION_TTL_MS / 1000));
    return { record, csrfToken: csrfToken(id) };
  }

  /** The live session of the request's cookie, or not_signed_in. */
  async require(req: FastifyRequest): Promise<ActiveSession> {
    const id = sessionCookie(req);
    if (id === undefined || !SESSION_ID.test(id)) throw new AppError("not_signed_in");
    const record = await this.store.session(sessionIdHash(id), new Date(this.clock.now()).toISOString());
    if (record === undefined) throw new AppError("not_signed_in");
    return { record, csrfToken: csrfToken(id) };
  }

  /** Refuses a state-changing call whose X-CSRF-Token header is not the session's token. */
  checkCsrf(req: FastifyRequest, session: ActiveSession): void {
    const sent = req.headers[CSRF_HEADER];
    if (typeof sent !== "string" || !sameString(sent, session.csrfToken)) throw new AppError("csrf_failed");
  }

  /**
   * Checks the account's password, given again for what a session alone must not do: pay money out, or
   * make a key that can. Its tries are limited per account, as sign-in's are per address, lest a stolen
   * session cookie guess it; `refusal` says what a wrong one did not do.
   */
  async confirmPassword(accountId: string, password: string, refusal: string): Promise<void> {
    await this.passwordTries(accountId);
    // Read afresh: the account as deps.account caches it may predate a change of password.
    const hash = (await this.store.accountById(accountId))?.passwordHash ?? null;
    if (hash === null || !(await verifyPassword(password, hash))) throw new AppError("invalid_credentials", refusal);
  }

  async close(reply: FastifyReply, req: FastifyRequest, session: ActiveSession): Promise<void> {
    await this.store.deleteSession(session.record.idHash);
    reply.header("set-cookie", sessionCookieHeader(req, "", 0));
  }
}

/**
 * The session cookie the request sent, if any. The one cookie the service reads, taken from the Cookie
 * header where a request has one, not parsed into a map on every request by a hook.
 */
export function sessionCookie(req: FastifyRequest): string | undefined {
  const header = req.headers.cookie;
  if (header === undefined) return undefined;
  for (const pair of header.split(";")) {
    const eq = pair.indexOf("=");
    if (eq !== -1 && pair.slice(0, eq).trim() === SESSION_COOKIE) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

/** Sets the session cookie to `id` for `maxAgeSeconds`, or (with 0) clears it. */
function sessionCookieHeader(req: FastifyRequest, id: string, maxAgeSeconds: number): string {
  // Secure only over TLS (directly, or behind a proxy when TRUST_PROXY is set): a Secure cookie sent
  // over plain http://127.0.0.1 would never come back, and the embedded default serves plain HTTP.
  const attributes = [`Max-Age=${maxAgeSeconds}`, ...(maxAgeSeconds === 0 ? ["Expires=Thu, 01 Jan 1970 00:00:00 GMT"] : []), "Path=/", "HttpOnly", ...(req.protocol === "https" ? ["Secure"] : []), "SameSite=Strict"];
  return [`${SESSION_COOKIE}=${id}`, ...attributes].join("; ");
}

function sameString(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
