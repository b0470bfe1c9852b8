import { parse } from "lossless-json";

/**
 * Parses a request body as JSON. Every number stays a LosslessNumber holding its source text, which
 * parseMicro reads: JSON.parse would round `1.0000000000000001` to 1 before any check could see its
 * 16 decimals, and money is never guessed. A key given twice with different values is a SyntaxError
 * (JSON.parse keeps the last one): which of the two the client meant cannot be known.
 */
export function parseJsonBody(raw: Buffer): unknown {
  return parse(raw.toString("utf8"));
}
