import { beforeEach, describe, expect, it } from "vitest";
import { OrderService, childOrderId } from "./service.ts";
import { plan } from "../router/index.ts";
import { openSqliteStore } from "../store/sqlite/sqlite-store.ts";
import type { Store } from "../store/store.ts";
import type { UnifiedEvent } from "../markets/catalog.ts";
import type { VenueQuote } from "../router/index.ts";
import type { ChildOrder, PlaceResult, Venue } from "../venues/venue.ts";
import type { LockState, Vault } from "../vault/vault.ts";

// The use-case over a real store, a venue that answers from a script, and a vault that records what it
// was asked to do: what a trader would see of an order whose first legs arrive after their levels are gone.
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

class Ledger {
  locks = new Map<string, { amount: bigint; state: LockState["kind"]; spent?: bigint }>();
  vault(): Vault {
    const tx = () => Promise.resolve({ txHash: `0x${"ab".repeat(32)}` as `0x${string}`, blockNumber: 1n });
    return {
      balanceOf: async () => ({ available: 1_000_000_000n, locked: 0n }),
      lock: async (id, _a, amount) => (this.locks.set(id, { amount, state: "locked" }), tx()),
      settle: async (id, spent) => (this.locks.set(id, { ...this.locks.get(id)!, state: "settled", spent }), tx()),
      release: async (id) => (this.locks.set(id, { ...this.locks.get(id)!, state: "released" }), tx()),
      lockState: async (id) => {
        const l = this.locks.get(id);
        return !l ? { kind: "none" } : l.state === "locked" ? { kind: "locked", amount: l.amount } : { kind: l.state } as LockState;
      },
    } as Partial<Vault> as Vault;
  }
}

let store: Store;
let ledger: Ledger;
let asks: { price: bigint; shares: bigint }[];
let script: ((o: ChildOrder) => PlaceResult)[];
const sent: ChildOrder[] = [];

function service(): OrderService {
  const venue = {
    id: "v",
    place: async (o: ChildOrder) => (sent.push(o), script.shift()!(o)),
    status: async () => ({ kind: "not_found" as const }),
  } as Partial<Venue> as Venue;
  const quote = (): VenueQuote => ({
    venue: "v",
    venueMarketId: "m",
    asks,
    feeModel: { kind: "polymarket", ratePpm: 0n, exponent: 1 },
    tickSize: 10_000n,
    minOrderShares: 1_000_000n,
    lotShares: 10_000n,
    latencyMs: 1,
  });
  return new OrderService({
    store,
    vault: ledger.vault(),
    venues: new Map([["v", venue]]),
    event: (id) => (id === "evt" ? EVENT : undefined),
    quotes: () => [quote()],
    plan,
    tokenId: () => 7n,
    clock: { now: () => Date.now() },
    newOrderId: () => `ord_${sent.length}_${Math.random().toString(36).slice(2)}`,
    limits: { maxOrder: 1_000_000_000n },
    log: { info() {}, warn() {}, error() {} },
    reconcileDelayMs: 0,
  });
}

const fill = (o: ChildOrder, shares: bigint): PlaceResult => ({
  kind: "filled",
  venueOrderId: `vo-${o.clientOrderId}`,
  fills: [{ tradeId: `t-${o.clientOrderId}`, venueOrderId: `vo-${o.clientOrderId}`, clientOrderId: o.clientOrderId, price: o.limitPrice, shares, fee: 0n }],
});
const nothing = (): PlaceResult => ({ kind: "rejected", reason: "no_match" });

beforeEach(async () => {
  store = await openSqliteStore(":memory:");
  await store.migrate();
  await store.createAccount({ id: "acc", email: "a@example.com", address: "0x00000000000000000000000000000000000000aa", walletKeyEnc: null, passwordHash: null, fundedAt: null });
  ledger = new Ledger();
  sent.length = 0;
  asks = [{ price: 500_000n, shares: 100_000_000n }];
});

const who = { accountId: "acc", address: "0x00000000000000000000000000000000000000aa" as const };
const body = { market_id: "evt", outcome: "YES", side: "buy", amount_usdc: 10, max_slippage: 0.02 };

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

  it("releases everything when no round fills anything", async () => {
    script = [nothing, nothing, nothing];
    const order = await service().submit(who, body, undefined);
    expect(order).toMatchObject({ status: "failed", errorCode: "all_venues_failed", spent: 0n });
    expect([...ledger.locks.values()][0]!.state).toBe("released");
  });
});
