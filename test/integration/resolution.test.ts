import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPublicClient, decodeEventLog, http } from "viem";
import { vaultAbi } from "../../src/contracts/artifacts.ts";
import { CrossfillError } from "../../src/sdk/client.ts";
import { concludeSimMarket } from "../../src/venues/net/sim-markets.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { orderRecord } from "../helpers/stores.ts";

// An event ends: holders of both outcomes, an operator's decision (as `crossfill events resolve` stores
// it), and the server's resolution pass redeeming every position once.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.stop());

const EVENT = "fed-cut-2026-12";
const buy = (outcome: "YES" | "NO", amount_usdc: number) => ({ market_id: EVENT, outcome, side: "buy", amount_usdc, max_slippage: 0.05, strategy: "optimize_price", time_in_force: "IOC" });

describe("resolution and redemption", () => {
  it("pays each winning share 1 USDC into its holder's vault, burns the losing shares, once, and takes no order on the event after", async () => {
    const winner = await s.newKey();
    const loser = await s.newKey();
    const yes = await winner.client.order(buy("YES", 40) as never);
    const no = await loser.client.order(buy("NO", 30) as never);
    // A position on each side is all it needs: the books the simulators draw may fill a part of an order.
    expect([yes.filled_shares, no.filled_shares].every((n) => n > 0)).toBe(true);
    const [winnerBefore, loserBefore] = [await winner.client.account(), await loser.client.account()];

    await s.crossfill.store.decideEvent({ eventId: EVENT, status: "resolved", outcome: "YES", decidedBy: "operator", venueReports: {}, decidedAt: new Date().toISOString() });
    await s.crossfill.resolutions.pass();

    const winnerAfter = await winner.client.account();
    const loserAfter = await loser.client.account();
    expect(winnerAfter.available_usdc).toBeCloseTo(winnerBefore.available_usdc + yes.filled_shares, 6);
    expect(loserAfter.available_usdc).toBeCloseTo(loserBefore.available_usdc, 6);
    // Redeemed whole, each position stays listed with no shares and what it realized: the payout less its cost.
    expect(winnerAfter.positions).toEqual([expect.objectContaining({ outcome: "YES", shares: 0, avg_cost: null })]);
    expect(winnerAfter.positions[0]!.realized_pnl_usdc).toBeCloseTo(yes.filled_shares - yes.spent_usdc, 6);
    expect(loserAfter.positions).toEqual([expect.objectContaining({ outcome: "NO", shares: 0, avg_cost: null, realized_pnl_usdc: -no.spent_usdc })]);

    // The chain's own record: one Redeemed event per holder and token, with the payout.
    const redemptions = (await s.crossfill.store.redemptions({ status: "pending" })).length;
    expect(redemptions).toBe(0);
    const rpc = createPublicClient({ transport: http((await s.client.health()).chain.rpc_url) });
    const ledger = await s.crossfill.vault.ledger();
    const paid = ledger.redemptions.filter((r) => [winnerBefore.vault_address, loserBefore.vault_address].map((a) => a.toLowerCase()).includes(r.client.toLowerCase()));
    expect(paid.map((r) => [r.shares, r.payout]).sort()).toEqual(
      [
        [BigInt(Math.round(yes.filled_shares * 1e6)), BigInt(Math.round(yes.filled_shares * 1e6))],
        [BigInt(Math.round(no.filled_shares * 1e6)), 0n],
      ].sort(),
    );
    const receipt = await rpc.getTransactionReceipt({ hash: paid[0]!.txHash });
    expect(receipt.status).toBe("success");
    expect(receipt.logs.some((l) => { try { return decodeEventLog({ abi: vaultAbi, data: l.data, topics: l.topics }).eventName === "Redeemed"; } catch { return false; } })).toBe(true);

    const paidOut = (await winner.client.activity()).data.find((a) => a.type === "redemption");
    expect(paidOut).toMatchObject({ amount_usdc: yes.filled_shares, status: "redeemed", reference: EVENT, tx_hash: paid.find((r) => r.payout > 0n)!.txHash });
    expect((await loser.client.activity()).data.find((a) => a.type === "redemption")).toMatchObject({ amount_usdc: 0, status: "redeemed" });

    // Another pass, and a restart, pay nothing more.
    await s.crossfill.resolutions.pass();
    await s.restart();
    await s.crossfill.resolutions.pass();
    expect((await winner.client.account()).available_usdc).toBeCloseTo(winnerAfter.available_usdc, 6);

    const refused = await winner.client.order(buy("YES", 5) as never).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CrossfillError);
    expect((refused as CrossfillError).code).toBe("market_closed");
    const listed = (await winner.client.markets({ status: "resolved" })).data.find((m) => m.event_id === EVENT);
    expect(listed).toMatchObject({ best_bid: null, best_ask: null });
    // The simulators still trade their markets: the operator decided first. No book is shown of an event that takes no order.
    expect(await winner.client.prices(EVENT)).toMatchObject({ best_execution: null, orderbook: { bids: [], asks: [] } });
  });

  it("learns a resolution from the venues: resolved when every venue paid out the same outcome, disputed when they differ, until an operator decides", async () => {
    const conclude = async (eventId: string, outcomes: ("YES" | "NO")[]) => {
      const event = (await s.client.markets({ q: eventId })).data.find((m) => m.event_id === eventId)!;
      for (const [i, venue] of event.venues.entries()) {
        const adapter = s.crossfill.venues.find((v) => v.id === venue.venue)!;
        await concludeSimMarket(adapter.describe().baseUrl!, venue.venue_market_id, { state: "resolved", outcome: outcomes[i % outcomes.length]! });
      }
      return event.venues.length;
    };
    const holder = await s.newKey();
    const agreed = "spx-above-7500-2026-12-31";
    const disputed = "btc-above-150k-2026-12-31";
    const bought = await holder.client.order({ ...buy("NO", 20), market_id: disputed } as never);
    expect(bought.filled_shares).toBeGreaterThan(0);

    expect(await conclude(agreed, ["YES"])).toBeGreaterThan(1);
    expect(await conclude(disputed, ["YES", "NO"])).toBeGreaterThan(1);
    await s.crossfill.resolutions.pass();
    const decided = new Map((await s.crossfill.store.eventResolutions()).map((r) => [r.eventId, r]));
    expect(decided.get(agreed)).toMatchObject({ status: "resolved", outcome: "YES", decidedBy: "venues" });
    expect(decided.get(disputed)).toMatchObject({ status: "disputed", outcome: null, decidedBy: "venues" });
    // Nothing of a disputed event is redeemed, and it takes no order.
    expect((await holder.client.account()).positions.filter((p) => p.event_id === disputed)).toHaveLength(1);
    const refused = await holder.client.order({ ...buy("NO", 5), market_id: disputed } as never).catch((e: unknown) => e);
    expect((refused as CrossfillError).code).toBe("market_closed");

    const before = await holder.client.account();
    await s.crossfill.store.decideEvent({ eventId: disputed, status: "resolved", outcome: "NO", decidedBy: "operator", venueReports: {}, decidedAt: new Date().toISOString() });
    await s.crossfill.resolutions.pass();
    const after = await holder.client.account();
    expect(after.positions.filter((p) => p.event_id === disputed)).toEqual([expect.objectContaining({ outcome: "NO", shares: 0, mark_price: 1 })]);
    expect(after.available_usdc).toBeCloseTo(before.available_usdc + bought.filled_shares, 6);
  });
});

describe("resolution on a server run on some of the venues (VENUES)", () => {
  let some: TestServer;
  beforeAll(async () => {
    some = await startTestServer({ VENUES: "polymarket,kalshi" });
  });
  afterAll(async () => some?.stop());

  /** Resolves the event YES on every venue the server runs, and answers those venues. */
  const concludeRun = async (eventId: string) => {
    const event = (await some.client.markets({ q: eventId })).data.find((m) => m.event_id === eventId)!;
    for (const venue of event.venues) {
      const adapter = some.crossfill.venues.find((v) => v.id === venue.venue)!;
      await concludeSimMarket(adapter.describe().baseUrl!, venue.venue_market_id, { state: "resolved", outcome: "YES" });
    }
    return event.venues.map((v) => v.venue).sort();
  };

  it("decides an event also listed on venues it does not run from the venues it runs, and pays its holders, when crossfill holds nothing on the others", async () => {
    const holder = await some.newKey();
    const event = "us-recession-2026"; // listed on all four venues
    const bought = await holder.client.order({ ...buy("YES", 20), market_id: event } as never);
    expect(bought.filled_shares).toBeGreaterThan(0);
    expect(await concludeRun(event)).toEqual(["kalshi-sim", "polymarket-sim"]);
    const before = await holder.client.account();
    await some.crossfill.resolutions.pass();
    const decided = (await some.crossfill.store.eventResolutions()).find((r) => r.eventId === event);
    expect(decided).toMatchObject({ status: "resolved", outcome: "YES", decidedBy: "venues", venueReports: { "polymarket-sim": "YES", "kalshi-sim": "YES" } });
    const after = await holder.client.account();
    expect(after.available_usdc).toBeCloseTo(before.available_usdc + bought.filled_shares, 6);
    expect(after.positions.filter((p) => p.event_id === event)).toEqual([expect.objectContaining({ outcome: "YES", shares: 0 })]);
  });

  it("pays a holder whose order on the event waits on a venue it no longer runs, without waiting for that order's deadline", async () => {
    const holder = await some.newKey();
    const event = "eth-above-5k-2026-12-31";
    const bought = await holder.client.order({ ...buy("YES", 20), market_id: event } as never);
    expect(bought.filled_shares).toBeGreaterThan(0);
    // A buy a deployment that ran Limitless routed there: recovery cannot ask it, and waits for its lock's deadline, a day.
    const at = new Date().toISOString();
    await some.crossfill.store.insertOrder(
      orderRecord({
        id: "ord_waits_on_limitless", accountId: holder.accountId, eventId: event, status: "routing", locked: 5_000_000n, createdAt: at, updatedAt: at, lockedAt: at,
        legs: [{ venue: "limitless-sim", clientOrderId: "c-waits", venueMarketId: "m", limitPrice: 500_000n, shares: 1_000_000n, round: 1, expiresAt: 0 }],
      }),
    );
    const before = await holder.client.account();
    await some.crossfill.store.decideEvent({ eventId: event, status: "resolved", outcome: "YES", decidedBy: "operator", venueReports: {}, decidedAt: at });
    await some.crossfill.resolutions.pass();
    const after = await holder.client.account();
    expect(after.available_usdc).toBeCloseTo(before.available_usdc + bought.filled_shares, 6);
    expect(after.positions.filter((p) => p.event_id === event)).toEqual([expect.objectContaining({ outcome: "YES", shares: 0 })]);
    expect((await some.crossfill.store.order("ord_waits_on_limitless"))?.status).toBe("routing");
  });

  it("leaves an event to an operator when crossfill sent a child order of it to a venue it no longer runs", async () => {
    const holder = await some.newKey();
    const event = "gold-above-5000-2026-12-31"; // listed on all four venues
    // An order a deployment that ran Limitless sent there.
    const at = new Date().toISOString();
    await some.crossfill.store.insertOrder(
      orderRecord({
        id: "ord_on_limitless", accountId: holder.accountId, eventId: event, status: "rejected", locked: 0n, createdAt: at, updatedAt: at,
        legs: [{ venue: "limitless-sim", clientOrderId: "c-limitless", venueMarketId: "m", limitPrice: 500_000n, shares: 1_000_000n, round: 1, expiresAt: 0 }],
      }),
    );
    await concludeRun(event);
    await some.crossfill.resolutions.pass();
    await some.crossfill.resolutions.pass();
    expect((await some.crossfill.store.eventResolutions()).find((r) => r.eventId === event)).toBeUndefined();
  });
});
