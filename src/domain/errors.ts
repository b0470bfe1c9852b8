/** The one catalog of error codes: every error a client can see is one of these. */
export const ERRORS = {
  invalid_request: { status: 400, message: "The request is invalid." },
  invalid_json: { status: 400, message: "The request body is not valid JSON." },
  payload_too_large: { status: 413, message: "The request body is too large." },
  unsupported_media_type: { status: 415, message: "Send the body as application/json." },
  headers_too_large: { status: 431, message: "The request's URL and headers are too large." },
  missing_api_key: { status: 401, message: "Send your API key in the X-API-Key header." },
  invalid_api_key: { status: 401, message: "The API key is not known." },
  missing_signature: { status: 401, message: "This request moves funds: send X-Timestamp and X-Signature." },
  invalid_signature: { status: 401, message: "The signature does not match the request." },
  stale_timestamp: { status: 401, message: "X-Timestamp is more than 30 seconds away from the server's clock." },
  invalid_timestamp: { status: 401, message: "X-Timestamp must be Unix time in seconds." },
  replayed_request: { status: 401, message: "This signed request was already received: to send it again, sign it again with a new X-Timestamp (the same client_order_id or client_withdrawal_id answers its order or withdrawal)." },
  not_signed_in: { status: 401, message: "Sign in first: there is no session, or it has expired." },
  invalid_credentials: { status: 401, message: "The email or the password is wrong." },
  insufficient_scope: { status: 403, message: "The API key lacks the scope this request needs." },
  key_revoked: { status: 403, message: "The API key has been revoked." },
  ip_not_allowed: { status: 403, message: "The API key may not be used from this address." },
  withdrawal_address_not_allowed: { status: 403, message: "The API key may not withdraw to this address: it is not on the key's withdrawal allowlist." },
  csrf_failed: { status: 403, message: "The request's X-CSRF-Token header is missing or not the session's; reload the page and try again." },
  not_found: { status: 404, message: "No such route." },
  unknown_event: { status: 404, message: "No such event." },
  order_not_found: { status: 404, message: "No such order." },
  key_not_found: { status: 404, message: "No such API key." },
  withdrawal_not_found: { status: 404, message: "No such withdrawal." },
  method_not_allowed: { status: 405, message: "This method is not allowed on this path." },
  request_timeout: { status: 408, message: "The request did not arrive whole in time; the connection is closed." },
  idempotency_conflict: { status: 409, message: "This idempotency key was used with a different request." },
  email_taken: { status: 409, message: "An account with this email already exists." },
  insufficient_funds: { status: 422, message: "The vault's available balance is lower than the amount." },
  withdrawal_refused: { status: 422, message: "The USDC token refused to pay this address (USDC's blacklist, or USDC paused); nothing was paid." },
  insufficient_position: { status: 422, message: "The account holds fewer unlocked shares of this outcome than the sell asks for." },
  slippage_exceeded: { status: 422, message: "The order cannot be filled within max_slippage." },
  insufficient_liquidity: { status: 422, message: "The venues do not hold enough liquidity for this order." },
  market_closed: { status: 422, message: "The market is not open for trading." },
  order_too_small: { status: 422, message: "The amount is below the smallest order any venue accepts." },
  rate_limited: { status: 429, message: "Too many requests." },
  venue_unavailable: { status: 503, message: "No venue can take this order now." },
  all_venues_failed: { status: 502, message: "Every venue refused or failed the order; the funds were released." },
  chain_unavailable: { status: 503, message: "The chain could not be reached; nothing was changed. Try again." },
  shutting_down: { status: 503, message: "The server is stopping: send the request again, to another instance or to this one once it is back." },
  order_interrupted: { status: 503, message: "The order ended before it was settled: nothing was charged or sold, and any USDC locked or shares escrowed for it were given back." },
  internal: { status: 500, message: "Something went wrong on our side." },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message ?? ERRORS[code].message);
    this.name = "AppError";
    this.status = ERRORS[code].status;
  }
}

/**
 * `invalid_request` naming each offending field of `context` (the body, the query, an order) in its sentence and
 * in details.fields. A field whose name is empty (`?=1`, `{"":1}`) is written `""`, so the sentence still names it.
 */
export function invalidFields(context: string, fields: Record<string, string>): AppError {
  const list = Object.entries(fields).map(([k, v]) => `${k === "" ? '""' : k} ${v}`).join("; ");
  return new AppError("invalid_request", `Invalid ${context}: ${list}.`, { fields });
}

/** A list's `cursor` that is not one the server returned: the same refusal on every list. */
export function invalidCursor(): AppError {
  return invalidFields("querystring", { cursor: "is not one this server returned" });
}
