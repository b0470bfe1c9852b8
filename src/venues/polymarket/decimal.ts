import { ONE, plainMicro } from "../../domain/money.ts";

/** Polymarket writes decimals as strings, sometimes without the leading zero (".48" in its WebSocket docs). */
const DECIMAL = /^(\d*)(?:\.(\d*))?$/;

/**
 * Parses a Polymarket decimal string into 10^-6 units, exactly. Digits beyond the sixth decimal
 * are refused unless `floor` is set: a price or an amount is never silently rounded, while a
 * resting size finer than a micro-share (which no order of ours can take) is floored.
 */
export function parseDecimal(text: unknown, field: string, floor = false): bigint {
  const plain = plainMicro(text);
  if (plain !== undefined) return plain;
  if (typeof text === "number" && Number.isFinite(text)) text = String(text);
  if (typeof text !== "string") throw new WireError(`${field}: expected a decimal string, got ${JSON.stringify(text)}`);
  const m = DECIMAL.exec(text.trim());
  if (!m || (m[1] === "" && (m[2] ?? "") === "")) throw new WireError(`${field}: ${JSON.stringify(text)} is not a decimal`);
  let frac = m[2] ?? "";
  if (frac.length > 6) {
    if (!floor && /[1-9]/.test(frac.slice(6))) throw new WireError(`${field}: ${text} has more than 6 decimals`);
    frac = frac.slice(0, 6);
  }
  return BigInt(m[1] || "0") * ONE + BigInt(frac.padEnd(6, "0"));
}

/** A response the adapter cannot read: the venue changed its shape, or this is not Polymarket. */
export class WireError extends Error {
  override readonly name = "WireError";
}
