import { createHash, timingSafeEqual } from "node:crypto";
import { AppError } from "../domain/errors.ts";
import type { Clock, Scope } from "../domain/types.ts";
import type { ApiKeyRecord, Store } from "../store/store.ts";
import { canonicalString, decodeSignature, hmacBytes } from "./hmac.ts";
import { ipAllowed } from "./ip.ts";
import type { ReplayCache } from "./replay-cache.ts";
import type { KeyCache } from "./key-cache.ts";

export interface AuthRequest {
  method: string;
  /** Request target exactly as sent: path and query string. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer | undefined;
  ip: string;
}

export interface AuthNeeds {
  scope: Scope;
  signed: boolean;
  /**
   * Whether a repeat of this signature may reach the route, given the raw body it signs. A route
   * supplies it when it answers a repeat of those bytes with what the first copy got (an idempotent
   * retry): refusing the repeat would only keep a client's quick retry from its own result. Such a
   * signature is recorded in the replay cache only when its answer is an error (Principal.spendSignature),
   * which the route does not keep for good: a repeat of it is then refused.
   */
  idempotentReplay?: (rawBody: Buffer | undefined) => boolean;
}

export interface Principal {
  apiKey: string;
  accountId: string;
  scopes: Scope[];
  /**
   * Of a signed request let through as an idempotent retry: records its signature in the replay cache, as any
   * other signed request's, for the server to call before an error answer leaves (a copy is then refused).
   */
  spendSignature?: () => Promise<boolean>;
}

export interface AuthDeps {
  store: Store;
  /** The signatures already accepted, shared by every instance. */
  replay: ReplayCache;
  clock: Clock;
  /** Largest accepted distance between X-Timestamp and the server clock, either way. */
  maxSkewSec?: number;
  /** The verified keys, read from the store only when not cached. */
  keys: KeyCache;
  /** Told about failures of work done after the response is decided (recording last use). */
  onBackgroundError?: (err: unknown) => void;
}

export const DEFAULT_MAX_SKEW_SEC = 30;
// The replay record outlives the acceptance window by this much, so that a server whose clock
// lags another instance's by a few seconds still finds the signature.
const REPLAY_MARGIN_MS = 5_000;
// last_used_at is informational; writing it on every request would put a write on every read.
const TOUCH_INTERVAL_MS = 60_000;
const TIMESTAMP = /^\d{1,11}$/;
const MILLISECONDS = /^\d{13}$/;

type Header = { kind: "absent" } | { kind: "many" } | { kind: "one"; value: string };

// Node lower-cases header names; other callers may not, so fall back to a case-blind lookup.
function header(headers: AuthRequest["headers"], name: string): Header {
  let value = headers[name];
  if (value === undefined) {
    const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : headers[key];
  }
  if (value === undefined || value === "") return { kind: "absent" };
  // A repeated header is ambiguous (which one was signed?), so it is never taken. Node joins the copies of
  // a header it does not know with ", ", which no key, timestamp or signature holds.
  if (Array.isArray(value)) return value.length === 0 ? { kind: "absent" } : { kind: "many" };
  return value.includes(",") ? { kind: "many" } : { kind: "one", value };
}

/**
 * Authenticates a request and returns who is calling, or throws the AppError that says why not.
 * The checks run in a fixed order so that each failure has one code, and the cheap and
 * non-secret checks run before the secret is decrypted.
 */
export function authenticate(req: AuthRequest, needs: AuthNeeds, deps: AuthDeps): Principal | Promise<Principal> {
  const apiKey = apiKeyOf(req);
  // A fund-moving request reads its key from the store, so a revocation committed anywhere refuses it at once.
  if (needs.signed) return deps.keys.record(apiKey, true).then((record) => admit(req, needs, record, deps));
  // A cached key is checked without a promise: this runs on every authenticated read.
  const cached = deps.keys.cached(apiKey);
  if (cached !== undefined) return admit(req, needs, cached, deps);
  return deps.keys.record(apiKey).then((record) => admit(req, needs, record, deps));
}

/**
 * authenticate for an unsigned request from the key cache alone: the caller at once, or undefined (having
 * done nothing) when the key is not cached, for authenticate to read it from the store. Throws what
 * authenticate throws.
 */
export function authenticateCached(req: AuthRequest, needs: AuthNeeds & { signed: false }, deps: AuthDeps): Principal | undefined {
  const cached = deps.keys.cached(apiKeyOf(req));
  // Unsigned: admit answers at once.
  return cached === undefined ? undefined : (admit(req, needs, cached, deps) as Principal);
}

/**
 * What authenticate checks before the body, for a request that asks whether to send it (Expect: 100-continue): the key
 * known, not revoked, allowed from the caller's address and of the route's scope, and a signed request's timestamp
 * fresh and its signature sent in a form it takes. Throws what authenticate throws, and records no use of the key: the
 * request may yet be refused for its signature, which covers the body.
 */
export async function checkHeaders(req: AuthRequest, needs: AuthNeeds, deps: AuthDeps): Promise<void> {
  standing(req, needs, await deps.keys.record(apiKeyOf(req), needs.signed));
  if (needs.signed) signatureHeaders(req, deps.clock.now(), deps);
}

function apiKeyOf(req: AuthRequest): string {
  const keyHeader = header(req.headers, "x-api-key");
  if (keyHeader.kind === "absent") throw new AppError("missing_api_key");
  if (keyHeader.kind === "many") throw new AppError("invalid_api_key", "Send exactly one X-API-Key header.");
  return keyHeader.value;
}

/** The key's record when it may make the request: known, not revoked, allowed from the caller's address and of the scope the route needs. */
function standing(req: AuthRequest, needs: AuthNeeds, record: ApiKeyRecord | undefined): ApiKeyRecord {
  if (record === undefined) throw new AppError("invalid_api_key");
  if (record.revokedAt !== null) throw new AppError("key_revoked");
  if (!ipAllowed(record.ipAllowlist, req.ip)) throw new AppError("ip_not_allowed");
  if (!record.scopes.includes(needs.scope)) {
    throw new AppError("insufficient_scope", `This request needs the "${needs.scope}" scope.`, { required: needs.scope });
  }
  return record;
}

function admit(req: AuthRequest, needs: AuthNeeds, found: ApiKeyRecord | undefined, deps: AuthDeps): Principal | Promise<Principal> {
  const record = standing(req, needs, found);
  const now = deps.clock.now();
  const admitted = (spendSignature?: () => Promise<boolean>): Principal => {
    touch(record, now, deps);
    return { apiKey: record.apiKey, accountId: record.accountId, scopes: record.scopes, ...(spendSignature && { spendSignature }) };
  };
  return needs.signed ? verifySignedRequest(req, needs, record, now, deps).then(admitted) : admitted();
}

/** Refuses a signed request that is not genuine, or is a replay; of an idempotent retry, returns what records its signature. */
async function verifySignedRequest(req: AuthRequest, needs: AuthNeeds, record: ApiKeyRecord, now: number, deps: AuthDeps): Promise<(() => Promise<boolean>) | undefined> {
  const { timestamp, tsMs, maxSkewMs, provided } = signatureHeaders(req, now, deps);
  const secret = deps.keys.secretOf(record);
  const expected = hmacBytes(secret, canonicalString(timestamp, req.method, req.url, req.rawBody));
  if (!timingSafeEqual(expected, provided)) throw mismatch(timestamp, req);

  // Keyed on the decoded bytes so that one signature re-sent in another encoding is still a replay.
  const signature = provided.toString("hex");
  const remember = () => deps.replay.remember(record.apiKey, signature, tsMs + maxSkewMs + REPLAY_MARGIN_MS);
  // The same signature is the same bytes: a repeat of an idempotent retry is let through unless an error answered it.
  if (needs.idempotentReplay?.(req.rawBody)) {
    if (await deps.replay.seen(record.apiKey, signature)) throw new AppError("replayed_request");
    return remember;
  }
  if (!(await remember())) throw new AppError("replayed_request");
}

/** A signed request's X-Timestamp and X-Signature, each sent once, the timestamp in seconds and fresh, the signature decoded. */
function signatureHeaders(req: AuthRequest, now: number, deps: AuthDeps): { timestamp: string; tsMs: number; maxSkewMs: number; provided: Buffer } {
  const tsHeader = header(req.headers, "x-timestamp");
  const sigHeader = header(req.headers, "x-signature");
  if (tsHeader.kind === "absent" || sigHeader.kind === "absent") throw new AppError("missing_signature");
  if (tsHeader.kind === "many") throw new AppError("invalid_timestamp", "Send exactly one X-Timestamp header.");
  const timestamp = tsHeader.value;
  if (!TIMESTAMP.test(timestamp)) {
    throw new AppError(
      "invalid_timestamp",
      MILLISECONDS.test(timestamp)
        ? "X-Timestamp looks like milliseconds; send Unix time in seconds."
        : undefined,
      { received: timestamp.slice(0, 32) },
    );
  }
  const tsMs = Number(timestamp) * 1000;
  const maxSkewMs = (deps.maxSkewSec ?? DEFAULT_MAX_SKEW_SEC) * 1000;
  if (Math.abs(now - tsMs) > maxSkewMs) {
    throw new AppError("stale_timestamp", undefined, { server_time: Math.floor(now / 1000) });
  }

  if (sigHeader.kind === "many") throw new AppError("invalid_signature", "Send exactly one X-Signature header.");
  const provided = decodeSignature(sigHeader.value);
  if (provided === undefined) {
    throw new AppError("invalid_signature", "X-Signature must be an HMAC-SHA256 in hex, base64 or base64url.");
  }
  return { timestamp, tsMs, maxSkewMs, provided };
}

/**
 * What the server signed, so that a client signing by hand (curl and openssl) can see which part differs:
 * the timestamp, method and path as received, and the body by its length and SHA-256 (never the expected
 * signature).
 */
function mismatch(timestamp: string, req: AuthRequest): AppError {
  const signed = timestamp + req.method.toUpperCase() + req.url;
  const body = req.rawBody ?? Buffer.alloc(0);
  return new AppError(
    "invalid_signature",
    `The signature does not match the request: send the lowercase hex HMAC-SHA256, keyed with the API secret, of X-Timestamp + METHOD + path with query + raw body, here ${JSON.stringify(signed)} followed by the body's ${body.length} bytes (SHA-256 in details).`,
    { signed, body_bytes: body.length, body_sha256: createHash("sha256").update(body).digest("hex") },
  );
}

/** When each record (the cached object a key's requests share) was last used, as a number: not parsed from its text on every request. */
const usedAt = new WeakMap<ApiKeyRecord, number>();

function touch(record: ApiKeyRecord, now: number, deps: AuthDeps): void {
  const last = usedAt.get(record) ?? (record.lastUsedAt === null ? undefined : Date.parse(record.lastUsedAt));
  if (last !== undefined && now - last < TOUCH_INTERVAL_MS) {
    usedAt.set(record, last);
    return;
  }
  // The cached record too, so that the next minute's requests do not write again.
  usedAt.set(record, now);
  record.lastUsedAt = new Date(now).toISOString();
  deps.store.touchApiKey(record.apiKey, record.lastUsedAt).catch((err: unknown) => deps.onBackgroundError?.(err));
}
