// How far the operator's nonces were handed out, kept where every instance sending as that operator on
// that chain sees it: the store. Each batch reserves its nonces here, committed before it is submitted.
import type { NonceKey, Store } from "../../store/store.ts";

/** The nonces one operator hands out on one chain, whoever sends. */
export interface NonceBook {
  /**
   * Reserves `count` nonces from max(`floor`, one past the highest reserved before): answers the first.
   * Durable when it answers, so a transaction sent under them is never unaccounted for, even if the
   * process dies right after sending it; and no other caller ever gets them.
   */
  reserve(floor: number, count: number): Promise<number>;
  /** One past the highest nonce reserved (0 before any), and when that reservation was made (ms since the epoch). */
  handedOut(): Promise<{ next: number; at: number }>;
}

/** What the chain needs of the store: the deployment of the contracts, the operator's nonces and the highest block of a hold's transaction. */
export type ChainStore = Pick<Store, "chainDeployment" | "claimChainDeployment" | "finishChainDeployment" | "reserveNonces" | "noncesReserved" | "chainCursor" | "raiseChainCursor">;

export function storeNonceBook(store: ChainStore, key: NonceKey): NonceBook {
  return {
    reserve: (floor, count) => store.reserveNonces(key, floor, count, new Date().toISOString()),
    handedOut: async () => {
      const r = await store.noncesReserved(key);
      return r ? { next: r.next, at: Date.parse(r.at) } : { next: 0, at: 0 };
    },
  };
}
