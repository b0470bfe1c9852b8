import { createHmac, timingSafeEqual } from "node:crypto";

/** Polymarket's L2 credentials (API key, base64 secret, passphrase) and the wallet that signs orders. */
export interface PolymarketCredentials {
  apiKey: string;
  /** Base64 (standard or url-safe) HMAC secret, as `createOrDeriveApiKey` returns it. */
  secret: string;
  passphrase: string;
  /** Hex private key of the EOA that signs orders (signature type 0) and owns the API key. */
  privateKey: `0x${string}`;
}

/**
 * The L2 signature: HMAC-SHA256 over `timestamp + method + path + body` keyed with the
 * base64-decoded secret, written url-safe base64 with its `=` padding kept — byte for byte what
 * `buildPolyHmacSignature` of @polymarket/clob-client produces. The path carries no query string.
 */
export function l2Signature(secret: string, timestampSeconds: number | string, method: string, path: string, body = ""): string {
  const key = Buffer.from(secret.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  const digest = createHmac("sha256", key).update(`${timestampSeconds}${method}${path}${body}`).digest("base64");
  return digest.replace(/\+/g, "-").replace(/\//g, "_");
}

const L2_HEADERS = ["POLY_ADDRESS", "POLY_SIGNATURE", "POLY_TIMESTAMP", "POLY_API_KEY", "POLY_PASSPHRASE"] as const;

export function l2Headers(
  creds: Omit<PolymarketCredentials, "privateKey">,
  address: string,
  timestampSeconds: number,
  method: string,
  path: string,
  body?: string,
): Record<(typeof L2_HEADERS)[number], string> {
  return {
    POLY_ADDRESS: address,
    POLY_SIGNATURE: l2Signature(creds.secret, timestampSeconds, method, path, body),
    POLY_TIMESTAMP: String(timestampSeconds),
    POLY_API_KEY: creds.apiKey,
    POLY_PASSPHRASE: creds.passphrase,
  };
}

/** Constant-time comparison of two signatures, false for any length mismatch. */
export function sameSignature(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
