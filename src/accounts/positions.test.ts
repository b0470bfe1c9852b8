import { describe, expect, it } from "vitest";
import { ONE } from "../domain/money.ts";
import type { MarketStatus } from "../domain/types.ts";
import type { UnifiedEvent } from "../markets/catalog.ts";
import { positionBook, type PositionBook } from "../domain/pnl.ts";
import { positionMark, positionViews } from "./positions.ts";

const u = (n: number) => BigInt(Math.round(n * 1e6));
const held = (shares: number, book: PositionBook, outcome: "YES" | "NO" = "YES") => ({ eventId: "e", outcome, sot: `sot-${outcome}`, shares: u(shares), book });

describe("an account's positions", () => {
  it("shows avg cost, mark and P&L of what is held, and keeps a position sold whole with its realized P&L", () => {
    const views = positionViews(
      [
        held(10, positionBook([{ kind: "buy", shares: u(10), cost: u(4.5) }])),
        held(0, positionBook([{ kind: "buy", shares: u(8), cost: u(4) }, { kind: "sell", shares: u(8), proceeds: u(3) }]), "NO"),
      ],
      (_, outcome) => (outcome === "YES" ? u(0.52) : u(0.47)),
      () => "open",
    );
    expect(views).toEqual([
      { event_id: "e", outcome: "YES", sot: "sot-YES", shares: 10, avg_cost: 0.45, mark_price: 0.52, unrealized_pnl_usdc: 0.7, realized_pnl_usdc: 0, event_status: "open" },
      { event_id: "e", outcome: "NO", sot: "sot-NO", shares: 0, avg_cost: null, mark_price: 0.47, unrealized_pnl_usdc: 0, realized_pnl_usdc: -1, event_status: "open" },
    ]);
  });

  it("has no mark and no unrealized P&L without a bid", () => {
    const bought = positionBook([{ kind: "buy", shares: u(10), cost: u(4.5) }]);
    expect(positionViews([held(10, bought)], () => null, () => "open")).toEqual([
      { event_id: "e", outcome: "YES", sot: "sot-YES", shares: 10, avg_cost: 0.45, mark_price: null, unrealized_pnl_usdc: null, realized_pnl_usdc: 0, event_status: "open" },
    ]);
  });

  it("keeps listing a position whose every share a sell in flight holds in escrow (none left on chain), at its cost until the sell settles", () => {
    const bought = positionBook([{ kind: "buy", shares: u(10), cost: u(4.5) }]);
    expect(positionViews([held(0, bought)], () => u(0.5), () => "open")).toEqual([
      { event_id: "e", outcome: "YES", sot: "sot-YES", shares: 0, avg_cost: 0.45, mark_price: 0.5, unrealized_pnl_usdc: 0.5, realized_pnl_usdc: 0, event_status: "open" },
    ]);
  });

  it("names each position's event status, which says whether it can be sold (open) or is redeemed (resolved), and none for an event no longer listed", () => {
    const bought = positionBook([{ kind: "buy", shares: u(10), cost: u(4.5) }]);
    const events: Record<string, MarketStatus> = { a: "open", b: "closed", c: "resolved", d: "disputed" };
    const views = positionViews(
      ["a", "b", "c", "d", "gone"].map((eventId) => ({ ...held(10, bought), eventId })),
      () => u(0.5),
      (eventId) => events[eventId] ?? null,
    );
    expect(views.map((v) => [v.event_id, v.event_status])).toEqual([
      ["a", "open"],
      ["b", "closed"],
      ["c", "resolved"],
      ["d", "disputed"],
      ["gone", null],
    ]);
  });

  it("marks a resolved event's shares at what they redeem for, and an open one's at its best bid", () => {
    const event: UnifiedEvent = { eventId: "e", title: "t", description: "d", outcomes: ["YES", "NO"], status: "resolved", closeTime: "t", resolution: "NO", listings: [] };
    const bid = () => u(0.3);
    expect(positionMark(event, "NO", bid)).toBe(ONE);
    expect(positionMark(event, "YES", bid)).toBe(0n);
    expect(positionMark({ ...event, status: "open", resolution: null }, "YES", bid)).toBe(u(0.3));
  });
});
