import { describe, expect, it } from "vitest";
import { ONE } from "../domain/money.ts";
import type { UnifiedEvent } from "../markets/catalog.ts";
import type { RedemptionRecord } from "../store/store.ts";
import { positionBooks, positionMark, positionViews, redemptionMoves, type DatedMove } from "./positions.ts";

const u = (n: number) => BigInt(Math.round(n * 1e6));
const move = (at: string, ref: string, m: DatedMove["move"], outcome: "YES" | "NO" = "YES"): DatedMove => ({ eventId: "e", outcome, at, ref, move: m });
const held = (shares: number, outcome: "YES" | "NO" = "YES") => ({ eventId: "e", outcome, sot: `sot-${outcome}`, shares: u(shares) });

describe("an account's positions", () => {
  it("takes each position's moves in the order they happened, whatever order they come in", () => {
    const books = positionBooks([
      move("2026-11-24T10:00:02.000Z", "o3", { kind: "sell", shares: u(50), proceeds: u(30) }),
      move("2026-11-24T10:00:00.000Z", "o1", { kind: "buy", shares: u(50), cost: u(20) }),
      move("2026-11-24T10:00:01.000Z", "o2", { kind: "buy", shares: u(50), cost: u(30) }),
      move("2026-11-24T10:00:00.000Z", "n1", { kind: "buy", shares: u(10), cost: u(4) }, "NO"),
    ]);
    // Sold at the average of both buys (0.50), not at the first one's 0.40.
    expect(books.get("e\u0000YES")).toEqual({ book: { shares: u(50), cost: u(25), realized: u(5) }, closed: true });
    expect(books.get("e\u0000NO")).toEqual({ book: { shares: u(10), cost: u(4), realized: 0n }, closed: false });
  });

  it("shows avg cost, mark and P&L of what is held, and keeps a position sold whole with its realized P&L", () => {
    const books = positionBooks([
      move("t1", "o1", { kind: "buy", shares: u(10), cost: u(4.5) }),
      move("t1", "n1", { kind: "buy", shares: u(8), cost: u(4) }, "NO"),
      move("t2", "n2", { kind: "sell", shares: u(8), proceeds: u(3) }, "NO"),
    ]);
    const views = positionViews([held(10), held(0, "NO")], books, (_, outcome) => (outcome === "YES" ? u(0.52) : u(0.47)));
    expect(views).toEqual([
      { event_id: "e", outcome: "YES", sot: "sot-YES", shares: 10, avg_cost: 0.45, mark_price: 0.52, unrealized_pnl_usdc: 0.7, realized_pnl_usdc: 0 },
      { event_id: "e", outcome: "NO", sot: "sot-NO", shares: 0, avg_cost: null, mark_price: 0.47, unrealized_pnl_usdc: 0, realized_pnl_usdc: -1 },
    ]);
  });

  it("has no mark and no unrealized P&L without a bid, and leaves out a token neither held nor sold", () => {
    const books = positionBooks([move("t1", "o1", { kind: "buy", shares: u(10), cost: u(4.5) })]);
    expect(positionViews([held(10), held(0, "NO")], books, () => null)).toEqual([
      { event_id: "e", outcome: "YES", sot: "sot-YES", shares: 10, avg_cost: 0.45, mark_price: null, unrealized_pnl_usdc: null, realized_pnl_usdc: 0 },
    ]);
  });

  it("counts a redemption once the chain made it: its payout less the cost of the shares it burned", () => {
    const redemption = (status: RedemptionRecord["status"]): RedemptionRecord => ({
      key: "0x01",
      eventId: "e",
      accountId: "acc",
      address: "0xaa",
      outcome: "YES",
      tokenId: "7",
      shares: u(10),
      payout: u(10),
      status,
      txHash: status === "redeemed" ? "0xabc" : null,
      createdAt: "t2",
      updatedAt: "t3",
    });
    const bought = move("t1", "o1", { kind: "buy", shares: u(10), cost: u(4.5) });
    expect(positionBooks([bought, ...redemptionMoves([redemption("pending")])]).get("e\u0000YES")).toEqual({ book: { shares: u(10), cost: u(4.5), realized: 0n }, closed: false });
    expect(positionBooks([bought, ...redemptionMoves([redemption("redeemed")])]).get("e\u0000YES")).toEqual({ book: { shares: 0n, cost: 0n, realized: u(5.5) }, closed: true });
  });

  it("marks a resolved event's shares at what they redeem for, and an open one's at its best bid", () => {
    const event: UnifiedEvent = { eventId: "e", title: "t", description: "d", outcomes: ["YES", "NO"], status: "resolved", closeTime: "t", resolution: "NO", listings: [] };
    const bid = () => u(0.3);
    expect(positionMark(event, "NO", bid)).toBe(ONE);
    expect(positionMark(event, "YES", bid)).toBe(0n);
    expect(positionMark({ ...event, status: "open", resolution: null }, "YES", bid)).toBe(u(0.3));
  });
});
