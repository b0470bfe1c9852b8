import { randomBytes as nodeRandomBytes } from "node:crypto";
import { addressProblem } from "../domain/address.ts";
import { AppError } from "../domain/errors.ts";
import { textFault } from "../domain/text.ts";
import { SCOPES, type Scope } from "../domain/types.ts";
import type { ApiKeyRecord, Store } from "../store/store.ts";
import { parseIpAllowlist } from "./ip.ts";
import { encryptSecret } from "./secrets.ts";

export const API_KEY_PREFIX = "ck_live_";
export const API_SECRET_PREFIX = "cs_live_";
export const API_KEY_PATTERN = /^ck_live_[0-9A-Za-z]{24}$/;
export const API_SECRET_PATTERN = /^cs_live_[0-9A-Za-z_-]{43}$/;

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
// Largest multiple of 62 that fits in a byte: bytes at or above it are dropped so that every
// character is equally likely (a plain `byte % 62` would favour the first 8 characters).
const BASE62_LIMIT = 248;

export type RandomBytes = (n: number) => Buffer;

function base62(length: number, random: RandomBytes): string {
  let out = "";
  while (out.length < length) {
    for (const byte of random(length * 2)) {
      if (byte < BASE62_LIMIT) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export interface KeyPair {
  apiKey: string;
  apiSecret: string;
}

/** A fresh key pair: 24 base62 characters (~143 bits) of public id, 256 bits of secret. */
export function generateKeyPair(random: RandomBytes = nodeRandomBytes): KeyPair {
  return {
    apiKey: API_KEY_PREFIX + base62(24, random),
    apiSecret: API_SECRET_PREFIX + random(32).toString("base64url"),
  };
}

/** Parses "read,trade" (or a list) into known scopes, deduplicated, in canonical order. */
export function parseScopes(input: string | readonly string[]): Scope[] {
  const names = (typeof input === "string" ? input.split(",") : input).map((s) => s.trim()).filter((s) => s !== "");
  const unknown = names.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    throw new AppError("invalid_request", `Unknown scope ${unknown.map((s) => JSON.stringify(s)).join(", ")}; the scopes are ${SCOPES.join(", ")}.`, {
      fields: { scopes: `must be among ${SCOPES.join(", ")}` },
    });
  }
  if (names.length === 0) {
    throw new AppError("invalid_request", `A key needs at least one scope: ${SCOPES.join(", ")}.`, {
      fields: { scopes: "must not be empty" },
    });
  }
  return SCOPES.filter((s) => names.includes(s));
}

/** The most characters (code points, as JSON Schema's maxLength counts them) a key's name may have. */
export const KEY_NAME_MAX = 100;

/**
 * A key's name as stored: trimmed, 1 to KEY_NAME_MAX characters (an emoji is one, not its two UTF-16 units), none of
 * them a control character, a bidirectional control or a zero-width character outside an emoji sequence, as an event's
 * title (textFault): `crossfill keys list` and the terminal show a name as it is, where a line break would forge a line
 * of the list, U+202E reverse the rest of it and U+200B make "a\u200bb" read as the key "ab".
 */
export function parseKeyName(raw: string): string {
  const name = raw.trim();
  const length = [...name].length;
  if (length === 0 || length > KEY_NAME_MAX) {
    throw new AppError("invalid_request", `The key name must be 1 to ${KEY_NAME_MAX} characters.`, { fields: { name: `must be 1 to ${KEY_NAME_MAX} characters` } });
  }
  const fault = textFault(name);
  if (fault !== undefined) {
    throw new AppError("invalid_request", `The key name must have no ${fault}.`, { fields: { name: `must have no ${fault}` } });
  }
  return name;
}

export interface NewApiKey {
  accountId: string;
  name: string;
  scopes: string | readonly string[];
  ipAllowlist?: readonly string[] | null;
  /** The only addresses withdrawals with the key may pay to; none or empty: any address. */
  withdrawalAllowlist?: readonly string[] | null;
}

/**
 * Creates and stores a key for an account. The returned apiSecret exists nowhere else in clear:
 * the caller shows it once and forgets it.
 */
export async function createApiKey(
  store: Store,
  master: Buffer,
  input: NewApiKey,
  random: RandomBytes = nodeRandomBytes,
): Promise<KeyPair & { record: ApiKeyRecord }> {
  const name = parseKeyName(input.name);
  const scopes = parseScopes(input.scopes);
  const ipAllowlist = parseIpAllowlist(input.ipAllowlist ?? []);
  const withdrawalAllowlist = parseWithdrawalAllowlist(input.withdrawalAllowlist ?? []);
  if ((await store.accountById(input.accountId)) === undefined) {
    throw new AppError("invalid_request", `No account ${JSON.stringify(input.accountId)}.`, { fields: { account_id: "unknown account" } });
  }
  const { apiKey, apiSecret } = generateKeyPair(random);
  const record = await store.insertApiKey({
    apiKey,
    accountId: input.accountId,
    name,
    scopes,
    secretEnc: encryptSecret(master, apiSecret),
    ipAllowlist,
    withdrawalAllowlist,
  });
  return { apiKey, apiSecret, record };
}

/** Addresses as withdrawals take them (checksummed or lower case), kept in lower case, deduplicated; none is null: any address. */
export function parseWithdrawalAllowlist(addresses: readonly string[]): string[] | null {
  const bad = addresses.filter((a) => addressProblem(a) !== undefined);
  if (bad.length > 0) {
    throw new AppError("invalid_request", `Not an address money may be paid to: ${bad.map((a) => `${JSON.stringify(a)} ${addressProblem(a)}`).join("; ")}.`, {
      fields: { withdrawal_allowlist: "must list 0x addresses, checksummed or lower case" },
    });
  }
  const list = [...new Set(addresses.map((a) => a.toLowerCase()))];
  return list.length === 0 ? null : list;
}
