import { addressProblem } from "../domain/address.ts";
import { AppError, invalidFields } from "../domain/errors.ts";
import { parseMicro, type Micro } from "../domain/money.ts";
import { HEADER_CLIENT_ID, isClientId } from "../domain/types.ts";

/** A validated POST /v1/withdrawals body. */
export interface WithdrawalRequest {
  amount: Micro;
  /** Lower case. */
  toAddress: string;
  clientWithdrawalId: string | null;
  /** The account's password, asked again when the request comes from the web terminal's session. */
  password: string | undefined;
}

/** A field's problem, said as the rest of a sentence that starts with its name. */
class Invalid extends Error {}

/**
 * Turns a parsed JSON body into an exact withdrawal request, or throws `invalid_request` naming every offending
 * field. `session`: the request comes from the web terminal, which must send the account's password again
 * (DESIGN §12); a request signed with a key sends none. `idempotencyKey`: the Idempotency-Key header, which works as
 * client_withdrawal_id does, as it does for orders (DESIGN §6); both must agree when both are sent.
 */
export function validateWithdrawal(body: unknown, opts: { session: boolean; idempotencyKey?: string }): WithdrawalRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new AppError("invalid_request", "The body must be a JSON object.", { fields: { body: "must be a JSON object" } });
  }
  // Own properties only, into a record without a prototype, as for orders.
  const b = Object.assign(Object.create(null) as Record<string, unknown>, body);
  const fields = Object.create(null) as Record<string, string>;
  const known = new Set(["amount_usdc", "to_address", "client_withdrawal_id", ...(opts.session ? ["password"] : [])]);
  for (const key of Object.keys(b)) if (!known.has(key)) fields[key] = "is not a known field";
  const check = <T>(name: string, parse: () => T): T | undefined => {
    try {
      return parse();
    } catch (e) {
      const why = e instanceof AppError ? (e.details?.fields as Record<string, string> | undefined)?.[name] : undefined;
      fields[name] = why ?? (e as Error).message;
      return undefined;
    }
  };

  const amount = check("amount_usdc", () => {
    if (b.amount_usdc === undefined) throw new Invalid("is required");
    const v = parseMicro(b.amount_usdc, "amount_usdc");
    if (v <= 0n) throw new Invalid("must be greater than 0");
    return v;
  });
  const toAddress = check("to_address", () => address(b.to_address));
  const header = check("Idempotency-Key", () => {
    if (opts.idempotencyKey !== undefined && !HEADER_CLIENT_ID.test(opts.idempotencyKey)) {
      throw new Invalid("must be 1-64 printable ASCII characters (an id of others goes in client_withdrawal_id)");
    }
    return opts.idempotencyKey;
  });
  const clientWithdrawalId = check("client_withdrawal_id", () => {
    const v = b.client_withdrawal_id;
    if (v !== undefined && (typeof v !== "string" || !isClientId(v))) throw new Invalid("must be 1-64 printable characters");
    if (v !== undefined && header !== undefined && v !== header) throw new Invalid("differs from the Idempotency-Key header");
    return v ?? header ?? null;
  });
  const password = check("password", () => {
    if (!opts.session) return undefined;
    if (typeof b.password !== "string") throw new Invalid("is required: the web terminal asks for the account's password again");
    return b.password;
  });

  if (Object.keys(fields).length > 0) {
    throw invalidFields("withdrawal", fields);
  }
  return { amount: amount!, toAddress: toAddress!, clientWithdrawalId: clientWithdrawalId!, password };
}

function address(v: unknown): string {
  if (v === undefined) throw new Invalid("is required");
  if (typeof v !== "string") throw new Invalid("must be a 0x address of 40 hex digits");
  const problem = addressProblem(v);
  if (problem !== undefined) throw new Invalid(problem);
  return v.toLowerCase();
}
