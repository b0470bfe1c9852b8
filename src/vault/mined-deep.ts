import type { Vault } from "./vault.ts";

/**
 * Whether every operator transaction mined when a key was first asked about, nothing pending then
 * (`pendingTransactions()` 0), is now `confirmations` deep: one of them that failed, or whose nonce another took, can
 * no longer be mined again where it succeeds, short of a reorganisation deeper than that. What a transaction the chain
 * does not show waits for before it is taken for one that never lands.
 */
export class MinedDeep {
  /** The operator's mined count when each key was first asked about. */
  private readonly mined = new Map<string, number>();

  constructor(
    private readonly vault: Pick<Vault, "blockNumber" | "minedTransactions">,
    private readonly confirmations: number,
  ) {}

  async deep(key: string): Promise<boolean> {
    if (this.confirmations === 0) return true;
    const mined = this.mined.get(key) ?? (await this.vault.minedTransactions());
    this.mined.set(key, mined);
    const deep = (await this.vault.blockNumber()) - BigInt(this.confirmations);
    return deep >= 0n && (await this.vault.minedTransactions(deep)) >= mined;
  }

  /** Forgets the key: its transaction was found, or its answer recorded. */
  forget(key: string): void {
    this.mined.delete(key);
  }
}
