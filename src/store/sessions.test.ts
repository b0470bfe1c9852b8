import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { STORE_BACKENDS, type TestStoreDatabase } from "../../test/helpers/stores.ts";
import type { Store } from "./store.ts";

let db: TestStoreDatabase;
let store: Store;

describe.each(STORE_BACKENDS)("$name store", (backend) => {
  beforeEach(async () => {
    db = await backend.create();
    store = await db.open({ now: () => Date.parse("2025-03-01T12:00:00.000Z") });
    await store.migrate();
    await store.createAccount({ id: "acc_1", email: "a@example.com", address: "0x1", walletKeyEnc: null, passwordHash: "h", fundedAt: null });
  });

  afterEach(async () => {
    await store.close();
    await db.drop();
  });

  describe("sessions", () => {
    const s = { idHash: "ab".repeat(32), accountId: "acc_1", createdAt: "2025-03-01T12:00:00.000Z", expiresAt: "2025-03-08T12:00:00.000Z" };

    it("finds a session until it expires, and never after", async () => {
      await store.insertSession(s);
      expect(await store.session(s.idHash, "2025-03-08T11:59:59.999Z")).toEqual(s);
      expect(await store.session(s.idHash, "2025-03-08T12:00:00.000Z")).toBeUndefined();
      expect(await store.session("cd".repeat(32), "2025-03-01T12:00:00.000Z")).toBeUndefined();
    });

    it("deletes one session, and purges the expired ones", async () => {
      const other = { ...s, idHash: "cd".repeat(32), expiresAt: "2025-04-01T00:00:00.000Z" };
      await store.insertSession(s);
      await store.insertSession(other);
      await store.purgeSessions("2025-03-09T00:00:00.000Z");
      expect(await store.session(s.idHash, "2025-03-01T12:00:00.000Z")).toBeUndefined();
      expect(await store.session(other.idHash, "2025-03-01T12:00:00.000Z")).toEqual(other);
      await store.deleteSession(other.idHash);
      expect(await store.session(other.idHash, "2025-03-01T12:00:00.000Z")).toBeUndefined();
    });

    it("ends every session of an account whose password is set anew: one opened with the old password opens nothing", async () => {
      await store.createAccount({ id: "acc_2", email: "b@example.com", address: "0x2", walletKeyEnc: null, passwordHash: "h", fundedAt: null });
      const other = { ...s, idHash: "cd".repeat(32), accountId: "acc_2" };
      await store.insertSession(s);
      await store.insertSession(other);
      await store.setPasswordHash("acc_1", "h2");
      expect(await store.session(s.idHash, "2025-03-01T12:00:00.000Z")).toBeUndefined();
      expect(await store.session(other.idHash, "2025-03-01T12:00:00.000Z")).toEqual(other);
      expect((await store.accountById("acc_1"))?.passwordHash).toBe("h2");
    });

    it("refuses a session of an account that does not exist", async () => {
      await expect(store.insertSession({ ...s, accountId: "acc_missing" })).rejects.toThrow();
    });
  });
});
