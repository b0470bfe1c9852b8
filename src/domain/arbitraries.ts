// fast-check arbitraries and helpers for the property tests of money parsing (this folder's and the venues' wire parsers).
import fc from "fast-check";

/** What a parse gives: its value, or that it refused. */
export function outcome(parse: () => bigint): bigint | "refused" {
  try {
    return parse();
  } catch {
    return "refused";
  }
}

/** Numbers and strings near the decimal forms venues send: plain, too long, too precise, signed, spaced, exponents. */
export function decimalLike(): fc.Arbitrary<unknown> {
  const digits = (max: number) => fc.string({ unit: fc.constantFrom(..."0123456789"), maxLength: max });
  return fc.oneof(
    fc.tuple(digits(11), fc.option(digits(8))).map(([w, f]) => (f === null ? w : `${w}.${f}`)),
    fc.string({ unit: fc.constantFrom(..."0123456789.-+e "), maxLength: 14 }),
    fc.integer({ min: 0, max: 2_000_000_000 }).map((n) => n / 1e6),
    fc.integer({ min: 0, max: 1_000_000 }).map((n) => n / 100),
    fc.double({ min: -1, max: 2e9, noNaN: false }),
  );
}
