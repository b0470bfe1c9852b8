import { chmodSync, closeSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { narrowFile, openPrivate, privateDir, privateTree } from "./private-files.ts";

let root: string;
let umask: number;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "crossfill-private-"));
  // The widest umask there is: whatever is owner-only below is so by our modes, not by the umask.
  umask = process.umask(0);
});
afterEach(() => {
  process.umask(umask);
  rmSync(root, { recursive: true, force: true });
});

const mode = (path: string) => statSync(path).mode & 0o777;

describe("owner-only files", () => {
  it("creates directories 0700, parents too, and narrows one that exists", () => {
    privateDir(join(root, "a", "b"));
    expect([mode(join(root, "a")), mode(join(root, "a", "b"))]).toEqual([0o700, 0o700]);
    mkdirSync(join(root, "wide"), { mode: 0o777 });
    privateDir(join(root, "wide"));
    expect(mode(join(root, "wide"))).toBe(0o700);
  });

  it("opens files 0600, whether it creates them or finds them world-readable", () => {
    closeSync(openPrivate(join(root, "new"), "a"));
    writeFileSync(join(root, "old"), "x", { mode: 0o666 });
    closeSync(openPrivate(join(root, "old"), "w"));
    expect([mode(join(root, "new")), mode(join(root, "old"))]).toEqual([0o600, 0o600]);
  });

  it("narrows a file that exists and leaves a missing one missing", () => {
    writeFileSync(join(root, "f"), "x", { mode: 0o644 });
    narrowFile(join(root, "f"));
    narrowFile(join(root, "missing"));
    expect(mode(join(root, "f"))).toBe(0o600);
    expect(() => statSync(join(root, "missing"))).toThrow();
  });

  it("narrows a whole tree", () => {
    mkdirSync(join(root, "t", "home"), { recursive: true, mode: 0o755 });
    writeFileSync(join(root, "t", "journal"), "", { mode: 0o644 });
    writeFileSync(join(root, "t", "home", "state"), "", { mode: 0o664 });
    chmodSync(join(root, "t"), 0o755);
    privateTree(join(root, "t"));
    expect([join(root, "t"), join(root, "t", "home")].map(mode)).toEqual([0o700, 0o700]);
    expect([join(root, "t", "journal"), join(root, "t", "home", "state")].map(mode)).toEqual([0o600, 0o600]);
  });
});
