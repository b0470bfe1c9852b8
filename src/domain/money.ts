import { isLosslessNumber } from "lossless-json";
import { AppError } from "./errors.ts";

/** Micro-USDC: integer amounts of 10^-6 USDC. Every amount of money inside crossfill is one of these. */
export type Micro = bigint;
/** A price in micro-USDC per share, strictly between 0 and 1_000_000. */
export type PriceMicro = bigint;
/** A number of shares in micro-shares (10^-6 share). */
export type ShareMicro = bigint;
/** A fraction in parts per million (0.01 = 10_000n). */
export type Ppm = bigint;

export const ONE = 1_000_000n;

/** Digits, a fraction, an exponent: a JSON number's grammar without its sign (JSON writes 100 as 1E+2, too). */
const DECIMAL = /^(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
/** A value with more whole digits than this (10^15 and up) is too large. */
const WHOLE_DIGITS = 15;

/**
 * Parses a decimal given as a JSON number or a decimal string into an integer of 10^-6 units.
 * A request body's number arrives as a LosslessNumber (see http/json-body.ts) and is read from its
 * source text, so `1.0000000000000001` is refused for its decimals rather than rounded to 1. A number
 * parsed elsewhere (config, venue feeds) is read through its shortest round-trip decimal form, so 100.5
 * is exactly 100.500000. An exponent moves the point exactly (`5e-2` is 0.05, `1E+2` 100), as clients'
 * serialisers write small and stripped decimals; signs, spaces, more than 6 decimals (counted once the point
 * is moved: `1.0000000` and `1e-7` alike), more than 15 whole digits, NaN and Infinity are refused: money is
 * never guessed.
 */
export function parseMicro(value: unknown, field: string): bigint {
  const plain = plainMicro(value);
  if (plain !== undefined) return plain;
  const { digits, decimals } = decimalOf(value, field);
  if (decimals > 6) throw invalid(field, "has more than 6 decimal places");
  if (digits === "") return 0n;
  if (digits.length - decimals > WHOLE_DIGITS) throw invalid(field, "is too large");
  return BigInt(digits) * 10n ** BigInt(6 - decimals);
}

/**
 * A non-negative decimal (as parseMicro reads it, but of any number of decimals) times `scale`, rounded up to a
 * whole number: a rate a venue states more finely than the units it is held in, rounded toward the venue
 * (`ceilScaled(0.0012345, 70_000n)` is 87, of 86.415).
 */
export function ceilScaled(value: unknown, scale: bigint, field: string): bigint {
  const { digits, decimals } = decimalOf(value, field);
  if (digits === "") return 0n;
  if (digits.length - decimals > WHOLE_DIGITS) throw invalid(field, "is too large");
  if (decimals <= 0) return BigInt(digits) * 10n ** BigInt(-decimals) * scale;
  // under 10^-(places of scale), the product is a fraction of 1: no need to raise 10 to an exponent's power
  if (decimals - digits.length >= scale.toString().length) return 1n;
  return ceilDiv(BigInt(digits) * scale, 10n ** BigInt(decimals));
}

/** A decimal's digits without their leading zeros, and how many of them are decimals once an exponent has moved the point (negative: whole zeros to add). */
function decimalOf(value: unknown, field: string): { digits: string; decimals: number } {
  let text: string;
  if (isLosslessNumber(value)) {
    text = value.value;
  } else if (typeof value === "number") {
    if (!Number.isFinite(value)) throw invalid(field, "must be a finite decimal number");
    text = String(value);
  } else if (typeof value === "string") {
    text = value;
  } else {
    throw invalid(field, "must be a decimal number or a decimal string");
  }
  const m = DECIMAL.exec(text);
  if (!m) throw invalid(field, `must be a plain non-negative decimal (got ${JSON.stringify(String(value))})`);
  return { decimals: (m[2] ?? "").length - Number(m[3] ?? 0), digits: (m[1]! + (m[2] ?? "")).replace(/^0+/, "") };
}

/** The largest value the plain forms below reach: 9 whole digits and 6 decimals, well inside 2^53. */
const PLAIN_MAX = 999_999_999_999_999;
/** 10^(6 − decimals), by decimals: a power computed for each value showed in the streams' profile. */
const SCALE = [1e6, 1e5, 1e4, 1e3, 100, 10, 1];

/**
 * The forms a venue's book is made of, read without a regular expression or a string built: a string of
 * 1–9 digits with, after a point, 1–6 more; or a finite number ≥ 0 that is exactly such a decimal (r, its
 * value times 10^6 rounded, divides back to the same double; below 2^53 that division is exact to the
 * nearest double, so the number's shortest decimal form is r / 10^6). Undefined for anything else, which
 * parseMicro reads or refuses as before; where both read a value they read the same micro units.
 */
export function plainMicro(value: unknown): bigint | undefined {
  if (typeof value === "number") {
    const r = Math.round(value * 1e6);
    return r >= 0 && r <= PLAIN_MAX && r / 1e6 === value ? BigInt(r) : undefined;
  }
  if (typeof value !== "string") return undefined;
  const length = value.length;
  let units = 0;
  let i = 0;
  for (let d: number; i < length && (d = value.charCodeAt(i) - 48) >= 0 && d <= 9; i++) units = units * 10 + d;
  if (i === 0 || i > 9) return undefined;
  if (i === length) return BigInt(units * 1e6);
  if (value.charCodeAt(i) !== 46) return undefined;
  const point = ++i;
  for (let d: number; i < length && (d = value.charCodeAt(i) - 48) >= 0 && d <= 9; i++) units = units * 10 + d;
  const decimals = i - point;
  if (i !== length || decimals === 0 || decimals > 6) return undefined;
  return BigInt(units * SCALE[decimals]!);
}

/** Formats 10^-6 units as a decimal string with no trailing zeros ("100.5", "0.000001", "3"). */
export function formatMicro(value: bigint): string {
  const neg = value < 0n;
  const abs = neg ? -value : value;
  const whole = abs / ONE;
  const frac = (abs % ONE).toString().padStart(6, "0").replace(/0+$/, "");
  return `${neg ? "-" : ""}${whole}${frac ? "." + frac : ""}`;
}

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The JSON number for 10^-6 units (output only). Below 2^53 both operands of the division are exact
 * doubles and IEEE division rounds correctly, so the result is the double nearest to value / 10^6:
 * the same number the decimal string parses to, at a fraction of the cost (merged books format
 * hundreds of levels per request).
 */
export function microToNumber(value: bigint): number {
  if (value <= SAFE && value >= -SAFE) return Number(value) / 1e6;
  return Number(formatMicro(value));
}

export function ceilDiv(a: bigint, b: bigint): bigint {
  if (b <= 0n) throw new RangeError("ceilDiv by a non-positive divisor");
  return a >= 0n ? (a + b - 1n) / b : -((-a) / b);
}

/**
 * `total` shared out in proportion to `weights`: part i is ⌈total × the weights up to i / all the
 * weights⌉ less the parts before it, so the parts add up to exactly `total`; the weights must add up to more than 0.
 */
export function shareOut(total: bigint, weights: readonly bigint[]): bigint[] {
  const sum = weights.reduce((s, w) => s + w, 0n);
  let upTo = 0n;
  let given = 0n;
  return weights.map((w) => {
    upTo += w;
    const part = ceilDiv(total * upTo, sum) - given;
    given += part;
    return part;
  });
}

/** Cost in micro-USDC of `shares` micro-shares at `price` micro-USDC per share, rounded up to the micro. */
export function notional(price: PriceMicro, shares: ShareMicro): Micro {
  return ceilDiv(price * shares, ONE);
}

/**
 * `shares` micro-shares at `price` micro-USDC per share, rounded down to the micro: what selling them pays,
 * and the amount an order for them at limit `price` signs (Opinion signs it as a buy's makerAmount and a
 * sell's takerAmount, and measures its minimum order by it).
 */
export function proceedsOf(price: PriceMicro, shares: ShareMicro): Micro {
  return (price * shares) / ONE;
}

function invalid(field: string, why: string): AppError {
  return new AppError("invalid_request", `${field} ${why}`, { fields: { [field]: why } });
}
