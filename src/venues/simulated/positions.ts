import type { ShareMicro } from "../../domain/money.ts";
import type { Outcome } from "../../domain/types.ts";
import type { TradeSide } from "../venue.ts";

/** The account a simulator's orders trade for when it serves only one (every simulator but Polymarket's). */
export const OWN_ACCOUNT = "own";

/**
 * What each account of a simulated venue holds, per market and outcome, from its fills (buys add,
 * sells subtract), and how much of it sell orders resting on the book have promised: a venue takes a
 * sell only of shares held and not already offered.
 */
export class SimPositions {
  private readonly holdings = new Map<string, ShareMicro>();
  private readonly offered = new Map<string, ShareMicro>();

  /** Shares of the outcome the account holds. */
  held(account: string, venueMarketId: string, outcome: Outcome): ShareMicro {
    return this.holdings.get(key(account, venueMarketId, outcome)) ?? 0n;
  }

  /** Shares the account may still sell: held, less what its resting sells offer. */
  sellable(account: string, venueMarketId: string, outcome: Outcome): ShareMicro {
    const k = key(account, venueMarketId, outcome);
    return (this.holdings.get(k) ?? 0n) - (this.offered.get(k) ?? 0n);
  }

  /** Books a fill: a buy adds its shares to the account's holding, a sell takes them away. */
  fill(account: string, venueMarketId: string, outcome: Outcome, side: TradeSide, shares: ShareMicro): void {
    const k = key(account, venueMarketId, outcome);
    this.holdings.set(k, (this.holdings.get(k) ?? 0n) + (side === "buy" ? shares : -shares));
  }

  /** A sell left resting offers `shares` (negative when its rest is cancelled). */
  offer(account: string, venueMarketId: string, outcome: Outcome, shares: ShareMicro): void {
    const k = key(account, venueMarketId, outcome);
    this.offered.set(k, (this.offered.get(k) ?? 0n) + shares);
  }
}

function key(account: string, venueMarketId: string, outcome: Outcome): string {
  return `${account}\n${venueMarketId}\n${outcome}`;
}
