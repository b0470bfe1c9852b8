import { copyFileSync, existsSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../store.ts";
import { startCheckpointer } from "./checkpointer.ts";
import { openSqliteStore } from "./sqlite-store.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "crossfill-checkpointer-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const failed = (err: Error) => expect.unreachable(`the checkpointer failed: ${err.message}`);

/** Accounts in a copy of the database file alone, without its WAL: what checkpoints have moved into it. */
function accountsInDatabaseFile(file: string): number {
  const copy = join(dir, "copy.db");
  copyFileSync(file, copy);
  const db = new BetterSqlite3(copy, { readonly: true });
  try {
    return Number(db.prepare("SELECT count(*) AS n FROM accounts").pluck().get());
  } finally {
    db.close();
  }
}

/** Accounts `from` to `to` - 1, each its own commit. */
async function createAccounts(store: Store, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++) {
    await store.createAccount({ id: `acc_${i}`, email: `${i}@example.com`, address: `0x${i.toString(16).padStart(40, "0")}`, walletKeyEnc: null, passwordHash: null, fundedAt: null });
  }
}

describe("the SQLite store's checkpointer", () => {
  it("moves what the store commits from the WAL into the database file, beside the store's connection", async () => {
    const file = join(dir, "crossfill.db");
    const store = await openSqliteStore(file, { checkpointer: { onFailure: failed } });
    try {
      await store.migrate();
      // Far fewer pages than SQLite's own automatic checkpoint waits for (1,000): only the worker moves them.
      await createAccounts(store, 0, 50);
      await expect.poll(() => accountsInDatabaseFile(file), { timeout: 10_000, interval: 100 }).toBe(50);
      await createAccounts(store, 50, 110);
      await expect.poll(() => accountsInDatabaseFile(file), { timeout: 10_000, interval: 100 }).toBe(110);
    } finally {
      await store.close();
    }
  });

  it("stops with the store: the last connection closed, SQLite folds the WAL into the database and removes it", async () => {
    const file = join(dir, "crossfill.db");
    const store = await openSqliteStore(file, { checkpointer: { onFailure: failed } });
    await store.migrate();
    await createAccounts(store, 0, 5);
    expect(existsSync(`${file}-wal`)).toBe(true);
    await store.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(accountsInDatabaseFile(file)).toBe(5);
  });

  it("leaves the store checkpointing inside its own commits again when its worker fails", async () => {
    const file = join(dir, "crossfill.db");
    let report!: (err: Error) => void;
    const reported = new Promise<Error>((resolve) => (report = resolve));
    const store = await openSqliteStore(file, { checkpointer: { onFailure: report } });
    try {
      // The worker opens the database by its name a few milliseconds after the store has: gone by then, it fails.
      renameSync(file, `${file}.away`);
      expect((await reported).message).toMatch(/unable to open database file/);
      renameSync(`${file}.away`, file);
      await store.migrate();
      // ~3 pages a commit: SQLite's own checkpoint, at 1,000 pages of WAL, has moved some of them into the file.
      await createAccounts(store, 0, 600);
      expect(accountsInDatabaseFile(file)).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  });

  it("tells its caller, with SQLite's words, when its worker fails", async () => {
    const failure = new Promise<Error>((resolve) => startCheckpointer(join(dir, "missing.db"), { busyTimeoutMs: 100, onFailure: resolve }));
    expect((await failure).message).toMatch(/unable to open database file/);
  });
});
