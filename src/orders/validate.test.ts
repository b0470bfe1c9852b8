import { describe, expect, it } from "vitest";
import { AppError } from "../domain/errors.ts";
import { parseJsonBody } from "../http/json-body.ts";
import { validateOrder } from "./validate.ts";

const limits = { maxOrder: 100_000_000_000n };
const base = { market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 100.5 };
const sell = { market_id: "fed-cut-2026-12", outcome: "YES", side: "sell", shares: 12 };

function fields(body: unknown, key?: string): Record<string, string> {
  try {
    validateOrder(body, key, limits);
  } catch (e) {
    if (e instanceof AppError && e.code === "invalid_request") return (e.details?.fields ?? {}) as Record<string, string>;
    throw e;
  }
  throw new Error("expected a refusal");
}

describe("validateOrder", () => {
  it("reads the SPEC's sample exactly and applies the documented defaults", () => {
    expect(validateOrder(base, undefined, limits)).toEqual({
      intent: { eventId: "fed-cut-2026-12", outcome: "YES", side: "buy", amount: 100_500_000n, shares: 0n, maxSlippage: 10_000n, strategy: "optimize_price", timeInForce: "FOK" },
      clientOrderId: null,
    });
  });

  it("accepts decimal strings for amounts and slippage", () => {
    const v = validateOrder({ ...base, amount_usdc: "0.000001", max_slippage: "0.5", strategy: "optimize_speed", time_in_force: "IOC" }, undefined, limits);
    expect(v.intent).toMatchObject({ amount: 1n, maxSlippage: 500_000n, strategy: "optimize_speed", timeInForce: "IOC" });
  });

  it("refuses a decimal string with spaces around it, naming the field, as GET /v1/quote refuses it", () => {
    expect(fields({ ...base, amount_usdc: " 10", max_slippage: "0.01 " })).toEqual({
      amount_usdc: 'must be a plain non-negative decimal (got " 10")',
      max_slippage: 'must be a plain non-negative decimal (got "0.01 ")',
    });
    expect(fields({ ...sell, shares: "\t12" })).toEqual({ shares: 'must be a plain non-negative decimal (got "\\t12")' });
  });

  it("takes the idempotency key from the body or the header, and refuses two that differ", () => {
    expect(validateOrder({ ...base, client_order_id: "a-1" }, undefined, limits).clientOrderId).toBe("a-1");
    expect(validateOrder(base, "h-1", limits).clientOrderId).toBe("h-1");
    expect(validateOrder({ ...base, client_order_id: "same" }, "same", limits).clientOrderId).toBe("same");
    expect(Object.keys(fields({ ...base, client_order_id: "a" }, "b"))).toEqual(["client_order_id"]);
  });

  it("refuses an Idempotency-Key header beyond ASCII, as Node reads a header's bytes one character each, rather than store the id as other characters", () => {
    // "ké" sent in UTF-8 arrives as "kÃ©"; "k🚀" as "kð" and three C1 controls.
    const ascii = { "Idempotency-Key": "must be 1-64 printable ASCII characters (an id of others goes in client_order_id)" };
    expect(fields(base, "k\u00c3\u00a9")).toEqual(ascii);
    expect(fields(base, "k\u00f0\u009f\u009a\u0080")).toEqual(ascii);
    expect(validateOrder({ ...base, client_order_id: "ké🚀" }, undefined, limits).clientOrderId).toBe("ké🚀");
  });

  it("names the Idempotency-Key header, not client_order_id, when the header's value is no idempotency key", () => {
    expect(() => validateOrder({ ...base, client_order_id: "a-1" }, "k".repeat(65), limits)).toThrow("Invalid order: Idempotency-Key must be 1-64 printable ASCII characters (an id of others goes in client_order_id).");
    expect(fields(base, "")).toEqual({ "Idempotency-Key": "must be 1-64 printable ASCII characters (an id of others goes in client_order_id)" });
  });

  it("states the per-order cap as configured, decimals included", () => {
    expect(() => validateOrder({ ...base, amount_usdc: "250.6" }, undefined, { maxOrder: 250_500_000n })).toThrow("amount_usdc must be at most 250.5 USDC per order");
  });

  it("names every bad field at once", () => {
    expect(Object.keys(fields({ outcome: "yes", side: "hold", amount_usdc: 0, max_slippage: 0.51, extra: 1 })).sort()).toEqual([
      "amount_usdc",
      "extra",
      "market_id",
      "max_slippage",
      "outcome",
      "side",
    ]);
  });

  it.each(["__proto__", "constructor", "prototype", "hasOwnProperty", "toString"])("refuses %s as an unknown field, however the body was parsed", (key) => {
    const text = JSON.stringify(base).replace("{", `{"${key}":{"market_id":"other"},`);
    for (const body of [JSON.parse(text), parseJsonBody(Buffer.from(text))]) {
      const refused = fields(body);
      expect(Object.keys(refused)).toEqual([key]);
      expect(refused[key]).toBe("is not a known field");
    }
  });

  it("takes a client_order_id of any 1-64 printable characters, emoji too, counted as characters, as a withdrawal's", () => {
    const emoji = "\u{1F600}".repeat(64);
    expect(validateOrder({ ...base, client_order_id: emoji }, undefined, limits).clientOrderId).toBe(emoji);
    expect(fields({ ...base, client_order_id: `${emoji}a` })).toHaveProperty("client_order_id");
  });

  it("refuses a client_order_id holding a hidden character, which reads on a screen as another id", () => {
    // "a\u200bb" shows as "ab", "\u202ebuy" as "yub", "\ufeffa" as "a", "\u2764\ufe0f" as "\u2764".
    for (const id of ["a\u200bb", "a\u200db", "\u202ebuy", "\ufeffa", "a\u2060", "\u2764\ufe0f", "a\u3164"]) {
      expect(fields({ ...base, client_order_id: id })).toEqual({ client_order_id: "must be 1-64 printable characters" });
    }
    expect(validateOrder({ ...base, client_order_id: "\u2764" }, undefined, limits).clientOrderId).toBe("\u2764");
  });

  it("refuses a client_order_id holding a space of any kind, which reads as the id with another space", () => {
    // "a\u00a0b" (a no-break space) shows as "a b"; U+2028 and U+2029 break the line it is shown on.
    for (const id of ["a b", "a\u00a0b", "a\u1680b", "a\u2000b", "a\u200ab", "a\u2028b", "a\u2029b", "a\u202fb", "a\u205fb", "a\u3000b"]) {
      expect([id, fields({ ...base, client_order_id: id })]).toEqual([id, { client_order_id: "must be 1-64 printable characters" }]);
    }
  });

  it('names a field with an empty name as "" in its sentence', () => {
    expect(() => validateOrder({ ...base, "": 1 }, undefined, limits)).toThrow('Invalid order: "" is not a known field.');
  });

  it.each(["123", "-1.5", "[]", "null", '"x"'])("refuses the body %s as no JSON object", (text) => {
    expect(fields(parseJsonBody(Buffer.from(text)))).toEqual({ body: "must be a JSON object" });
  });

  it("reads only the body's own properties, never inherited ones", () => {
    const inherited = Object.assign(Object.create({ max_slippage: 0.4, client_order_id: "theirs" }) as object, base);
    expect(validateOrder(inherited, undefined, limits)).toMatchObject({ intent: { maxSlippage: 10_000n }, clientOrderId: null });
  });

  it("enforces the per-order cap", () => {
    expect(fields({ ...base, amount_usdc: 100_001 })).toHaveProperty("amount_usdc");
  });

  it("reads a sell's shares exactly, with no amount_usdc", () => {
    expect(validateOrder({ ...sell, shares: "12.000001" }, undefined, limits).intent).toEqual({
      eventId: "fed-cut-2026-12",
      outcome: "YES",
      side: "sell",
      amount: 0n,
      shares: 12_000_001n,
      maxSlippage: 10_000n,
      strategy: "optimize_price",
      timeInForce: "FOK",
    });
  });

  it("takes each side's own quantity and refuses the other's, naming the field", () => {
    expect(fields({ ...sell, amount_usdc: 5 })).toEqual({ amount_usdc: "is not taken by a sell: send shares" });
    expect(fields({ ...base, shares: 5 })).toEqual({ shares: "is taken only by a sell: a buy sends amount_usdc" });
    expect(Object.keys(fields({ market_id: "fed-cut-2026-12", outcome: "YES", side: "sell", amount_usdc: 5 })).sort()).toEqual(["amount_usdc", "shares"]);
    expect(fields({ ...sell, shares: undefined })).toEqual({ shares: "is required for a sell" });
  });

  it.each([0, "0", -1, "1.0000001", "1e-7", "abc", null])("refuses shares %j", (shares) => {
    expect(Object.keys(fields({ ...sell, shares }))).toEqual(["shares"]);
  });
});
