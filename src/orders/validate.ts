import { AppError, invalidFields } from "../domain/errors.ts";
import { formatMicro, parseMicro, type Micro } from "../domain/money.ts";
import { HEADER_CLIENT_ID, isClientId, OUTCOMES, SIDES, STRATEGIES, TIME_IN_FORCE, type OrderIntent } from "../domain/types.ts";

export interface OrderLimits {
  /** Largest amount_usdc one order may carry, in micro-USDC. */
  maxOrder: Micro;
}

export interface ValidOrder {
  intent: OrderIntent;
  clientOrderId: string | null;
}

const FIELDS = new Set(["market_id", "outcome", "side", "amount_usdc", "shares", "max_slippage", "strategy", "client_order_id", "time_in_force"]);
const MAX_SLIPPAGE = 500_000n;

/**
 * Turns a parsed JSON body into an exact order intent, or throws `invalid_request` naming every
 * offending field of `context` (an order's body, or the query a quote reads it from). Nothing is
 * defaulted silently except what DESIGN §6 documents as a default.
 */
export function validateOrder(body: unknown, idempotencyKey: string | undefined, limits: OrderLimits, context = "order"): ValidOrder {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new AppError("invalid_request", "The body must be a JSON object.", { fields: { body: "must be a JSON object" } });
  }
  // Own properties only, into a record without a prototype: on a plain {} the key "__proto__" would
  // hit the prototype setter, which drops a string, so an unknown "__proto__" field would go unreported,
  // and an inherited property would be read as if the client had sent it.
  const b = Object.assign(Object.create(null) as Record<string, unknown>, body);
  const fields = Object.create(null) as Record<string, string>;
  const check = <T>(name: string, parse: () => T): T | undefined => {
    try {
      return parse();
    } catch (e) {
      fields[name] = e instanceof AppError ? String((e.details?.fields as Record<string, string>)?.[name] ?? e.message) : String(e);
      return undefined;
    }
  };
  for (const key of Object.keys(b)) if (!FIELDS.has(key)) fields[key] = "is not a known field";

  const eventId = check("market_id", () => requiredString(b.market_id, "market_id", 128));
  const outcome = check("outcome", () => oneOf(b.outcome, "outcome", OUTCOMES, undefined));
  const side = check("side", () => oneOf(b.side, "side", SIDES, undefined));
  const strategy = check("strategy", () => oneOf(b.strategy, "strategy", STRATEGIES, "optimize_price"));
  const timeInForce = check("time_in_force", () => oneOf(b.time_in_force, "time_in_force", TIME_IN_FORCE, "FOK"));
  // A buy spends amount_usdc, a sell sells shares (DESIGN §12): each side takes its own field and refuses the other's.
  const amount = check("amount_usdc", () => {
    if (side === "sell") {
      if (b.amount_usdc !== undefined) throw fieldError("amount_usdc", "is not taken by a sell: send shares");
      return 0n;
    }
    if (b.amount_usdc === undefined) throw fieldError("amount_usdc", "is required");
    const v = parseMicro(b.amount_usdc, "amount_usdc");
    if (v <= 0n) throw fieldError("amount_usdc", "must be greater than 0");
    if (v > limits.maxOrder) throw fieldError("amount_usdc", `must be at most ${formatMicro(limits.maxOrder)} USDC per order`);
    return v;
  });
  const shares = check("shares", () => {
    if (side !== "sell") {
      if (b.shares !== undefined) throw fieldError("shares", "is taken only by a sell: a buy sends amount_usdc");
      return 0n;
    }
    if (b.shares === undefined) throw fieldError("shares", "is required for a sell");
    const v = parseMicro(b.shares, "shares");
    if (v <= 0n) throw fieldError("shares", "must be greater than 0");
    return v;
  });
  const maxSlippage = check("max_slippage", () => {
    if (b.max_slippage === undefined) return 10_000n;
    const v = parseMicro(b.max_slippage, "max_slippage");
    if (v > MAX_SLIPPAGE) throw fieldError("max_slippage", "must be a fraction between 0 and 0.5");
    return v;
  });
  const header = check("Idempotency-Key", () => {
    if (idempotencyKey !== undefined && !HEADER_CLIENT_ID.test(idempotencyKey)) {
      throw fieldError("Idempotency-Key", "must be 1-64 printable ASCII characters (an id of others goes in client_order_id)");
    }
    return idempotencyKey;
  });
  const clientOrderId = check("client_order_id", () => {
    const fromBody = b.client_order_id === undefined ? undefined : requiredString(b.client_order_id, "client_order_id", 64);
    if (fromBody !== undefined && !isClientId(fromBody)) throw fieldError("client_order_id", "must be 1-64 printable characters");
    if (fromBody !== undefined && header !== undefined && fromBody !== header) {
      throw fieldError("client_order_id", "differs from the Idempotency-Key header");
    }
    return fromBody ?? header ?? null;
  });

  if (Object.keys(fields).length > 0) {
    throw invalidFields(context, fields);
  }
  return {
    intent: {
      eventId: eventId!,
      outcome: outcome!,
      side: side!,
      amount: amount!,
      shares: shares!,
      maxSlippage: maxSlippage!,
      strategy: strategy!,
      timeInForce: timeInForce!,
    },
    clientOrderId: clientOrderId ?? null,
  };
}

function fieldError(field: string, why: string): AppError {
  return new AppError("invalid_request", `${field} ${why}`, { fields: { [field]: why } });
}

function requiredString(v: unknown, field: string, max: number): string {
  if (v === undefined) throw fieldError(field, "is required");
  if (typeof v !== "string") throw fieldError(field, "must be a string");
  // Characters as the schemas count them (code points): an emoji is one, not its two UTF-16 units.
  const length = [...v].length;
  if (length === 0 || length > max) throw fieldError(field, `must be 1-${max} characters`);
  return v;
}

function oneOf<T extends string>(v: unknown, field: string, allowed: readonly T[], dflt: T | undefined): T {
  if (v === undefined) {
    if (dflt === undefined) throw fieldError(field, "is required");
    return dflt;
  }
  if (typeof v !== "string" || !(allowed as readonly string[]).includes(v)) {
    throw fieldError(field, `must be one of ${allowed.join(", ")}`);
  }
  return v as T;
}
