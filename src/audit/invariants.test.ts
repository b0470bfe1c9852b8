import { describe, expect, it } from "vitest";
import { keccak256, toHex } from "viem";
import { chainWithdrawalId, depositId, depositKey } from "../funds/chain-ids.ts";
import type { AccountRecord, DepositRecord, FillRecord, OrderRecord, RedemptionRecord, WithdrawalRecord } from "../store/store.ts";
import type { Hex32, Ledger } from "../vault/vault.ts";
import type { VenueFill } from "../venues/venue.ts";
import { orderRecord } from "../../test/helpers/stores.ts";
import { positionBook, type PositionMove } from "../domain/pnl.ts";
import { checkInvariants, marketKey, type AuditInput } from "./invariants.ts";

// A small history that keeps every invariant, then each invariant broken on its own: the audit must
// find exactly the breach it is about, and nothing else.
const ALICE = "0x00000000000000000000000000000000000000a1" as const;
const TX = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as Hex32;
const chainId = (id: string) => keccak256(toHex(id));
const at = (n: number) => ({ txHash: TX(n), blockNumber: BigInt(n) });

function order(id: string, over: Partial<OrderRecord> = {}): OrderRecord {
  return orderRecord({
    id,
    accountId: "acc",
    timeInForce: "IOC",
    status: "filled",
    locked: 10_000_000n,
    spent: 5_000_000n,
    filledShares: 10_000_000n,
    routedTo: "v",
    sotTokenId: "7",
    lockTx: TX(1),
    settleTx: TX(2),
    createdAt: "2026-11-23T00:00:00.000Z",
    updatedAt: "2026-11-23T00:00:00.000Z",
    ...over,
  });
}

const fill: FillRecord = { orderId: "o1", venue: "v", venueOrderId: "vo", tradeId: "t1", clientOrderId: "o1-v", price: 500_000n, shares: 10_000_000n, fee: 0n, createdAt: "2026-11-23T00:00:00.000Z" };
const trade: VenueFill = { tradeId: "t1", venueOrderId: "vo", clientOrderId: "", side: "buy", price: 500_000n, shares: 10_000_000n, fee: 0n };
/** The sell s1 sold 3 shares at 0.51 for a fee of 0.03: 1.53 − 0.03 = 1.5 USDC credited. */
const sellFill: FillRecord = { ...fill, orderId: "s1", tradeId: "t-s1", clientOrderId: "s1-v", price: 510_000n, shares: 3_000_000n, fee: 30_000n };
const sellTrade: VenueFill = { ...trade, tradeId: "t-s1", side: "sell", price: 510_000n, shares: 3_000_000n, fee: 30_000n };
const sellOrder = (over: Partial<OrderRecord> = {}) =>
  order("s1", { side: "sell", status: "partially_filled", amount: 0n, shares: 4_000_000n, locked: 0n, spent: 0n, escrowed: 4_000_000n, filledShares: 3_000_000n, fees: 30_000n, proceeds: 1_500_000n, lockTx: TX(3), settleTx: TX(4), ...over });
const BOB = "0x00000000000000000000000000000000000000b0" as const;
const withdrawal: WithdrawalRecord = {
  id: "wd1",
  accountId: "acc",
  clientWithdrawalId: "w",
  requestHash: "h",
  amount: 10_000_000n,
  toAddress: BOB,
  status: "confirmed",
  txHash: TX(11),
  errorCode: null,
  errorMessage: null,
  createdAt: "",
  updatedAt: "",
};
const deposit: DepositRecord = {
  id: depositId(TX(12), 0),
  accountId: "acc",
  amount: 20_000_000n,
  fromAddress: BOB,
  txHash: TX(12),
  place: 0,
  logIndex: 1,
  block: 12n,
  status: "credited",
  creditTx: TX(13),
  creditBlock: null,
  creditBlockHash: null,
  errorMessage: null,
  createdAt: "",
  updatedAt: "",
};

const VAULT = "0x00000000000000000000000000000000000000fa" as const;
const GRANT = 1_000_000_000_000n;

/**
 * Alice buys 10 shares of token 7 (order o1) for 5 USDC, sells 3 of the 4 she escrows for 1.5 USDC after fees
 * (order s1), and the event resolves her way: her other 7 shares are redeemed for 7 USDC.
 */
function healthy(): AuditInput {
  const ledger: Ledger = {
    fromBlock: 0n,
    toBlock: 9n,
    locks: [{ orderId: chainId("o1"), client: ALICE, amount: 10_000_000n, ...at(1) }],
    endings: [{ kind: "settled", orderId: chainId("o1"), client: ALICE, spent: 5_000_000n, released: 5_000_000n, tokenId: 7n, shares: 10_000_000n, ...at(2) }],
    deposits: [{ client: ALICE, from: "0x00000000000000000000000000000000000000f0", amount: 100_000_000n, ...at(0) }],
    withdrawals: [],
    drips: [{ key: TX(99), client: ALICE, amount: 100_000_000n, ...at(0) }],
    sotMints: [{ to: ALICE, tokenId: 7n, amount: 10_000_000n, ...at(2) }],
    escrows: [{ orderId: chainId("s1"), client: ALICE, tokenId: 7n, shares: 4_000_000n, ...at(3) }],
    escrowEndings: [
      { kind: "settled", orderId: chainId("s1"), client: ALICE, tokenId: 7n, sold: 3_000_000n, returned: 1_000_000n, proceeds: 1_500_000n, ...at(4) },
    ],
    redemptions: [{ key: TX(77), client: ALICE, tokenId: 7n, shares: 7_000_000n, payout: 7_000_000n, ...at(5) }],
    sotBurns: [
      { from: VAULT, tokenId: 7n, amount: 3_000_000n, ...at(4) },
      { from: ALICE, tokenId: 7n, amount: 7_000_000n, ...at(5) },
    ],
    sotSupply: [{ tokenId: 7n, supply: 0n }],
    usdcGranted: GRANT,
    withdrawnTo: [{ withdrawalId: chainWithdrawalId("wd1"), client: ALICE, to: BOB, amount: 10_000_000n, ...at(11) }],
    depositCredits: [{ key: depositKey(TX(12), 1), client: ALICE, amount: 20_000_000n, ...at(13) }],
    usdcTotalSupply: 100_000_000n + GRANT,
    vaultUsdc: 113_500_000n,
    balances: [{ client: ALICE, available: 113_500_000n, locked: 0n }],
  };
  const account: AccountRecord = { id: "acc", email: "a@x", address: ALICE, walletKeyEnc: null, passwordHash: null, fundedAt: null, createdAt: "" };
  const redemption: RedemptionRecord = {
    key: TX(77),
    eventId: "e",
    accountId: "acc",
    address: ALICE,
    outcome: "YES",
    tokenId: "7",
    shares: 7_000_000n,
    payout: 7_000_000n,
    status: "redeemed",
    txHash: at(5).txHash,
    createdAt: "",
    updatedAt: "",
  };
  return {
    orders: [order("o1"), sellOrder()],
    fills: [fill, sellFill],
    accounts: [account],
    redemptions: [redemption],
    resolvedHoldings: [{ accountId: "acc", eventId: "e", outcome: "YES", winning: true, shares: 0n }],
    // Bought 10 for 5; sold 3 for 1.5 (1.5 of cost off); the other 7 redeemed for 7 (3.5 of cost off).
    positions: [{ accountId: "acc", eventId: "e", outcome: "YES", sotTokenId: "7", book: { shares: 0n, cost: 0n, realized: 3_500_000n }, exits: 2n, updatedAt: "" }],
    ledger,
    chainId,
    venueTrades: new Map([["v", [trade, sellTrade]]]),
    // The buy's 10 shares less the 3 the sell sold.
    venueInventory: inventory(7_000_000n),
    withdrawals: [withdrawal],
    deposits: [deposit],
    withdrawalId: chainWithdrawalId,
    depositKey: (d) => depositKey(d.txHash as Hex32, d.logIndex),
    depositTransfers: [{ from: BOB, to: ALICE, amount: 20_000_000n, logIndex: 1, ...at(12) }],
  };
}

/** The store's inventory of the orders' market: `shares` on venue v. */
function inventory(shares: bigint): Map<string, Map<string, bigint>> {
  return new Map([[marketKey(order("o1")), new Map([["v", shares]])]]);
}

/** `i` with the one position book the store keeps of its orders and redemptions: its buys, then its sells, then its redemptions. */
function rebooked(i: AuditInput): AuditInput {
  const finished = i.orders.filter((o) => (o.status === "filled" || o.status === "partially_filled") && o.filledShares > 0n);
  const moves: PositionMove[] = [
    ...finished.filter((o) => o.side === "buy").map((o) => ({ kind: "buy" as const, shares: o.filledShares, cost: o.spent })),
    ...finished.filter((o) => o.side === "sell").map((o) => ({ kind: "sell" as const, shares: o.filledShares, proceeds: o.proceeds })),
    ...i.redemptions.filter((r) => r.status === "redeemed").map((r) => ({ kind: "redeem" as const, shares: r.shares, payout: r.payout })),
  ];
  return { ...i, positions: [{ ...i.positions[0]!, book: positionBook(moves), exits: BigInt(moves.filter((m) => m.kind !== "buy").length) }] };
}

function broken(input: AuditInput): Record<string, number> {
  return Object.fromEntries(checkInvariants(input).filter((r) => r.violations !== 0).map((r) => [r.name, r.violations ?? -1]));
}

describe("the audit's invariants", () => {
  it("all hold on a consistent history", () => {
    expect(broken(healthy())).toEqual({});
    expect(rebooked(healthy()).positions).toEqual(healthy().positions);
  });

  it("finds an order left open", () => {
    const i = healthy();
    expect(broken({ ...i, orders: [...i.orders, order("o2", { status: "routing", settleTx: null, spent: 0n, filledShares: 0n })] })).toEqual({ orders_terminal: 1 });
  });

  it("finds a lock settled twice, and one never ended that is still locked", () => {
    const i = healthy();
    i.ledger.endings.push({ ...i.ledger.endings[0]!, ...at(3) });
    expect(broken(i)).toMatchObject({ locks_ended_once: 1 });
    const j = healthy();
    j.ledger.endings = [];
    j.ledger.balances[0] = { client: ALICE, available: 90_000_000n, locked: 10_000_000n };
    j.ledger.sotMints = [];
    expect(broken(j)).toMatchObject({ locks_ended_once: 1, nothing_locked: 1 });
  });

  it("finds an escrow ended twice, one of no order, and one of a finished order never ended", () => {
    const i = healthy();
    i.ledger.escrowEndings.push({ kind: "released", orderId: chainId("s1"), client: ALICE, tokenId: 7n, shares: 4_000_000n, expired: false, ...at(6) });
    expect(broken(i)).toMatchObject({ escrows_ended_once: 1 });
    const j = healthy();
    j.ledger.escrows.push({ orderId: chainId("nobody's"), client: ALICE, tokenId: 7n, shares: 1n, ...at(6) });
    expect(broken(j)).toMatchObject({ escrows_ended_once: 1 });
    const k = healthy();
    k.ledger.escrowEndings = [];
    k.ledger.sotBurns.shift();
    k.ledger.sotSupply[0]!.supply = 3_000_000n;
    k.ledger.balances[0]!.available -= 1_500_000n;
    // The store says the sell failed, nothing sold: its shares should have been returned.
    const failed = { ...k, orders: [order("o1"), sellOrder({ status: "failed", filledShares: 0n, fees: 0n, proceeds: 0n, settleTx: null })], fills: [fill], venueTrades: new Map([["v", [trade]]]), venueInventory: inventory(10_000_000n) };
    expect(broken(rebooked(failed))).toEqual({ escrows_of_finished_orders_ended: 1 });
    // Still open: the order's escrow may yet end.
    expect(broken(rebooked({ ...failed, orders: [order("o1"), sellOrder({ status: "routing", filledShares: 0n, proceeds: 0n, settleTx: null })] }))).toEqual({ orders_terminal: 1 });
  });

  it("finds a sale paid without its burn, a burn without a sale, and a supply that does not add up", () => {
    const i = healthy();
    i.ledger.sotBurns.shift();
    i.ledger.sotSupply[0]!.supply = 3_000_000n;
    expect(broken(i)).toEqual({ sot_supply: 1, one_burn_per_sale: 1 });
    expect(checkInvariants(i).find((r) => r.name === "one_burn_per_sale")!.examples[0]).toMatch(/ burned \[\] for shares \[3\]$/);
    const j = healthy();
    j.ledger.sotBurns.push({ from: ALICE, tokenId: 7n, amount: 1n, ...at(8) });
    j.ledger.sotSupply[0]!.supply = -1n;
    expect(broken(j)).toEqual({ sot_supply: 1, one_burn_per_sale: 1 });
    const k = healthy();
    k.ledger.sotSupply[0]!.supply = 1n;
    expect(broken(k)).toEqual({ sot_supply: 1 });
  });

  it("finds a key redeemed twice, and proceeds or payouts credited beyond what the chain logged", () => {
    // Paid again with its burn, as a contract that forgot its keys would: everything else adds up.
    const i = healthy();
    i.ledger.redemptions.push({ ...i.ledger.redemptions[0]!, ...at(6) });
    i.ledger.sotBurns.push({ from: ALICE, tokenId: 7n, amount: 7_000_000n, ...at(6) });
    i.ledger.sotSupply[0]!.supply -= 7_000_000n;
    i.ledger.balances[0]!.available += 7_000_000n;
    i.ledger.vaultUsdc += 7_000_000n;
    expect(broken(i)).toEqual({ redeemed_once: 1 });
    const j = healthy();
    j.ledger.balances[0]!.available += 1_500_000n;
    expect(broken(j)).toEqual({ vault_balances: 1, vault_usdc: 1 });
  });

  it("finds a redemption left pending, one recorded but never made, and one made otherwise than recorded", () => {
    const i = healthy();
    const [made] = i.redemptions;
    expect(broken(rebooked({ ...i, redemptions: [{ ...made!, status: "pending", txHash: null }] }))).toEqual({ redemptions_made: 1 });
    // The store's book takes off the 7 shares a second time (it goes short, as it would for a sell stored first).
    expect(broken(rebooked({ ...i, redemptions: [made!, { ...made!, key: TX(78) }] }))).toEqual({ redemptions_made: 1 });
    expect(broken(rebooked({ ...i, redemptions: [{ ...made!, payout: 0n }] }))).toEqual({ redemptions_made: 1 });
    expect(broken({ ...i, redemptions: [{ ...made!, txHash: TX(99) }] })).toEqual({ redemptions_made: 1 });
    // its shares as decimals, as every other amount the audit prints, not in millionths
    const [example] = checkInvariants({ ...i, redemptions: [{ ...made!, txHash: TX(99) }] }).find((r) => r.name === "redemptions_made")!.examples;
    expect(example).toBe(`${made!.key} was redeemed on chain for 7 shares paying 7 in ${made!.txHash}, recorded as 7 paying 7 in ${TX(99)}`);
  });

  it("finds shares of a resolved event that no redemption takes, and not those a pending redemption takes", () => {
    // Alice's 7 shares left after the sale, never redeemed: on chain and in the store, all else consistent.
    const i = healthy();
    i.ledger.redemptions = [];
    i.ledger.sotBurns = i.ledger.sotBurns.filter((b) => b.from !== ALICE);
    i.ledger.sotSupply = [{ tokenId: 7n, supply: 7_000_000n }];
    i.ledger.balances[0]!.available -= 7_000_000n;
    i.ledger.vaultUsdc -= 7_000_000n;
    const stranded = rebooked({ ...i, redemptions: [], resolvedHoldings: [{ ...i.resolvedHoldings[0]!, shares: 7_000_000n }] });
    expect(broken(stranded)).toEqual({ positions_redeemed: 1 });
    expect(checkInvariants(stranded).find((r) => r.name === "positions_redeemed")?.examples).toEqual(["acc e YES holds 7 winning shares of the resolved event that no redemption takes"]);
    // Planned for them and still pending: redemptions_made's to report.
    const pending = { ...stranded, redemptions: [{ ...healthy().redemptions[0]!, status: "pending" as const, txHash: null }] };
    expect(broken(pending)).toEqual({ redemptions_made: 1 });
  });

  it("finds USDC minted outside the faucet, and a balance that does not add up", () => {
    const i = healthy();
    i.ledger.usdcTotalSupply += 1n;
    i.ledger.balances[0]!.available += 1n;
    expect(broken(i)).toEqual({ usdc_supply: 1, vault_balances: 1, vault_usdc: 1 });
  });

  it("checks the USDC supply on the dev chain before its first drip, and says it cannot on a real chain's USDC", () => {
    const supply = (i: AuditInput) => checkInvariants(i).find((r) => r.name === "usdc_supply");
    // Test USDC minted before the faucet ever dripped: the supply is more than the grant.
    const undripped = healthy();
    undripped.ledger.drips = [];
    expect(supply(undripped)).toMatchObject({ violations: 1, examples: [expect.stringContaining("minted by the faucet and the grant")] });
    // Real USDC: no faucet, no grant, and a supply that is not the service's to account for.
    const real = healthy();
    real.ledger.drips = [];
    real.ledger.usdcGranted = 0n;
    real.ledger.usdcTotalSupply = 60_000_000_000_000_000n;
    expect(supply(real)).toMatchObject({ violations: null, skipped: expect.stringContaining("real USDC") });
  });

  it("finds an order charged more than its fills cost", () => {
    const i = healthy();
    const e = i.ledger.endings[0]!;
    if (e.kind === "settled") e.spent += 1n;
    i.ledger.balances[0]!.available -= 1n;
    expect(broken(i)).toEqual({ charge_equals_fills: 1 });
  });

  it("finds a sell credited other than its fills netted, burning other than they sold, or recorded otherwise in the store", () => {
    const i = healthy();
    const e = i.ledger.escrowEndings[0]!;
    if (e.kind === "settled") e.proceeds += 1n;
    i.ledger.balances[0]!.available += 1n;
    i.ledger.vaultUsdc += 1n;
    expect(broken(i)).toEqual({ proceeds_equal_fills: 1 });
    const j = healthy();
    expect(broken(rebooked({ ...j, orders: [order("o1"), sellOrder({ proceeds: 1_530_000n })] }))).toEqual({ proceeds_equal_fills: 1 });
    // A fill stored after the settlement: the chain burned and credited less than the fills say, and so does the store.
    const k = healthy();
    k.fills = [...k.fills, { ...sellFill, tradeId: "t-s1b", shares: 1_000_000n, fee: 0n }];
    k.venueTrades = new Map([["v", [trade, sellTrade, { ...sellTrade, tradeId: "t-s1b", shares: 1_000_000n, fee: 0n }]]]);
    k.venueInventory = inventory(6_000_000n);
    expect(broken(k)).toEqual({ proceeds_equal_fills: 3 });
  });

  it("counts the stored fills of an order whose escrow or lock its client expired, or a reorganisation removed, as the operator's", () => {
    // The sell s1's venue sold 3 shares, but its client took the escrow back whole past its deadline: nothing burned or credited.
    const i = healthy();
    i.ledger.escrowEndings = [{ kind: "released", orderId: chainId("s1"), client: ALICE, tokenId: 7n, shares: 4_000_000n, expired: true, ...at(4) }];
    i.ledger.sotBurns.shift();
    i.ledger.sotSupply[0]!.supply = 3_000_000n;
    i.ledger.balances[0]!.available -= 1_500_000n;
    i.ledger.vaultUsdc -= 1_500_000n;
    const expired = rebooked({ ...i, orders: [order("o1"), sellOrder({ status: "failed", filledShares: 0n, fees: 0n, proceeds: 0n, settleTx: null, releaseTx: TX(4) })] });
    expect(broken(expired)).toEqual({});
    // Recorded as sold all the same: the client was told of a sale the chain never paid.
    expect(broken(rebooked({ ...expired, orders: [order("o1"), sellOrder({ status: "failed", settleTx: null, releaseTx: TX(4) })] }))).toEqual({ proceeds_equal_fills: 1 });
    // Returned by the operator, not expired by its client: the server ended a sale its venue made without paying it.
    const operatorReleased = [{ kind: "released" as const, orderId: chainId("s1"), client: ALICE, tokenId: 7n, shares: 4_000_000n, expired: false, ...at(4) }];
    expect(broken({ ...expired, ledger: { ...expired.ledger, escrowEndings: operatorReleased } })).toEqual({ proceeds_equal_fills: 3 });
    // The buy o1's lock gone from the chain: its fills charged to no one.
    const gone = healthy();
    gone.ledger.locks = [];
    gone.ledger.endings = [];
    gone.ledger.sotMints = [];
    gone.ledger.sotBurns.pop();
    gone.ledger.redemptions = [];
    expect(broken({ ...gone, orders: [order("o1", { status: "failed", spent: 0n, filledShares: 0n, lockTx: null, settleTx: null }), sellOrder()] })).not.toHaveProperty("charge_equals_fills");
  });

  it("finds a settled sell whose tx_hash is not the transaction that burned and credited it", () => {
    expect(broken({ ...healthy(), orders: [order("o1"), sellOrder({ settleTx: TX(2) })] })).toEqual({ settled_tx_hash: 1 });
  });

  it("finds a venue trade no fill records, and a fill no venue traded", () => {
    const i = healthy();
    expect(broken({ ...i, venueTrades: new Map([["v", [trade, sellTrade, { ...trade, tradeId: "t9" }]]]) })).toEqual({ fills_match_venues: 1 });
    expect(broken({ ...i, venueTrades: new Map([["v", [sellTrade]]]) })).toEqual({ fills_match_venues: 1 });
    const skipped = checkInvariants({ ...i, venueTrades: undefined }).find((r) => r.name === "fills_match_venues")!;
    expect(skipped).toMatchObject({ violations: null, skipped: expect.stringContaining("crossfill sim") });
  });

  it("compares each side of a venue's self-trade, two of crossfill's child orders on one trade id, with its own stored fill", () => {
    // the sell s1 sold its 3 shares to the buy o1's order on the buy's own trade t1
    const selfTrade = (venueSides: VenueFill[]): AuditInput => ({
      ...healthy(),
      fills: [fill, { ...sellFill, tradeId: "t1", venueOrderId: "vo-s1" }],
      venueTrades: new Map([["v", venueSides]]),
    });
    const sellSide = { ...sellTrade, tradeId: "t1", venueOrderId: "vo-s1" };
    expect(broken(selfTrade([trade, sellSide]))).toEqual({});
    expect(broken(selfTrade([sellSide]))).toEqual({ fills_match_venues: 1 });
    expect(broken(selfTrade([{ ...trade, shares: 9_000_000n }, sellSide]))).toEqual({ fills_match_venues: 1 });
  });

  it("names five violations of an invariant, or as many as asked for (crossfill audit --examples)", () => {
    const extra = Array.from({ length: 7 }, (_, n) => ({ ...trade, tradeId: `t${n + 10}` }));
    const i = { ...healthy(), venueTrades: new Map([["v", [trade, sellTrade, ...extra]]]) };
    const venues = (input: AuditInput) => checkInvariants(input).find((r) => r.name === "fills_match_venues")!;
    expect(venues(i)).toMatchObject({ violations: 7, examples: expect.any(Array) });
    expect(venues(i).examples).toHaveLength(5);
    expect(venues({ ...i, examples: 100 }).examples).toEqual(extra.map((t) => expect.stringContaining(`trade ${t.tradeId} `)));
  });

  it("finds a settlement minted twice, and a mint outside any settlement: either leaves more shares than were bought", () => {
    const i = healthy();
    i.ledger.sotMints.push(i.ledger.sotMints[0]!);
    i.ledger.sotSupply[0]!.supply += 10_000_000n;
    expect(broken(i)).toEqual({ one_mint_per_fill: 1, sot_supply: 1 });
    // in shares, as every other amount the audit prints, not in millionths
    expect(checkInvariants(i).find((r) => r.name === "one_mint_per_fill")!.examples[0]).toMatch(/ minted \[10,10\] for shares \[10\]$/);
    const j = healthy();
    j.ledger.sotMints.push({ to: ALICE, tokenId: 7n, amount: 1n, ...at(5) });
    j.ledger.sotSupply[0]!.supply += 1n;
    expect(broken(j)).toEqual({ one_mint_per_fill: 1, sot_supply: 1 });
  });

  it("takes two orders of one client and token settled in one batch transaction as one mint each, and finds one missing", () => {
    const batched = (): AuditInput => {
      const i = healthy();
      const o2 = chainId("o2");
      i.orders = [...i.orders, order("o2", { spent: 2_000_000n, filledShares: 4_000_000n })];
      i.fills = [...i.fills, { ...fill, orderId: "o2", tradeId: "t2", price: 500_000n, shares: 4_000_000n }];
      i.ledger.locks.push({ orderId: o2, client: ALICE, amount: 10_000_000n, ...at(1) });
      i.ledger.endings.push({ kind: "settled", orderId: o2, client: ALICE, spent: 2_000_000n, released: 8_000_000n, tokenId: 7n, shares: 4_000_000n, ...at(2) });
      i.ledger.sotMints.push({ to: ALICE, tokenId: 7n, amount: 4_000_000n, ...at(2) });
      i.ledger.sotSupply[0]!.supply += 4_000_000n;
      i.ledger.balances[0]!.available -= 2_000_000n;
      i.positions = [{ ...i.positions[0]!, book: { shares: 4_000_000n, cost: 2_000_000n, realized: 3_500_000n } }];
      return { ...i, venueTrades: new Map([["v", [trade, sellTrade, { ...trade, tradeId: "t2", shares: 4_000_000n }]]]), venueInventory: inventory(11_000_000n) };
    };
    expect(broken(batched())).toEqual({});
    const missing = batched();
    missing.ledger.sotMints.pop();
    missing.ledger.sotSupply[0]!.supply -= 4_000_000n;
    expect(broken(missing)).toEqual({ one_mint_per_fill: 1, sot_supply: 1 });
  });

  it("finds a venue's inventory the store keeps other than the fills sum to, and one of a market with no order", () => {
    expect(broken({ ...healthy(), venueInventory: inventory(8_000_000n) })).toEqual({ venue_inventory: 1 });
    const i = healthy();
    expect(broken({ ...i, venueInventory: new Map([...i.venueInventory, [marketKey({ eventId: "other", outcome: "NO" }), new Map([["v", 1n]])]]) })).toEqual({ venue_inventory: 1 });
    // An open sell counts its child orders, not its fills.
    const leg = { venue: "v", clientOrderId: "s2-v", venueMarketId: "m", limitPrice: 400_000n, shares: 2_000_000n, round: 1, expiresAt: 0 };
    const open = { ...i, orders: [...i.orders, sellOrder({ id: "s2", status: "routing", legs: [leg], settleTx: null })] };
    expect(broken(open)).toMatchObject({ venue_inventory: 1 });
    expect(broken({ ...open, venueInventory: inventory(5_000_000n) })).not.toHaveProperty("venue_inventory");
  });

  it("finds a position book other than its orders and redemptions come to, one of no order, and one missing", () => {
    const i = healthy();
    const p = i.positions[0]!;
    expect(broken({ ...i, positions: [{ ...p, book: { ...p.book, shares: 1n } }] })).toEqual({ position_books: 1 });
    expect(broken({ ...i, positions: [{ ...p, book: { ...p.book, realized: 3_400_000n } }] })).toEqual({ position_books: 1 });
    expect(broken({ ...i, positions: [{ ...p, exits: 1n }] })).toEqual({ position_books: 1 });
    expect(broken({ ...i, positions: [p, { ...p, outcome: "NO", book: { shares: 1n, cost: 0n, realized: 0n }, exits: 0n }] })).toEqual({ position_books: 1 });
    expect(broken({ ...i, positions: [] })).toEqual({ position_books: 2 });
    // A redemption still pending has not moved the book.
    const pending = { ...i, redemptions: [{ ...i.redemptions[0]!, status: "pending" as const, txHash: null }] };
    expect(broken({ ...pending, positions: [{ ...p, book: { shares: 7_000_000n, cost: 3_500_000n, realized: 0n }, exits: 1n }] })).not.toHaveProperty("position_books");
    // A settled order whose settlement a reorganisation removed, its lock released whole, moved no share into the book; one settled again still counts.
    const unsettled = order("o2", { settleTx: null, releaseTx: TX(50), errorCode: "chain_unavailable" });
    expect(broken({ ...i, orders: [...i.orders, unsettled] })).not.toHaveProperty("position_books");
    expect(broken({ ...i, orders: [...i.orders, { ...unsettled, releaseTx: null }] })).toMatchObject({ position_books: 2 });
    // Nor one whose lock a second reorganisation removed, recorded holding none.
    expect(broken({ ...i, orders: [...i.orders, { ...unsettled, releaseTx: null, locked: 0n, lockTx: null }] })).not.toHaveProperty("position_books");
  });

  it("finds two orders under one client_order_id", () => {
    const i = healthy();
    i.orders = [order("o1", { clientOrderId: "c" }), ...i.orders.slice(1), order("o2", { clientOrderId: "c", status: "rejected", settleTx: null, spent: 0n, filledShares: 0n })];
    expect(broken(i)).toEqual({ one_order_per_client_id: 1 });
  });

  it("finds a filled order without its tx_hash, or with another transaction's", () => {
    const i = healthy();
    const sell = i.orders[1]!;
    expect(broken({ ...i, orders: [order("o1", { settleTx: null }), sell] })).toEqual({ settled_tx_hash: 1 });
    expect(broken({ ...i, orders: [order("o1", { settleTx: TX(42) }), sell] })).toEqual({ settled_tx_hash: 1 });
  });

  it("finds a withdrawal left open, one paid twice or of another amount, one failed that was paid, and a payout of no withdrawal", () => {
    // Sent, paid on chain, not yet recorded: one withdrawal in progress is one finding, not one per invariant.
    expect(broken({ ...healthy(), withdrawals: [{ ...withdrawal, status: "sent", txHash: null }] })).toEqual({ withdrawals_finished: 1 });
    // Paid twice is found whatever the withdrawal's status.
    const paidTwiceOpen = healthy();
    paidTwiceOpen.withdrawals = [{ ...withdrawal, status: "sent" }];
    paidTwiceOpen.ledger.withdrawnTo.push({ ...paidTwiceOpen.ledger.withdrawnTo[0]!, ...at(6) });
    paidTwiceOpen.ledger.balances[0]!.available -= 10_000_000n;
    expect(broken(paidTwiceOpen)).toEqual({ withdrawals_finished: 1, withdrawals_paid_once: 1 });
    const twice = healthy();
    twice.ledger.withdrawnTo.push({ ...twice.ledger.withdrawnTo[0]!, ...at(6) });
    twice.ledger.balances[0]!.available -= 10_000_000n;
    expect(broken(twice)).toEqual({ withdrawals_paid_once: 1 });
    expect(broken({ ...healthy(), withdrawals: [{ ...withdrawal, amount: 9_000_000n }] })).toEqual({ withdrawals_paid_once: 1 });
    expect(broken({ ...healthy(), withdrawals: [{ ...withdrawal, txHash: TX(7) }] })).toEqual({ withdrawals_paid_once: 1 });
    expect(broken({ ...healthy(), withdrawals: [{ ...withdrawal, status: "failed", txHash: null }] })).toEqual({ withdrawals_paid_once: 1 });
    expect(broken({ ...healthy(), withdrawals: [] })).toEqual({ withdrawals_paid_once: 1 });
  });

  it("finds two withdrawals under one client_withdrawal_id", () => {
    const i = healthy();
    i.withdrawals = [withdrawal, { ...withdrawal, id: "wd2", status: "failed", txHash: null }];
    expect(broken(i)).toEqual({ one_withdrawal_per_client_id: 1 });
  });

  it("finds a deposit left uncredited, one credited twice or by another transaction, a credit of no deposit, and a transfer never stored", () => {
    const open = healthy();
    open.deposits = [{ ...deposit, status: "detected", creditTx: null }];
    expect(broken(open)).toEqual({ deposits_finished: 1 });
    const twice = healthy();
    twice.ledger.depositCredits.push({ ...twice.ledger.depositCredits[0]!, ...at(6) });
    twice.ledger.balances[0]!.available += 20_000_000n;
    twice.ledger.vaultUsdc += 20_000_000n;
    expect(broken(twice)).toEqual({ deposits_credited_once: 1 });
    expect(broken({ ...healthy(), deposits: [{ ...deposit, creditTx: TX(8) }] })).toEqual({ deposits_credited_once: 1 });
    expect(broken({ ...healthy(), deposits: [] })).toMatchObject({ deposits_credited_once: 1, deposits_found: 1 });
    const unseen = healthy();
    unseen.depositTransfers = [...unseen.depositTransfers!, { from: BOB, to: ALICE, amount: 1n, logIndex: 0, ...at(9) }];
    expect(broken(unseen)).toEqual({ deposits_found: 1 });
    // Dropped while its transfer is on chain: the USDC sits at the deposit address, credited to no one. One of 0 USDC has nothing to credit.
    const stranded = healthy();
    stranded.deposits = [{ ...deposit, status: "dropped", creditTx: null, creditBlock: null, creditBlockHash: null }];
    stranded.ledger.depositCredits = [];
    stranded.ledger.balances[0]!.available -= 20_000_000n;
    stranded.ledger.vaultUsdc -= 20_000_000n;
    expect(broken(stranded)).toEqual({ deposits_found: 1 });
    const zero = healthy();
    zero.deposits = [...zero.deposits, { ...deposit, id: depositId(TX(9), 0), txHash: TX(9), logIndex: 0, amount: 0n, status: "dropped", creditTx: null, creditBlock: null, creditBlockHash: null }];
    zero.depositTransfers = [...zero.depositTransfers!, { from: BOB, to: ALICE, amount: 0n, logIndex: 0, ...at(9) }];
    expect(broken(zero)).toEqual({});
    const skipped = checkInvariants({ ...healthy(), depositTransfers: undefined }).find((r) => r.name === "deposits_found")!;
    expect(skipped).toMatchObject({ violations: null, skipped: expect.stringContaining("not scanned") });
  });

  it("finds balances the Vault's USDC does not back", () => {
    const i = healthy();
    i.ledger.vaultUsdc -= 1n;
    expect(broken(i)).toEqual({ vault_usdc: 1 });
  });
});
