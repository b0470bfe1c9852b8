import { describe, expect, it } from "vitest";
import type { MarketCatalog } from "../markets/catalog.ts";
import type { Store } from "../store/store.ts";
import type { Vault } from "../vault/vault.ts";
import { ResolutionService } from "./service.ts";

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
  it("reads the open orders once a pass however many events wait, and plans an event once its last order finished", async () => {
    const resolved = ["a", "b", "c"].map((eventId) => ({ eventId, status: "resolved", outcome: "YES" }));
    let open = [{ eventId: "b" }];
    let openReads = 0;
    const planned: string[] = [];
    const service = new ResolutionService({
      store: {
        eventResolutions: async () => resolved,
        redemptions: async () => [],
        ordersInStatus: async () => (openReads++, open),
        holders: async (eventId: string) => (planned.push(eventId), []),
      } as unknown as Store,
      vault: { sotBalances: async () => [] } as unknown as Vault,
      catalog: { events: () => [], decided: () => undefined } as unknown as MarketCatalog,
      ask: async () => ({ state: "open" }),
      tokenId: () => 0n,
      pollMs: 0,
      clock: { now: () => 1_000_000 },
      log: { info: () => undefined, warn: () => undefined, error: () => undefined } as never,
    });
    await service.pass();
    expect(openReads).toBe(1);
    expect(planned).toEqual(["a", "c"]);
    open = [];
    await service.pass();
    expect(openReads).toBe(2);
    expect(planned).toEqual(["a", "c", "b"]);
    await service.pass();
    expect(openReads).toBe(2);
  });
});
