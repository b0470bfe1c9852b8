import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";

/*
 * scrypt with N = 2^15, r = 8, p = 1 (the OWASP recommendation for scrypt): about 32 MiB and a few tens
 * of milliseconds per hash, so a stolen table costs an attacker as much per guess. The parameters are
 * stored with each hash, so raising them later leaves existing hashes verifiable.
 */
const PARAMS = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;

function derive(password: string, salt: Buffer, p: { N: number; r: number; p: number }, length: number): Promise<Buffer> {
  // maxmem must exceed 128·N·r, or Node refuses the parameters.
  const options: ScryptOptions = { N: p.N, r: p.r, p: p.p, maxmem: 256 * p.N * p.r };
  return new Promise((resolve, reject) => scrypt(password.normalize("NFKC"), salt, length, options, (err, key) => (err ? reject(err) : resolve(key))));
}

/** `scrypt$N$r$p$<salt b64url>$<hash b64url>`, with a fresh per-user salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await derive(password, salt, PARAMS, KEY_LENGTH);
  return ["scrypt", PARAMS.N, PARAMS.r, PARAMS.p, salt.toString("base64url"), key.toString("base64url")].join("$");
}

/** True when `password` is the one `stored` was made from; compared in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const salt = Buffer.from(parts[4]!, "base64url");
  const expected = Buffer.from(parts[5]!, "base64url");
  if (![N, r, p].every(Number.isSafeInteger) || expected.length === 0) return false;
  const actual = await derive(password, salt, { N, r, p }, expected.length);
  return timingSafeEqual(actual, expected);
}

/**
 * A hash of a password nobody knows. Verifying against it when the email is unknown makes a failed
 * sign-in take as long whether or not the account exists, so timing does not reveal who has one.
 */
export const DECOY_HASH = hashPassword(randomBytes(16).toString("hex"));
