import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/** Temp file, fsync, rename, fsync the directory: a crash leaves the old file or the new one, never half of one. */
export function writeFileDurably(path: string, data: Buffer | string): void {
  mkdirSync(dirname(path), { recursive: true });
  const buf = typeof data === "string" ? Buffer.from(data) : data;
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, "w", 0o600);
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
