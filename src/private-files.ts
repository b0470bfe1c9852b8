// Everything crossfill keeps on disk is owner-only: the master key, the encrypted API secrets, every
// order and the dev chain's operator key. A mode given to mkdir or open passes through the umask,
// so each is also set with chmod; and files made by earlier versions (0644, 0755) are narrowed at start.
import { chmodSync, closeSync, fchmodSync, mkdirSync, openSync, readdirSync } from "node:fs";
import { join } from "node:path";

export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;

/** Creates `dir` (with missing parents) owner-only, or narrows it if it is already there. */
export function privateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
  chmodSync(dir, PRIVATE_DIR);
}

/** Narrows `path` to owner-only if it exists. */
export function narrowFile(path: string): void {
  try {
    chmodSync(path, PRIVATE_FILE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

/** openSync for a file that is owner-only whether this call creates it or finds it. */
export function openPrivate(path: string, flags: string): number {
  const fd = openSync(path, flags, PRIVATE_FILE);
  try {
    fchmodSync(fd, PRIVATE_FILE);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}

/** Makes `dir` and everything below it owner-only; for a directory that only crossfill writes to. */
export function privateTree(dir: string): void {
  privateDir(dir);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) privateTree(path);
    else if (entry.isFile()) chmodSync(path, PRIVATE_FILE);
  }
}
