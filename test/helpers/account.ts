import type { Account } from "../../src/sdk/types.ts";

/** An account's balances and positions, without what moves with the books (each position's mark and its P&L at it). */
export function standing(a: Account) {
  return { ...a, positions: a.positions.map(({ mark_price: _m, unrealized_pnl_usdc: _u, ...p }) => p) };
}
