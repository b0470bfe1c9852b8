import { describe, expect, it } from "vitest";
import { isLosslessNumber } from "lossless-json";
import { parseJsonBody } from "./json-body.ts";

const parse = (text: string) => parseJsonBody(Buffer.from(text, "utf8"));

describe("parseJsonBody", () => {
  it("keeps every number's source text, however many digits it has", () => {
    const body = parse('{"amount_usdc":1.0000000000000001,"nested":[0.1]}') as { amount_usdc: unknown; nested: unknown[] };
    expect(isLosslessNumber(body.amount_usdc) && body.amount_usdc.value).toBe("1.0000000000000001");
    expect(isLosslessNumber(body.nested[0]) && body.nested[0].value).toBe("0.1");
  });
  it("reads strings, booleans and null as JSON.parse does", () => {
    expect(parse(' {"a":"\\u00e9","b":true,"c":null} ')).toEqual({ a: "é", b: true, c: null });
  });
  it("makes __proto__ an own key, never the object's prototype", () => {
    const body = parse('{"__proto__":{"market_id":"x"}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
    expect(Object.keys(body)).toEqual(["__proto__"]);
    expect(body.market_id).toBeUndefined();
  });
  it("reads a body that is one number as a number, which no route takes for an object", () => {
    expect(parse("123")).toBe(123);
    expect(parse(" -1.5 ")).toBe(-1.5);
  });
  it("refuses a key given twice with different values, and text that is not JSON", () => {
    expect(() => parse('{"amount_usdc":1,"amount_usdc":1000}')).toThrow(SyntaxError);
    for (const text of ["{", "[1,]", '{"a":01}', '{"a":.5}']) expect(() => parse(text), text).toThrow(SyntaxError);
  });
  it("refuses bytes that are not UTF-8, and a byte order mark", () => {
    expect(() => parseJsonBody(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]))).toThrow(TypeError);
    expect(() => parseJsonBody(Buffer.from('\ufeff{"a":1}', "utf8"))).toThrow(SyntaxError);
  });
});
