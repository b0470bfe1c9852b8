import { pino } from "pino";
import { encodeFunctionData, toHex, type Hex } from "viem";
import { vaultAbi } from "../contracts/artifacts.ts";
import { AppError } from "../domain/errors.ts";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { OrderService, childOrderId, chainOrderId, type OrderDeps } from "./service.ts";
import { Reconciler } from "./reconcile.ts";
import { orderView } from "./view.ts";
import { plan } from "../router/index.ts";
import { openSqliteStore } from "../store/sqlite/sqlite-store.ts";
import type { OrderRecord, Store } from "../store/store.ts";
import type { UnifiedEvent } from "../markets/catalog.ts";
import type { SellQuote, VenueQuote } from "../router/index.ts";
import type { ChildOrder, ChildStatus, PlaceResult, Venue } from "../venues/venue.ts";
import { VaultTxError, type Address, type ChainInfo, type EscrowState, type HoldEvents, type LockState, type Vault } from "../vault/vault.ts";
import { MarketCatalog } from "../markets/catalog.ts";
import { orderFee } from "../domain/fees.ts";
import { notional } from "../domain/money.ts";
import { createOpinionVenue, startOpinionSim } from "../venues/opinion/index.ts";
import { keyOf, newClient } from "../vault/testkit.ts";
import { openEvmVault } from "../vault/evm/evm-vault.ts";
import { testChainPerFile } from "../vault/vitest-kit.ts";
import { startPool } from "../../test/helpers/rpc-proxy.ts";

// The use-case over a real store, a venue that answers from a script (or Opinion's adapter on its simulator),
// and a vault that records what it was asked to do: what a trader would see of an order whose first legs
// arrive after their levels are gone.
const EVENT: UnifiedEvent = {
  eventId: "evt",
  title: "t",
  description: "",
  outcomes: ["YES", "NO"],
  status: "open",
  closeTime: "2027-01-01T00:00:00Z",
  resolution: null,
  listings: [{ venue: "v", venueMarketId: "m" }],
};

const HASH = `0x${"ab".repeat(32)}` as const;
/** The Vault's lock deadline, as deployed by default: a day after the lock. */
const LOCK_TTL_S = 86_400;

class Ledger {
  locks = new Map<string, { account: string; amount: bigint; state: LockState["kind"]; deadline: number; expired?: boolean; spent?: bigint; shares?: bigint }>();
  escrows = new Map<string, { account: string; shares: bigint; state: EscrowState["kind"]; deadline: number; expired?: boolean; sold?: bigint; proceeds?: bigint }>();
  /** Each address's SOT of the one token these tests trade, and its USDC credited by sells. */
  sot = new Map<string, bigint>();
  credited = new Map<string, bigint>();
  /** Makes the next vault call of this name throw, as a chain that went away mid-call would. */
  failNext: { settle?: Error; lock?: Error; lockState?: Error; escrow?: Error; escrowState?: Error; settleSell?: Error } = {};
  /** The chain's time, in ms: its latest block's timestamp. */
  now = () => Date.now();
  /** How many operator transactions may still land. */
  pending = 0;
  vault(): Vault {
    const tx = () => Promise.resolve({ txHash: HASH, blockNumber: 1n });
    const fail = (name: keyof Ledger["failNext"]) => {
      const e = this.failNext[name];
      delete this.failNext[name];
      if (e) throw e;
    };
    const add = (m: Map<string, bigint>, a: string, n: bigint) => m.set(a, (m.get(a) ?? 0n) + n);
    return {
      balanceOf: async () => ({ available: 1_000_000_000n, locked: 0n }),
      info: () => ({ lockTtlSeconds: LOCK_TTL_S, deployedAt: 0n }) as ChainInfo,
      blockTime: async () => Math.floor(this.now() / 1000),
      lock: async (id, account, amount) => {
        fail("lock");
        // The Vault locks an order id once, whatever became of its lock since.
        if (this.locks.has(id)) throw new VaultTxError("reverted", "AlreadyLocked", "Vault.lock reverted: AlreadyLocked");
        this.locks.set(id, { account, amount, state: "locked", deadline: Math.floor(this.now() / 1000) + LOCK_TTL_S });
        return tx();
      },
      settle: async (id, spent, position) => {
        fail("settle");
        const l = this.locks.get(id)!;
        if (l.state !== "locked") throw new VaultTxError("reverted", "AlreadyReleased", "Vault.settle reverted: AlreadyReleased");
        add(this.sot, l.account, position.shares);
        this.locks.set(id, { ...l, state: "settled", spent, shares: position.shares });
        return tx();
      },
      release: async (id) => (this.locks.set(id, { ...this.locks.get(id)!, state: "released" }), tx()),
      lockState: async (id): Promise<LockState> => {
        fail("lockState");
        const l = this.locks.get(id);
        if (!l) return { kind: "none" };
        if (l.state === "locked") return { kind: "locked", amount: l.amount, deadline: l.deadline };
        if (l.state === "settled") return { kind: "settled", txHash: HASH, spent: l.spent!, shares: l.shares!, tokenId: 7n };
        return { kind: "released", txHash: HASH, expired: l.expired ?? false };
      },
      heldBy: async (id) => (this.locks.has(id) || this.escrows.has(id) ? HASH : null),
      sotBalance: async (account) => this.sot.get(account) ?? 0n,
      escrow: async (id, account, position) => {
        fail("escrow");
        if (this.escrows.has(id)) throw new VaultTxError("reverted", "AlreadyEscrowed", "Vault.escrow reverted: AlreadyEscrowed");
        const held = this.sot.get(account) ?? 0n;
        if (position.shares > held) throw new VaultTxError("reverted", "InsufficientShares", "Vault.escrow reverted: InsufficientShares");
        add(this.sot, account, -position.shares);
        this.escrows.set(id, { account, shares: position.shares, state: "escrowed", deadline: Math.floor(this.now() / 1000) + LOCK_TTL_S });
        return tx();
      },
      settleSell: async (id, sold, proceeds) => {
        fail("settleSell");
        const e = this.escrows.get(id)!;
        if (e.state !== "escrowed") throw new VaultTxError("reverted", "AlreadySettled", "Vault.settleSell reverted");
        add(this.sot, e.account, e.shares - sold);
        add(this.credited, e.account, proceeds);
        this.escrows.set(id, { ...e, state: "settled", sold, proceeds });
        return tx();
      },
      releaseEscrow: async (id) => {
        const e = this.escrows.get(id)!;
        add(this.sot, e.account, e.shares);
        this.escrows.set(id, { ...e, state: "released" });
        return tx();
      },
      escrowState: async (id): Promise<EscrowState> => {
        fail("escrowState");
        const e = this.escrows.get(id);
        if (!e) return { kind: "none" };
        if (e.state === "escrowed") return { kind: "escrowed", account: e.account as Address, tokenId: 7n, shares: e.shares, deadline: e.deadline };
        if (e.state === "settled") return { kind: "settled", txHash: HASH, sold: e.sold!, proceeds: e.proceeds! };
        return { kind: "released", txHash: HASH, expired: e.expired ?? false };
      },
      pendingTransactions: async () => this.pending,
      // One block holds the whole history: every lock and escrow taken, and the endings of those no longer held.
      blockNumber: async () => 1n,
      blockHash: async () => undefined,
      holds: async () => ({
        locks: [...this.locks].map(([orderId, l]) => ({ orderId, client: l.account, amount: l.amount, txHash: HASH })),
        endings: [...this.locks].filter(([, l]) => l.state !== "locked").map(([orderId, l]) => ({ kind: l.state, orderId, client: l.account, amount: l.amount, expired: l.expired ?? false, txHash: HASH })),
        escrows: [...this.escrows].map(([orderId, e]) => ({ orderId, client: e.account, tokenId: 7n, shares: e.shares, txHash: HASH })),
        escrowEndings: [...this.escrows].filter(([, e]) => e.state !== "escrowed").map(([orderId, e]) => ({ kind: e.state, orderId, client: e.account, tokenId: 7n, shares: e.shares, expired: e.expired ?? false, txHash: HASH })),
      }) as unknown as HoldEvents,
    } as Partial<Vault> as Vault;
  }
}

let store: Store;
let ledger: Ledger;
let asks: { price: bigint; shares: bigint }[];
/** Each venue's bids, by venue id: the venues a sell may route to. */
let bids: Map<string, { price: bigint; shares: bigint }[]>;
let script: ((o: ChildOrder) => PlaceResult)[];
const sent: ChildOrder[] = [];

/** What the venue answers to status and cancel, by client order id; not_found when absent. */
let known: Map<string, ChildStatus>;
const cancelled: string[] = [];

/** A venue that places from the script and answers status and cancel from `known`. */
function scriptedVenue(): Venue {
  return {
    id: "v",
    place: async (o: ChildOrder) => (sent.push(o), script.shift()!(o)),
    status: async (id: string) => known.get(id) ?? { kind: "not_found" as const },
    cancel: async (id: string) => {
      cancelled.push(id);
      const st = known.get(id);
      if (!st || st.kind === "not_found") return { kind: "not_found" as const };
      const done = { ...st, kind: "done" as const };
      known.set(id, done);
      return done;
    },
  } as Partial<Venue> as Venue;
}

function service(over: Partial<OrderDeps> = {}): OrderService {
  const venue = scriptedVenue();
  const market = {
    venueMarketId: "m",
    feeModel: { kind: "polymarket", ratePpm: 0n, exponent: 1 },
    tickSize: 10_000n,
    minOrderShares: 1_000_000n,
    lotShares: 10_000n,
    latencyMs: 1,
  } as const;
  const quote = (): VenueQuote => ({ venue: "v", ...market, asks });
  const sellQuote = (id: string, inventory: ReadonlyMap<string, bigint>): SellQuote => ({ venue: id, ...market, bids: bids.get(id) ?? [], inventory: inventory.get(id) ?? 0n });
  return new OrderService({
    store,
    vault: ledger.vault(),
    venues: new Map([["v", venue]]),
    event: (id) => (id === "evt" ? EVENT : undefined),
    quotes: () => [quote()],
    plan,
    sellQuotes: (_event, _outcome, inventory) => [...bids.keys()].map((id) => sellQuote(id, inventory)),
    planSell: plan,
    tokenId: () => 7n,
    clock: { now: () => Date.now() },
    newOrderId: () => `ord_${sent.length}_${Math.random().toString(36).slice(2)}`,
    limits: { maxOrder: 1_000_000_000n },
    log: pino({ level: "silent" }),
    reconcileDelayMs: 0,
    instanceId: "test",
    ...over,
  });
}

const fill = (o: ChildOrder, shares: bigint): PlaceResult => ({
  kind: "filled",
  venueOrderId: `vo-${o.clientOrderId}`,
  fills: [{ tradeId: `t-${o.clientOrderId}`, venueOrderId: `vo-${o.clientOrderId}`, clientOrderId: o.clientOrderId, side: o.side, price: o.limitPrice, shares, fee: 0n }],
});
const nothing = (): PlaceResult => ({ kind: "rejected", reason: "no_match" });

beforeEach(async () => {
  store = await openSqliteStore(":memory:");
  await store.migrate();
  await store.createAccount({ id: "acc", email: "a@example.com", address: "0x00000000000000000000000000000000000000aa", walletKeyEnc: null, passwordHash: null, fundedAt: null });
  ledger = new Ledger();
  sent.length = 0;
  cancelled.length = 0;
  known = new Map();
  asks = [{ price: 500_000n, shares: 100_000_000n }];
  bids = new Map([["v", [{ price: 450_000n, shares: 100_000_000n }]]]);
});

const who = { accountId: "acc", address: "0x00000000000000000000000000000000000000aa" as const };
const body = { market_id: "evt", outcome: "YES", side: "buy", amount_usdc: 10, max_slippage: 0.02 };

describe("a retry by client_order_id", () => {
  it("gets the order back once its event closed, and a new order on it is refused market_closed", async () => {
    script = [(o) => fill(o, o.shares)];
    const first = await service().submit(who, { ...body, client_order_id: "b-1" }, undefined);
    expect(first.status).toBe("filled");
    const closed = service({ event: (id) => (id === "evt" ? { ...EVENT, status: "resolved" } : undefined) });
    expect(await closed.submit(who, { ...body, client_order_id: "b-1" }, undefined)).toMatchObject({ id: first.id, status: "filled" });
    await expect(closed.submit(who, { ...body, amount_usdc: 11, max_slippage: 0.03, client_order_id: "b-1" }, undefined)).rejects.toMatchObject({
      code: "idempotency_conflict",
      message: 'The client_order_id (or Idempotency-Key) "b-1" was already used for a different order: not the same amount_usdc, max_slippage.',
    });
    await expect(closed.submit(who, { ...body, client_order_id: "b-2" }, undefined)).rejects.toMatchObject({ code: "market_closed" });
    await expect(closed.submit(who, body, undefined)).rejects.toMatchObject({ code: "market_closed" });
  });
});

describe("a retry of an order rejected 5xx before anything was locked", () => {
  it("runs an order whose lock the chain never took again under its id when the client retries it, locking once", async () => {
    script = [(o) => fill(o, o.shares)];
    ledger.failNext.lock = new VaultTxError("reverted", "NotSent", "Vault.lock: not sent (fetch failed)");
    const svc = service();
    const first = await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined);
    expect(first).toMatchObject({ status: "rejected", errorCode: "chain_unavailable", locked: 0n });
    expect(ledger.locks.size).toBe(0);
    // The 503 told the client to try again: the same request is the same order, run again, not the 503 replayed.
    const again = await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined);
    expect(again).toMatchObject({ id: first.id, status: "filled", errorCode: null, errorMessage: null, locked: 10_000_000n });
    expect(await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined)).toMatchObject({ id: first.id, status: "filled" });
    expect([...ledger.locks.keys()]).toEqual([chainOrderId(first.id)]);
    expect(sent).toHaveLength(1);
    await expect(svc.submit(who, { ...body, amount_usdc: 11, client_order_id: "b-1" }, undefined)).rejects.toMatchObject({ code: "idempotency_conflict" });
  });

  it("runs an order no venue quoted again under its id once a venue quotes the event", async () => {
    script = [(o) => fill(o, o.shares)];
    let quoting = false;
    const svc = service({ quotes: () => (quoting ? [{ venue: "v", venueMarketId: "m", feeModel: { kind: "polymarket", ratePpm: 0n, exponent: 1 }, tickSize: 10_000n, minOrderShares: 1_000_000n, lotShares: 10_000n, latencyMs: 1, asks }] : []) });
    const first = await svc.submit(who, body, "k-1");
    expect(first).toMatchObject({ status: "rejected", errorCode: "venue_unavailable" });
    const closed = service({ quotes: () => [], event: (id) => (id === "evt" ? { ...EVENT, status: "closed" } : undefined) });
    await expect(closed.submit(who, body, "k-1")).rejects.toMatchObject({ code: "market_closed" });
    quoting = true;
    expect(await svc.submit(who, body, "k-1")).toMatchObject({ id: first.id, status: "filled", errorCode: null });
    expect(ledger.locks.size).toBe(1);
  });

  it("runs again under its id an order recovery rejected order_interrupted, its lock never taken, when the client retries it", async () => {
    script = [(o) => fill(o, o.shares)];
    ledger.failNext.lock = new VaultTxError("unknown", "Unknown", "Vault.lock: outcome unknown");
    const svc = service();
    const first = await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined);
    expect(first.status).toBe("pending");
    await new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }) }).pass(0);
    expect(await store.order(first.id)).toMatchObject({ status: "rejected", errorCode: "order_interrupted" });
    expect(await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined)).toMatchObject({ id: first.id, status: "filled", errorCode: null });
    expect([...ledger.locks.keys()]).toEqual([chainOrderId(first.id)]);
  });

  it("answers chain_unavailable, to be tried again, an order whose lock was not sent to a chain it cannot read either", async () => {
    ledger.failNext.lock = new VaultTxError("reverted", "NotSent", "Vault.lock: not sent (fetch failed)");
    ledger.failNext.lockState = new Error("fetch failed");
    const first = await service().submit(who, { ...body, client_order_id: "b-1" }, undefined);
    expect(first).toMatchObject({ status: "rejected", errorCode: "chain_unavailable", locked: 0n, lockTx: null });
  });

  it("runs an order recovery rejected, its lock removed by a reorganisation, on that lock when it lands again before the client's retry, locking once", async () => {
    script = [(o) => fill(o, o.shares)];
    const { svc, order } = await lockRemovedByReorganisation();
    // The node mines the removed lock's transaction again.
    ledger.locks.set(chainOrderId(order.id), { account: who.address, amount: 10_000_000n, state: "locked", deadline: Math.floor(Date.now() / 1000) + LOCK_TTL_S });
    const again = await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined);
    expect(again).toMatchObject({ id: order.id, status: "filled", errorCode: null, locked: 10_000_000n, lockTx: HASH });
    expect(ledger.locks.get(chainOrderId(order.id))).toMatchObject({ state: "settled", spent: again.spent });
    expect(sent).toHaveLength(1);
  });

  it("leaves to recovery, not rejected as nothing locked, a retry whose lock the Vault refused AlreadyLocked, its order's removed lock landed again, on a chain it cannot read: the lock is released once", async () => {
    const { svc, order } = await lockRemovedByReorganisation();
    ledger.locks.set(chainOrderId(order.id), { account: who.address, amount: 10_000_000n, state: "locked", deadline: Math.floor(Date.now() / 1000) + LOCK_TTL_S });
    ledger.failNext.lockState = new Error("fetch failed");
    const again = await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined);
    expect(again).toMatchObject({ id: order.id, status: "pending", errorCode: null });
    expect(await reconciler(svc).pass(0)).toBe(1);
    expect(await store.order(order.id)).toMatchObject({ status: "failed", errorCode: "order_interrupted", locked: 10_000_000n, lockTx: HASH, releaseTx: HASH });
    expect(ledger.locks.get(chainOrderId(order.id))).toMatchObject({ state: "released" });
    // The order ended with its lock released: the client's next retry gets it back, locking nothing.
    expect(await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined)).toMatchObject({ id: order.id, status: "failed" });
    expect(sent).toHaveLength(0);
  });

  it("settles, once its lock's deadline on chain has passed, a retry that took over its order's removed lock landed again hours before, whose venue never answers", async () => {
    // The store, the service, the venue and the chain all read the time from Date.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    try {
      const { order } = await lockRemovedByReorganisation();
      const chainId = chainOrderId(order.id);
      // The node mines the removed lock's transaction again at once: its deadline runs from that block.
      const deadline = Math.floor(Date.now() / 1000) + LOCK_TTL_S;
      ledger.locks.set(chainId, { account: who.address, amount: 10_000_000n, state: "locked", deadline });
      // The client retries 6 hours later and takes the lock over; one child order fills half, the venue never tells what the other did.
      vi.setSystemTime(Date.now() + 6 * 3_600_000);
      script = [(o) => fill(o, o.shares / 2n), () => ({ kind: "unknown", reason: "timeout" })];
      const svc = service();
      expect(await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined)).toMatchObject({ id: order.id, status: "routing", lockTx: HASH });
      const [first] = await store.fills(order.id);
      const silent = { ...scriptedVenue(), status: async () => Promise.reject(new AppError("venue_unavailable", "v lists no market m")) } as Venue;
      const recovery = new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", silent]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }) });
      // Past the chain's deadline the client may expire the lock: recovery settles the fills its venues reported before then.
      vi.setSystemTime((deadline + 1) * 1000);
      expect(await recovery.pass(0)).toBe(1);
      const charged = (first!.shares * first!.price) / 1_000_000n + first!.fee;
      expect(ledger.locks.get(chainId)).toMatchObject({ state: "settled", spent: charged });
      expect(await store.order(order.id)).toMatchObject({ status: "partially_filled", filledShares: first!.shares, spent: charged, settleTx: HASH });
    } finally {
      vi.useRealTimers();
    }
  });

  it("releases, and answers for good, a retry whose order's removed lock landed again so long before it that too little time is left to its deadline to route and settle", async () => {
    script = [(o) => fill(o, o.shares)];
    const { svc, order } = await lockRemovedByReorganisation();
    const chainId = chainOrderId(order.id);
    // The node mined the removed lock's transaction again 18 hours before the client's retry: 6 hours are left to its deadline.
    const deadline = Math.floor(Date.now() / 1000) - 18 * 3600 + LOCK_TTL_S;
    ledger.locks.set(chainId, { account: who.address, amount: 10_000_000n, state: "locked", deadline });
    const answer = {
      id: order.id,
      status: "rejected",
      errorCode: "order_interrupted",
      errorMessage: `The order's lock, taken on the chain for an earlier attempt of it, has too little time left before its deadline (${new Date(deadline * 1000).toISOString()}) to route and settle the order; the locked USDC was released.`,
      locked: 10_000_000n,
      lockTx: HASH,
      releaseTx: HASH,
    };
    expect(await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined)).toMatchObject(answer);
    expect(ledger.locks.get(chainId)).toMatchObject({ state: "released" });
    expect(await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined)).toMatchObject(answer);
    expect(sent).toHaveLength(0);
  });

  it("answers for good a retry released as too late on its order's removed lock landed again, though the node asked for the lock's transaction lacked its event", async () => {
    const { svc, order } = await lockRemovedByReorganisation();
    const deadline = Math.floor(Date.now() / 1000) - 18 * 3600 + LOCK_TTL_S;
    ledger.locks.set(chainOrderId(order.id), { account: who.address, amount: 10_000_000n, state: "locked", deadline });
    // A node of a pool behind the one that read the lock: no Locked event of the order in the blocks it has.
    const behind = Object.assign(ledger.vault(), { heldBy: async () => null });
    const answer = { id: order.id, status: "rejected", errorCode: "order_interrupted", locked: 10_000_000n, releaseTx: HASH };
    expect(await service({ vault: behind }).submit(who, { ...body, client_order_id: "b-1" }, undefined)).toMatchObject(answer);
    expect(await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined)).toMatchObject(answer);
    expect(sent).toHaveLength(0);
  });

  it("answers a retry taking over its order's removed lock landed again as recovery would, though the node asked for the lock's transaction could not search for it", async () => {
    const { order } = await lockRemovedByReorganisation();
    const deadline = Math.floor(Date.now() / 1000) - 18 * 3600 + LOCK_TTL_S;
    ledger.locks.set(chainOrderId(order.id), { account: who.address, amount: 10_000_000n, state: "locked", deadline });
    // A node of a pool that lacks the block the search is tied to: the search fails rather than answer from another chain.
    const behind = Object.assign(ledger.vault(), { heldBy: async () => Promise.reject(new Error("the node has no block 0xabc")) });
    const answer = { id: order.id, status: "rejected", errorCode: "order_interrupted", locked: 10_000_000n, lockTx: null, releaseTx: HASH };
    expect(await service({ vault: behind }).submit(who, { ...body, client_order_id: "b-1" }, undefined)).toMatchObject(answer);
    expect(ledger.locks.get(chainOrderId(order.id))).toMatchObject({ state: "released" });
    expect(sent).toHaveLength(0);
  });

  it("answers for good, failed with its lock and release, an order recovery rejected whose removed lock landed again and was released before the client's retry", async () => {
    const { svc, order } = await lockRemovedByReorganisation();
    // The lock landed again while its order was closed: the sweep released it, and its id can never lock again.
    ledger.locks.set(chainOrderId(order.id), { account: who.address, amount: 10_000_000n, state: "released", deadline: 0 });
    await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined);
    await reconciler(svc).pass(0);
    const answer = { id: order.id, status: "failed", errorCode: "order_interrupted", locked: 10_000_000n, lockTx: HASH, releaseTx: HASH };
    expect(await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined)).toMatchObject(answer);
    expect(await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined)).toMatchObject(answer);
    expect(sent).toHaveLength(0);
  });

  it("settles a retry on its order's removed lock landed again, taken over while a sweep that found it stranded was running: the sweep releases nothing", async () => {
    const { svc, order } = await lockRemovedByReorganisation();
    const chainId = chainOrderId(order.id);
    ledger.locks.set(chainId, { account: who.address, amount: 10_000_000n, state: "locked", deadline: Math.floor(Date.now() / 1000) + LOCK_TTL_S });
    const venue = heldPlacement();
    const openOrders = store.ordersInStatus.bind(store);
    let retry: Promise<OrderRecord> | undefined;
    // The client's retry arrives once the sweep has read the chain and the open orders: it takes the lock over and routes.
    const reads = vi.spyOn(store, "ordersInStatus").mockImplementationOnce(async (statuses) => {
      const listed = await openOrders(statuses);
      retry = svc.submit(who, { ...body, client_order_id: "b-1" }, undefined);
      await venue.placed;
      return listed;
    });
    try {
      expect(await reconciler(svc).sweepLocks()).toBe(0);
    } finally {
      reads.mockRestore();
    }
    venue.answer();
    expect(await retry).toMatchObject({ id: order.id, status: "filled", locked: 10_000_000n, spent: 10_000_000n, lockTx: HASH });
    expect(ledger.locks.get(chainId)).toMatchObject({ state: "settled", spent: 10_000_000n });
  });

  it("answers for good, with its lock and release, a retry that comes while the sweep releases its order's removed lock landed again, and runs nothing", async () => {
    const { svc, order } = await lockRemovedByReorganisation();
    const chainId = chainOrderId(order.id);
    ledger.locks.set(chainId, { account: who.address, amount: 10_000_000n, state: "locked", deadline: Math.floor(Date.now() / 1000) + LOCK_TTL_S });
    const venue = heldPlacement();
    const vault = ledger.vault();
    const release = vault.release.bind(vault);
    let retry: Promise<OrderRecord> | undefined;
    // The client's retry arrives as the sweep sends its release, and gets as far as it can before the release lands.
    vault.release = async (id) => {
      retry = svc.submit(who, { ...body, client_order_id: "b-1" }, undefined);
      await Promise.race([venue.placed, retry]);
      return release(id);
    };
    const sweeper = new Reconciler(svc, { store, vault, venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }) });
    expect(await sweeper.sweepLocks()).toBe(1);
    venue.answer();
    const answer = { id: order.id, status: "rejected", errorCode: "order_interrupted", locked: 10_000_000n, lockTx: HASH, errorMessage: expect.stringContaining("landed on the chain after the order was closed") };
    // Answered as it stood while the release was on its way: the lock recorded, its release not yet.
    expect(await retry).toMatchObject({ ...answer, releaseTx: null });
    expect(ledger.locks.get(chainId)).toMatchObject({ state: "released" });
    expect(await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined)).toMatchObject({ ...answer, releaseTx: HASH });
    expect(sent).toHaveLength(0);
  });

  it("records with its lock's transaction, and releases at once, a rejected order's removed lock landed again, though the node asked for the lock's transaction lacks its event", async () => {
    const { svc, order } = await lockRemovedByReorganisation();
    const chainId = chainOrderId(order.id);
    ledger.locks.set(chainId, { account: who.address, amount: 10_000_000n, state: "locked", deadline: Math.floor(Date.now() / 1000) + LOCK_TTL_S });
    // A node of a pool behind the one that read the lock: no Locked event of the order in the blocks it has.
    const vault = Object.assign(ledger.vault(), { heldBy: async () => null });
    const sweeper = new Reconciler(svc, { store, vault, venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }) });
    expect(await sweeper.sweepLocks()).toBe(1);
    expect(ledger.locks.get(chainId)).toMatchObject({ state: "released" });
    expect(await store.order(order.id)).toMatchObject({ status: "rejected", locked: 10_000_000n, lockTx: HASH, releaseTx: HASH, errorMessage: expect.stringContaining("landed on the chain after the order was closed") });
  });

  it("records the lock of a rejected order that landed after it closed and was expired past its deadline before any sweep recorded it, and a retry answers the order as it stands", async () => {
    const { svc, order } = await lockRemovedByReorganisation();
    const chainId = chainOrderId(order.id);
    // The node mined the removed lock again while no sweep ran (the server stopped for a day); past its deadline anyone expired it.
    ledger.locks.set(chainId, { account: who.address, amount: 10_000_000n, state: "released", expired: true, deadline: Math.floor(Date.now() / 1000) - 1 });
    expect(await reconciler(svc).sweepLocks()).toBe(0);
    const answer = { id: order.id, status: "rejected", errorCode: "order_interrupted", locked: 10_000_000n, lockTx: HASH, releaseTx: HASH, errorMessage: expect.stringContaining("expired") };
    expect(await store.order(order.id)).toMatchObject(answer);
    expect(await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined)).toMatchObject(answer);
    expect(sent).toHaveLength(0);
  });

  it("records the release of a removed lock landed again whose answer the sweep lost, at its next sweep, though the chain no longer holds the lock", async () => {
    const { order } = await lockRemovedByReorganisation();
    const chainId = chainOrderId(order.id);
    ledger.locks.set(chainId, { account: who.address, amount: 10_000_000n, state: "locked", deadline: Math.floor(Date.now() / 1000) + LOCK_TTL_S });
    const vault = ledger.vault();
    const release = vault.release.bind(vault);
    // The release lands, its answer lost on the way (a receipt past the deadline, or a stop before the store's write).
    vault.release = async (id) => (await release(id), Promise.reject(new VaultTxError("unknown", "Unknown", "Vault.release: outcome unknown")));
    const sweeper = new Reconciler(service(), { store, vault, venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }) });
    expect(await sweeper.sweepLocks()).toBe(0);
    expect(ledger.locks.get(chainId)).toMatchObject({ state: "released" });
    expect(await store.order(order.id)).toMatchObject({ status: "rejected", locked: 10_000_000n, lockTx: HASH, releaseTx: null });
    await sweeper.sweepLocks();
    expect(await store.order(order.id)).toMatchObject({ status: "rejected", locked: 10_000_000n, lockTx: HASH, releaseTx: HASH });
  });

  it("records as gone a lock the sweep recorded holding that a reorganisation then removed, once nothing can land it again under the confirmations, and reads it no more", async () => {
    const { order } = await lockRemovedByReorganisation();
    const chainId = chainOrderId(order.id);
    ledger.locks.set(chainId, { account: who.address, amount: 10_000_000n, state: "locked", deadline: Math.floor(Date.now() / 1000) + LOCK_TTL_S });
    const vault = ledger.vault();
    // The sweep's release is not sent (the node went away): the order is recorded holding the lock, with no release.
    vault.release = () => Promise.reject(new VaultTxError("reverted", "NotSent", "Vault.release: not sent (fetch failed)"));
    // The operator has mined 5 transactions; the block 2 under the head has 4 of them, then all 5.
    let deepMined = 4;
    vault.blockNumber = async () => 10n;
    vault.minedTransactions = async (block) => (block === undefined ? 5 : block <= 8n ? deepMined : 5);
    const lockStates = vi.spyOn(vault, "lockState");
    const sweeper = new Reconciler(service(), { store, vault, venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }), confirmations: 2 });
    expect(await sweeper.sweepLocks()).toBe(0);
    const holding = { status: "rejected", locked: 10_000_000n, lockTx: HASH, releaseTx: null };
    expect(await store.order(order.id)).toMatchObject(holding);
    // A reorganisation removes the lock's transaction, and the operator's next one takes its nonce.
    ledger.locks.delete(chainId);
    await sweeper.sweepLocks();
    expect(await store.order(order.id)).toMatchObject(holding);
    deepMined = 5;
    await sweeper.sweepLocks();
    expect(await store.order(order.id)).toMatchObject({ status: "rejected", locked: 0n, lockTx: null, releaseTx: null, errorMessage: "The order's lock is no longer on the chain (a reorganisation removed it); nothing was charged." });
    expect(await store.closedHolding("rejected")).toEqual([]);
    lockStates.mockClear();
    await sweeper.sweepLocks();
    expect(lockStates).not.toHaveBeenCalled();
  });

  it("keeps the answer of a retry that took its order's removed lock landed again over and released it, while a sweep that found the lock stranded was running: the sweep writes nothing", async () => {
    const { order } = await lockRemovedByReorganisation();
    const chainId = chainOrderId(order.id);
    ledger.locks.set(chainId, { account: who.address, amount: 10_000_000n, state: "locked", deadline: Math.floor(Date.now() / 1000) + LOCK_TTL_S });
    // The books empty between the retry's first plan and its routing: the router refuses it, and its lock is released.
    let quoted = 0;
    const quote: VenueQuote = { venue: "v", venueMarketId: "m", feeModel: { kind: "polymarket", ratePpm: 0n, exponent: 1 }, tickSize: 10_000n, minOrderShares: 1_000_000n, lotShares: 10_000n, latencyMs: 1, asks };
    const svc = service({ quotes: () => (quoted++ === 0 ? [quote] : []) });
    const vault = ledger.vault();
    const lockState = vault.lockState.bind(vault);
    let retried: OrderRecord | undefined;
    let retrying = false;
    // The client's retry runs whole after the sweep read the order rejected and its lock held, before the sweep records the lock.
    vault.lockState = async (id) => {
      const state = await lockState(id);
      if (!retrying) {
        retrying = true;
        retried = await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined);
      }
      return state;
    };
    const sweeper = new Reconciler(svc, { store, vault, venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }) });
    expect(await sweeper.sweepLocks()).toBe(0);
    const answer = { id: order.id, status: "rejected", errorCode: retried!.errorCode, errorMessage: retried!.errorMessage, locked: 10_000_000n, lockTx: HASH, releaseTx: HASH };
    expect(retried).toMatchObject({ ...answer, errorMessage: expect.not.stringContaining("landed on the chain after the order was closed") });
    expect(await store.order(order.id)).toMatchObject(answer);
    expect(sent).toHaveLength(0);
  });

  it("answers an order rejected 422 with the same rejection when retried, locking nothing", async () => {
    const svc = service();
    asks = [{ price: 500_000n, shares: 1_000_000n }];
    const first = await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined);
    expect(first).toMatchObject({ status: "rejected", errorCode: "insufficient_liquidity" });
    asks = [{ price: 500_000n, shares: 100_000_000n }];
    expect(await svc.submit(who, { ...body, client_order_id: "b-1" }, undefined)).toMatchObject({ id: first.id, status: "rejected", errorCode: "insufficient_liquidity" });
    expect(ledger.locks.size).toBe(0);
    expect(sent).toHaveLength(0);
  });
});

describe("an order on an unknown event", () => {
  it("is unknown_event naming the id sent as event_id, as GET /v1/prices names it, and locks nothing", async () => {
    await expect(service().submit(who, { ...body, market_id: "nope" }, undefined)).rejects.toMatchObject({ code: "unknown_event", details: { event_id: "nope" } });
    expect(ledger.locks.size).toBe(0);
  });
});

describe("an order on an event no venue quotes now", () => {
  it("is rejected venue_unavailable (503), not insufficient_liquidity, and locks nothing", async () => {
    // Every venue of the event down or its book stale: the merged book's quotes are empty.
    const order = await service({ quotes: () => [] }).submit(who, body, undefined);
    expect(order).toMatchObject({ status: "rejected", errorCode: "venue_unavailable", locked: 0n });
    expect(ledger.locks.size).toBe(0);
    expect(sent).toHaveLength(0);
    await expect(service({ quotes: () => [] }).quote(body)).rejects.toMatchObject({ code: "venue_unavailable", status: 503 });
  });
});

describe("routing rounds", () => {
  it("routes again what a leg found gone, under fresh ids, and fills the order", async () => {
    script = [nothing, (o) => fill(o, o.shares)];
    const order = await service().submit(who, body, undefined);
    expect(order.status).toBe("filled");
    expect(sent.map((o) => o.clientOrderId)).toEqual([childOrderId(order.id, "v"), childOrderId(order.id, "v", 2)]);
    expect(order.legs.map((l) => l.clientOrderId)).toEqual(sent.map((o) => o.clientOrderId));
    expect(order.filledShares).toBe(20_000_000n);
    expect(ledger.locks.get([...ledger.locks.keys()][0]!)).toMatchObject({ amount: 10_000_000n, state: "settled", spent: 10_000_000n });
  });

  it("routes only the rest of the budget after a partial fill, and keeps the first limit price", async () => {
    script = [(o) => fill(o, 8_000_000n), (o) => fill(o, o.shares)];
    const order = await service().submit(who, body, undefined);
    expect(sent[1]!.shares).toBe(12_000_000n); // (10 - 8 × 0.5) USDC at 0.5
    expect(order).toMatchObject({ status: "filled", filledShares: 20_000_000n, spent: 10_000_000n });
  });

  it("gives up after three rounds: what filled is settled as partially filled, the rest released by the settlement", async () => {
    script = [(o) => fill(o, 2_000_000n), nothing, nothing];
    const order = await service().submit(who, body, undefined);
    expect(sent).toHaveLength(3);
    expect(order).toMatchObject({ status: "partially_filled", filledShares: 2_000_000n, spent: 1_000_000n });
  });

  it("settles an IOC buy the book held only half of as partially filled, though its one leg filled whole", async () => {
    // $10 asked; the book holds 10 shares at 0.50 within the limit: $5.
    asks = [{ price: 500_000n, shares: 10_000_000n }];
    script = [(o) => fill(o, o.shares)];
    const order = await service().submit(who, { ...body, time_in_force: "IOC" }, undefined);
    expect(sent).toMatchObject([{ shares: 10_000_000n }]);
    expect(order).toMatchObject({ status: "partially_filled", plannedInFull: false, filledShares: 10_000_000n, spent: 5_000_000n, locked: 10_000_000n });
    expect(ledger.locks.get(chainOrderId(order.id))).toMatchObject({ state: "settled", spent: 5_000_000n, shares: 10_000_000n });
  });

  it("settles an IOC buy as partially filled when its first plan held half of it and filled whole: no further round for the rest, though the book refilled", async () => {
    // Immediate-or-cancel takes what the books held when it came; later rounds re-route what its legs missed.
    asks = [{ price: 500_000n, shares: 10_000_000n }];
    script = [(o) => ((asks = [{ price: 500_000n, shares: 100_000_000n }]), fill(o, o.shares))];
    const order = await service().submit(who, { ...body, time_in_force: "IOC" }, undefined);
    expect(sent.map((o) => o.shares)).toEqual([10_000_000n]);
    expect(order).toMatchObject({ status: "partially_filled", filledShares: 10_000_000n, spent: 5_000_000n });
  });

  it("routes again only what an IOC buy's leg missed when its first plan held half of it: not the rest the book never held, though the book refilled", async () => {
    // $10 asked; the book holds $5 within the limit. The leg fills 4 of its 10 shares, and the book refills
    // meanwhile: the next round buys the 6 it missed ($3), as a leg that filled whole gets no round for the rest.
    asks = [{ price: 500_000n, shares: 10_000_000n }];
    script = [(o) => ((asks = [{ price: 500_000n, shares: 100_000_000n }]), fill(o, 4_000_000n)), (o) => fill(o, o.shares)];
    const order = await service().submit(who, { ...body, time_in_force: "IOC" }, undefined);
    expect(sent.map((o) => o.shares)).toEqual([10_000_000n, 6_000_000n]);
    expect(order).toMatchObject({ status: "partially_filled", plannedInFull: false, filledShares: 10_000_000n, spent: 5_000_000n });
    expect(ledger.locks.get(chainOrderId(order.id))).toMatchObject({ state: "settled", spent: 5_000_000n, shares: 10_000_000n });
  });

  it("leaves an IOC buy the book held half of partially filled when its leg filled short by dust: what is left is what the book never held", async () => {
    // The leg fills 9.5 of its 10 shares; the half share it missed is under the venue's minimum: no round buys it.
    asks = [{ price: 500_000n, shares: 10_000_000n }];
    script = [(o) => fill(o, 9_500_000n)];
    const order = await service().submit(who, { ...body, time_in_force: "IOC" }, undefined);
    expect(sent).toHaveLength(1);
    expect(order).toMatchObject({ status: "partially_filled", dustLeft: false, filledShares: 9_500_000n, spent: 4_750_000n });
  });

  it("settles a buy as filled when a later round spent the rest of the amount at a worse ask: fewer shares than first planned, the whole amount bought", async () => {
    // The leg fills 4 of 20 shares; the book is then at 0.51, the limit: $8 buys 15.68 shares there, and $0.0032 is left, less than a lot.
    script = [(o) => ((asks = [{ price: 510_000n, shares: 100_000_000n }]), fill(o, 4_000_000n)), (o) => fill(o, o.shares)];
    const order = await service().submit(who, body, undefined);
    expect(sent.map((o) => o.shares)).toEqual([20_000_000n, 15_680_000n]);
    expect(order).toMatchObject({ status: "filled", filledShares: 19_680_000n, spent: 9_996_800n });
  });

  it("settles a buy as partially filled when the later round found the book thinner than the rest of the amount, though its leg filled whole", async () => {
    script = [(o) => ((asks = [{ price: 500_000n, shares: 2_000_000n }]), fill(o, 4_000_000n)), (o) => ((asks = []), fill(o, o.shares))];
    const order = await service().submit(who, body, undefined);
    expect(sent.map((o) => o.shares)).toEqual([20_000_000n, 2_000_000n]);
    expect(order).toMatchObject({ status: "partially_filled", filledShares: 6_000_000n, spent: 3_000_000n });
  });

  it("settles a buy as filled by its legs, not by the client order id its venue tagged the fills with", async () => {
    // The venue tags its fills "": the first round's 4 shares and the second round's 12 are each counted as their own leg's.
    const untagged = (o: ChildOrder, shares: bigint): PlaceResult => {
      const placed = fill(o, shares);
      return placed.kind === "filled" ? { ...placed, fills: placed.fills.map((f) => ({ ...f, clientOrderId: "" })) } : placed;
    };
    script = [(o) => untagged(o, 8_000_000n), (o) => untagged(o, o.shares)];
    const order = await service().submit(who, body, undefined);
    expect(sent.map((o) => o.shares)).toEqual([20_000_000n, 12_000_000n]);
    expect(order).toMatchObject({ status: "filled", filledShares: 20_000_000n, spent: 10_000_000n });
    expect((await store.fills(order.id)).map((f) => f.clientOrderId)).toEqual(sent.map((o) => o.clientOrderId));
  });

  it("settles a buy as filled when its leg filled short by less than any venue's minimum size: the rest is dust, as a FOK plan's", async () => {
    // The leg fills 19.5 of 20 shares; $0.25 is left, under a share at 0.50, the venue's minimum: the next round is refused order_too_small.
    script = [(o) => fill(o, 19_500_000n)];
    const order = await service().submit(who, body, undefined);
    expect(sent).toHaveLength(1);
    expect(order).toMatchObject({ status: "filled", filledShares: 19_500_000n, spent: 9_750_000n });
  });

  it("releases everything when no round fills anything", async () => {
    script = [nothing, nothing, nothing];
    const order = await service().submit(who, body, undefined);
    expect(order).toMatchObject({ status: "failed", errorCode: "all_venues_failed", spent: 0n });
    expect([...ledger.locks.values()][0]!.state).toBe("released");
  });
});

describe("planning at routing", () => {
  /** A service that counts its plans, with a vault whose lock runs `meanwhile` before it lands. */
  function counted(meanwhile: () => void): { s: OrderService; plans: () => number } {
    let plans = 0;
    const vault = ledger.vault();
    const s = service({
      plan: (req, quotes) => (plans++, plan(req, quotes)),
      vault: { ...vault, lock: (...args) => (meanwhile(), vault.lock(...args)) },
    });
    return { s, plans: () => plans };
  }

  it("routes the plan made before the lock when nothing it was made on moved meanwhile, planning once", async () => {
    script = [(o) => fill(o, o.shares)];
    const { s, plans } = counted(() => undefined);
    const order = await s.submit(who, body, undefined);
    expect(order).toMatchObject({ status: "filled", filledShares: 20_000_000n });
    expect(sent[0]).toMatchObject({ limitPrice: 500_000n, shares: 20_000_000n });
    expect(plans()).toBe(1);
  });

  it("plans again on the book as it is at routing when it moved while the lock was in flight", async () => {
    script = [(o) => fill(o, o.shares)];
    const { s, plans } = counted(() => (asks = [{ price: 400_000n, shares: 100_000_000n }]));
    const order = await s.submit(who, body, undefined);
    expect(order).toMatchObject({ status: "filled", filledShares: 25_000_000n });
    expect(sent[0]).toMatchObject({ limitPrice: 400_000n, shares: 25_000_000n });
    expect(plans()).toBe(2);
  });
});

describe("a venue's write queue", () => {
  const market = { venueMarketId: "m", feeModel: { kind: "polymarket", ratePpm: 0n, exponent: 1 }, tickSize: 10_000n, minOrderShares: 1_000_000n, lotShares: 10_000n, latencyMs: 1 } as const;

  /** The scripted venue v with a write queue: a child order's turn comes when `turn` is called; `returned` records the turns given back. */
  function queuedVenue(): { venue: Venue; turn: () => void; asked: string[]; returned: string[] } {
    let turn!: () => void;
    const comes = new Promise<void>((r) => (turn = r));
    const asked: string[] = [];
    const returned: string[] = [];
    const venue = { ...scriptedVenue(), writeTurn: (id: string) => (asked.push(id), comes), returnTurn: (id: string) => void returned.push(id) } as Venue;
    return { venue, turn, asked, returned };
  }

  /** Submits the $10 buy on v alone, and moves v's book to `moved` while its child order waits for its turn. */
  async function movedWhileQueued(moved: typeof asks): Promise<{ order: Awaited<ReturnType<OrderService["submit"]>>; asked: string[] }> {
    const q = queuedVenue();
    const submitted = service({ venues: new Map([["v", q.venue]]) }).submit(who, body, undefined);
    await expect.poll(() => q.asked.length).toBe(1);
    asks = moved;
    q.turn();
    return { order: await submitted, asked: q.asked };
  }

  it("plans a child order again when its turn comes, on the book as it is then, so levels gone while it queued do not make it miss", async () => {
    // Planned: 20 shares at 0.50. While the child waits for its turn, 0.50 is taken and the book starts at
    // 0.51, within the order's limit (0.50 × 1.02): the child is sent for what $10 buys there, and fills.
    script = [(o) => fill(o, o.shares)];
    const { order, asked } = await movedWhileQueued([{ price: 510_000n, shares: 100_000_000n }]);
    expect(asked).toEqual([childOrderId(order.id, "v")]);
    expect(sent).toMatchObject([{ limitPrice: 510_000n, shares: 19_600_000n }]);
    expect(order).toMatchObject({ status: "filled", filledShares: 19_600_000n, legs: [{ limitPrice: 510_000n, shares: 19_600_000n }] });
  });

  it("sends the legs as planned when the venues no longer fill the whole order at its limit when their turn comes", async () => {
    script = [nothing, nothing, nothing];
    const { order } = await movedWhileQueued([{ price: 520_000n, shares: 100_000_000n }]);
    expect(sent[0]).toMatchObject({ limitPrice: 500_000n, shares: 20_000_000n });
    expect(order).toMatchObject({ status: "failed", errorCode: "all_venues_failed" });
  });

  it("sends the plan made before the turn when nothing it was made on moved meanwhile, without planning again", async () => {
    script = [(o) => fill(o, o.shares)];
    const q = queuedVenue();
    let plans = 0;
    const s = service({
      venues: new Map([["v", q.venue]]),
      quotes: () => [{ venue: "v", ...market, asks, queueDelayMs: 0 }],
      plan: ((req, quotes) => (plans++, plan(req, quotes))) as OrderDeps["plan"],
    });
    const submitted = s.submit(who, body, undefined);
    await expect.poll(() => q.asked.length).toBe(1);
    q.turn();
    const order = await submitted;
    expect(plans).toBe(1);
    expect(sent).toMatchObject([{ limitPrice: 500_000n, shares: 20_000_000n }]);
    expect(order).toMatchObject({ status: "filled", filledShares: 20_000_000n });
  });

  it("gives a venue its turn back when the new plan leaves it out", async () => {
    // Planned: 10 shares on v at 0.50 and the rest on w at 0.505. While v's child queues, v's level is
    // taken: the whole order goes to w, and v's turn goes back to its queue unused.
    script = [];
    const q = queuedVenue();
    let vAsks = [{ price: 500_000n, shares: 10_000_000n }];
    const w = { id: "w", place: async (o: ChildOrder) => (sent.push(o), fill(o, o.shares)) } as Partial<Venue> as Venue;
    const s = service({
      venues: new Map([["v", q.venue], ["w", w]]),
      quotes: () => [
        { venue: "v", ...market, asks: vAsks },
        { venue: "w", ...market, asks: [{ price: 505_000n, shares: 1_000_000_000n }] },
      ],
    });
    const submitted = s.submit(who, body, undefined);
    await expect.poll(() => q.asked.length).toBe(1);
    vAsks = [];
    q.turn();
    const order = await submitted;
    expect(q.returned).toContain(childOrderId(order.id, "v"));
    expect(sent).toMatchObject([{ clientOrderId: childOrderId(order.id, "w"), limitPrice: 505_000n, shares: 19_800_000n }]);
    expect(order).toMatchObject({ status: "filled", legs: [{ venue: "w" }] });
  });

  it("gives the venue its turn back when the order is interrupted after its turn and before its child order is sent", async () => {
    // The store fails as the legs are stored: nothing is sent, the order is left locked to recovery, and
    // the turn it held goes back to the venue's queue instead of being kept by an order that will not use it.
    const q = queuedVenue();
    const failing: Store = Object.assign(Object.create(store) as Store, {
      updateOrder: (...args: Parameters<Store["updateOrder"]>) => (args[2].status === "routing" ? Promise.reject(new Error("disk I/O error")) : store.updateOrder(...args)),
    });
    const submitted = service({ store: failing, venues: new Map([["v", q.venue]]) }).submit(who, body, undefined);
    await expect.poll(() => q.asked.length).toBe(1);
    q.turn();
    const order = await submitted;
    expect(order.status).toBe("locked");
    expect(sent).toEqual([]);
    expect(q.returned).toContain(childOrderId(order.id, "v"));
  });
});

describe("a burst", () => {
  const market = { venueMarketId: "m", feeModel: { kind: "polymarket", ratePpm: 0n, exponent: 1 }, tickSize: 10_000n, minOrderShares: 1_000_000n, lotShares: 10_000n, latencyMs: 1 } as const;

  /** Venues v and w that answer no child order until `n` have been placed (`placed` told of each), then fill each whole. */
  function gatedVenues(n: number, placed: (venue: string) => void = () => undefined): Map<string, Venue> {
    let release!: () => void;
    const allPlaced = new Promise<void>((r) => (release = r));
    const gated = (id: string): Venue =>
      ({
        id,
        place: async (o: ChildOrder) => {
          sent.push(o);
          placed(id);
          if (sent.length === n) release();
          await allPlaced;
          return fill(o, o.shares);
        },
      }) as Partial<Venue> as Venue;
    return new Map(["v", "w"].map((id) => [id, gated(id)]));
  }

  it("counts the child orders planned onto a venue in its queue, so orders planned at once spill to the next venue", async () => {
    // Two venues whose write limit sends one child order each 100 ms: each order planned or being placed
    // there adds 100 ms to the next one's wait. Nothing is answered until every order has been placed, so
    // whatever the interleaving, the n-th order plans behind the n − 1 before it.
    const N = 6;
    const waiting = new Map<string, number>();
    const seen: number[] = [];
    const s = service({
      venues: gatedVenues(N, (id) => waiting.set(id, (waiting.get(id) ?? 0) + 1)),
      quotes: (_event, _outcome, ahead) => {
        seen.push(ahead("v"));
        const queue = (id: string) => 100 * (ahead(id) + (waiting.get(id) ?? 0));
        // v is cheaper: alone, it would take every order and queue them 100 ms apart.
        return [
          { venue: "v", ...market, asks: [{ price: 500_000n, shares: 1_000_000_000n }], queueDelayMs: queue("v") },
          { venue: "w", ...market, asks: [{ price: 502_000n, shares: 1_000_000_000n }], queueDelayMs: queue("w") },
        ];
      },
    });
    const orders = await Promise.all(Array.from({ length: N }, () => s.submit(who, { ...body, amount_usdc: 5 }, undefined)));
    expect(orders.map((o) => o.status)).toEqual(Array(N).fill("filled"));
    // v takes orders while its queue is within MAX_QUEUE_MS (250 ms) of w's: 0, 100, 200, then 300 against w's 100;
    // w the 4th (v at 300, w at 0) and the 6th (v at 400, w at 100).
    const venues = sent.map((o) => o.clientOrderId.split("-").pop());
    expect(venues.filter((v) => v === "v")).toHaveLength(4);
    expect(venues.filter((v) => v === "w")).toHaveLength(2);
    expect(Math.max(...seen)).toBeGreaterThan(0);
    // Every order answered: nothing is counted ahead any more.
    seen.length = 0;
    await s.quote({ ...body, amount_usdc: 5 });
    expect(seen).toEqual([0]);
  });

  it("holds the shares a child order plans to take off the book until it is answered, so orders planned at once do not plan the same shares", async () => {
    // v's one level holds 30 shares: two $10 orders at 0.50 want 20 each. Nothing is answered until both
    // orders have sent a child order, so both plan while the other's shares are in flight.
    const s = service({
      venues: gatedVenues(2),
      quotes: () => [
        { venue: "v", ...market, asks: [{ price: 500_000n, shares: 30_000_000n }] },
        { venue: "w", ...market, asks: [{ price: 505_000n, shares: 1_000_000_000n }] },
      ],
    });
    const orders = await Promise.all([1, 2].map(() => s.submit(who, body, undefined)));
    expect(orders.map((o) => o.status)).toEqual(["filled", "filled"]);
    const sharesAt = (venue: string) => sent.filter((o) => o.clientOrderId.endsWith(`-${venue}`)).reduce((n, o) => n + o.shares, 0n);
    // One order takes 20 of v's shares, the other the 10 left and the rest on w; without holding, both would plan 20 on v.
    expect(sharesAt("v")).toBe(30_000_000n);
    expect(sharesAt("w")).toBe(9_900_000n); // $5 at 0.505
    expect(orders.map((o) => o.legs.length).sort()).toEqual([1, 2]);
    // Both answered: the level is whole again for the next order.
    const { plan: next } = await s.quote(body);
    expect(next.legs).toMatchObject([{ venue: "v", shares: 20_000_000n }]);
  });
});

describe("money after the lock", () => {
  it("never charges more than the lock, even when the books moved and every share filled at its leg's limit", async () => {
    // Planned: 100 shares at 0.50 and 50 at 0.51; had all of them filled at 0.51 the lock would not have covered it.
    asks = [
      { price: 500_000n, shares: 100_000_000n },
      { price: 510_000n, shares: 100_000_000n },
    ];
    script = [(o) => fill(o, o.shares)];
    const order = await service().submit(who, { ...body, amount_usdc: "75.5", max_slippage: 0.05 }, undefined);
    expect(sent[0]!.limitPrice).toBe(510_000n);
    expect(order.status).toBe("filled");
    const cost = (sent[0]!.limitPrice * sent[0]!.shares) / 1_000_000n;
    expect(order.spent).toBe(cost);
    expect(order.spent).toBeLessThanOrEqual(order.locked);
    expect([...ledger.locks.values()][0]).toMatchObject({ state: "settled", spent: cost });
  });

  it("settles a Polymarket buy that spent its maker amount at a better price: every share minted, the fills' cost charged, one round", async () => {
    const feeModel = { kind: "polymarket", ratePpm: 20_000n, exponent: 1 } as const;
    const quotes = (): VenueQuote[] => [
      { venue: "v", venueMarketId: "m", feeModel, tickSize: 10_000n, minOrderShares: 1_000_000n, lotShares: 1_000_000n, latencyMs: 1, asks },
    ];
    // The venue spends limit × shares pUSD at 0.48, below every planned level: more shares than the leg names.
    script = [
      (o) => {
        const spent = (o.limitPrice * o.shares) / 1_000_000n;
        const shares = (spent * 1_000_000n) / 480_000n;
        const fee = orderFee(feeModel, [{ price: 480_000n, shares }]);
        return { kind: "filled", venueOrderId: "vo", fills: [{ tradeId: "t", venueOrderId: "vo", clientOrderId: o.clientOrderId, side: "buy", price: 480_000n, shares, fee }] };
      },
    ];
    const order = await service({ quotes }).submit(who, body, undefined);
    expect(sent).toHaveLength(1);
    const leg = sent[0]!;
    const fills = await store.fills(order.id);
    const shares = fills[0]!.shares;
    expect(shares).toBeGreaterThan(leg.shares);
    const cost = notional(480_000n, shares) + fills[0]!.fee;
    expect(fills[0]!.fee).toBeGreaterThan(orderFee(feeModel, [{ price: leg.limitPrice, shares: leg.shares }]));
    expect(order).toMatchObject({ status: "filled", filledShares: shares, spent: cost });
    expect(cost).toBeLessThanOrEqual(order.locked);
    expect([...ledger.locks.values()][0]).toMatchObject({ state: "settled", spent: cost, shares });
    expect(ledger.sot.get(who.address)).toBe(shares);
  });

  it("charges a trade the venue reported twice once", async () => {
    script = [
      (o) => {
        const f = fill(o, o.shares);
        return f.kind === "filled" ? { ...f, fills: [...f.fills, ...f.fills] } : f;
      },
    ];
    const order = await service().submit(who, body, undefined);
    expect(order).toMatchObject({ status: "filled", filledShares: 20_000_000n, spent: 10_000_000n });
    expect(await store.fills(order.id)).toHaveLength(1);
  });

  it("cancels a child order the venue left open, and settles on what it had filled", async () => {
    script = [
      (o) => {
        const { fills } = fill(o, 4_000_000n) as Extract<PlaceResult, { kind: "filled" | "partial" }>;
        known.set(o.clientOrderId, { kind: "open", venueOrderId: `vo-${o.clientOrderId}`, fills });
        return { kind: "open", venueOrderId: `vo-${o.clientOrderId}`, fills };
      },
      nothing,
      nothing,
    ];
    const order = await service().submit(who, body, undefined);
    expect(cancelled).toEqual([childOrderId(order.id, "v")]);
    expect(order).toMatchObject({ status: "partially_filled", filledShares: 4_000_000n, spent: 2_000_000n });
  });

  it("leaves an order routing, its funds locked, while a child order whose answer was lost may still arrive", async () => {
    script = [() => ({ kind: "unknown", reason: "timeout" })];
    const order = await service().submit(who, body, undefined);
    expect(order.status).toBe("routing");
    expect([...ledger.locks.values()][0]!.state).toBe("locked");
    expect(order.legs[0]!.expiresAt).toBeGreaterThan(Date.now());
  });

  it("counts a lost child order as never placed once its expiry has passed at the venue", async () => {
    script = [() => ({ kind: "unknown", reason: "timeout" }), nothing, nothing];
    const order = await service({ childOrderTtlMs: 1_000, expirySkewMs: 0, reconcileAttempts: 2, reconcileDelayMs: 600 }).submit(who, body, undefined);
    expect(order).toMatchObject({ status: "failed", errorCode: "all_venues_failed" });
    expect([...ledger.locks.values()][0]!.state).toBe("released");
  });

  it("answers the order, still routing, when the settlement's outcome is unknown: recovery finishes it", async () => {
    script = [(o) => fill(o, o.shares)];
    ledger.failNext.settle = new Error("connection reset");
    const order = await service().submit(who, body, undefined);
    expect(order.status).toBe("routing");
    expect(await store.fills(order.id)).toHaveLength(1);
  });

  it("answers the order as this request last stored it when the store fails after the lock and cannot be read back either: in progress, never an error, recovery finishes it", async () => {
    script = [(o) => fill(o, o.shares)];
    const down = () => Promise.reject(new Error("Connection terminated unexpectedly"));
    const failing: Store = Object.create(store, { updateOrder: { value: down }, order: { value: down } });
    const order = await service({ store: failing }).submit(who, body, undefined);
    expect(order).toMatchObject({ status: "pending", amount: 10_000_000n });
    expect(await store.order(order.id)).toMatchObject({ status: "pending" });
    expect([...ledger.locks.values()][0]!.state).toBe("locked");
  });

  it("answers the order, still pending, when the lock's outcome is unknown and the chain holds no lock", async () => {
    script = [];
    ledger.failNext.lock = new VaultTxError("unknown", "Unknown", "Vault.lock: outcome unknown");
    const order = await service().submit(who, body, undefined);
    expect(order.status).toBe("pending");
    expect(sent).toHaveLength(0);
  });


  it("routes an order whose lock landed though its answer was lost, recorded with the lock's transaction as the chain logged it", async () => {
    script = [(o) => fill(o, o.shares)];
    const vault = ledger.vault();
    const lost = { ...vault, lock: async (...args: Parameters<Vault["lock"]>) => (await vault.lock(...args), Promise.reject(new VaultTxError("unknown", "Unknown", "Vault.lock: outcome unknown"))) };
    const order = await service({ vault: lost }).submit(who, body, undefined);
    expect(order.status).toBe("filled");
    expect(order.lockTx).toBe(HASH);
  });
});

describe("recovery", () => {
  /** A buy whose one child order filled whole, its fills stored, left routing by its settlement's lost answer; its venue tells recovery the child's fills. */
  async function routingWithFills(): Promise<{ svc: OrderService; order: OrderRecord }> {
    script = [(o) => fill(o, o.shares)];
    ledger.failNext.settle = new VaultTxError("unknown", "Unknown", "Vault.settle: outcome unknown");
    const svc = service();
    const order = await svc.submit(who, body, undefined);
    expect(order.status).toBe("routing");
    const child = order.legs[0]!;
    known.set(child.clientOrderId, { kind: "done", venueOrderId: `vo-${child.clientOrderId}`, fills: (await store.fills(order.id)).map((f) => ({ ...f, side: "buy" as const })) });
    return { svc, order };
  }

  it("settles an order on its fills when the open orders it listed have moved on since: a lock is never released under stored fills", async () => {
    const { svc, order } = await routingWithFills();
    // The pass listed the order while it was still locked; by the time it reaches it, the order has
    // routed, its fills are stored and its settlement's answer was lost.
    const listedWhileLocked = { ...order, status: "locked" as const, legs: [] };
    const listing: Store = Object.create(store, { ordersInStatus: { value: async () => [listedWhileLocked] } });
    await new Reconciler(svc, { store: listing, vault: ledger.vault(), venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }) }).pass(0);
    expect(ledger.locks.get(chainOrderId(order.id))?.state).toBe("settled");
    expect((await store.order(order.id))?.status).toBe("filled");
  });

  it("ends a routing order whose venue never answers once its lock's deadline has passed, releasing the lock whole, and not before", async () => {
    const clock = { t: Date.now(), now: () => clock.t };
    ledger.now = clock.now;
    script = [() => ({ kind: "unknown", reason: "timeout" })];
    const svc = service({ clock });
    const order = await svc.submit(who, body, undefined);
    expect(order.status).toBe("routing");
    const silent = { ...scriptedVenue(), status: async () => Promise.reject(new AppError("venue_unavailable", "v lists no market m")) } as Venue;
    const recovery = new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", silent]]), clock, log: pino({ level: "silent" }) });
    clock.t += 3_600_000;
    expect(await recovery.pass(0)).toBe(0);
    expect((await store.order(order.id))?.status).toBe("routing");
    expect(ledger.locks.get(chainOrderId(order.id))?.state).toBe("locked");
    clock.t += LOCK_TTL_S * 1000;
    expect(await recovery.pass(0)).toBe(1);
    expect(ledger.locks.get(chainOrderId(order.id))?.state).toBe("released");
    expect(await store.order(order.id)).toMatchObject({ status: "failed", releaseTx: HASH, errorCode: "venue_unavailable", spent: 0n });
  });

  it("reads neither the chain nor the order's fills for a routing order whose venue never answers while its lock's deadline is hours away", async () => {
    const clock = { t: Date.now(), now: () => clock.t };
    ledger.now = clock.now;
    script = [() => ({ kind: "unknown", reason: "timeout" })];
    const svc = service({ clock });
    const order = await svc.submit(who, body, undefined);
    const silent = { ...scriptedVenue(), status: async () => Promise.reject(new AppError("venue_unavailable", "v lists no market m")) } as Venue;
    const asked: string[] = [];
    const vault = Object.fromEntries(Object.entries(ledger.vault()).map(([name, call]) => [name, (...args: unknown[]) => (asked.push(name), call(...args))])) as unknown as Vault;
    const fillsRead = vi.spyOn(store, "fills");
    const recovery = new Reconciler(svc, { store, vault, venues: new Map([["v", silent]]), clock, log: pino({ level: "silent" }) });
    for (const hours of [1, 12, 23]) {
      clock.t = Date.parse((await store.order(order.id))!.createdAt) + hours * 3_600_000;
      expect(await recovery.pass(0)).toBe(0);
    }
    expect(asked.filter((name) => name !== "info")).toEqual([]);
    expect(fillsRead).not.toHaveBeenCalled();
    clock.t += 2 * 3_600_000;
    expect(await recovery.pass(0)).toBe(1);
    expect(await store.order(order.id)).toMatchObject({ status: "failed", errorCode: "venue_unavailable" });
  });

  it("settles on the fills its venues reported a routing order whose other child order is never answered, once its lock's deadline has passed", async () => {
    const clock = { t: Date.now(), now: () => clock.t };
    ledger.now = clock.now;
    script = [(o) => fill(o, o.shares / 2n), () => ({ kind: "unknown", reason: "timeout" })];
    const svc = service({ clock });
    const order = await svc.submit(who, body, undefined);
    expect(order.status).toBe("routing");
    const [first] = await store.fills(order.id);
    const silent = { ...scriptedVenue(), status: async () => Promise.reject(new AppError("venue_unavailable", "v lists no market m")) } as Venue;
    clock.t += (LOCK_TTL_S + 1) * 1000;
    await new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", silent]]), clock, log: pino({ level: "silent" }) }).pass(0);
    const charged = (first!.shares * first!.price) / 1_000_000n + first!.fee;
    expect(ledger.locks.get(chainOrderId(order.id))).toMatchObject({ state: "settled", spent: charged, shares: first!.shares });
    expect(await store.order(order.id)).toMatchObject({ status: "partially_filled", filledShares: first!.shares, spent: charged, settleTx: HASH });
  });

  it("charges, once its lock's deadline has passed, the fills a venue reports of a child order the server stopped before storing, though another child order's venue is no longer configured", async () => {
    const clock = { t: Date.now(), now: () => clock.t };
    ledger.now = clock.now;
    script = [(o) => fill(o, o.shares / 2n)];
    // The server stops once the child order was answered, before its fills were stored.
    const svc = service({ clock, checkpoint: (step) => { if (step === "order.placed") throw new Error("killed"); } });
    const order = await svc.submit(who, body, undefined);
    expect(order.status).toBe("routing");
    expect(await store.fills(order.id)).toEqual([]);
    const [child] = order.legs;
    const filled = { tradeId: `t-${child!.clientOrderId}`, venueOrderId: `vo-${child!.clientOrderId}`, clientOrderId: child!.clientOrderId, side: "buy" as const, price: child!.limitPrice, shares: child!.shares / 2n, fee: 0n };
    known.set(child!.clientOrderId, { kind: "done", venueOrderId: filled.venueOrderId, fills: [filled] });
    // Its other child order went to a venue the restarted server no longer runs.
    await store.updateOrder(order.id, ["routing"], { legs: [{ ...child!, venue: "gone", clientOrderId: childOrderId(order.id, "gone") }, child!] });
    clock.t += (LOCK_TTL_S + 1) * 1000;
    const recovery = new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", scriptedVenue()]]), clock, log: pino({ level: "silent" }) });
    expect(await recovery.pass(0)).toBe(1);
    const charged = (filled.shares * filled.price) / 1_000_000n;
    expect(ledger.locks.get(chainOrderId(order.id))).toMatchObject({ state: "settled", spent: charged, shares: filled.shares });
    expect(await store.order(order.id)).toMatchObject({ status: "partially_filled", filledShares: filled.shares, spent: charged, settleTx: HASH });
  });

  it("settles on the fills recovery learns from its other child orders a routing order whose server died before storing them, once its lock's deadline has passed", async () => {
    const clock = { t: Date.now(), now: () => clock.t };
    ledger.now = clock.now;
    script = [(o) => fill(o, o.shares / 2n), () => ({ kind: "unknown", reason: "timeout" })];
    const svc = service({ clock });
    // The server dies before the fills are stored: recovery finds them at the venue, which answers for the first child alone.
    vi.spyOn(store, "insertFills").mockResolvedValueOnce(undefined);
    const order = await svc.submit(who, body, undefined);
    expect(await store.fills(order.id)).toEqual([]);
    const answered = fill(sent[0]!, sent[0]!.shares / 2n) as Extract<PlaceResult, { kind: "filled" | "partial" }>;
    const venue = { ...scriptedVenue(), status: async (id: string) => (id === sent[0]!.clientOrderId ? { kind: "done" as const, venueOrderId: answered.venueOrderId, fills: answered.fills } : Promise.reject(new AppError("venue_unavailable", "v lists no market m"))) } as Venue;
    clock.t += (LOCK_TTL_S + 1) * 1000;
    await new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", venue]]), clock, log: pino({ level: "silent" }) }).pass(0);
    const [f] = answered.fills;
    const charged = (f!.shares * f!.price) / 1_000_000n + f!.fee;
    expect(ledger.locks.get(chainOrderId(order.id))).toMatchObject({ state: "settled", spent: charged, shares: f!.shares });
    expect(await store.order(order.id)).toMatchObject({ status: "partially_filled", filledShares: f!.shares, spent: charged, settleTx: HASH });
  });

  it("ends a routing order whose venue is no longer configured once the client expired its lock on chain", async () => {
    script = [() => ({ kind: "unknown", reason: "timeout" })];
    const svc = service();
    const order = await svc.submit(who, body, undefined);
    const lock = ledger.locks.get(chainOrderId(order.id))!;
    // The chain lets the client expire it once its deadline has passed.
    ledger.locks.set(chainOrderId(order.id), { ...lock, state: "released", expired: true });
    const recovery = new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map(), clock: { now: () => (lock.deadline + 1) * 1000 }, log: pino({ level: "silent" }) });
    expect(await recovery.pass(0)).toBe(1);
    expect(await store.order(order.id)).toMatchObject({ status: "failed", releaseTx: HASH, errorCode: "venue_unavailable" });
  });

  it("ends a routing order whose venue is no longer configured past its lock's deadline on a chain that mined no block since (the embedded chain mines only for a transaction)", async () => {
    script = [() => ({ kind: "unknown", reason: "timeout" })];
    const svc = service();
    const order = await svc.submit(who, body, undefined);
    const lock = ledger.locks.get(chainOrderId(order.id))!;
    // The chain's latest block is the lock's: nothing was sent since.
    ledger.now = () => (lock.deadline - LOCK_TTL_S) * 1000;
    const recovery = new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map(), clock: { now: () => (lock.deadline + 11 * 60) * 1000 }, log: pino({ level: "silent" }) });
    expect(await recovery.pass(0)).toBe(1);
    expect(await store.order(order.id)).toMatchObject({ status: "failed", releaseTx: HASH, errorCode: "venue_unavailable" });
    expect(ledger.locks.get(chainOrderId(order.id))?.state).toBe("released");
  });

  it("leaves a routing order whose venue is no longer configured open while its lock's deadline has not passed by the chain's time, nor by this server's less its margin", async () => {
    script = [() => ({ kind: "unknown", reason: "timeout" })];
    const svc = service();
    const order = await svc.submit(who, body, undefined);
    const lock = ledger.locks.get(chainOrderId(order.id))!;
    ledger.now = () => (lock.deadline - 60) * 1000;
    const recovery = new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map(), clock: { now: () => (lock.deadline + 9 * 60) * 1000 }, log: pino({ level: "silent" }) });
    expect(await recovery.pass(0)).toBe(0);
    expect(await store.order(order.id)).toMatchObject({ status: "routing" });
    expect(ledger.locks.get(chainOrderId(order.id))?.state).toBe("locked");
  });

  it("fails venue_unavailable, not order_interrupted, a routing order with fills whose lock the client expired on chain before it was settled, without saying a venue did not answer: its venue answered at once", async () => {
    const { svc, order } = await routingWithFills();
    // The venue's fill was stored by the request itself; the settlement's answer was lost, and no server ran again
    // before the lock's deadline, past which the client expired the lock.
    expect(await store.fills(order.id)).toHaveLength(1);
    const lock = ledger.locks.get(chainOrderId(order.id))!;
    ledger.locks.set(chainOrderId(order.id), { ...lock, state: "released", expired: true });
    const recovery = new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", scriptedVenue()]]), clock: { now: () => (lock.deadline + 1) * 1000 }, log: pino({ level: "silent" }) });
    expect(await recovery.pass(0)).toBe(1);
    expect(await store.order(order.id)).toMatchObject({
      status: "failed",
      releaseTx: HASH,
      spent: 0n,
      errorCode: "venue_unavailable",
      errorMessage: "The order was not settled before its lock's deadline (a venue, the chain or the server did not answer in time); the locked USDC was released.",
    });
  });

  it("fails a routing order whose venue reported a fill only after the order's release, its answer lost, had landed, saying so rather than that the server stopped: it never did", async () => {
    script = [() => ({ kind: "unknown", reason: "timeout" }), nothing, nothing];
    const vault = ledger.vault();
    const lost = { ...vault, release: async (...args: Parameters<Vault["release"]>) => (await vault.release(...args), Promise.reject(new VaultTxError("unknown", "Unknown", "Vault.release: outcome unknown"))) };
    let ahead = 0;
    const svc = service({ vault: lost, clock: { now: () => Date.now() + ahead }, childOrderTtlMs: 1_000, expirySkewMs: 0, reconcileAttempts: 2, reconcileDelayMs: 600 });
    // The child order, lost, counts as never placed past its expiry: nothing filled, the lock is released.
    const order = await svc.submit(who, body, undefined);
    expect(order).toMatchObject({ status: "routing", releaseTx: null });
    expect(ledger.locks.get(chainOrderId(order.id))?.state).toBe("released");
    // The venue then reports that the child order filled.
    const child = order.legs[0]!;
    known.set(child.clientOrderId, { kind: "done", venueOrderId: `vo-${child.clientOrderId}`, fills: [{ tradeId: "t-late", venueOrderId: `vo-${child.clientOrderId}`, clientOrderId: child.clientOrderId, side: "buy", price: child.limitPrice, shares: child.shares, fee: 0n }] });
    // Its later rounds' child orders, refused, are past their expiry too.
    ahead = 5_000;
    expect(await reconciler(svc).pass(0)).toBe(1);
    expect(await store.order(order.id)).toMatchObject({
      status: "failed",
      releaseTx: HASH,
      spent: 0n,
      errorCode: "order_interrupted",
      errorMessage: "A venue reported the order's fills only after its lock was released; nothing was charged and the locked USDC was released.",
    });
  });

  it("records a buy whose settlement landed, its answer lost, as the chain settled it, once its venue no longer answers and its lock's deadline has passed", async () => {
    const clock = { t: Date.now(), now: () => clock.t };
    ledger.now = clock.now;
    script = [(o) => fill(o, o.shares)];
    ledger.failNext.settle = new VaultTxError("unknown", "Unknown", "Vault.settle: outcome unknown");
    const svc = service({ clock });
    const order = await svc.submit(who, body, undefined);
    expect(order.status).toBe("routing");
    const [stored] = await store.fills(order.id);
    const charged = (stored!.shares * stored!.price) / 1_000_000n + stored!.fee;
    // The settlement landed after all; then the venue's market left its listings.
    await ledger.vault().settle(chainOrderId(order.id), charged, { tokenId: 7n, shares: stored!.shares });
    const silent = { ...scriptedVenue(), status: async () => Promise.reject(new AppError("venue_unavailable", "v lists no market m")) } as Venue;
    const recovery = new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", silent]]), clock, log: pino({ level: "silent" }) });
    clock.t += (LOCK_TTL_S + 1) * 1000;
    expect(await recovery.pass(0)).toBe(1);
    expect(await recovery.pass(0)).toBe(0);
    expect(ledger.locks.get(chainOrderId(order.id))).toMatchObject({ state: "settled", spent: charged, shares: stored!.shares });
    expect(await store.order(order.id)).toMatchObject({ status: "filled", filledShares: stored!.shares, spent: charged, sotTokenId: "7", settleTx: HASH });
  });

  it("fails, once, a routing order whose lock a reorganisation removed, charging nothing, once no operator transaction can land it again; its fills are the operator's", async () => {
    const { svc, order } = await routingWithFills();
    // A reorganisation removed the lock's transaction; the node holds it again in its pool for a while.
    ledger.locks.delete(chainOrderId(order.id));
    ledger.pending = 1;
    const errors: string[] = [];
    const log = pino({ level: "error" }, { write: (line: string) => void errors.push(JSON.parse(line).msg) });
    const recovery = new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log });
    expect(await recovery.pass(0)).toBe(0);
    expect((await store.order(order.id))?.status).toBe("routing");
    ledger.pending = 0;
    expect(await recovery.pass(0)).toBe(1);
    expect(await recovery.pass(0)).toBe(0);
    expect(await store.order(order.id)).toMatchObject({ status: "failed", errorCode: "chain_unavailable", spent: 0n, filledShares: 0n, settleTx: null, releaseTx: null });
    expect(ledger.locks.has(chainOrderId(order.id))).toBe(false);
    expect(errors).toHaveLength(1);
    // No lock is shown where the chain holds none: no lock transaction, no USDC moved in the account's activity.
    expect(await store.order(order.id)).toMatchObject({ locked: 0n, lockTx: null });
    expect((await store.activity("acc", { limit: 10, cursor: null })).data.filter((a) => a.reference === order.id)).toEqual([]);
  });

  it.each([
    ["the sweep releases", false],
    ["is expired past its deadline before any sweep", true],
  ])("records on a routing order failed as its lock a reorganisation removed the lock landed again after, which %s, with its transaction and its release", async (_, expired) => {
    const { svc, order } = await routingWithFills();
    const chainId = chainOrderId(order.id);
    const lock = ledger.locks.get(chainId)!;
    ledger.locks.delete(chainId);
    expect(await reconciler(svc).pass(0)).toBe(1);
    expect(await store.order(order.id)).toMatchObject({ status: "failed", errorCode: "chain_unavailable", locked: 0n, lockTx: null, releaseTx: null });
    // The node mines the removed lock again, the order failed.
    ledger.locks.set(chainId, expired ? { ...lock, state: "released", expired: true } : lock);
    expect(await reconciler(svc).sweepLocks()).toBe(expired ? 0 : 1);
    expect(ledger.locks.get(chainId)).toMatchObject({ state: "released" });
    expect(await store.order(order.id)).toMatchObject({
      status: "failed",
      errorCode: "chain_unavailable",
      spent: 0n,
      locked: 10_000_000n,
      lockTx: HASH,
      releaseTx: HASH,
      errorMessage: expect.stringContaining(expired ? "was expired past its deadline" : "landed on the chain after the order was closed"),
    });
  });

  it("records on a routing order failed as its lock a reorganisation removed the lock landed again after and its release, whose answer the sweep lost, at its next sweep, though the chain no longer holds the lock", async () => {
    const { svc, order } = await routingWithFills();
    const chainId = chainOrderId(order.id);
    const lock = ledger.locks.get(chainId)!;
    ledger.locks.delete(chainId);
    expect(await reconciler(svc).pass(0)).toBe(1);
    ledger.locks.set(chainId, lock);
    const vault = ledger.vault();
    const release = vault.release.bind(vault);
    // The release lands, its answer lost on the way (a receipt past the deadline, or a stop before the store's write).
    vault.release = async (id) => (await release(id), Promise.reject(new VaultTxError("unknown", "Unknown", "Vault.release: outcome unknown")));
    expect(await new Reconciler(svc, { store, vault, venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }) }).sweepLocks()).toBe(0);
    expect(ledger.locks.get(chainId)).toMatchObject({ state: "released" });
    // The next sweep (a restart's, with another reading of the chain) records what the chain did.
    await reconciler(svc).sweepLocks();
    expect(await store.order(order.id)).toMatchObject({
      status: "failed",
      errorCode: "chain_unavailable",
      spent: 0n,
      locked: 10_000_000n,
      lockTx: HASH,
      releaseTx: HASH,
      errorMessage: expect.stringContaining("landed on the chain after the order was closed"),
    });
  });

  it("rejects a locked order whose lock a reorganisation removed showing no lock, neither on the order nor in the account's activity", async () => {
    // The server stops once the lock landed; stored `locked` as the flow stores it, then a reorganisation removes the lock's transaction.
    const svc = service({ checkpoint: (step) => { if (step === "order.locked") throw new Error("killed"); } });
    const pending = await svc.submit(who, body, undefined);
    const order = (await store.updateOrder(pending.id, ["pending"], { status: "locked", locked: 10_000_000n, lockTx: HASH }))!;
    expect(order).toMatchObject({ status: "locked", lockTx: HASH });
    ledger.locks.delete(chainOrderId(order.id));
    expect(await reconciler(svc).pass(0)).toBe(1);
    expect(await store.order(order.id)).toMatchObject({ status: "rejected", errorCode: "order_interrupted", locked: 0n, lockTx: null });
    expect((await store.activity("acc", { limit: 10, cursor: null })).data.filter((a) => a.reference === order.id)).toEqual([]);
  });

  it("rejects an order whose lock's outcome the chain never told, and that never landed, without saying the server stopped: it never did", async () => {
    ledger.failNext.lock = new VaultTxError("unknown", "Unknown", "Vault.lock: outcome unknown");
    const svc = service();
    const order = await svc.submit(who, body, undefined);
    expect(order.status).toBe("pending");
    expect(await reconciler(svc).pass(0)).toBe(1);
    const rejected = await store.order(order.id);
    expect(rejected).toMatchObject({ status: "rejected", errorCode: "order_interrupted", locked: 0n, lockTx: null });
    expect(rejected!.errorMessage).toBe("The order was interrupted before its lock was taken (the server stopped, or the chain or the store did not answer); nothing was locked.");
  });

  it("rejects an order whose refusal the store did not take, nothing locked, without saying the server stopped or the chain did not answer: neither happened", async () => {
    asks = [{ price: 990_000n, shares: 1_000_000n }];
    const down = () => Promise.reject(new Error("Connection terminated unexpectedly"));
    const svc = service({ store: Object.create(store, { updateOrder: { value: down } }) });
    const order = await svc.submit(who, body, undefined);
    expect(order.status).toBe("pending");
    expect(await reconciler(svc).pass(0)).toBe(1);
    const rejected = await store.order(order.id);
    expect(rejected).toMatchObject({ status: "rejected", errorCode: "order_interrupted", locked: 0n, lockTx: null });
    expect(ledger.locks.size).toBe(0);
    expect(rejected!.errorMessage).toBe("The order was interrupted before its lock was taken (the server stopped, or the chain or the store did not answer); nothing was locked.");
  });

  it("fails an order whose lock landed after the request was told its outcome is unknown, releasing it, without saying the server stopped: it never did", async () => {
    ledger.failNext.lock = new VaultTxError("unknown", "Unknown", "Vault.lock: outcome unknown");
    const svc = service();
    const order = await svc.submit(who, body, undefined);
    expect(order.status).toBe("pending");
    // The lock landed after all, once the request had answered the order pending.
    await ledger.vault().lock(chainOrderId(order.id), who.address, 10_000_000n);
    expect(await reconciler(svc).pass(0)).toBe(1);
    const failed = await store.order(order.id);
    expect(failed).toMatchObject({ status: "failed", errorCode: "order_interrupted", locked: 10_000_000n, releaseTx: HASH, spent: 0n });
    expect(ledger.locks.get(chainOrderId(order.id))?.state).toBe("released");
    expect(failed!.errorMessage).toBe("The order was interrupted before it was routed (the server stopped, or the chain or the store did not answer); the locked USDC was released.");
  });

  it("fails an order interrupted before it routed whose lock was expired past its deadline, the server stopped for a day, saying it was expired rather than released", async () => {
    ledger.failNext.lock = new VaultTxError("unknown", "Unknown", "Vault.lock: outcome unknown");
    const svc = service();
    const order = await svc.submit(who, body, undefined);
    const chainId = chainOrderId(order.id);
    // The lock landed, its answer lost; no recovery ran before its deadline, past which anyone expired it.
    await ledger.vault().lock(chainId, who.address, 10_000_000n);
    ledger.locks.set(chainId, { ...ledger.locks.get(chainId)!, state: "released", expired: true });
    expect(await reconciler(svc).pass(0)).toBe(1);
    expect(await store.order(order.id)).toMatchObject({
      status: "failed",
      errorCode: "order_interrupted",
      locked: 10_000_000n,
      lockTx: HASH,
      releaseTx: HASH,
      spent: 0n,
      errorMessage: "The order was not routed before its lock's deadline (the server stopped, or the chain or the store did not answer), and its lock was expired; the locked USDC was released.",
    });
  });

  it("keeps what recovery recorded of an order interrupted before it routed whose lock was expired, its transaction not found by the node asked, when the sweep reads the expiry", async () => {
    ledger.failNext.lock = new VaultTxError("unknown", "Unknown", "Vault.lock: outcome unknown");
    // A node of a pool behind the one that read the lock: no Locked event of the order in the blocks it has.
    const vault = Object.assign(ledger.vault(), { heldBy: async () => null });
    const svc = service({ vault });
    const order = await svc.submit(who, body, undefined);
    const chainId = chainOrderId(order.id);
    await ledger.vault().lock(chainId, who.address, 10_000_000n);
    ledger.locks.set(chainId, { ...ledger.locks.get(chainId)!, state: "released", expired: true });
    const recovery = new Reconciler(svc, { store, vault, venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }) });
    expect(await recovery.pass(0)).toBe(1);
    const failed = await store.order(order.id);
    expect(failed).toMatchObject({ status: "failed", errorCode: "order_interrupted", locked: 10_000_000n, lockTx: null, releaseTx: HASH });
    expect(await recovery.sweepLocks()).toBe(0);
    expect(await store.order(order.id)).toMatchObject({ errorMessage: failed!.errorMessage, lockTx: null, releaseTx: HASH });
  });

  it.each([
    { release: "landed, its answer lost", lands: true },
    { release: "never sent", lands: false },
  ])("rejects with the router's refusal an order refused at routing whose release was $release, the server stopped: not as interrupted", async ({ lands }) => {
    // The books empty but for a share between the first plan and the routing: the router refuses the order.
    let quoted = 0;
    const quote = (): VenueQuote => ({ venue: "v", venueMarketId: "m", feeModel: { kind: "polymarket", ratePpm: 0n, exponent: 1 }, tickSize: 10_000n, minOrderShares: 1_000_000n, lotShares: 10_000n, latencyMs: 1, asks: quoted++ === 0 ? asks : [{ price: 500_000n, shares: 1_000_000n }] });
    const vault = ledger.vault();
    const release = vault.release.bind(vault);
    // The request's release (only): recovery's lands and is answered.
    vault.release = async (id) => {
      vault.release = release;
      if (lands) await release(id);
      throw new VaultTxError("unknown", "Unknown", "Vault.release: outcome unknown");
    };
    const svc = service({ vault, quotes: () => [quote()] });
    const order = await svc.submit(who, body, undefined);
    expect(order).toMatchObject({ status: "locked", releaseTx: null, errorCode: "insufficient_liquidity" });
    // Open, the order shows no error yet: its answer is the refusal once its lock is released.
    expect(orderView(order, [], String).error).toBeNull();
    expect(ledger.locks.get(chainOrderId(order.id))?.state).toBe(lands ? "released" : "locked");
    expect(await reconciler(svc).pass(0)).toBe(1);
    expect(await store.order(order.id)).toMatchObject({
      status: "rejected",
      errorCode: "insufficient_liquidity",
      errorMessage: order.errorMessage,
      errorDetails: expect.objectContaining({ reference_price: 0.5 }),
      locked: 10_000_000n,
      lockTx: HASH,
      releaseTx: HASH,
      spent: 0n,
    });
    expect(ledger.locks.get(chainOrderId(order.id))?.state).toBe("released");
    expect(sent).toHaveLength(0);
  });

  it("fails a routing order whose lock a reorganisation removed and none of whose child orders filled, charging nothing", async () => {
    const clock = { t: Date.now(), now: () => clock.t };
    ledger.now = clock.now;
    script = [() => ({ kind: "unknown", reason: "timeout" })];
    const svc = service({ clock });
    const order = await svc.submit(who, body, undefined);
    expect(order.status).toBe("routing");
    ledger.locks.delete(chainOrderId(order.id));
    // Its child order is past its expiry: the venue no longer knowing it means it never filled.
    clock.t += 60_000;
    expect(await new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", scriptedVenue()]]), clock, log: pino({ level: "silent" }) }).pass(0)).toBe(1);
    expect(await store.order(order.id)).toMatchObject({ status: "failed", errorCode: "chain_unavailable", spent: 0n, releaseTx: null });
    expect(ledger.locks.has(chainOrderId(order.id))).toBe(false);
  });

  it("warns once per child order, not at every pass, that its venue is not configured or cannot answer", async () => {
    script = [() => ({ kind: "unknown", reason: "timeout" })];
    const svc = service();
    const order = await svc.submit(who, body, undefined);
    expect(order.status).toBe("routing");
    const silent = { ...scriptedVenue(), status: async () => Promise.reject(new AppError("venue_unavailable", "v lists no market m")) } as Venue;
    for (const venues of [new Map<string, Venue>(), new Map([["v", silent]])]) {
      const warnings: string[] = [];
      const log = pino({ level: "warn" }, { write: (line: string) => void warnings.push(JSON.parse(line).msg) });
      const recovery = new Reconciler(svc, { store, vault: ledger.vault(), venues, clock: { now: () => Date.now() }, log });
      for (let i = 0; i < 4; i++) expect(await recovery.pass(0)).toBe(0);
      expect(warnings).toHaveLength(1);
    }
    expect((await store.order(order.id))?.status).toBe("routing");
  });

  it("records an order whose release landed, nothing filled and its answer lost, as no venue filling it (all_venues_failed), as the order flow would have", async () => {
    const clock = { t: Date.now(), now: () => clock.t };
    ledger.now = clock.now;
    script = [nothing, nothing, nothing];
    const vault = ledger.vault();
    const lost = { ...vault, release: async (id: Parameters<Vault["release"]>[0]) => (await vault.release(id), Promise.reject(new VaultTxError("unknown", "Unknown", "Vault.release: outcome unknown"))) };
    const svc = service({ clock, vault: lost });
    const order = await svc.submit(who, body, undefined);
    expect(order.status).toBe("routing");
    // Its child order is past its expiry: the venue no longer knowing it means it never filled.
    clock.t += 60_000;
    expect(await new Reconciler(svc, { store, vault: lost, venues: new Map([["v", scriptedVenue()]]), clock, log: pino({ level: "silent" }) }).pass(0)).toBe(1);
    expect(await store.order(order.id)).toMatchObject({ status: "failed", errorCode: "all_venues_failed", errorMessage: "No venue filled any part of the order; the locked USDC was released.", releaseTx: HASH, spent: 0n });
  });

  it("records a buy whose settlement landed, its answer lost, as the chain settled it", async () => {
    script = [(o) => fill(o, o.shares)];
    ledger.failNext.settle = new VaultTxError("unknown", "Unknown", "Vault.settle: outcome unknown");
    const svc = service();
    const order = await svc.submit(who, body, undefined);
    const [stored] = await store.fills(order.id);
    // The settlement landed after all.
    await ledger.vault().settle(chainOrderId(order.id), stored!.shares * stored!.price / 1_000_000n + stored!.fee, { tokenId: 7n, shares: stored!.shares });
    const child = order.legs[0]!;
    known.set(child.clientOrderId, { kind: "done", venueOrderId: `vo-${child.clientOrderId}`, fills: [{ ...stored!, side: "buy" as const }] });
    await reconciler(svc).pass(0);
    expect(await store.order(order.id)).toMatchObject({ status: "filled", filledShares: stored!.shares, spent: ledger.locks.get(chainOrderId(order.id))!.spent, sotTokenId: "7", settleTx: HASH });
  });

  it("records an IOC buy the book held only half of, its settlement's answer lost, as partially filled, settled or found settled", async () => {
    asks = [{ price: 500_000n, shares: 10_000_000n }];
    const svc = service();
    const interrupted = async () => {
      script = [(o) => fill(o, o.shares)];
      ledger.failNext.settle = new VaultTxError("unknown", "Unknown", "Vault.settle: outcome unknown");
      const order = await svc.submit(who, { ...body, time_in_force: "IOC" }, undefined);
      expect(order.status).toBe("routing");
      const child = order.legs[0]!;
      known.set(child.clientOrderId, { kind: "done", venueOrderId: `vo-${child.clientOrderId}`, fills: (await store.fills(order.id)).map((f) => ({ ...f, side: "buy" as const })) });
      return order;
    };
    const open = await interrupted();
    const landed = await interrupted();
    await ledger.vault().settle(chainOrderId(landed.id), 5_000_000n, { tokenId: 7n, shares: 10_000_000n });
    await reconciler(svc).pass(0);
    for (const order of [open, landed]) {
      expect(await store.order(order.id)).toMatchObject({ status: "partially_filled", filledShares: 10_000_000n, spent: 5_000_000n, settleTx: HASH });
      expect(ledger.locks.get(chainOrderId(order.id))).toMatchObject({ state: "settled", spent: 5_000_000n });
    }
  });

  it("records an IOC buy whose later round bought what its first leg missed, its settlement's answer lost, as partially filled, settled or found settled", async () => {
    const svc = service();
    const interrupted = async () => {
      asks = [{ price: 500_000n, shares: 10_000_000n }];
      script = [(o) => ((asks = [{ price: 500_000n, shares: 100_000_000n }]), fill(o, 4_000_000n)), (o) => fill(o, o.shares)];
      ledger.failNext.settle = new VaultTxError("unknown", "Unknown", "Vault.settle: outcome unknown");
      const order = await svc.submit(who, { ...body, time_in_force: "IOC" }, undefined);
      expect(order.status).toBe("routing");
      const fills = await store.fills(order.id);
      for (const leg of order.legs) {
        known.set(leg.clientOrderId, { kind: "done", venueOrderId: `vo-${leg.clientOrderId}`, fills: fills.filter((f) => f.clientOrderId === leg.clientOrderId).map((f) => ({ ...f, side: "buy" as const })) });
      }
      return order;
    };
    const open = await interrupted();
    const landed = await interrupted();
    await ledger.vault().settle(chainOrderId(landed.id), 5_000_000n, { tokenId: 7n, shares: 10_000_000n });
    await reconciler(svc).pass(0);
    for (const order of [open, landed]) {
      expect(await store.order(order.id)).toMatchObject({ status: "partially_filled", filledShares: 10_000_000n, spent: 5_000_000n, settleTx: HASH });
      expect(ledger.locks.get(chainOrderId(order.id))).toMatchObject({ state: "settled", spent: 5_000_000n, shares: 10_000_000n });
    }
  });

  it("records what the chain charged and minted, not a fill the venue reported after the settlement was sent", async () => {
    script = [(o) => fill(o, o.shares)];
    ledger.failNext.settle = new VaultTxError("unknown", "Unknown", "Vault.settle: outcome unknown");
    const svc = service();
    const order = await svc.submit(who, body, undefined);
    const [first] = await store.fills(order.id);
    const charged = (first!.shares * first!.price) / 1_000_000n + first!.fee;
    await ledger.vault().settle(chainOrderId(order.id), charged, { tokenId: 7n, shares: first!.shares });
    // The venue now lists a second fill of the child that was not there when the settlement was made of the fills.
    const late = { ...first!, tradeId: `${first!.tradeId}-late`, shares: 10_000n, side: "buy" as const };
    const child = order.legs[0]!;
    known.set(child.clientOrderId, { kind: "done", venueOrderId: `vo-${child.clientOrderId}`, fills: [{ ...first!, side: "buy" as const }, late] });
    const errors: string[] = [];
    const log = pino({ level: "error" }, { write: (line: string) => errors.push(JSON.parse(line).msg) });
    await new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log }).pass(0);
    expect(await store.fills(order.id)).toHaveLength(2);
    expect(await store.order(order.id)).toMatchObject({ status: "filled", filledShares: first!.shares, spent: charged, settleTx: HASH });
    expect(errors).toContainEqual(expect.stringMatching(/chain settled the order for other amounts/));
  });

  it("keeps the lease of an order it recovers for as long as its settlement takes, so no other instance recovers the order meanwhile", async () => {
    const clock = { t: Date.now(), now: () => clock.t };
    // An instance that died with the order routing: its child filled, its settlement's answer lost.
    script = [(o) => fill(o, o.shares)];
    ledger.failNext.settle = new VaultTxError("unknown", "Unknown", "Vault.settle: outcome unknown");
    const order = await service({ instanceId: "dead", clock }).submit(who, body, undefined);
    const child = order.legs[0]!;
    known.set(child.clientOrderId, { kind: "done", venueOrderId: `vo-${child.clientOrderId}`, fills: (await store.fills(order.id)).map((f) => ({ ...f, side: "buy" as const })) });
    clock.t += 31_000;
    // Two live instances recover it; A's settlement is slow to land (a busy chain).
    const vault = ledger.vault();
    const settles: string[] = [];
    let land!: () => void;
    const landed = new Promise<void>((r) => (land = r));
    const instance = (id: string, lands: Promise<void>) => {
      const svc = service({ instanceId: id, clock, vault: { ...vault, settle: async (...args) => (settles.push(id), await lands, vault.settle(...args)) } });
      return { svc, recovery: new Reconciler(svc, { store, vault, venues: new Map([["v", scriptedVenue()]]), clock, log: pino({ level: "silent" }) }) };
    };
    const [a, b] = [instance("A", landed), instance("B", Promise.resolve())];

    const recovering = a.recovery.pass(0);
    await expect.poll(() => settles).toEqual(["A"]);
    // main.ts's timer renews A's leases every few seconds, for longer than a lease lasts; B's recovery then passes.
    for (let i = 0; i < 7; i++) {
      clock.t += 5_000;
      await a.svc.renewLeases();
    }
    await b.recovery.pass(0);
    land();
    const finished = await recovering;
    // One executor per order (docs/instances.md): one settlement sent, by the instance that finished the order.
    expect(settles).toEqual(["A"]);
    expect(finished).toBe(1);
    expect((await store.order(order.id))?.status).toBe("filled");
  });

  it("releases, as before, a filled buy's lock whose settlement a reorganisation removed when the Vault refuses to settle it again, logging the operator's loss; the order and the account's activity show the whole lock released and why", async () => {
    script = [(o) => fill(o, o.shares)];
    const svc = service();
    const order = await svc.submit(who, body, undefined);
    expect(order).toMatchObject({ status: "filled" });
    const chainId = chainOrderId(order.id);
    ledger.locks.set(chainId, { ...ledger.locks.get(chainId)!, state: "locked" });
    ledger.failNext.settle = new VaultTxError("reverted", "SpendExceedsLock", "Vault.settle reverted: SpendExceedsLock");
    const errors: string[] = [];
    const log = pino({ level: "error" }, { write: (line: string) => void errors.push(JSON.parse(line).msg) });
    const sweeper = new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log });
    expect(await sweeper.sweepLocks()).toBe(1);
    expect(ledger.locks.get(chainId)).toMatchObject({ state: "released" });
    expect(errors).toEqual(["the Vault refused to settle again a settled order whose settlement a reorganisation removed; its lock or escrow is released and the operator carries its fills"]);
    // The venues' fills stay the order's, the operator's to carry; its client was charged nothing and holds none of the shares.
    expect(await store.order(order.id)).toMatchObject({
      status: "filled",
      spent: order.spent,
      filledShares: order.filledShares,
      settleTx: null,
      releaseTx: HASH,
      errorCode: "chain_unavailable",
      errorMessage: "The order's settlement was removed from the chain by a reorganisation and could not be made again; nothing was charged, no share was minted, and the locked USDC was released.",
    });
    const moves = (await store.activity("acc", { limit: 10, cursor: null })).data.filter((a) => a.reference === order.id);
    expect(moves.map((a) => [a.type, a.amount])).toEqual(expect.arrayContaining([["lock", 10_000_000n], ["release", 10_000_000n]]));
    expect(moves).toHaveLength(2);
    // Its position book no longer counts the shares the removed settlement minted: the client holds none of them.
    expect((await store.positions("acc")).map((p) => [p.book, p.exits])).toEqual([[{ shares: 0n, cost: 0n, realized: 0n }, 0n]]);
  });

  it.each(["NotSent", "Refused"])("settles at the next sweep, rather than releasing, a filled buy's lock whose settlement a reorganisation removed when its settlement sent again is %s, never reaching the Vault", async (reason) => {
    script = [(o) => fill(o, o.shares)];
    const svc = service();
    const order = await svc.submit(who, body, undefined);
    const chainId = chainOrderId(order.id);
    ledger.locks.set(chainId, { ...ledger.locks.get(chainId)!, state: "locked" });
    ledger.failNext.settle = new VaultTxError("reverted", reason, `Vault.settle: ${reason}`);
    const sweeper = new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }) });
    expect(await sweeper.sweepLocks()).toBe(0);
    expect(ledger.locks.get(chainId)).toMatchObject({ state: "locked" });
    expect(await sweeper.sweepLocks()).toBe(0);
    expect(ledger.locks.get(chainId)).toMatchObject({ state: "settled", spent: order.spent, shares: order.filledShares });
    expect(await store.order(order.id)).toMatchObject({ status: "filled", settleTx: HASH, releaseTx: null });
  });

  /** A filled buy whose settlement, recorded as `removed`, a reorganisation took off the chain: its lock is open again. */
  const settlementRemoved = async (removed: Hex) => {
    script = [(o) => fill(o, o.shares)];
    const order = await service().submit(who, body, undefined);
    const chainId = chainOrderId(order.id);
    ledger.locks.set(chainId, { ...ledger.locks.get(chainId)!, state: "locked" });
    await store.updateOrder(order.id, ["filled"], { settleTx: removed });
    return { order, chainId };
  };

  it.each([
    ["landed before its answer was lost", false],
    ["landed only after its answer was lost", true],
  ])("records the settlement a filled buy's lock was settled again by, its answer lost, at the next sweep, %s: the order's tx_hash is a transaction the chain has", async (_, late) => {
    const removed = `0x${"cd".repeat(32)}` as const;
    const { order, chainId } = await settlementRemoved(removed);
    const vault = ledger.vault();
    const settle = vault.settle.bind(vault);
    let land = async () => {};
    // The receipt does not come before its deadline: the settlement lands before that answer, or after it.
    vault.settle = async (...args) => {
      if (late) land = async () => void (await settle(...args));
      else await settle(...args);
      throw new VaultTxError("unknown", "Unknown", "Vault.settle: outcome unknown");
    };
    const sweeper = new Reconciler(service({ vault }), { store, vault, venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }) });
    expect(await sweeper.sweepLocks()).toBe(0);
    await land();
    await sweeper.sweepLocks();
    expect(ledger.locks.get(chainId)).toMatchObject({ state: "settled", spent: order.spent, shares: order.filledShares });
    expect(await store.order(order.id)).toMatchObject({ status: "filled", spent: order.spent, filledShares: order.filledShares, settleTx: HASH, releaseTx: null });
  });

  it("records the settlement a filled buy's lock was settled again by, its answer lost, at the first sweep after a restart: the order's tx_hash is a transaction the chain has", async () => {
    const { order, chainId } = await settlementRemoved(`0x${"cd".repeat(32)}`);
    const vault = ledger.vault();
    const settle = vault.settle.bind(vault);
    // The settlement lands; the server stops before its answer is recorded.
    vault.settle = async (...args) => (await settle(...args), Promise.reject(new VaultTxError("unknown", "Unknown", "Vault.settle: outcome unknown")));
    expect(await new Reconciler(service({ vault }), { store, vault, venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }) }).sweepLocks()).toBe(0);
    expect(ledger.locks.get(chainId)).toMatchObject({ state: "settled", spent: order.spent, shares: order.filledShares });
    // The next start's reconciler, over the same store and chain.
    await reconciler(service()).sweepLocks();
    expect(await store.order(order.id)).toMatchObject({ status: "filled", spent: order.spent, filledShares: order.filledShares, settleTx: HASH, releaseTx: null });
  });

  it("records a filled buy being settled again whose lock a second reorganisation removed as holding none, once nothing can land it again under the confirmations, its position book moved back, and reads it no more", async () => {
    const { order, chainId } = await settlementRemoved(`0x${"cd".repeat(32)}`);
    const vault = ledger.vault();
    // The settlement sent again is not answered, and does not land.
    vault.settle = () => Promise.reject(new VaultTxError("unknown", "Unknown", "Vault.settle: outcome unknown"));
    // The operator has mined 5 transactions; the block 2 under the head has 4 of them, then all 5.
    let deepMined = 4;
    vault.blockNumber = async () => 10n;
    vault.minedTransactions = async (block) => (block === undefined ? 5 : block <= 8n ? deepMined : 5);
    const lockStates = vi.spyOn(vault, "lockState");
    const sweeper = new Reconciler(service({ vault }), { store, vault, venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }), confirmations: 2 });
    await sweeper.sweepLocks();
    expect((await store.resettling("filled")).map((o) => o.id)).toEqual([order.id]);
    // A second reorganisation removes the lock's transaction, and the operator's next one takes its nonce.
    ledger.locks.delete(chainId);
    await sweeper.sweepLocks();
    expect(await store.order(order.id)).toMatchObject({ status: "filled", locked: 10_000_000n, settleTx: null, releaseTx: null, errorCode: null });
    deepMined = 5;
    await sweeper.sweepLocks();
    // Nothing was locked, charged nor minted: its fills stay, the operator's.
    expect(await store.order(order.id)).toMatchObject({
      status: "filled",
      spent: order.spent,
      filledShares: order.filledShares,
      locked: 0n,
      lockTx: null,
      settleTx: null,
      releaseTx: null,
      errorCode: "chain_unavailable",
      errorMessage: "The order's settlement, then its lock, were removed from the chain by reorganisations; nothing was charged and no share was minted.",
    });
    expect((await store.positions("acc")).map((p) => [p.book, p.exits])).toEqual([[{ shares: 0n, cost: 0n, realized: 0n }, 0n]]);
    expect((await store.activity("acc", { limit: 10, cursor: null })).data.filter((a) => a.reference === order.id)).toEqual([]);
    expect(await store.resettling("filled")).toEqual([]);
    lockStates.mockClear();
    await sweeper.sweepLocks();
    expect(lockStates).not.toHaveBeenCalled();
  });

  it("tells of the filled buy whose lock the sweep settles again, its settlement removed by a reorganisation, so a resolved event's redemptions take the shares minted again", async () => {
    const { order, chainId } = await settlementRemoved(`0x${"cd".repeat(32)}`);
    // The removed settlement's mint went with it: the client holds none of the order's shares until it is settled again.
    ledger.sot.set(who.address, 0n);
    const finished: string[] = [];
    const sweeper = new Reconciler(service(), { store, vault: ledger.vault(), venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }), finished: (o) => finished.push(o.id) });
    expect(await sweeper.sweepLocks()).toBe(0);
    expect(ledger.locks.get(chainId)).toMatchObject({ state: "settled" });
    expect(ledger.sot.get(who.address)).toBe(order.filledShares);
    // A resolution pass that read the event's holders holding none of them plans it again.
    expect(finished).toEqual([order.id]);
  });

  it("records a filled buy's removed settlement, mined again as the sweep sent its own, which the Vault refuses: nothing released, no loss logged, the order's tx_hash the settlement on chain", async () => {
    const { order, chainId } = await settlementRemoved(HASH);
    const vault = ledger.vault();
    const settle = vault.settle.bind(vault);
    // The node mines the removed settlement again (the same transaction, its hash the one the order records) before the sweep's.
    vault.settle = async (...args) => {
      ledger.locks.set(chainId, { ...ledger.locks.get(chainId)!, state: "settled", spent: order.spent, shares: order.filledShares });
      return settle(...args);
    };
    const errors: string[] = [];
    const log = pino({ level: "error" }, { write: (line: string) => void errors.push(JSON.parse(line).msg) });
    const sweeper = new Reconciler(service({ vault }), { store, vault, venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log });
    expect(await sweeper.sweepLocks()).toBe(0);
    expect(ledger.locks.get(chainId)).toMatchObject({ state: "settled", spent: order.spent, shares: order.filledShares });
    expect(await store.order(order.id)).toMatchObject({ status: "filled", spent: order.spent, filledShares: order.filledShares, settleTx: HASH, releaseTx: null });
    expect(errors).toEqual([]);
  });
});

describe("an order whose lock, answered done, a reorganisation removed while it routed (dev chain)", () => {
  const t = testChainPerFile();

  it("answers the refused settlement as in progress, then fails the order chain_unavailable, nothing charged: the client keeps its USDC and the operator its fills", async () => {
    const client = await newClient(t);
    await t.vault.fund(client.address, 10_000_000n, keyOf(client.address));
    const before = await t.rpc.call<Hex>("evm_snapshot");
    // The lock's batch logged its Locked event and was answered done at once; while the child order is at its venue, a
    // reorganisation removes that block, and where the node mines the same batch again the client withdrew its USDC first.
    script = [
      (o) =>
        (async () => {
          const [routing] = await store.ordersInStatus(["routing"]);
          const raw = await t.rpc.call<Hex>("eth_getRawTransactionByHash", [routing!.lockTx]);
          await t.rpc.call("evm_revert", [before]);
          await client.withdraw(10_000_000n);
          await t.rpc.call("eth_sendRawTransaction", [raw]);
          await t.rpc.call("evm_mine");
          return fill(o, o.shares);
        })() as unknown as PlaceResult,
    ];
    const errors: string[] = [];
    const log = pino({ level: "error" }, { write: (line: string) => void errors.push(JSON.parse(line).msg) });
    const svc = service({ vault: t.vault, log });
    const order = await svc.submit({ accountId: "acc", address: client.address }, body, undefined, log);
    const id = chainOrderId(order.id);
    expect(await t.vault.lockState(id)).toEqual({ kind: "none" });
    // The Vault refused the settlement (no lock): the request answers the order as it stands, for recovery to finish.
    expect(order).toMatchObject({ status: "routing", locked: 10_000_000n, lockTx: expect.stringMatching(/^0x/) });
    expect(errors).toEqual(["order interrupted; recovery will finish it"]);
    const [stored] = await store.fills(order.id);
    const child = order.legs[0]!;
    known.set(child.clientOrderId, { kind: "done", venueOrderId: `vo-${child.clientOrderId}`, fills: [{ ...stored!, side: "buy" }] });

    const recovery = new Reconciler(svc, { store, vault: t.vault, venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log });
    expect(await recovery.pass(0)).toBe(1);
    expect(await recovery.pass(0)).toBe(0);
    expect(await store.order(order.id)).toMatchObject({ status: "failed", errorCode: "chain_unavailable", spent: 0n, filledShares: 0n, locked: 0n, lockTx: null, settleTx: null, releaseTx: null });
    expect(errors.at(-1)).toBe("a routing order's lock or escrow is no longer on chain; the operator carries the fills of its child orders");
    // Nothing of the client's is held or spent: its USDC is in its wallet, and no share was minted for the venue's fill.
    expect(await t.vault.balanceOf(client.address)).toEqual({ available: 0n, locked: 0n });
    expect(await client.usdcBalance()).toBe(10_000_000n);
    expect(await t.vault.sotBalance(client.address, 7n)).toBe(0n);
    expect(await recovery.sweepLocks()).toBe(0);
  }, 30_000);

  it("rejects an order whose release the Vault refused, a reorganisation having removed its lock before it routed, saying so: nothing held, nothing charged, the server never stopped", async () => {
    const client = await newClient(t);
    await t.vault.fund(client.address, 10_000_000n, keyOf(client.address));
    const before = await t.rpc.call<Hex>("evm_snapshot");
    // The lock is answered done; a reorganisation then removes its block, the node mining it again where the client
    // withdrew its USDC first, and the books empty before routing, so the router refuses the order and its lock is released.
    const reorganising = Object.create(t.vault, {
      lock: {
        value: async (...args: Parameters<Vault["lock"]>) => {
          const tx = await t.vault.lock(...args);
          const raw = await t.rpc.call<Hex>("eth_getRawTransactionByHash", [tx.txHash]);
          await t.rpc.call("evm_revert", [before]);
          await client.withdraw(10_000_000n);
          await t.rpc.call("eth_sendRawTransaction", [raw]);
          await t.rpc.call("evm_mine");
          asks = [];
          return tx;
        },
      },
    }) as Vault;
    const errors: string[] = [];
    const log = pino({ level: "error" }, { write: (line: string) => void errors.push(JSON.parse(line).msg) });
    const svc = service({ vault: reorganising, log });
    const order = await svc.submit({ accountId: "acc", address: client.address }, body, undefined, log);
    expect(await t.vault.lockState(chainOrderId(order.id))).toEqual({ kind: "none" });
    // The Vault refused the release (no lock): the request answers the order as it stands, for recovery to finish.
    expect(order).toMatchObject({ status: "locked", locked: 10_000_000n, releaseTx: null });
    expect(errors).toEqual(["order interrupted; recovery will finish it"]);

    const recovery = new Reconciler(svc, { store, vault: t.vault, venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log });
    expect(await recovery.pass(0)).toBe(1);
    expect(await store.order(order.id)).toMatchObject({
      status: "rejected",
      errorCode: "order_interrupted",
      errorMessage: "The order's lock is no longer on the chain (a reorganisation removed it); nothing was charged.",
      spent: 0n,
      locked: 0n,
      lockTx: null,
      releaseTx: null,
    });
    expect(await t.vault.balanceOf(client.address)).toEqual({ available: 0n, locked: 0n });
    expect(await client.usdcBalance()).toBe(10_000_000n);
    expect(sent).toHaveLength(0);
  }, 30_000);

  it("leaves to a later pass, rather than fail, a routing order with fills whose lock a node of a pool behind it answers none: it is settled, not released, and the operator does not carry the fills", async () => {
    const client = await newClient(t);
    await t.vault.fund(client.address, 10_000_000n, keyOf(client.address));
    const behind = await t.vault.blockNumber();
    // The venue fills; the settlement's answer is lost, so the order waits, routing with its fill stored, for recovery.
    script = [(o) => fill(o, o.shares)];
    const lost = Object.create(t.vault, { settle: { value: async () => Promise.reject(new Error("fetch failed")) } }) as Vault;
    const order = await service({ vault: lost }).submit({ accountId: "acc", address: client.address }, body, undefined);
    expect(order).toMatchObject({ status: "routing", locked: 10_000_000n, lockTx: expect.stringMatching(/^0x/) });
    const [stored] = await store.fills(order.id);
    const child = order.legs[0]!;
    known.set(child.clientOrderId, { kind: "done", venueOrderId: `vo-${child.clientOrderId}`, fills: [{ ...stored!, side: "buy" }] });

    // One URL before a pool: a request reading a lock goes to a node still at `behind`, under the lock's block; any other to one that has it.
    const pool = await poolWithLockReadsFrom(t.chain.rpcUrl, behind);
    const vault = await openEvmVault({ rpcUrl: pool.url, operatorKey: t.chain.operatorKey, store: t.store, faucet: true, devChain: t.chain });
    try {
      const recovery = (v: Vault) => new Reconciler(service({ vault: v }), { store, vault: v, venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }) });
      expect(await recovery(vault).pass(0)).toBe(0);
      expect(await store.order(order.id)).toMatchObject({ status: "routing", lockTx: order.lockTx });
      expect(await recovery(t.vault).pass(0)).toBe(1);
    } finally {
      await vault.close();
      await pool.stop();
    }
    const settled = await store.order(order.id);
    expect(settled).toMatchObject({ status: "filled", filledShares: 20_000_000n, releaseTx: null });
    expect(await t.vault.balanceOf(client.address)).toEqual({ available: 10_000_000n - settled!.spent, locked: 0n });
    expect(await t.vault.sotBalance(client.address, 7n)).toBe(20_000_000n);
  }, 30_000);

  /**
   * A settlement's batch logged its Settled (SellSettled) event and was answered done at once, the order stored settled;
   * then a reorganisation removes its block, back to where the child order was at its venue, and the node never mines it
   * again: the chain holds the order's lock (escrow) open. Answers the order and what the sweep logged at warn and above.
   */
  const settlementRemoved = async (account: { accountId: string; address: Address }, order: object) => {
    let routed: Hex | undefined;
    script = [(o) => (async () => ((routed = await t.rpc.call<Hex>("evm_snapshot")), fill(o, o.shares)))() as unknown as PlaceResult];
    const svc = service({ vault: t.vault });
    const settled = await svc.submit(account, order, undefined);
    expect(settled).toMatchObject({ status: "filled", settleTx: expect.stringMatching(/^0x/) });
    await t.rpc.call("evm_revert", [routed]);
    const lines: string[] = [];
    const log = pino({ level: "warn" }, { write: (line: string) => void lines.push(JSON.parse(line).msg) });
    await new Reconciler(svc, { store, vault: t.vault, venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log }).sweepLocks();
    return { settled, lines };
  };

  it("settles again, for what it records, a filled buy's lock whose settlement a reorganisation removed, rather than releasing it: the client keeps its shares and pays for them, and the order's tx_hash is the new settlement", async () => {
    const client = await newClient(t);
    await t.vault.fund(client.address, 10_000_000n, keyOf(client.address));
    const { settled: order, lines } = await settlementRemoved({ accountId: "acc", address: client.address }, body);
    const lock = await t.vault.lockState(chainOrderId(order.id));
    expect(lock).toMatchObject({ kind: "settled", spent: order.spent, shares: order.filledShares, tokenId: 7n });
    const settleTx = (lock as Extract<LockState, { kind: "settled" }>).txHash;
    expect(settleTx).not.toBe(order.settleTx);
    expect(await store.order(order.id)).toMatchObject({ status: "filled", spent: order.spent, fees: order.fees, filledShares: order.filledShares, settleTx, releaseTx: null });
    expect(await t.vault.balanceOf(client.address)).toEqual({ available: 10_000_000n - order.spent, locked: 0n });
    expect(await t.vault.sotBalance(client.address, 7n)).toBe(order.filledShares);
    expect(lines).toEqual(["settled again a settled order's lock or escrow whose settlement a reorganisation removed"]);
  }, 30_000);

  it("settles again, for what it records, a filled sell's escrow whose settlement a reorganisation removed, rather than returning it: the shares sold stay burned and the client is credited their proceeds", async () => {
    const client = await newClient(t);
    await t.vault.fund(client.address, 10_000_000n, keyOf(client.address));
    const holder = { accountId: "acc", address: client.address };
    script = [(o) => fill(o, o.shares)];
    const bought = await service({ vault: t.vault }).submit(holder, body, undefined);
    expect(bought).toMatchObject({ status: "filled", filledShares: 20_000_000n });
    const { settled: order, lines } = await settlementRemoved(holder, { market_id: "evt", outcome: "YES", side: "sell", max_slippage: 0.02, shares: 15 });
    const escrow = await t.vault.escrowState(chainOrderId(order.id));
    expect(escrow).toMatchObject({ kind: "settled", sold: 15_000_000n, proceeds: order.proceeds });
    const settleTx = (escrow as Extract<EscrowState, { kind: "settled" }>).txHash;
    expect(settleTx).not.toBe(order.settleTx);
    expect(await store.order(order.id)).toMatchObject({ status: "filled", proceeds: order.proceeds, filledShares: 15_000_000n, settleTx, releaseTx: null });
    expect(await t.vault.balanceOf(client.address)).toEqual({ available: 10_000_000n - bought.spent + order.proceeds, locked: 0n });
    expect(await t.vault.sotBalance(client.address, 7n)).toBe(5_000_000n);
    expect(lines).toEqual(["settled again a settled order's lock or escrow whose settlement a reorganisation removed"]);
  }, 30_000);
});

describe("sells", () => {
  const sell = { market_id: "evt", outcome: "YES", side: "sell", max_slippage: 0.02 };
  const holding = async (svc = service()) => {
    // A buy of 20 shares at 0.50 gives the client its SOT and the operator its inventory on venue v.
    script = [(o) => fill(o, o.shares)];
    const bought = await svc.submit(who, body, undefined);
    expect(bought).toMatchObject({ status: "filled", filledShares: 20_000_000n });
    sent.length = 0;
    return svc;
  };
  const escrowOf = (orderId: string) => ledger.escrows.get(chainOrderId(orderId));
  /**
   * A sell of 15 of the 20 shares held, stopped once its escrow landed; a reorganisation removes the escrow, so recovery
   * rejects the order, its shares the client's again; then the node mines the escrow again, the order closed: the holder
   * holds 5 shares, the Vault the other 15.
   */
  const escrowLandedAgain = async () => {
    const svc = await holding();
    const stopped = service({ checkpoint: (step) => { if (step === "order.locked") throw new Error("killed"); } });
    const pending = await stopped.submit(who, { ...sell, shares: 15, client_order_id: "s-1" }, undefined);
    await store.updateOrder(pending.id, ["pending"], { status: "locked", escrowed: 15_000_000n, lockTx: HASH });
    const escrow = escrowOf(pending.id)!;
    ledger.escrows.delete(chainOrderId(pending.id));
    ledger.sot.set(who.address, 20_000_000n);
    expect(await reconciler(svc).pass(0)).toBe(1);
    expect(await store.order(pending.id)).toMatchObject({ status: "rejected", errorCode: "order_interrupted", lockTx: null });
    ledger.escrows.set(chainOrderId(pending.id), escrow);
    ledger.sot.set(who.address, 5_000_000n);
    return { svc, pending };
  };

  it("runs a sell recovery rejected, its escrow removed by a reorganisation, on that escrow when it lands again before the client's retry, rather than refusing the shares it holds", async () => {
    const { svc, pending } = await escrowLandedAgain();
    script = [(o) => fill(o, o.shares)];
    const again = await svc.submit(who, { ...sell, shares: 15, client_order_id: "s-1" }, undefined);
    expect(again).toMatchObject({ id: pending.id, status: "filled", errorCode: null, escrowed: 15_000_000n, filledShares: 15_000_000n, lockTx: HASH });
    expect(escrowOf(pending.id)).toMatchObject({ state: "settled", sold: 15_000_000n });
    expect(ledger.sot.get(who.address)).toBe(5_000_000n);
  });

  it("leaves to recovery, not rejected as nothing escrowed, a sell's retry whose escrow the Vault refused AlreadyEscrowed, its removed escrow landed again, on a chain it cannot read: the shares are returned once", async () => {
    const { svc, pending } = await escrowLandedAgain();
    // The client holds enough shares besides to escrow them again.
    ledger.sot.set(who.address, 20_000_000n);
    ledger.failNext.escrowState = new Error("fetch failed");
    const again = await svc.submit(who, { ...sell, shares: 15, client_order_id: "s-1" }, undefined);
    expect(again).toMatchObject({ id: pending.id, status: "pending", errorCode: null });
    expect(await reconciler(svc).pass(0)).toBe(1);
    expect(await store.order(pending.id)).toMatchObject({ status: "failed", errorCode: "order_interrupted", escrowed: 15_000_000n, lockTx: HASH, releaseTx: HASH });
    expect(escrowOf(pending.id)).toMatchObject({ state: "released" });
    expect(ledger.sot.get(who.address)).toBe(35_000_000n);
    expect(sent).toHaveLength(0);
  });

  it("answers chain_unavailable, changing nothing, a sell's retry on its removed escrow landed again whose escrow the chain cannot read", async () => {
    const { svc, pending } = await escrowLandedAgain();
    const before = await store.order(pending.id);
    ledger.failNext.escrowState = new Error("HTTP request failed.\n\nURL: http://user:secret@rpc.example/");
    const refused = await svc.submit(who, { ...sell, shares: 15, client_order_id: "s-1" }, undefined).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: "chain_unavailable", status: 503, message: "The order's escrow could not be read from the chain; nothing was changed. Try again." });
    expect(await store.order(pending.id)).toEqual(before);
    expect(escrowOf(pending.id)).toMatchObject({ state: "escrowed", shares: 15_000_000n });
    expect(ledger.sot.get(who.address)).toBe(5_000_000n);
    expect(sent).toHaveLength(0);
  });

  it("tells of the rejected sell whose escrow landed after it closed once the sweep returns its shares, so a resolved event's redemptions take them", async () => {
    const { svc, pending } = await escrowLandedAgain();
    const finished: string[] = [];
    const sweeper = new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }), finished: (o) => finished.push(o.id) });
    expect(await sweeper.sweepLocks()).toBe(1);
    expect(ledger.sot.get(who.address)).toBe(20_000_000n);
    // The shares came back to the holder: a resolution pass that found the event's holders holding none plans it again.
    expect(finished).toEqual([pending.id]);
  });

  it("records the escrow of a rejected sell that landed after it closed and its client expired before any sweep recorded it, and tells of its shares, so a resolved event's redemptions take them", async () => {
    const { svc, pending } = await escrowLandedAgain();
    const chainId = chainOrderId(pending.id);
    // No sweep ran before the escrow's deadline; its client expired it and holds its 15 shares again.
    ledger.escrows.set(chainId, { ...ledger.escrows.get(chainId)!, state: "released", expired: true });
    ledger.sot.set(who.address, 20_000_000n);
    const finished: string[] = [];
    const sweeper = new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }), finished: (o) => finished.push(o.id) });
    expect(await sweeper.sweepLocks()).toBe(0);
    expect(await store.order(pending.id)).toMatchObject({ status: "rejected", escrowed: 15_000_000n, sotTokenId: "7", lockTx: HASH, releaseTx: HASH, errorMessage: expect.stringContaining("expired") });
    expect(finished).toEqual([pending.id]);
  });

  it("tells of the failed sell whose escrow landed again after it failed once the sweep returns its shares, so a resolved event's redemptions take them", async () => {
    const svc = await holding();
    const stopped = service({ checkpoint: (step) => { if (step === "order.locked") throw new Error("killed"); } });
    const pending = await stopped.submit(who, { ...sell, shares: 15, client_order_id: "s-1" }, undefined);
    // Recovery failed the routing sell chain_unavailable, its escrow removed by a reorganisation; the node then mined the escrow again.
    await store.updateOrder(pending.id, ["pending"], { status: "locked", escrowed: 15_000_000n, lockTx: HASH });
    await store.updateOrder(pending.id, ["locked"], { status: "routing" });
    await store.updateOrder(pending.id, ["routing"], { status: "failed", escrowed: 0n, lockTx: null, errorCode: "chain_unavailable" });
    expect(ledger.sot.get(who.address)).toBe(5_000_000n);
    const finished: string[] = [];
    const sweeper = new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }), finished: (o) => finished.push(o.id) });
    expect(await sweeper.sweepLocks()).toBe(1);
    expect(ledger.sot.get(who.address)).toBe(20_000_000n);
    // As for a rejected sell's: a resolution pass that found the event's holders holding none plans it again.
    expect(finished).toEqual([pending.id]);
  });

  it("tells of the rejected sell whose escrow landed after it closed once its client expires the escrow the sweep could not return, so a resolved event's redemptions take the shares", async () => {
    const { svc, pending } = await escrowLandedAgain();
    const chainId = chainOrderId(pending.id);
    const finished: string[] = [];
    const vault = ledger.vault();
    // The sweep's return does not land (the node went away mid-call).
    vault.releaseEscrow = () => Promise.reject(new VaultTxError("unknown", "Unknown", "Vault.releaseEscrow: outcome unknown"));
    const sweeper = new Reconciler(svc, { store, vault, venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }), finished: (o) => finished.push(o.id) });
    expect(await sweeper.sweepLocks()).toBe(0);
    expect(await store.order(pending.id)).toMatchObject({ status: "rejected", escrowed: 15_000_000n, lockTx: HASH, releaseTx: null });
    // Past the escrow's deadline its client expires it, and holds its 15 shares again.
    ledger.escrows.set(chainId, { ...ledger.escrows.get(chainId)!, state: "released", expired: true });
    ledger.sot.set(who.address, 20_000_000n);
    await sweeper.sweepLocks();
    expect(await store.order(pending.id)).toMatchObject({ status: "rejected", releaseTx: HASH });
    // As when the sweep returns them: a resolution pass that found the event's holders holding none plans it again.
    expect(finished).toEqual([pending.id]);
  });

  it("tells of the filled sell whose escrow its client expired as the sweep settled it again, its settlement removed by a reorganisation, so a resolved event's redemptions take the shares returned", async () => {
    const svc = await holding();
    const held = (await store.positions("acc")).map((p) => [p.book, p.exits]);
    script = [(o) => fill(o, o.shares)];
    const order = await svc.submit(who, { ...sell, shares: 15 }, undefined);
    expect(order).toMatchObject({ status: "filled" });
    const chainId = chainOrderId(order.id);
    // A reorganisation removes the settlement: the escrow is open again, its 15 shares in the Vault.
    ledger.escrows.set(chainId, { ...escrowOf(order.id)!, state: "escrowed" });
    ledger.sot.set(who.address, 5_000_000n);
    const vault = ledger.vault();
    const settleSell = vault.settleSell.bind(vault);
    // Past its deadline the client expires the escrow before the sweep's settlement lands: the Vault refuses it.
    vault.settleSell = async (...args) => {
      ledger.escrows.set(chainId, { ...escrowOf(order.id)!, state: "released", expired: true });
      ledger.sot.set(who.address, 20_000_000n);
      return settleSell(...args);
    };
    const finished: string[] = [];
    const sweeper = new Reconciler(service({ vault }), { store, vault, venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }), finished: (o) => finished.push(o.id) });
    expect(await sweeper.sweepLocks()).toBe(0);
    expect(ledger.sot.get(who.address)).toBe(20_000_000n);
    // The shares came back to the holder: a resolution pass that found the event's holders holding none plans it again.
    expect(finished).toEqual([order.id]);
    // Its position book holds again the shares the escrow returned, as before the sell: none was sold.
    expect((await store.positions("acc")).map((p) => [p.book, p.exits])).toEqual(held);
  });

  it("escrows the shares, sells them on the bids, burns what sold and credits the proceeds in one settlement", async () => {
    const svc = await holding();
    script = [(o) => fill(o, o.shares)];
    const order = await svc.submit(who, { ...sell, shares: 8 }, undefined);
    expect(sent).toMatchObject([{ side: "sell", outcome: "YES", shares: 8_000_000n, limitPrice: 450_000n }]);
    expect(order).toMatchObject({ status: "filled", side: "sell", shares: 8_000_000n, escrowed: 8_000_000n, filledShares: 8_000_000n, proceeds: 3_600_000n, spent: 0n, amount: 0n });
    expect(escrowOf(order.id)).toMatchObject({ state: "settled", sold: 8_000_000n, proceeds: 3_600_000n });
    expect(ledger.sot.get(who.address)).toBe(12_000_000n);
    expect(ledger.credited.get(who.address)).toBe(3_600_000n);
  });

  it("credits the buyers' price less the venue's fee, each fill rounded down to the micro-USDC", async () => {
    const svc = await holding();
    script = [
      (o) => ({
        kind: "filled",
        venueOrderId: "vo",
        fills: [
          { tradeId: "t1", venueOrderId: "vo", clientOrderId: o.clientOrderId, side: "sell", price: 450_000n, shares: 1_000_001n, fee: 7n },
          { tradeId: "t2", venueOrderId: "vo", clientOrderId: o.clientOrderId, side: "sell", price: 450_000n, shares: 999_999n, fee: 0n },
        ],
      }),
    ];
    const order = await svc.submit(who, { ...sell, shares: 2 }, undefined);
    // 450_000.45 rounds down to 450_000, 449_999.55 to 449_999; less the 7 micro-USDC fee.
    expect(order).toMatchObject({ status: "filled", filledShares: 2_000_000n, fees: 7n, proceeds: 899_992n });
  });

  it("refuses a sell of more than the position holds with insufficient_position, storing and escrowing nothing", async () => {
    const svc = await holding();
    const refused = await svc.submit(who, { ...sell, shares: "20.000001" }, undefined).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: "insufficient_position", status: 422, details: { held_shares: 20, shares: 20.000001 } });
    expect(ledger.escrows.size).toBe(0);
    expect((await store.listOrders("acc", { limit: 10, cursor: null })).data).toHaveLength(1);
  });

  it("answers chain_unavailable without the chain library's text when the position cannot be read, storing nothing", async () => {
    const down = service({ vault: { ...ledger.vault(), sotBalance: () => Promise.reject(new Error("HTTP request failed.\n\nURL: http://user:secret@rpc.example/\nRequest body: {\"method\":\"eth_call\"}")) } });
    const refused = await down.submit(who, { ...sell, shares: 1 }, undefined).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "chain_unavailable", message: "The position could not be read from the chain; nothing was escrowed. Try again." });
    expect((await store.listOrders("acc", { limit: 10, cursor: null })).data).toHaveLength(0);
  });

  it("rejects a sell whose shares another sell escrowed first, returning nothing to sell twice", async () => {
    const svc = await holding();
    script = [(o) => fill(o, o.shares)];
    // Both pass the position check before either escrows: the vault refuses the second by name.
    const [a, b] = await Promise.all([svc.submit(who, { ...sell, shares: 15 }, undefined), svc.submit(who, { ...sell, shares: 15 }, undefined)]);
    expect([a.status, b.status].sort()).toEqual(["filled", "rejected"]);
    expect([a, b].find((o) => o.status === "rejected")).toMatchObject({ errorCode: "insufficient_position", escrowed: 0n });
    expect(ledger.sot.get(who.address)).toBe(5_000_000n);
  });

  it("answers a retried sell by its client_order_id with the first order, even once its shares are gone", async () => {
    const svc = await holding();
    script = [(o) => fill(o, o.shares)];
    const first = await svc.submit(who, { ...sell, shares: 20, client_order_id: "s-1" }, undefined);
    expect(first.status).toBe("filled");
    expect((await svc.submit(who, { ...sell, shares: 20, client_order_id: "s-1" }, undefined)).id).toBe(first.id);
    await expect(svc.submit(who, { ...sell, shares: 19, client_order_id: "s-1" }, undefined)).rejects.toMatchObject({ code: "idempotency_conflict", message: expect.stringMatching(/: not the same shares\.$/) });
  });

  it("runs a sell whose escrow the chain never took again under its id when the client retries it, escrowing once", async () => {
    const svc = await holding();
    script = [(o) => fill(o, o.shares)];
    ledger.failNext.escrow = new VaultTxError("reverted", "NotSent", "Vault.escrow: not sent (fetch failed)");
    const first = await svc.submit(who, { ...sell, shares: 8, client_order_id: "s-1" }, undefined);
    expect(first).toMatchObject({ status: "rejected", errorCode: "chain_unavailable", escrowed: 0n });
    expect(await svc.submit(who, { ...sell, shares: 8, client_order_id: "s-1" }, undefined)).toMatchObject({ id: first.id, status: "filled", escrowed: 8_000_000n, proceeds: 3_600_000n });
    expect(ledger.sot.get(who.address)).toBe(12_000_000n);
    expect(ledger.credited.get(who.address)).toBe(3_600_000n);
  });

  it("answers a sell sent to two instances at once with the one order, though the second reads the position after the first escrowed it", async () => {
    const a = await holding(service({ instanceId: "A" }));
    // Instance B, on the same store and chain, reads the position more slowly than A makes the whole sell (a busy event loop, a retried read).
    const vault = ledger.vault();
    const reading: (() => void)[] = [];
    const b = service({ instanceId: "B", vault: { ...vault, sotBalance: (...args) => new Promise<void>((r) => reading.push(r)).then(() => vault.sotBalance(...args)) } });
    const twin = b.submit(who, { ...sell, shares: 20, client_order_id: "s-1" }, undefined).catch((e: unknown) => e);
    const other = b.submit(who, { ...sell, shares: 19, client_order_id: "s-1" }, undefined).catch((e: unknown) => e);
    // Both have looked the client_order_id up, finding nothing, and wait for the position; A takes the order meanwhile.
    await expect.poll(() => reading.length).toBe(2);
    script = [(o) => fill(o, o.shares)];
    const first = await a.submit(who, { ...sell, shares: 20, client_order_id: "s-1" }, undefined);
    expect(first.status).toBe("filled");
    for (const read of reading) read();
    expect(await twin).toMatchObject({ id: first.id, status: "filled" });
    expect(await other).toMatchObject({ code: "idempotency_conflict", details: { order_id: first.id } });
  });

  it("returns the whole escrow when no venue buys any of it", async () => {
    const svc = await holding();
    script = [nothing, nothing, nothing];
    const order = await svc.submit(who, { ...sell, shares: 5, time_in_force: "IOC" }, undefined);
    expect(order).toMatchObject({ status: "failed", errorCode: "all_venues_failed", filledShares: 0n, proceeds: 0n, releaseTx: HASH });
    expect(escrowOf(order.id)?.state).toBe("released");
    expect(ledger.sot.get(who.address)).toBe(20_000_000n);
  });

  it("settles an IOC sell the bids held only a third of as partially filled: 5 of 15 sold, their proceeds credited, 10 returned", async () => {
    const svc = await holding();
    bids.set("v", [{ price: 450_000n, shares: 5_000_000n }]);
    script = [(o) => fill(o, o.shares)];
    const order = await svc.submit(who, { ...sell, shares: 15, time_in_force: "IOC" }, undefined);
    expect(sent).toMatchObject([{ side: "sell", shares: 5_000_000n }]);
    expect(order).toMatchObject({ status: "partially_filled", plannedInFull: false, escrowed: 15_000_000n, filledShares: 5_000_000n, proceeds: 2_250_000n });
    expect(escrowOf(order.id)).toMatchObject({ state: "settled", sold: 5_000_000n, proceeds: 2_250_000n });
    expect(ledger.sot.get(who.address)).toBe(15_000_000n);
    expect(ledger.credited.get(who.address)).toBe(2_250_000n);
  });

  it("settles a sell as filled when its leg sold short by less than any venue's minimum size: the rest is dust, as a FOK plan's", async () => {
    const svc = await holding();
    script = [(o) => fill(o, 14_500_000n)];
    const order = await svc.submit(who, { ...sell, shares: 15 }, undefined);
    expect(sent).toHaveLength(1);
    expect(order).toMatchObject({ status: "filled", escrowed: 15_000_000n, filledShares: 14_500_000n });
    expect(escrowOf(order.id)).toMatchObject({ state: "settled", sold: 14_500_000n });
  });

  it("sells again only what an IOC sell's leg missed when its first plan held 5 of its 15 shares: not the rest the bids never held, though they refilled", async () => {
    const svc = await holding();
    bids.set("v", [{ price: 450_000n, shares: 5_000_000n }]);
    script = [(o) => (bids.set("v", [{ price: 450_000n, shares: 100_000_000n }]), fill(o, 2_000_000n)), (o) => fill(o, o.shares)];
    const order = await svc.submit(who, { ...sell, shares: 15, time_in_force: "IOC" }, undefined);
    expect(sent.map((o) => o.shares)).toEqual([5_000_000n, 3_000_000n]);
    expect(order).toMatchObject({ status: "partially_filled", escrowed: 15_000_000n, filledShares: 5_000_000n, proceeds: 2_250_000n });
    expect(escrowOf(order.id)).toMatchObject({ state: "settled", sold: 5_000_000n, proceeds: 2_250_000n });
  });

  it("sells only on venues where the operator holds the outcome, however good another venue's bids", async () => {
    const svc = await holding();
    bids.set("w", [{ price: 600_000n, shares: 100_000_000n }]);
    script = [(o) => fill(o, o.shares)];
    const order = await svc.submit(who, { ...sell, shares: 5 }, undefined);
    expect(order.status).toBe("filled");
    expect(sent.map((o) => o.clientOrderId)).toEqual([childOrderId(order.id, "v")]);
  });

  it("never plans two sells of one market on the same inventory", async () => {
    const svc = await holding();
    // The client holds 20 shares, and 15 more bought elsewhere; the operator holds 20 on venue v.
    ledger.sot.set(who.address, 35_000_000n);
    script = [(o) => fill(o, o.shares), (o) => fill(o, o.shares)];
    const orders = await Promise.all([0, 1].map(() => svc.submit(who, { ...sell, shares: 15, time_in_force: "IOC" }, undefined)));
    expect(sent.reduce((n, o) => n + o.shares, 0n)).toBe(20_000_000n);
    // The second had only 5 of its 15 shares to sell: it is partially filled, not filled.
    expect(orders.map((o) => [o.filledShares, o.status]).sort()).toEqual([[15_000_000n, "filled"], [5_000_000n, "partially_filled"]].sort());
  });

  it("leaves a sell pending when its escrow's outcome is unknown and the chain holds none", async () => {
    const svc = await holding();
    ledger.failNext.escrow = new VaultTxError("unknown", "Unknown", "Vault.escrow: outcome unknown");
    const order = await svc.submit(who, { ...sell, shares: 5 }, undefined);
    expect(order.status).toBe("pending");
    expect(sent).toHaveLength(0);
  });

  it("recovery settles a sell whose settlement's answer was lost, once, on its stored fills", async () => {
    const svc = await holding();
    script = [(o) => fill(o, o.shares)];
    ledger.failNext.settleSell = new VaultTxError("unknown", "Unknown", "Vault.settleSell: outcome unknown");
    const order = await svc.submit(who, { ...sell, shares: 6 }, undefined);
    expect(order.status).toBe("routing");
    const child = order.legs[0]!;
    known.set(child.clientOrderId, { kind: "done", venueOrderId: `vo-${child.clientOrderId}`, fills: (await store.fills(order.id)).map((f) => ({ ...f, side: "sell" as const })) });
    await reconciler(svc).pass(0);
    expect(await store.order(order.id)).toMatchObject({ status: "filled", filledShares: 6_000_000n, proceeds: 2_700_000n, settleTx: HASH });
    expect(escrowOf(order.id)).toMatchObject({ state: "settled", sold: 6_000_000n });
    expect(ledger.credited.get(who.address)).toBe(2_700_000n);
  });

  it("recovery ends a sell whose venue never answers once its escrow's deadline has passed, returning the shares whole, and not before", async () => {
    const clock = { t: Date.now(), now: () => clock.t };
    ledger.now = clock.now;
    const svc = await holding(service({ clock }));
    script = [() => ({ kind: "unknown", reason: "timeout" })];
    const order = await svc.submit(who, { ...sell, shares: 8 }, undefined);
    expect(order.status).toBe("routing");
    const silent = { ...scriptedVenue(), status: async () => Promise.reject(new AppError("venue_unavailable", "v lists no market m")) } as Venue;
    const recovery = new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", silent]]), clock, log: pino({ level: "silent" }) });
    clock.t += 3_600_000;
    expect(await recovery.pass(0)).toBe(0);
    expect((await store.order(order.id))?.status).toBe("routing");
    expect(escrowOf(order.id)?.state).toBe("escrowed");
    clock.t += LOCK_TTL_S * 1000;
    expect(await recovery.pass(0)).toBe(1);
    expect(escrowOf(order.id)?.state).toBe("released");
    expect(ledger.sot.get(who.address)).toBe(20_000_000n);
    expect(await store.order(order.id)).toMatchObject({ status: "failed", releaseTx: HASH, errorCode: "venue_unavailable", filledShares: 0n, proceeds: 0n });
    expect((await store.order(order.id))?.errorMessage).toMatch(/escrowed shares were returned/);
  });

  it("recovery reads neither the chain nor the order's fills for a sell whose venue never answers while its escrow's deadline is hours away", async () => {
    const clock = { t: Date.now(), now: () => clock.t };
    ledger.now = clock.now;
    const svc = await holding(service({ clock }));
    script = [() => ({ kind: "unknown", reason: "timeout" })];
    const order = await svc.submit(who, { ...sell, shares: 8 }, undefined);
    expect(order.status).toBe("routing");
    const silent = { ...scriptedVenue(), status: async () => Promise.reject(new AppError("venue_unavailable", "v lists no market m")) } as Venue;
    const asked: string[] = [];
    const vault = Object.fromEntries(Object.entries(ledger.vault()).map(([name, call]) => [name, (...args: unknown[]) => (asked.push(name), call(...args))])) as unknown as Vault;
    const fillsRead = vi.spyOn(store, "fills");
    const recovery = new Reconciler(svc, { store, vault, venues: new Map([["v", silent]]), clock, log: pino({ level: "silent" }) });
    for (const hours of [1, 12, 23]) {
      clock.t = Date.parse((await store.order(order.id))!.createdAt) + hours * 3_600_000;
      expect(await recovery.pass(0)).toBe(0);
    }
    expect(asked.filter((name) => name !== "info")).toEqual([]);
    expect(fillsRead).not.toHaveBeenCalled();
    clock.t += 2 * 3_600_000;
    expect(await recovery.pass(0)).toBe(1);
    expect(await store.order(order.id)).toMatchObject({ status: "failed", errorCode: "venue_unavailable" });
    expect(ledger.sot.get(who.address)).toBe(20_000_000n);
  });

  it("recovery settles on the fills its venues reported a sell whose other child order is never answered, once its escrow's deadline has passed", async () => {
    const clock = { t: Date.now(), now: () => clock.t };
    ledger.now = clock.now;
    const svc = await holding(service({ clock }));
    script = [(o) => fill(o, o.shares / 2n), () => ({ kind: "unknown", reason: "timeout" })];
    const order = await svc.submit(who, { ...sell, shares: 8 }, undefined);
    expect(order.status).toBe("routing");
    const silent = { ...scriptedVenue(), status: async () => Promise.reject(new AppError("venue_unavailable", "v lists no market m")) } as Venue;
    clock.t += (LOCK_TTL_S + 1) * 1000;
    await new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", silent]]), clock, log: pino({ level: "silent" }) }).pass(0);
    expect(escrowOf(order.id)).toMatchObject({ state: "settled", sold: 4_000_000n, proceeds: 1_800_000n });
    expect(ledger.sot.get(who.address)).toBe(16_000_000n);
    expect(await store.order(order.id)).toMatchObject({ status: "partially_filled", filledShares: 4_000_000n, proceeds: 1_800_000n, settleTx: HASH });
  });

  it("recovery ends a sell whose venue is no longer configured once the client expired its escrow on chain", async () => {
    const svc = await holding();
    script = [() => ({ kind: "unknown", reason: "timeout" })];
    const order = await svc.submit(who, { ...sell, shares: 8 }, undefined);
    // The client took its shares back with expireEscrow after the deadline.
    const { deadline } = escrowOf(order.id)!;
    await ledger.vault().releaseEscrow(chainOrderId(order.id));
    ledger.escrows.set(chainOrderId(order.id), { ...escrowOf(order.id)!, expired: true });
    const recovery = new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map(), clock: { now: () => (deadline + 1) * 1000 }, log: pino({ level: "silent" }) });
    expect(await recovery.pass(0)).toBe(1);
    expect(await store.order(order.id)).toMatchObject({ status: "failed", releaseTx: HASH, errorCode: "venue_unavailable" });
    expect(ledger.sot.get(who.address)).toBe(20_000_000n);
  });

  it("recovery returns the escrow of a sell interrupted before it routed", async () => {
    const svc = await holding();
    ledger.failNext.escrow = new VaultTxError("unknown", "Unknown", "Vault.escrow: outcome unknown");
    const order = await svc.submit(who, { ...sell, shares: 5 }, undefined);
    // The escrow landed after all, its answer lost.
    await ledger.vault().escrow(chainOrderId(order.id), who.address, { tokenId: 7n, shares: 5_000_000n });
    expect(ledger.sot.get(who.address)).toBe(15_000_000n);
    await reconciler(svc).pass(0);
    expect(await store.order(order.id)).toMatchObject({ status: "failed", errorCode: "order_interrupted", escrowed: 5_000_000n });
    expect(ledger.sot.get(who.address)).toBe(20_000_000n);
  });
});

describe("a venue that finds child orders by their content (Opinion)", () => {
  it("gives two identical child orders routed in the same second expiries of their own, stored before they are sent, and a restarted adapter finds each", async () => {
    const catalog = MarketCatalog.load();
    const sim = await startOpinionSim({ catalog, seed: 11, latencyScale: 0, tickMs: 3_600_000 });
    const adapter = () => createOpinionVenue({ baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 400 });
    const opinion = adapter();
    let restarted: Venue | undefined;
    try {
      await opinion.start();
      const event = catalog.events().find((e) => e.status === "open" && e.listings.some((l) => l.venue === opinion.id))!;
      const marketId = event.listings.find((l) => l.venue === opinion.id)!.venueMarketId;
      const market = opinion.market(marketId)!;
      // Both orders plan on one book, at one instant of our clock: their children are alike in all the venue lists but the expiry.
      const quote: VenueQuote = { venue: opinion.id, venueMarketId: marketId, asks: opinion.book(marketId, "YES")!.asks, feeModel: market.feeModel, tickSize: market.tickSize, minOrderShares: market.minOrderShares, lotShares: market.lotShares, latencyMs: 1 };
      const now = Date.now();
      const storedWhenSent: (number | undefined)[] = [];
      const placing: Venue = new Proxy(opinion, {
        get: (target, p, receiver) =>
          p === "place"
            ? async (child: ChildOrder) => {
                const legs = (await store.ordersInStatus(["routing"])).flatMap((o) => o.legs);
                storedWhenSent.push(legs.find((l) => l.clientOrderId === child.clientOrderId)?.expiresAt);
                return target.place(child);
              }
            : Reflect.get(target, p, receiver),
      });
      const deps = (venue: Venue): Partial<OrderDeps> => ({
        venues: new Map([[venue.id, venue]]),
        event: () => event,
        quotes: () => [quote],
        clock: { now: () => now },
        reconcileAttempts: 0,
      });
      // Both answers are lost: the orders stay routing, as a crash after sending would leave them.
      // $40 each: a child's fee by Opinion's curve must reach its minimum fee of $0.25.
      sim.faults.set({ ackLost: true });
      const orders = await Promise.all([1, 2].map(() => service(deps(placing)).submit(who, { ...body, market_id: event.eventId, amount_usdc: 40 }, undefined)));
      sim.faults.reset();
      expect(orders.map((o) => o.status)).toEqual(["routing", "routing"]);
      const [a, b] = orders.map((o) => o.legs[0]!);
      expect({ ...a, clientOrderId: "", expiresAt: 0 }).toEqual({ ...b, clientOrderId: "", expiresAt: 0 });
      // Whole seconds from now + the child orders' time to live on, one each; each stored before its child was sent.
      const first = Math.ceil((now + 30_000) / 1000) * 1000;
      expect([a!.expiresAt, b!.expiresAt].sort()).toEqual([first, first + 1_000]);
      expect(storedWhenSent.sort()).toEqual([first, first + 1_000]);

      // A restarted server: a new adapter, which knows no venue order id, finds each child by its content.
      restarted = adapter();
      await restarted.start();
      const svc = service(deps(restarted));
      await new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([[restarted.id, restarted]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }) }).pass(0);
      const settled = await Promise.all(orders.map(async (o) => ({ order: (await store.order(o.id))!, fills: await store.fills(o.id) })));
      for (const { order, fills } of settled) {
        expect(order.status).toBe("filled");
        expect(order.filledShares).toBe(order.legs[0]!.shares);
        expect(fills.length).toBeGreaterThan(0);
      }
      const venueOrders = settled.map(({ fills }) => new Set(fills.map((f) => f.venueOrderId)));
      expect(venueOrders.map((ids) => ids.size)).toEqual([1, 1]);
      expect([...venueOrders[0]!][0]).not.toBe([...venueOrders[1]!][0]);
    } finally {
      await restarted?.stop();
      await opinion.stop();
      await sim.stop();
    }
  });
});

function reconciler(svc: OrderService): Reconciler {
  return new Reconciler(svc, { store, vault: ledger.vault(), venues: new Map([["v", scriptedVenue()]]), clock: { now: () => Date.now() }, log: pino({ level: "silent" }) });
}

/** A placement the venue holds until `answer()`, filling it whole then; `placed` resolves once it was sent. */
function heldPlacement(): { placed: Promise<void>; answer: () => void } {
  let sentNow!: () => void;
  let answer: () => void = () => undefined;
  const placed = new Promise<void>((r) => (sentNow = r));
  script = [(o) => (sentNow(), new Promise<PlaceResult>((r) => (answer = () => r(fill(o, o.shares))))) as unknown as PlaceResult];
  return { placed, answer: () => answer() };
}

/** An order under client_order_id "b-1" stored `locked`, the server stopped there, whose lock a reorganisation then removed: recovery rejected it order_interrupted. */
async function lockRemovedByReorganisation(): Promise<{ svc: OrderService; order: OrderRecord }> {
  const stopped = service({ checkpoint: (step) => { if (step === "order.locked") throw new Error("killed"); } });
  const pending = await stopped.submit(who, { ...body, client_order_id: "b-1" }, undefined);
  await store.updateOrder(pending.id, ["pending"], { status: "locked", locked: 10_000_000n, lockTx: HASH });
  ledger.locks.delete(chainOrderId(pending.id));
  const svc = service();
  expect(await reconciler(svc).pass(0)).toBe(1);
  const order = (await store.order(pending.id))!;
  expect(order).toMatchObject({ status: "rejected", errorCode: "order_interrupted", lockTx: null });
  return { svc, order };
}

/**
 * A JSON-RPC URL in front of the test chain at `upstream` as a pool of two nodes: a request that reads an order's lock (Vault.lockOf)
 * goes to one whose head is `head`, which answers every call of it as of that block; any other to the node that has every block.
 */
function poolWithLockReadsFrom(upstream: string, head: bigint): Promise<{ url: string; stop(): Promise<void> }> {
  const lockOf = encodeFunctionData({ abi: vaultAbi, functionName: "lockOf", args: [HASH] }).slice(0, 10);
  return startPool(
    upstream,
    (c) => c.method === "eth_call" && ((c.params[0] as { data?: string }).data ?? "").startsWith(lockOf),
    async (c, forward) => {
      if (c.method === "eth_blockNumber") return { jsonrpc: "2.0", id: c.id, result: toHex(head) };
      return forward(c.method === "eth_call" ? { ...c, params: [c.params[0], toHex(head)] } : c);
    },
  );
}
