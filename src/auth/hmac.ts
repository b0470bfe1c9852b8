// Imports nothing but node:crypto so that the SDK (and anything else that signs) can share it
// without pulling in server code.
import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_BYTES = 32;

/**
 * The string a request's signature covers: timestamp + METHOD + path + body, no separators.
 * `path` is the request target exactly as sent (with /v1 and the query string) and `body` the raw
 * bytes as received, so nothing the server acts on is left unsigned and nothing is re-serialised.
 */
export function canonicalString(
  timestamp: string,
  method: string,
  path: string,
  body: Buffer | string | undefined,
): Buffer {
  const head = Buffer.from(timestamp + method.toUpperCase() + path, "utf8");
  if (body === undefined || body.length === 0) return head;
  return Buffer.concat([head, typeof body === "string" ? Buffer.from(body, "utf8") : body]);
}

export function hmacBytes(secret: string, canonical: Buffer | string): Buffer {
  return createHmac("sha256", Buffer.from(secret, "utf8")).update(canonical).digest();
}

/** Signs a request; the result is lowercase hex, the encoding clients are told to send. */
export function sign(
  secret: string,
  timestamp: string,
  method: string,
  path: string,
  body: Buffer | string | undefined,
): string {
  return hmacBytes(secret, canonicalString(timestamp, method, path, body)).toString("hex");
}

const HEX = /^[0-9a-fA-F]{64}$/;
// 32 bytes are 43 base64 characters plus one "=" of padding; the last character carries only
// 2 meaningful bits, which is checked by re-encoding below.
const BASE64 = /^[A-Za-z0-9+/]{43}=?$/;
const BASE64URL = /^[A-Za-z0-9_-]{43}=?$/;

/**
 * Decodes a signature sent as hex (any case), base64 or base64url (padded or not) into its
 * 32 bytes, or undefined when it is none of these. Node's decoders skip invalid characters
 * silently, so the shape is checked first and the decoding round-tripped: a signature has
 * exactly one byte form, which is what the replay cache keys on.
 */
export function decodeSignature(provided: string): Buffer | undefined {
  if (HEX.test(provided)) return Buffer.from(provided, "hex");
  const isB64 = BASE64.test(provided);
  if (!isB64 && !BASE64URL.test(provided)) return undefined;
  const encoding = isB64 ? "base64" : "base64url";
  const bytes = Buffer.from(provided, encoding);
  if (bytes.length !== SIGNATURE_BYTES) return undefined;
  if (bytes.toString("base64url") !== provided.replace(/=$/, "").replace(/\+/g, "-").replace(/\//g, "_")) {
    return undefined;
  }
  return bytes;
}

/** Checks `provided` against the HMAC of `canonical` in constant time; any malformed input is false. */
export function verifySignature(secret: string, canonical: Buffer | string, provided: string): boolean {
  const given = decodeSignature(provided);
  if (given === undefined) return false;
  return timingSafeEqual(hmacBytes(secret, canonical), given);
}
