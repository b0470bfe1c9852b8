import { isLosslessNumber, parse } from "lossless-json";

/**
 * JSON is UTF-8 (RFC 8259 §8.1): bytes that are not are refused, not read as U+FFFD, which would make two
 * client ids differing in such a byte one. A byte order mark is kept, and so refused by the parser, as before.
 */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Parses a request body as JSON. Every number stays a LosslessNumber holding its source text, which
 * parseMicro reads: JSON.parse would round `1.0000000000000001` to 1 before any check could see its
 * 16 decimals, and money is never guessed. A key given twice with different values is a SyntaxError
 * (JSON.parse keeps the last one): which of the two the client meant cannot be known. Throws on bytes that are not UTF-8.
 */
export function parseJsonBody(raw: Buffer): unknown {
  const body = parse(UTF8.decode(raw));
  // A body that is one number is no object, and is told so, not taken for a LosslessNumber's fields.
  return isLosslessNumber(body) ? Number(body.value) : body;
}

/** Why parseJsonBody refused a body, for the client: the parser's words (which say where), or what else stopped it. */
export function jsonProblem(err: unknown): string {
  if (err instanceof TypeError) return "it is not UTF-8";
  if (err instanceof RangeError) return "it nests too deep";
  return err instanceof Error ? err.message : String(err);
}

/**
 * A repeated signature covers the very bytes of the first request. When those name a client id (`field`:
 * client_order_id, client_withdrawal_id), the route answers the copy with what the first created (the store
 * keeps one per account and client id), so a client's quick retry gets it back rather than replayed_request, unless
 * the first copy's answer was an error, which spent the signature (src/http/app.ts's onSend hook).
 * The Idempotency-Key header does not count: it is not signed, so whoever replays a captured request could
 * add a fresh one and move the funds a second time.
 */
export function namesClientId(field: string): (rawBody: Buffer | undefined) => boolean {
  return (rawBody) => {
    if (rawBody === undefined) return false;
    try {
      const body = parseJsonBody(rawBody) as Record<string, unknown> | null;
      return typeof body === "object" && body !== null && Object.hasOwn(body, field) && typeof body[field] === "string";
    } catch {
      return false;
    }
  };
}
