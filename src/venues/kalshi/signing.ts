import { constants, createPrivateKey, createPublicKey, createSign, createVerify, type KeyObject } from "node:crypto";

/** A key as a PEM string or a parsed key object. */
export type Key = string | KeyObject;

/** An API key as Kalshi issues it: the key id and the RSA private key (PEM) it was created with. */
export interface KalshiCredentials {
  keyId: string;
  privateKeyPem: string;
}

export const KALSHI_HEADERS = {
  key: "KALSHI-ACCESS-KEY",
  timestamp: "KALSHI-ACCESS-TIMESTAMP",
  signature: "KALSHI-ACCESS-SIGNATURE",
} as const;

const PSS = { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST };

/**
 * The text Kalshi signs: timestamp in ms, the upper-case method and the full URL path (with its
 * /trade-api/v2 prefix) without the query string — a signature therefore survives re-ordered query
 * parameters but not a different endpoint.
 */
export function kalshiSigningText(timestampMs: string, method: string, path: string): string {
  const q = path.indexOf("?");
  return timestampMs + method.toUpperCase() + (q < 0 ? path : path.slice(0, q));
}

/** Base64 RSA-PSS (SHA-256, salt length = digest length) signature of one request. */
export function signKalshi(privateKey: Key, timestampMs: string, method: string, path: string): string {
  const signer = createSign("RSA-SHA256");
  signer.update(kalshiSigningText(timestampMs, method, path));
  const key = typeof privateKey === "string" ? createPrivateKey(privateKey) : privateKey;
  return signer.sign({ key, ...PSS }).toString("base64");
}

export function verifyKalshi(publicKey: Key, timestampMs: string, method: string, path: string, signature: string): boolean {
  const verifier = createVerify("RSA-SHA256");
  verifier.update(kalshiSigningText(timestampMs, method, path));
  try {
    const key = typeof publicKey === "string" ? createPublicKey(publicKey) : publicKey;
    return verifier.verify({ key, ...PSS }, Buffer.from(signature, "base64"));
  } catch {
    return false;
  }
}

/** The three KALSHI-ACCESS-* headers for one request. */
export function kalshiAuthHeaders(keyId: string, privateKey: Key, nowMs: number, method: string, path: string): Record<string, string> {
  const timestamp = String(Math.trunc(nowMs));
  return {
    [KALSHI_HEADERS.key]: keyId,
    [KALSHI_HEADERS.timestamp]: timestamp,
    [KALSHI_HEADERS.signature]: signKalshi(privateKey, timestamp, method, path),
  };
}
