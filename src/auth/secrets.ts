import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { link, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AppError } from "../domain/errors.ts";
import { narrowFile, PRIVATE_FILE, privateDir } from "../private-files.ts";

// Generic sealed-box for anything stored at rest: API secrets and account wallet keys alike.

const VERSION = "v1";
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const MASTER_KEY_FILE = "master.key";

function checkMaster(master: Buffer): void {
  if (master.length !== KEY_BYTES) throw new AppError("internal", `The master key must be ${KEY_BYTES} bytes.`);
}

/** AES-256-GCM under `master`; returns `v1.<iv>.<tag>.<ciphertext>`, each part base64url. */
export function encryptSecret(master: Buffer, plaintext: string): string {
  checkMaster(master);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", master, iv);
  const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [VERSION, iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), ct.toString("base64url")].join(".");
}

/** Inverse of encryptSecret. A wrong master key or any altered byte is an error, never garbage. */
export function decryptSecret(master: Buffer, sealed: string): string {
  checkMaster(master);
  const parts = sealed.split(".");
  const [version, ivText, tagText, ctText] = parts;
  if (parts.length !== 4 || version !== VERSION || ivText === undefined || tagText === undefined || ctText === undefined) {
    throw unreadable();
  }
  const iv = Buffer.from(ivText, "base64url");
  const tag = Buffer.from(tagText, "base64url");
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw unreadable();
  const decipher = createDecipheriv("aes-256-gcm", master, iv, { authTagLength: TAG_BYTES });
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(Buffer.from(ctText, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    throw unreadable();
  }
}

function unreadable(): AppError {
  return new AppError("internal", "A stored secret cannot be decrypted: wrong master key or altered data.");
}

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const BASE64_KEY = /^[A-Za-z0-9+/]{43}=$/;

/** Reads a master key written as 64 hex digits or 44 base64 characters (32 bytes either way). */
export function parseMasterKey(text: string, source: string): Buffer {
  const t = text.trim();
  if (HEX_KEY.test(t)) return Buffer.from(t, "hex");
  if (BASE64_KEY.test(t)) {
    const key = Buffer.from(t, "base64");
    if (key.length === KEY_BYTES) return key;
  }
  throw new AppError("internal", `${source} must be 32 bytes written as 64 hex digits or 44 base64 characters.`);
}

/**
 * The master key: from the environment when set (production), else `<dataDir>/master.key`,
 * created on first start for the embedded default. An unreadable existing file is an error and
 * is never replaced: every secret already stored depends on it.
 */
export async function loadMasterKey(opts: { env: string | undefined; dataDir: string }): Promise<Buffer> {
  if (opts.env !== undefined && opts.env.trim() !== "") return parseMasterKey(opts.env, "MASTER_KEY");
  const file = join(opts.dataDir, MASTER_KEY_FILE);
  const existing = await readIfExists(file);
  if (existing !== undefined) {
    narrowFile(file);
    return parseMasterKey(existing, file);
  }

  privateDir(opts.dataDir);
  const key = randomBytes(KEY_BYTES);
  const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  await writeFile(temp, key.toString("hex") + "\n", { mode: PRIVATE_FILE, flag: "wx", flush: true });
  try {
    // link, not rename: it publishes the complete file atomically *and* fails if another process
    // created the key meanwhile, in which case that key wins and ours is discarded.
    await link(temp, file);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return parseMasterKey(await readFile(file, "utf8"), file);
  } finally {
    await unlink(temp);
  }
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}
