import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { orderRecord, STORE_BACKENDS, type TestStoreDatabase } from "../../test/helpers/stores.ts";
import { AppError } from "../domain/errors.ts";
import type { Clock } from "../domain/types.ts";
import type { DepositRecord, Store, WithdrawalRecord } from "./store.ts";

const BEYOND_DOUBLE = 2n ** 53n + 1n;
let db: TestStoreDatabase;
let store: Store;
const START = Date.parse("2026-01-05T10:00:00.000Z");
const clock: Clock & { ms: number } = { ms: START, now: () => clock.ms };
const iso = () => new Date(clock.ms).toISOString();
const lease = (owner: string, ms = 30_000) => ({ owner, until: new Date(clock.ms + ms).toISOString() });

function withdrawal(over: Partial<WithdrawalRecord> = {}): WithdrawalRecord {
  return {
    id: "wd_1",
    accountId: "acc_1",
    clientWithdrawalId: "w-1",
    requestHash: "h1",
    amount: BEYOND_DOUBLE,
    toAddress: "0x00000000000000000000000000000000000000b0",
    status: "pending",
    txHash: null,
    errorCode: null,
    errorMessage: null,
    createdAt: iso(),
    updatedAt: iso(),
    ...over,
  };
}

function deposit(over: Partial<DepositRecord> = {}): DepositRecord {
  return {
    id: "0xaa:3",
    accountId: "acc_1",
    amount: 25_000_000n,
    fromAddress: "0x00000000000000000000000000000000000000c0",
    txHash: "0xaa",
    place: 3,
    logIndex: 3,
    block: 17n,
    status: "detected",
    creditTx: null,
    creditBlock: null,
    creditBlockHash: null,
    errorMessage: null,
    createdAt: iso(),
    updatedAt: iso(),
    ...over,
  };
}

describe.each(STORE_BACKENDS)("$name store: withdrawals, deposits, activity", (backend) => {
  beforeEach(async () => {
    clock.ms = START;
    db = await backend.create();
    store = await db.open(clock);
    await store.migrate();
    for (const id of ["acc_1", "acc_2"]) {
      await store.createAccount({ id, email: `${id}@example.com`, address: `0x${id === "acc_1" ? "a" : "b"}`.padEnd(42, "0"), walletKeyEnc: "enc", passwordHash: null, fundedAt: null });
    }
  });

  afterEach(async () => {
    await store.close();
    await db.drop();
  });

  describe("withdrawals", () => {
    it("keeps one withdrawal per client id of an account: a retry gets the first back, another account its own", async () => {
      const first = await store.insertWithdrawal(withdrawal(), lease("a"));
      expect(first).toEqual({ created: true, withdrawal: withdrawal() });
      const retry = await store.insertWithdrawal(withdrawal({ id: "wd_2", requestHash: "h2" }));
      expect(retry).toEqual({ created: false, withdrawal: withdrawal() });
      expect((await store.insertWithdrawal(withdrawal({ id: "wd_3", accountId: "acc_2" }))).created).toBe(true);
      expect((await store.insertWithdrawal(withdrawal({ id: "wd_4", clientWithdrawalId: null }))).created).toBe(true);
      expect((await store.insertWithdrawal(withdrawal({ id: "wd_5", clientWithdrawalId: null }))).created).toBe(true);
      expect(await store.withdrawalByClientId("acc_1", "w-1")).toEqual(withdrawal());
      expect(await store.withdrawal("wd_2")).toBeUndefined();
    });

    it("moves only along its state machine, as a compare-and-set under the holder's lease", async () => {
      await store.insertWithdrawal(withdrawal(), lease("a"));
      await expect(store.updateWithdrawal("wd_1", ["pending"], { status: "confirmed" })).rejects.toThrow(/no transition from pending to confirmed/);
      expect(await store.updateWithdrawal("wd_1", ["pending"], { status: "sent" }, "b")).toBeUndefined();
      clock.ms += 1_000;
      const sent = await store.updateWithdrawal("wd_1", ["pending"], { status: "sent" }, "a");
      expect(sent).toMatchObject({ status: "sent", updatedAt: iso() });
      expect(await store.updateWithdrawal("wd_1", ["pending"], { status: "sent" }, "a")).toBeUndefined();
      const done = await store.updateWithdrawal("wd_1", ["sent"], { status: "confirmed", txHash: "0xfeed" });
      expect(done).toMatchObject({ status: "confirmed", txHash: "0xfeed", amount: BEYOND_DOUBLE });
      expect((await store.withdrawalsInStatus(["pending", "sent"])).map((w) => w.id)).toEqual([]);
      expect((await store.withdrawalsInStatus(["confirmed"])).map((w) => w.id)).toEqual(["wd_1"]);
    });

    it("reopens a withdrawal that failed chain_unavailable, once, leased to the retry's instance; no other failed one", async () => {
      const first = withdrawal();
      await store.insertWithdrawal(first, lease("a"));
      await store.insertWithdrawal(withdrawal({ id: "wd_2", clientWithdrawalId: "w-2" }), lease("a"));
      await store.updateWithdrawal("wd_1", ["pending"], { status: "sent" });
      await store.updateWithdrawal("wd_1", ["sent"], { status: "failed", errorCode: "chain_unavailable", errorMessage: "Nothing was paid" });
      await store.updateWithdrawal("wd_2", ["pending"], { status: "sent" });
      await store.updateWithdrawal("wd_2", ["sent"], { status: "failed", errorCode: "withdrawal_refused", errorMessage: "Nothing was paid" });
      clock.ms += 1_000;
      expect(await store.reopenWithdrawal("wd_1", lease("b"))).toEqual({ ...first, updatedAt: iso() });
      expect(await store.reopenWithdrawal("wd_1", lease("c"))).toBeUndefined();
      expect(await store.updateWithdrawal("wd_1", ["pending"], { status: "sent" }, "a")).toBeUndefined();
      expect(await store.updateWithdrawal("wd_1", ["pending"], { status: "sent" }, "b")).toMatchObject({ status: "sent" });
      expect(await store.reopenWithdrawal("wd_2", lease("b"))).toBeUndefined();
    });

    it("leases an open withdrawal to one instance at a time, and lets another take it once the lease ran out", async () => {
      await store.insertWithdrawal(withdrawal(), lease("a"));
      expect(await store.claimWithdrawal("wd_1", lease("b"), iso())).toBe(false);
      await store.renewWithdrawalLeases(["wd_1"], lease("a", 60_000));
      clock.ms += 45_000;
      expect(await store.claimWithdrawal("wd_1", lease("b"), iso())).toBe(false);
      clock.ms += 30_000;
      expect(await store.claimWithdrawal("wd_1", lease("b"), iso())).toBe(true);
      await store.releaseWithdrawal("wd_1", "a");
      expect(await store.claimWithdrawal("wd_1", lease("c"), iso())).toBe(false);
      await store.releaseWithdrawal("wd_1", "b");
      expect(await store.claimWithdrawal("wd_1", lease("c"), iso())).toBe(true);
    });

    it("lists an account's withdrawals newest first, each once across pages", async () => {
      for (let i = 0; i < 5; i++) {
        clock.ms += 1_000;
        await store.insertWithdrawal(withdrawal({ id: `wd_${i}`, clientWithdrawalId: `c${i}`, createdAt: iso(), updatedAt: iso() }));
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await store.listWithdrawals("acc_1", { limit: 2, cursor });
        seen.push(...page.data.map((w) => w.id));
        cursor = page.nextCursor;
      } while (cursor !== null);
      expect(seen).toEqual(["wd_4", "wd_3", "wd_2", "wd_1", "wd_0"]);
      expect((await store.listWithdrawals("acc_2", { limit: 2, cursor: null })).data).toEqual([]);
    });
  });

  describe("deposits", () => {
    it("stores thousands of transfers a scan found in one call, beyond a statement's parameter limit", async () => {
      // 6,000 rows of 15 columns (a scan again from the Vault's deployment): past SQLite's and PostgreSQL's parameter limits.
      const many = Array.from({ length: 6_000 }, (_, i) => deposit({ id: `0xaa:${i}`, place: i, logIndex: i }));
      await store.insertDeposits(many);
      expect((await store.depositsInStatus(["detected"])).length).toBe(6_000);
    });

    it("stores each transfer once, with its first values, and finds it again only when it was dropped, its error cleared", async () => {
      await store.insertDeposits([deposit(), deposit({ id: "0xbb:0", txHash: "0xbb", place: 0, logIndex: 0, block: 18n })]);
      await store.insertDeposits([deposit({ amount: 1n, block: 99n })]);
      expect(await store.depositsInStatus(["detected"])).toEqual([deposit(), deposit({ id: "0xbb:0", txHash: "0xbb", place: 0, logIndex: 0, block: 18n })]);

      const credited = await store.updateDeposit("0xbb:0", ["detected", "crediting"], { status: "credited", creditTx: "0xc1" });
      expect(credited).toMatchObject({ status: "credited", creditTx: "0xc1" });
      await store.insertDeposits([deposit({ id: "0xbb:0", txHash: "0xbb", place: 0, logIndex: 0, block: 30n })]);
      expect((await store.depositsInStatus(["credited"]))[0]).toMatchObject({ id: "0xbb:0", block: 18n });

      const first = deposit();
      await store.updateDeposit("0xaa:3", ["detected"], { status: "dropped", errorMessage: "the transfer is no longer on chain" });
      clock.ms += 5_000;
      await store.insertDeposits([deposit({ block: 21n, createdAt: iso(), updatedAt: iso() })]);
      expect(await store.depositsInStatus(["detected"])).toEqual([{ ...first, block: 21n, updatedAt: iso() }]);
    });

    it("moves a deposit only along its state machine, under the holder's lease", async () => {
      await store.insertDeposits([deposit()]);
      await expect(store.updateDeposit("0xaa:3", ["credited"], { status: "detected" })).rejects.toThrow(/no transition/);
      expect(await store.claimDeposit("0xaa:3", lease("a"), iso())).toBe(true);
      expect(await store.claimDeposit("0xaa:3", lease("b"), iso())).toBe(false);
      expect(await store.updateDeposit("0xaa:3", ["detected"], { status: "crediting" }, "b")).toBeUndefined();
      expect(await store.updateDeposit("0xaa:3", ["detected"], { status: "crediting" }, "a")).toMatchObject({ status: "crediting" });
      await store.releaseDeposit("0xaa:3", "a");
      expect(await store.claimDeposit("0xaa:3", lease("b"), iso())).toBe(true);
      await store.updateDeposit("0xaa:3", ["crediting"], { status: "credited", creditTx: "0xc" }, "b");
      expect(await store.claimDeposit("0xaa:3", lease("c", 1), new Date(clock.ms + 3_600_000).toISOString())).toBe(false);
    });

    it("renews a deposit's lease for its holder only, so no one else takes it before the renewed lease runs out", async () => {
      await store.insertDeposits([deposit()]);
      expect(await store.claimDeposit("0xaa:3", lease("a"), iso())).toBe(true);
      await store.renewDepositLeases(["0xaa:3"], lease("a", 60_000));
      await store.renewDepositLeases(["0xaa:3"], lease("b", 3_600_000));
      clock.ms += 45_000;
      expect(await store.claimDeposit("0xaa:3", lease("b"), iso())).toBe(false);
      clock.ms += 30_000;
      expect(await store.claimDeposit("0xaa:3", lease("b"), iso())).toBe(true);
    });

    it("keeps the chain scan cursor by name", async () => {
      expect(await store.chainCursor("deposits:1")).toBeUndefined();
      await store.setChainCursor("deposits:1", { block: 10n, hash: "0x10" });
      await store.setChainCursor("deposits:1", { block: BEYOND_DOUBLE, hash: "0x11" });
      expect(await store.chainCursor("deposits:1")).toEqual({ block: BEYOND_DOUBLE, hash: "0x11" });
      expect(await store.chainCursor("deposits:2")).toBeUndefined();
    });

    it("raises a chain cursor, never lowers it, whoever writes", async () => {
      await store.raiseChainCursor("holds:1", { block: 10n, hash: "0x10" });
      await store.raiseChainCursor("holds:1", { block: 9n, hash: "0x09" });
      await store.raiseChainCursor("holds:1", { block: 10n, hash: "0x0a" });
      expect(await store.chainCursor("holds:1")).toEqual({ block: 10n, hash: "0x10" });
      await store.raiseChainCursor("holds:1", { block: BEYOND_DOUBLE, hash: "0x11" });
      expect(await store.chainCursor("holds:1")).toEqual({ block: BEYOND_DOUBLE, hash: "0x11" });
    });
  });

  describe("activity", () => {
    const at = (s: number) => new Date(START + s * 1000).toISOString();

    it("lists an account's faucet drips newest first, each once", async () => {
      const drip = { key: "0xkey", txHash: "0xf0", accountId: "acc_1", amount: BEYOND_DOUBLE, createdAt: at(1) };
      await store.recordFaucetDrip(drip);
      await store.recordFaucetDrip({ ...drip, key: "0xkey2", txHash: "0xf1", createdAt: at(2) });
      await store.recordFaucetDrip(drip);
      await store.recordFaucetDrip({ ...drip, accountId: "acc_2", txHash: "0xf2" });
      expect(await store.faucetDrips("acc_1")).toEqual([{ ...drip, key: "0xkey2", txHash: "0xf1", createdAt: at(2) }, drip]);
    });

    it("lists every movement of the account's money newest first, with its tx hash, across pages", async () => {
      await store.recordFaucetDrip({ key: "0xkey", txHash: "0xf0", accountId: "acc_1", amount: 10_000_000_000n, createdAt: at(1) });
      await store.recordFaucetDrip({ key: "0xkey", txHash: "0xf0", accountId: "acc_1", amount: 10_000_000_000n, createdAt: at(1) });
      await store.insertOrder(orderRecord({ id: "ord_a", status: "filled", locked: 10_000_000n, spent: 9_000_000n, lockTx: "0xl1", settleTx: "0xs1", createdAt: at(2), updatedAt: at(3) }));
      await store.insertOrder(orderRecord({ id: "ord_b", status: "failed", locked: 5_000_000n, lockTx: "0xl2", releaseTx: "0xr2", createdAt: at(4), updatedAt: at(5) }));
      await store.insertOrder(orderRecord({ id: "ord_c", status: "rejected", createdAt: at(6) }));
      // A sell's proceeds once it settled; a sell whose shares all came back moved no money.
      await store.insertOrder(orderRecord({ id: "ord_s", side: "sell", amount: 0n, shares: 4_000_000n, escrowed: 4_000_000n, status: "partially_filled", filledShares: 3_000_000n, proceeds: 1_470_000n, lockTx: "0xe1", settleTx: "0xs2", createdAt: at(6), updatedAt: at(6.5) }));
      await store.insertOrder(orderRecord({ id: "ord_t", side: "sell", amount: 0n, shares: 1_000_000n, escrowed: 1_000_000n, status: "failed", lockTx: "0xe2", releaseTx: "0xr3", createdAt: at(6), updatedAt: at(6.6) }));
      await store.insertDeposits([deposit({ status: "credited", creditTx: "0xc3", createdAt: at(7) })]);
      await store.insertWithdrawal(withdrawal({ status: "confirmed", txHash: "0xw", createdAt: at(8) }));
      await store.insertWithdrawal(withdrawal({ id: "wd_other", accountId: "acc_2", createdAt: at(9) }));

      const entries = [];
      let cursor: string | null = null;
      do {
        const page = await store.activity("acc_1", { limit: 3, cursor });
        entries.push(...page.data);
        cursor = page.nextCursor;
      } while (cursor !== null);
      expect(entries.map((e) => [e.type, e.reference, e.amount, e.txHash, e.status, e.address])).toEqual([
        ["withdrawal", "wd_1", BEYOND_DOUBLE, "0xw", "confirmed", "0x00000000000000000000000000000000000000b0"],
        ["deposit", "0xaa:3", 25_000_000n, "0xc3", "credited", "0x00000000000000000000000000000000000000c0"],
        ["sell", "ord_s", 1_470_000n, "0xs2", "partially_filled", null],
        ["release", "ord_b", 5_000_000n, "0xr2", "failed", null],
        ["lock", "ord_b", 5_000_000n, "0xl2", "failed", null],
        ["settle", "ord_a", 9_000_000n, "0xs1", "filled", null],
        ["release", "ord_a", 1_000_000n, "0xs1", "filled", null],
        ["lock", "ord_a", 10_000_000n, "0xl1", "filled", null],
        ["faucet", "0xkey", 10_000_000_000n, "0xf0", "credited", null],
      ]);
      expect(entries.map((e) => e.createdAt)).toEqual([at(8), at(7), at(6.5), at(5), at(4), at(3), at(3), at(2), at(1)]);
      expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
      expect((await store.activity("acc_2", { limit: 50, cursor: null })).data.map((e) => e.reference)).toEqual(["wd_other"]);
    });

    it("lists what a settled buy gave back beside what it spent, so that each buy's lock is its settle plus its release", async () => {
      await store.insertOrder(orderRecord({ id: "ord_p", status: "partially_filled", locked: 10_000_000n, spent: 6_250_001n, lockTx: "0xl", settleTx: "0xs", createdAt: at(1), updatedAt: at(2) }));
      await store.insertOrder(orderRecord({ id: "ord_w", status: "filled", locked: 5_000_000n, spent: 5_000_000n, lockTx: "0xl2", settleTx: "0xs2", createdAt: at(3), updatedAt: at(4) }));
      await store.insertOrder(orderRecord({ id: "ord_f", status: "failed", locked: 2_000_000n, lockTx: "0xl3", releaseTx: "0xr3", createdAt: at(5), updatedAt: at(6) }));
      const entries = (await store.activity("acc_1", { limit: 50, cursor: null })).data;
      for (const id of ["ord_p", "ord_w", "ord_f"]) {
        const of = (type: string) => entries.filter((e) => e.reference === id && e.type === type).reduce((s, e) => s + e.amount, 0n);
        expect(of("lock"), id).toBe(of("settle") + of("release"));
      }
      expect(entries.find((e) => e.id === "release:ord_p")).toMatchObject({ amount: 3_749_999n, txHash: "0xs", status: "partially_filled", createdAt: at(2) });
      // Spent whole: nothing given back, no release listed.
      expect(entries.filter((e) => e.reference === "ord_w").map((e) => e.type)).toEqual(["settle", "lock"]);
    });

    it("lists a lock at the time it was recorded, not when its order was placed, so it is never listed behind what came before it", async () => {
      const pending = orderRecord({ id: "ord_l", status: "pending", locked: 0n, createdAt: at(1), updatedAt: at(1) });
      await store.insertOrder(pending);
      await store.insertOrder({ ...pending, id: "ord_lost", clientOrderId: "lost" });
      await store.insertDeposits([deposit({ status: "credited", creditTx: "0xc3", createdAt: at(2) })]);
      clock.ms = START + 3_000;
      await store.updateOrder("ord_l", ["pending"], { status: "locked", locked: 5_000_000n, lockTx: "0xl" });
      // Recovery releases both; a lock whose answer was lost, found on chain, is recorded with its release.
      clock.ms = START + 9_000;
      for (const [id, locked] of [["ord_l", 5_000_000n], ["ord_lost", 7_000_000n]] as const) {
        await store.updateOrder(id, ["pending", "locked"], { status: "failed", locked, lockTx: `0x${id}`, releaseTx: `0xr${id}` });
      }
      const entries = (await store.activity("acc_1", { limit: 50, cursor: null })).data;
      expect(entries.map((e) => [e.id, e.createdAt])).toEqual([
        ["release:ord_lost", at(9)],
        ["release:ord_l", at(9)],
        ["lock:ord_lost", at(9)],
        ["lock:ord_l", at(3)],
        ["deposit:0xaa:3", at(2)],
      ]);
    });

    it("pages through many movements of one instant, each once, in the order of their ids (kind, then reference)", async () => {
      for (const id of ["ord_1", "ord_2", "ord_3", "ord_4", "ord_5"]) {
        await store.insertOrder(orderRecord({ id, status: "filled", locked: 10_000_000n, spent: 9_000_000n, lockTx: "0xl", settleTx: "0xs", createdAt: at(1), updatedAt: at(1) }));
      }
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await store.activity("acc_1", { limit: 3, cursor });
        ids.push(...page.data.map((e) => e.id));
        cursor = page.nextCursor;
      } while (cursor !== null);
      const newest = ["ord_5", "ord_4", "ord_3", "ord_2", "ord_1"];
      expect(ids).toEqual([...newest.map((id) => `settle:${id}`), ...newest.map((id) => `release:${id}`), ...newest.map((id) => `lock:${id}`)]);
    });

    it("refuses a cursor it did not issue", async () => {
      await expect(store.activity("acc_1", { limit: 5, cursor: "nope" })).rejects.toBeInstanceOf(AppError);
    });
  });

  it("keeps a key's withdrawal allowlist, none unless given", async () => {
    const plain = await store.insertApiKey({ apiKey: "ck_1", accountId: "acc_1", name: "a", scopes: ["read"], secretEnc: "s", ipAllowlist: null });
    expect(plain.withdrawalAllowlist).toBeNull();
    await store.insertApiKey({ apiKey: "ck_2", accountId: "acc_1", name: "b", scopes: ["read", "withdraw"], secretEnc: "s", ipAllowlist: null, withdrawalAllowlist: ["0xab"] });
    expect(await store.apiKey("ck_2")).toMatchObject({ scopes: ["read", "withdraw"], withdrawalAllowlist: ["0xab"] });
    expect((await store.apiKey("ck_1"))?.withdrawalAllowlist).toBeNull();
  });
});
