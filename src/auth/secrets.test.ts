import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppError } from "../domain/errors.ts";
import { MASTER_KEY_FILE, decryptSecret, encryptSecret, loadMasterKey, parseMasterKey } from "./secrets.ts";

const master = randomBytes(32);

function expectInternal(fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("internal");
    return;
  }
  expect.fail("expected an AppError");
}

describe("encryptSecret / decryptSecret", () => {
  it.each(["cs_live_" + "x".repeat(43), "", "0x" + "ab".repeat(32), "naïve ü 日本 🎲"])("round-trips %j", (plain) => {
    const sealed = encryptSecret(master, plain);
    expect(sealed).toMatch(/^v1\.[\w-]{16}\.[\w-]{22}\.[\w-]*$/);
    expect(decryptSecret(master, sealed)).toBe(plain);
  });

  it("uses a fresh IV each time", () => {
    expect(encryptSecret(master, "same")).not.toBe(encryptSecret(master, "same"));
  });

  it("refuses a wrong master key", () => {
    expectInternal(() => decryptSecret(randomBytes(32), encryptSecret(master, "secret")));
  });

  it("refuses a master key that is not 32 bytes", () => {
    expectInternal(() => encryptSecret(randomBytes(16), "secret"));
  });

  it("detects a change to any part", () => {
    const sealed = encryptSecret(master, "cs_live_secret-value");
    const [v, iv, tag, ct] = sealed.split(".") as [string, string, string, string];
    const flip = (s: string): string => (s[0] === "A" ? "B" : "A") + s.slice(1);
    for (const bad of [
      [v, flip(iv), tag, ct],
      [v, iv, flip(tag), ct],
      [v, iv, tag, flip(ct)],
      ["v2", iv, tag, ct],
      [v, iv, tag],
      [v, iv.slice(2), tag, ct],
    ]) {
      expectInternal(() => decryptSecret(master, bad.join(".")));
    }
  });
});

describe("parseMasterKey", () => {
  it("reads hex and base64", () => {
    expect(parseMasterKey(master.toString("hex"), "MASTER_KEY").equals(master)).toBe(true);
    expect(parseMasterKey(master.toString("hex").toUpperCase(), "MASTER_KEY").equals(master)).toBe(true);
    expect(parseMasterKey(master.toString("base64") + "\n", "MASTER_KEY").equals(master)).toBe(true);
  });

  it.each(["", "abc", "00".repeat(31), "00".repeat(33), randomBytes(33).toString("base64")])("refuses %j", (text) => {
    expectInternal(() => parseMasterKey(text, "MASTER_KEY"));
  });
});

describe("loadMasterKey", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "crossfill-master-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("prefers the environment and writes no file", async () => {
    const key = await loadMasterKey({ env: master.toString("base64"), dataDir: dir });
    expect(key.equals(master)).toBe(true);
    expect(await readdir(dir)).toEqual([]);
  });

  it("creates the key file with mode 0600, then reuses it", async () => {
    const dataDir = join(dir, "nested", "data");
    const first = await loadMasterKey({ env: undefined, dataDir });
    expect(first.length).toBe(32);
    const file = join(dataDir, MASTER_KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(dataDir)).toEqual([MASTER_KEY_FILE]);

    const second = await loadMasterKey({ env: "", dataDir });
    expect(second.equals(first)).toBe(true);
    expect((await readFile(file, "utf8")).trim()).toBe(first.toString("hex"));
  });

  it("gives every concurrent caller the same key", async () => {
    const keys = await Promise.all(Array.from({ length: 8 }, () => loadMasterKey({ env: undefined, dataDir: dir })));
    for (const k of keys) expect(k.equals(keys[0]!)).toBe(true);
    expect(await readdir(dir)).toEqual([MASTER_KEY_FILE]);
  });

  it("never replaces an unreadable key file", async () => {
    const file = join(dir, MASTER_KEY_FILE);
    await writeFile(file, "not a key\n");
    await expect(loadMasterKey({ env: undefined, dataDir: dir })).rejects.toMatchObject({ code: "internal" });
    expect(await readFile(file, "utf8")).toBe("not a key\n");
  });
});
