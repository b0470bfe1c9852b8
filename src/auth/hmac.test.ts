import fc from "fast-check";
import { describe, expect, it } from "vitest";
import vectors from "../../test/fixtures/hmac-signing.json" with { type: "json" };
import { canonicalString, decodeSignature, sign, verifySignature } from "./hmac.ts";

const { secret, cases } = vectors;

/** Every encoding of a vector's signature the server must accept. */
function encodingsOf(c: (typeof cases)[number]): Record<string, string> {
  return {
    hex: c.signature_hex,
    HEX: c.signature_hex.toUpperCase(),
    base64: c.signature_base64,
    "base64 unpadded": c.signature_base64.replace(/=$/, ""),
    base64url: c.signature_base64url,
    "base64url padded": c.signature_base64url + "=",
  };
}

describe("sign", () => {
  it.each(cases)("matches the $name vector", (c) => {
    expect(sign(secret, c.timestamp, c.method, c.path, c.body)).toBe(c.signature_hex);
    expect(sign(secret, c.timestamp, c.method, c.path, Buffer.from(c.body, "utf8"))).toBe(c.signature_hex);
  });

  it("upper-cases the method and treats a missing body as empty", () => {
    const c = cases.find((v) => v.name === "get-with-query")!;
    expect(sign(secret, c.timestamp, "get", c.path, undefined)).toBe(c.signature_hex);
  });
});

describe("verifySignature", () => {
  for (const c of cases) {
    const canonical = canonicalString(c.timestamp, c.method, c.path, c.body);
    it.each(Object.entries(encodingsOf(c)))(`accepts the ${c.name} vector as %s`, (_, sig) => {
      expect(verifySignature(secret, canonical, sig)).toBe(true);
      expect(decodeSignature(sig)!.toString("hex")).toBe(c.signature_hex);
    });
  }

  const c = cases[0]!;
  const canonical = canonicalString(c.timestamp, c.method, c.path, c.body);

  it.each([
    ["empty", ""],
    ["hex one short", c.signature_hex.slice(1)],
    ["hex one long", c.signature_hex + "0"],
    ["hex with a non-hex character", "g" + c.signature_hex.slice(1)],
    ["base64 truncated", c.signature_base64.slice(0, 40)],
    ["base64 with two pads", c.signature_base64 + "="],
    ["base64 mixing both alphabets", c.signature_base64.replace("V", "+").replace("Q", "_")],
    ["base64 with whitespace", " " + c.signature_base64],
    ["non-canonical last base64 character", c.signature_base64url.slice(0, -1) + "t"],
    ["a 64-byte signature", Buffer.alloc(64, 1).toString("hex")],
  ])("rejects %s", (_, sig) => {
    expect(verifySignature(secret, canonical, sig)).toBe(false);
  });

  it("rejects the right signature under another secret", () => {
    expect(verifySignature(secret + "x", canonical, c.signature_hex)).toBe(false);
  });
});

describe("sign and verify, for arbitrary requests", () => {
  const secretArb = fc.string({ minLength: 1, maxLength: 64, unit: "grapheme" });
  const bodyArb = fc.string({ maxLength: 300, unit: "grapheme" });

  it("round-trips in every accepted encoding", () => {
    fc.assert(
      fc.property(secretArb, bodyArb, fc.webPath(), (s, body, path) => {
        const hex = sign(s, "1767225600", "POST", path, body);
        const bytes = Buffer.from(hex, "hex");
        const canonical = canonicalString("1767225600", "POST", path, Buffer.from(body, "utf8"));
        for (const sig of [hex, hex.toUpperCase(), bytes.toString("base64"), bytes.toString("base64url")]) {
          if (!verifySignature(s, canonical, sig)) return false;
        }
        return true;
      }),
    );
  });

  it("fails when any single byte of the body changes", () => {
    fc.assert(
      fc.property(
        secretArb,
        bodyArb.filter((b) => b.length > 0),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (s, body, at, delta) => {
          const sig = sign(s, "1767225600", "POST", "/v1/order", body);
          const bytes = Buffer.from(body, "utf8");
          const i = at % bytes.length;
          bytes[i] = (bytes[i]! + delta) % 256;
          return !verifySignature(s, canonicalString("1767225600", "POST", "/v1/order", bytes), sig);
        },
      ),
    );
  });
});
