import type { Hex } from "viem";
import { describe, expect, it } from "vitest";
import { sotTokenId } from "../contracts/sot.ts";
import type { MarketCatalog } from "../markets/catalog.ts";
import type { Store } from "../store/store.ts";
import { openSqliteStore } from "../store/sqlite/sqlite-store.ts";
import { orderRecord } from "../../test/helpers/stores.ts";
import { keyOf, newClient } from "../vault/testkit.ts";
import type { RedemptionItem, Vault } from "../vault/vault.ts";
import { testChainPerFile } from "../vault/vitest-kit.ts";
import { ResolutionService, redemptionKey } from "./service.ts";

/** A pass over one undecided event listed on two venues that are still open, with the venues' reads counted. */
function setUp(pollMs: number) {
  let now = 1_000_000;
  const asked: string[] = [];
  const store = { eventResolutions: async () => [], redemptions: async () => [] } as unknown as Store;
  const catalog = { events: () => [{ eventId: "ev", status: "open", listings: [{ venue: "a", venueMarketId: "a-1" }, { venue: "b", venueMarketId: "b-1" }] }] } as unknown as MarketCatalog;
  const service = new ResolutionService({
    store,
    vault: {} as Vault,
    catalog,
    venues: new Set(["a", "b"]),
    ask: async (venue) => {
      asked.push(venue);
      return { state: "open" };
    },
    tokenId: () => 0n,
    pollMs,
    clock: { now: () => now },
    log: { info: () => undefined, warn: () => undefined, error: () => undefined } as never,
  });
  return { service, asked, advance: (ms: number) => (now += ms) };
}

describe("resolution pass", () => {
  it("asks the venues about an undecided event once per poll interval, however often it runs", async () => {
    const { service, asked, advance } = setUp(60_000);
    await service.pass();
    expect(asked).toEqual(["a", "b"]);
    advance(59_999);
    await service.pass();
    expect(asked).toHaveLength(2);
    advance(1);
    await service.pass();
    expect(asked).toEqual(["a", "b", "a", "b"]);
  });

  it("asks at every pass with a poll interval of 0", async () => {
    const { service, asked } = setUp(0);
    await service.pass();
    await service.pass();
    expect(asked).toHaveLength(4);
  });
});

describe("a venue that does not answer", () => {
  it("is asked once a pass, not once for every event it lists: each ask of a venue that is down waits out its timeout and retries", async () => {
    const asked: string[] = [];
    const warned: object[] = [];
    const both = [{ venue: "down", venueMarketId: "d" }, { venue: "up", venueMarketId: "u" }];
    const service = new ResolutionService({
      store: { eventResolutions: async () => [], redemptions: async () => [] } as unknown as Store,
      vault: {} as Vault,
      catalog: {
        events: () => [
          { eventId: "ev1", status: "open", listings: both },
          { eventId: "ev2", status: "open", listings: both },
          { eventId: "ev3", status: "open", listings: both },
          { eventId: "ev4", status: "open", listings: [{ venue: "up", venueMarketId: "u4" }] },
        ],
      } as unknown as MarketCatalog,
      venues: new Set(["down", "up"]),
      ask: async (venue, market) => {
        asked.push(`${venue} ${market}`);
        if (venue === "down") throw new Error("timeout: no answer within 3000 ms");
        return { state: "open" };
      },
      tokenId: () => 0n,
      pollMs: 60_000,
      clock: { now: () => 1_000_000 },
      log: { info: () => undefined, warn: (o: object) => warned.push(o), error: () => undefined } as never,
    });
    await service.pass();
    expect(asked).toEqual(["down d", "up u4"]);
    expect(warned).toHaveLength(1);
    // The events it held up are asked at the next pass, not a poll interval later.
    await service.pass();
    expect(asked.slice(2)).toEqual(["down d"]);
  });

  it("does not starve the venue's other events behind one it cannot answer for (a market it no longer lists), at any poll interval", async () => {
    const asked: string[] = [];
    const service = new ResolutionService({
      store: { eventResolutions: async () => [], redemptions: async () => [] } as unknown as Store,
      vault: {} as Vault,
      catalog: {
        events: () => [
          { eventId: "ev1", status: "open", listings: [{ venue: "v", venueMarketId: "gone" }] },
          { eventId: "ev2", status: "open", listings: [{ venue: "v", venueMarketId: "m2" }] },
          { eventId: "ev3", status: "open", listings: [{ venue: "v", venueMarketId: "m3" }] },
        ],
      } as unknown as MarketCatalog,
      venues: new Set(["v"]),
      ask: async (_venue, market) => {
        asked.push(market);
        if (market === "gone") throw new Error("v: GET /markets/gone failed: 404 not_found");
        return { state: "open" };
      },
      tokenId: () => 0n,
      pollMs: 0,
      clock: { now: () => 1_000_000 },
      log: { info: () => undefined, warn: () => undefined, error: () => undefined } as never,
    });
    for (let i = 0; i < 3; i++) await service.pass();
    expect(asked).toEqual(["gone", "m2", "m3", "gone", "m2", "m3", "gone"]);
  });
});

describe("a pass asked for while one runs", () => {
  it("begins after the running one, so it sees a decision stored meanwhile; idle waits for both", async () => {
    const stored: { eventId: string; status: "disputed"; outcome: null }[] = [];
    const told: string[] = [];
    let answer: (() => void) | undefined;
    const service = new ResolutionService({
      store: { eventResolutions: async () => [...stored], redemptions: async () => [] } as unknown as Store,
      vault: {} as Vault,
      catalog: {
        events: () => [{ eventId: "ev", status: "open", listings: [{ venue: "a", venueMarketId: "a-1" }] }],
        decided: (eventId: string, status: string) => told.push(`${eventId} ${status}`),
      } as unknown as MarketCatalog,
      // The first pass waits on the venue until the test lets it go.
      venues: new Set(["a"]),
      ask: () => new Promise((resolve) => (answer = () => resolve({ state: "open" }))),
      tokenId: () => 0n,
      pollMs: 60_000,
      clock: { now: () => 1_000_000 },
      log: { info: () => undefined, warn: () => undefined, error: () => undefined } as never,
    });
    const first = service.pass();
    await new Promise((r) => setImmediate(r));
    expect(answer).toBeDefined();
    stored.push({ eventId: "ev", status: "disputed", outcome: null });
    const second = service.pass();
    expect(service.pass()).toBe(second);
    let idle = false;
    void service.idle().then(() => (idle = true));
    answer!();
    await first;
    expect(told).toEqual([]);
    await second;
    expect(told).toEqual(["ev disputed"]);
    await new Promise((r) => setImmediate(r));
    expect(idle).toBe(true);
  });
});

describe("planning the redemptions of resolved events", () => {
  it("reads the open orders once a pass, plans every holder, and reads again an event on which an order is open until it finishes", async () => {
    const resolved = ["a", "b"].map((eventId) => ({ eventId, status: "resolved", outcome: "YES" }));
    const alice = { accountId: "alice", address: "0xa" };
    const bob = { accountId: "bob", address: "0xb" };
    let open = [{ eventId: "b", accountId: "bob" }];
    let openReads = 0;
    const asked: string[][] = [];
    const service = new ResolutionService({
      store: {
        eventResolutions: async () => resolved,
        redemptions: async () => [],
        ordersInStatus: async () => (openReads++, open),
        holders: async (eventId: string) => (eventId === "a" ? [alice] : [alice, bob]),
      } as unknown as Store,
      vault: { sotBalances: async (hs: { account: string }[]) => (asked.push(hs.map((h) => h.account)), hs.map(() => 0n)) } as unknown as Vault,
      catalog: { events: () => [], decided: () => undefined } as unknown as MarketCatalog,
      venues: new Set([]),
      ask: async () => ({ state: "open" }),
      tokenId: () => 0n,
      pollMs: 0,
      clock: { now: () => 1_000_000 },
      log: { info: () => undefined, warn: () => undefined, error: () => undefined } as never,
    });
    await service.pass();
    expect(openReads).toBe(1);
    // Each holder's balance of both tokens, bob's too while his order on b is open.
    expect(asked).toEqual([["0xa", "0xa"], ["0xa", "0xa", "0xb", "0xb"]]);
    // a is done; b is read again while the order on it is open, and once more after it finished.
    await service.pass();
    expect(openReads).toBe(2);
    expect(asked.slice(2)).toEqual([["0xa", "0xa", "0xb", "0xb"]]);
    open = [];
    await service.pass();
    expect(openReads).toBe(3);
    expect(asked.slice(3)).toEqual([["0xa", "0xa", "0xb", "0xb"]]);
    await service.pass();
    expect(openReads).toBe(3);
    expect(asked).toHaveLength(4);
  });
});

describe("redeeming a resolved event's positions against the holders' balances", () => {
  const ADDRESS = "0x00000000000000000000000000000000000000aa";
  const TX = `0x${"cd".repeat(32)}`;

  /** The real SQLite store with one account holding YES (token 1) of a resolved event, and a Vault that refuses a redemption of more shares than held. */
  async function setUp() {
    const store = await openSqliteStore(":memory:");
    await store.migrate();
    await store.createAccount({ id: "acc", email: "a@example.com", address: ADDRESS, walletKeyEnc: null, passwordHash: null, fundedAt: null });
    const now = new Date(1_000_000).toISOString();
    await store.insertOrder({
      id: "ord_1", accountId: "acc", clientOrderId: null, requestHash: "x", eventId: "ev", outcome: "YES", side: "buy",
      amount: 10_000_000n, shares: 0n, maxSlippage: 10_000n, strategy: "optimize_price", timeInForce: "FOK",
      status: "filled", locked: 10_000_000n, spent: 5_000_000n, fees: 0n, filledShares: 10_000_000n, escrowed: 0n, proceeds: 0n,
      routedTo: "v", legs: [], plannedInFull: true, dustLeft: false, sotTokenId: "1", lockTx: null, settleTx: TX, releaseTx: null, errorCode: null, errorMessage: null, errorDetails: null,
      createdAt: now, updatedAt: now, lockedAt: now,
    });
    await store.decideEvent({ eventId: "ev", status: "resolved", outcome: "YES", decidedBy: "operator", venueReports: {}, decidedAt: now });
    const balance = new Map<bigint, bigint>([[1n, 10_000_000n]]);
    const paid: { key: string; shares: bigint; payout: bigint }[] = [];
    let beforeRedeem: (() => void) | undefined;
    let afterBalances: (() => void | Promise<void>) | undefined;
    const vault = {
      sotBalances: async (hs: readonly { tokenId: bigint }[]) => {
        const read = hs.map((h) => balance.get(h.tokenId) ?? 0n);
        const after = afterBalances;
        afterBalances = undefined;
        await after?.();
        return read;
      },
      redeem: async (items: readonly RedemptionItem[]) => {
        beforeRedeem?.();
        beforeRedeem = undefined;
        for (const i of items) {
          if (paid.some((p) => p.key === i.key) || i.shares > (balance.get(i.tokenId) ?? 0n)) continue;
          balance.set(i.tokenId, balance.get(i.tokenId)! - i.shares);
          paid.push({ key: i.key, shares: i.shares, payout: i.payout });
        }
        return { txHash: TX, blockNumber: 1n };
      },
      redemption: async (key: string) => {
        const p = paid.find((x) => x.key === key);
        return p ? { shares: p.shares, payout: p.payout, txHash: TX, blockNumber: 1n, logIndex: 0 } : null;
      },
    } as unknown as Vault;
    const service = new ResolutionService({
      store,
      vault,
      catalog: { events: () => [], decided: () => undefined } as unknown as MarketCatalog,
      venues: new Set([]),
      ask: async () => ({ state: "open" }),
      tokenId: (_event, outcome) => (outcome === "YES" ? 1n : 2n),
      pollMs: 0,
      clock: { now: () => 1_000_000 },
      log: { info: () => undefined, warn: () => undefined, error: () => undefined } as never,
    });
    const credited = () => paid.reduce((s, p) => s + p.payout, 0n);
    return { store, service, balance, paid, credited, beforeRedeem: (f: () => void) => (beforeRedeem = f), afterBalances: (f: () => void | Promise<void>) => (afterBalances = f) };
  }

  it("redeems shares that reach a holder after its first redemption under the holder's next key", async () => {
    const { store, service, balance, paid, credited } = await setUp();
    await service.pass();
    expect(credited()).toBe(10_000_000n);
    // An order taken by an instance that had not yet applied the decision settles 5 more.
    balance.set(1n, 5_000_000n);
    await service.pass();
    expect(credited()).toBe(15_000_000n);
    expect(paid.map((p) => p.key)).toEqual([redemptionKey("ev", "YES", ADDRESS, 0), redemptionKey("ev", "YES", ADDRESS, 1)]);
    const stored = new Map((await store.redemptions()).map((r) => [r.key, [r.status, r.shares]]));
    expect(stored).toEqual(new Map([[paid[0]!.key, ["redeemed", 10_000_000n]], [paid[1]!.key, ["redeemed", 5_000_000n]]]));
  });

  it("plans an event it found done again once an order on it finishes", async () => {
    const { service, balance, credited } = await setUp();
    await service.pass();
    await service.pass();
    balance.set(1n, 2_000_000n);
    await service.pass();
    expect(credited()).toBe(10_000_000n);
    service.orderFinished("ev");
    await service.pass();
    expect(credited()).toBe(12_000_000n);
  });

  it("redeems what the holder holds when its shares fell after the plan: refused once, then set to the shares held", async () => {
    const { store, service, balance, credited, beforeRedeem } = await setUp();
    // A sell's escrow takes 4 between the plan and the redeem transaction.
    beforeRedeem(() => balance.set(1n, 6_000_000n));
    await service.pass();
    expect(credited()).toBe(0n);
    await service.pass();
    expect(credited()).toBe(6_000_000n);
    expect((await store.redemptions()).map((r) => [r.status, r.shares, r.payout])).toEqual([["redeemed", 6_000_000n, 6_000_000n]]);
  });

  it("sends no redemption while its holder holds nothing (a sell's escrow), and sends it for what comes back", async () => {
    const { store, service, balance, credited, beforeRedeem } = await setUp();
    beforeRedeem(() => balance.set(1n, 0n));
    await service.pass();
    await service.pass();
    expect(credited()).toBe(0n);
    expect((await store.redemptions()).map((r) => [r.status, r.shares])).toEqual([["pending", 10_000_000n]]);
    // The sell sold 7 and returned 3.
    balance.set(1n, 3_000_000n);
    await service.pass();
    expect(credited()).toBe(3_000_000n);
    expect((await store.redemptions()).map((r) => [r.status, r.shares])).toEqual([["redeemed", 3_000_000n]]);
  });

  it("plans the event again when an order on it finished while a pass read its holders as holding nothing", async () => {
    const { service, balance, credited, afterBalances } = await setUp();
    await service.pass();
    expect(credited()).toBe(10_000_000n);
    // While the pass plans on balances of 0, an order on the event finishes with 3 shares.
    afterBalances(() => {
      balance.set(1n, 3_000_000n);
      service.orderFinished("ev");
    });
    await service.pass();
    await service.pass();
    expect(credited()).toBe(13_000_000n);
  });

  it("redeems the shares a holder holds while its sell waits on a venue this server does not run, and what the sell returns once it ends", async () => {
    const { store, service, balance, credited } = await setUp();
    // A sell of 4 more, escrowed (out of the holder's balance of 10), whose child order went to a venue this server does
    // not run: recovery waits for it until its escrow's deadline, a day.
    const at = new Date(1_000_000).toISOString();
    await store.insertOrder(
      orderRecord({
        id: "ord_sell", accountId: "acc", eventId: "ev", side: "sell", amount: 0n, shares: 4_000_000n, status: "routing", escrowed: 4_000_000n, sotTokenId: "1",
        legs: [{ venue: "gone", clientOrderId: "c-gone", venueMarketId: "g-1", limitPrice: 500_000n, shares: 4_000_000n, round: 1, expiresAt: 0 }], createdAt: at, updatedAt: at, lockedAt: at,
      }),
    );
    await service.pass();
    expect(credited()).toBe(10_000_000n);
    // The sell ends (another instance's recovery: this process is not told): it sold 1 and returned 3, redeemed under the next key.
    await store.updateOrder("ord_sell", ["routing"], { status: "partially_filled", filledShares: 1_000_000n, proceeds: 990_000n, settleTx: TX });
    balance.set(1n, 3_000_000n);
    await service.pass();
    expect(credited()).toBe(13_000_000n);
    expect(new Map((await store.redemptions()).map((r) => [r.key, [r.status, r.shares]]))).toEqual(
      new Map([[redemptionKey("ev", "YES", ADDRESS, 0), ["redeemed", 10_000_000n]], [redemptionKey("ev", "YES", ADDRESS, 1), ["redeemed", 3_000_000n]]]),
    );
  });

  it("leaves no redemption pending for good when another instance's redemption lands while this one plans", async () => {
    const { store, service, balance, paid, credited, beforeRedeem, afterBalances } = await setUp();
    // The first pass plans key 0 but a sell's escrow holds the shares when it comes to send it: key 0 stays pending.
    beforeRedeem(() => balance.set(1n, 0n));
    await service.pass();
    expect((await store.redemptions()).map((r) => r.status)).toEqual(["pending"]);
    balance.set(1n, 10_000_000n); // the sell returned them
    // This instance reads the holder's balance (10); then another instance, sharing the store, redeems key 0 and records it.
    afterBalances(async () => {
      const key = redemptionKey("ev", "YES", ADDRESS, 0);
      balance.set(1n, 0n);
      paid.push({ key, shares: 10_000_000n, payout: 10_000_000n });
      await store.markRedeemed(key, { shares: 10_000_000n, payout: 10_000_000n, txHash: TX }, new Date(1_000_000).toISOString());
    });
    await service.pass();
    await service.pass();
    await service.pass();
    expect(credited()).toBe(10_000_000n);
    // Nothing is left to redeem, so nothing should be left pending (crossfill audit's redemptions_made).
    expect((await store.redemptions()).filter((r) => r.status === "pending").map((r) => [r.key, r.shares])).toEqual([]);
  });
});

describe("an event listed on a venue this deployment does not run", () => {
  /** The real SQLite store, and an event listed on `run` (paid out YES) and on `gone`, which VENUES leaves out. */
  async function setUp() {
    const store = await openSqliteStore(":memory:");
    await store.migrate();
    const asked: string[] = [];
    const warned: string[] = [];
    const service = new ResolutionService({
      store,
      vault: { sotBalances: async (hs: readonly unknown[]) => hs.map(() => 0n) } as unknown as Vault,
      catalog: {
        events: () => [{ eventId: "ev", status: "open", listings: [{ venue: "run", venueMarketId: "r-1" }, { venue: "gone", venueMarketId: "g-1" }] }],
        decided: () => undefined,
      } as unknown as MarketCatalog,
      venues: new Set(["run"]),
      ask: async (venue) => {
        asked.push(venue);
        if (venue !== "run") throw new Error(`venue ${venue} is not configured`);
        return { state: "resolved", outcome: "YES" };
      },
      tokenId: () => 0n,
      pollMs: 0,
      clock: { now: () => 1_000_000 },
      log: { info: () => undefined, warn: (_o: object, msg: string) => warned.push(msg), error: () => undefined } as never,
    });
    const now = new Date(1_000_000).toISOString();
    await store.createAccount({ id: "acc", email: "a@example.com", address: "0x00000000000000000000000000000000000000aa", walletKeyEnc: null, passwordHash: null, fundedAt: null });
    const leg = (venue: string) => ({ venue, clientOrderId: `c-${venue}`, venueMarketId: `${venue}-1`, limitPrice: 500_000n, shares: 1_000_000n, round: 1, expiresAt: 0 });
    const ordered = (venue: string) =>
      store.insertOrder({
        id: `ord_${venue}`, accountId: "acc", clientOrderId: venue, requestHash: "x", eventId: "ev", outcome: "YES", side: "buy",
        amount: 10_000_000n, shares: 0n, maxSlippage: 10_000n, strategy: "optimize_price", timeInForce: "FOK",
        status: "filled", locked: 10_000_000n, spent: 500_000n, fees: 0n, filledShares: 1_000_000n, escrowed: 0n, proceeds: 0n,
        routedTo: venue, legs: [leg(venue)], plannedInFull: true, dustLeft: false, sotTokenId: "1", lockTx: null, settleTx: null, releaseTx: null, errorCode: null, errorMessage: null, errorDetails: null,
        createdAt: now, updatedAt: now, lockedAt: now,
      });
    return { store, service, asked, warned, ordered };
  }

  it("is decided by the venues it runs when crossfill holds nothing on the others", async () => {
    const { store, service, asked, ordered } = await setUp();
    await ordered("run");
    await service.pass();
    expect(asked).toEqual(["run"]);
    expect(await store.eventResolutions()).toEqual([expect.objectContaining({ eventId: "ev", status: "resolved", outcome: "YES", decidedBy: "venues", venueReports: { run: "YES" } })]);
  });

  it("waits for an operator when crossfill sent a child order there, and says so once", async () => {
    const { store, service, asked, warned, ordered } = await setUp();
    await ordered("gone");
    await service.pass();
    await service.pass();
    expect(await store.eventResolutions()).toEqual([]);
    expect(asked).toEqual(["run"]);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain("crossfill events resolve ev YES|NO");
  });
});

describe("redemptions on a chain that reorganises", () => {
  const t = testChainPerFile();

  it("redeems again a redemption a reorganisation shallower than the confirmations removed, instead of recording it redeemed with nothing paid", async () => {
    const USDC = 1_000_000n;
    const client = await newClient(t);
    const yes = sotTokenId("ev_reorg", "YES");
    // The holder bought 10 YES for 10 USDC of its 100.
    await t.vault.fund(client.address, 100n * USDC, keyOf(`reorg-${client.address}`));
    await t.vault.lock(keyOf(`buy-${client.address}`), client.address, 10n * USDC);
    await t.vault.settle(keyOf(`buy-${client.address}`), 10n * USDC, { tokenId: yes, shares: 10n * USDC });
    const store = t.store;
    await store.createAccount({ id: "acc_reorg", email: "reorg@example.com", address: client.address, walletKeyEnc: null, passwordHash: null, fundedAt: null });
    const now = new Date().toISOString();
    await store.insertOrder({
      id: "ord_reorg", accountId: "acc_reorg", clientOrderId: null, requestHash: "x", eventId: "ev_reorg", outcome: "YES", side: "buy",
      amount: 10n * USDC, shares: 0n, maxSlippage: 10_000n, strategy: "optimize_price", timeInForce: "FOK",
      status: "filled", locked: 10n * USDC, spent: 10n * USDC, fees: 0n, filledShares: 10n * USDC, escrowed: 0n, proceeds: 0n,
      routedTo: "v", legs: [], plannedInFull: true, dustLeft: false, sotTokenId: yes.toString(), lockTx: null, settleTx: null, releaseTx: null, errorCode: null, errorMessage: null, errorDetails: null,
      createdAt: now, updatedAt: now, lockedAt: now,
    });
    await store.decideEvent({ eventId: "ev_reorg", status: "resolved", outcome: "YES", decidedBy: "operator", venueReports: {}, decidedAt: now });
    const service = new ResolutionService({
      store,
      vault: t.vault,
      catalog: { events: () => [], decided: () => undefined } as unknown as MarketCatalog,
      venues: new Set([]),
      ask: async () => ({ state: "open" }),
      tokenId: sotTokenId,
      pollMs: 0,
      confirmations: 1,
      clock: { now: () => Date.now() },
      log: { info: () => undefined, warn: () => undefined, error: () => undefined } as never,
    });
    const fork = await t.rpc.call<Hex>("evm_snapshot");
    // The first pass redeems; the second finds the holder holding nothing, so the event is done in this process.
    await service.pass();
    await service.pass();
    expect((await t.vault.balanceOf(client.address)).available).toBe(100n * USDC);
    // A reorganisation of one block: the redemption's block is replaced by an empty one, the shares back and nothing paid.
    await t.rpc.call("evm_revert", [fork]);
    await t.rpc.call("evm_mine");
    expect(await t.vault.sotBalance(client.address, yes)).toBe(10n * USDC);
    expect((await t.vault.balanceOf(client.address)).available).toBe(90n * USDC);
    // The next passes redeem the key again (once the sender's grace takes the removed transaction's nonce), and record it once a block is over it.
    const redeemed = async () => {
      await service.pass();
      await t.rpc.call("evm_mine");
      return (await store.redemptions({ eventId: "ev_reorg" })).map((r) => r.status);
    };
    await expect.poll(redeemed, { timeout: 30_000, interval: 500 }).toEqual(["redeemed"]);
    expect((await t.vault.balanceOf(client.address)).available).toBe(100n * USDC);
    expect(await t.vault.sotBalance(client.address, yes)).toBe(0n);
    const [r] = await store.redemptions({ eventId: "ev_reorg" });
    expect(r).toMatchObject({ key: redemptionKey("ev_reorg", "YES", client.address, 0), shares: 10n * USDC, payout: 10n * USDC, txHash: (await t.vault.redemption(r!.key as Hex))!.txHash });
  }, 60_000);
});
