import { closeSync, fsyncSync, openSync, renameSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { openPrivate, privateDir } from "../private-files.ts";

/**
 * Temp file, fsync, rename, fsync the directory: a crash leaves the old file or the new one, never half
 * of one. The file and its directory are owner-only (the chain's state and the operator's key).
 */
export function writeFileDurably(path: string, data: Buffer | string): void {
  privateDir(dirname(path));
  const buf = typeof data === "string" ? Buffer.from(data) : data;
  const tmp = `${path}.tmp`;
  const fd = openPrivate(tmp, "w");
  try {
    for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  fsyncPath(dirname(path));
}

export function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
