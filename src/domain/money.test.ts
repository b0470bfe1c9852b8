import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { LosslessNumber } from "lossless-json";
import { formatMicro, microToNumber, parseMicro, plainMicro } from "./money.ts";
import { AppError } from "./errors.ts";
import { decimalLike, outcome } from "./arbitraries.ts";

describe("parseMicro", () => {
  it("reads numbers and decimal strings exactly", () => {
    expect(parseMicro(100.5, "amount_usdc")).toBe(100_500_000n);
    expect(parseMicro("0.000001", "amount_usdc")).toBe(1n);
    expect(parseMicro(0.1, "x")).toBe(100_000n);
    expect(parseMicro("5", "x")).toBe(5_000_000n);
  });
  it.each([NaN, Infinity, -1, 1e21, 1e-7, "1.5e-6", "1e16", "abc", "", "1.0000001", " 1", "1\n", "\u00a01", null, true, {}])("refuses %p", (v) => {
    expect(() => parseMicro(v, "amount_usdc")).toThrow(AppError);
  });
  it("reads a request body's number from its source text, never through a double", () => {
    expect(parseMicro(new LosslessNumber("100.50"), "amount_usdc")).toBe(100_500_000n);
    expect(parseMicro(new LosslessNumber("123456789012345.000001"), "amount_usdc")).toBe(123_456_789_012_345_000_001n);
    for (const text of ["1.0000000000000001", "0.0100000000000000001", "1.0000000", "1e-7", "100e-8", "1e400", "-1", "-0"]) {
      expect(() => parseMicro(new LosslessNumber(text), "amount_usdc"), text).toThrow(AppError);
    }
  });
  it("moves the point by an exponent exactly, as serialisers write small and stripped decimals (5e-05, 1E+2)", () => {
    expect(parseMicro(new LosslessNumber("1E+2"), "x")).toBe(100_000_000n);
    expect(parseMicro(new LosslessNumber("5e-05"), "x")).toBe(50n);
    expect(parseMicro(new LosslessNumber("0.001e3"), "x")).toBe(1_000_000n);
    expect(parseMicro("1.5e1", "x")).toBe(15_000_000n);
    expect(parseMicro("0000000000000001", "x")).toBe(1_000_000n);
  });
  it("gives the number its decimal string parses to, for every amount", () => {
    fc.assert(fc.property(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), (m) => microToNumber(m) === Number(formatMicro(m))));
  });
  it("round-trips every micro amount through its decimal string", () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 10n ** 20n }), (m) => parseMicro(formatMicro(m), "x") === m));
  });
  it("reads a venue's plain numbers and strings on its fast path as the full parse reads them", () => {
    // an exponent of 0 takes the full parse (the fast path reads none) and moves no point: how parseMicro read every value before
    const full = (v: unknown) => outcome(() => parseMicro(/[eE]/.test(String(v)) ? String(v) : `${String(v)}e0`, "x"));
    fc.assert(
      fc.property(decimalLike(), (v) => {
        const plain = plainMicro(v);
        expect(outcome(() => parseMicro(v, "x"))).toEqual(full(v));
        if (plain !== undefined) expect(plain).toBe(full(v));
      }),
      { numRuns: 20_000 },
    );
    expect(plainMicro(0.29)).toBe(290_000n);
    expect(plainMicro("0.535")).toBe(535_000n);
    expect(plainMicro(123_456_789.123456)).toBe(123_456_789_123_456n);
    for (const v of [" 1", "1.", ".5", "1.0000001", "1234567890", 0.1234567, 1e9, -0.5, NaN, "1e3", "+1"]) expect(plainMicro(v), String(v)).toBeUndefined();
  });
});
