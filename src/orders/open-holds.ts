import type { Address, Hex32, HoldEvents, Vault } from "../vault/vault.ts";

/** A buy's USDC lock, or a sell's share escrow, that the chain holds open; `lockTx` the transaction that made it. */
export type OpenHold = ({ kind: "lock"; amount: bigint } | { kind: "escrow"; tokenId: bigint; shares: bigint }) & { orderId: Hex32; client: Address; lockTx: Hex32 };

/** A hold its deadline ended (`expire`, a sell's `expireEscrow`, not the operator's release) in the blocks of one read; `releaseTx` the transaction that did. */
export type ExpiredHold = OpenHold & { releaseTx: Hex32 };

/**
 * Blocks whose hold events a read takes in at once, folding each span into what is open before it reads
 * the next: the first read after a start goes through the whole history, and holds one span's events at
 * a time, not the history's.
 */
export const HOLDS_SPAN = 10_000n;

/**
 * The locks and escrows open on chain, followed from one read to the next: the first read takes every
 * block from the Vault's deployment (HOLDS_SPAN blocks at a time), each later one only the blocks since
 * the last, so a read costs what the chain did since, not its whole history. When the chain has another
 * block at the height last read (a reorganisation passed it), the read starts again from the deployment; when
 * the node answering has none there (behind), the read answers what was followed, as it was.
 */
export class OpenHolds {
  /** What the blocks up to `block` left open, by kind and order id (the Vault locks, and escrows, an order id at most once). */
  private followed: { open: Map<string, OpenHold>; block: bigint; hash: Hex32 } | undefined;

  constructor(private readonly vault: Pick<Vault, "info" | "blockNumber" | "blockHash" | "holds">) {}

  /**
   * The holds open at the latest block, and those expired in the blocks read (from the deployment again after a start or a
   * reorganisation). A read that fails changes nothing: its spans are folded into a copy of what was open.
   */
  async read(): Promise<{ open: OpenHold[]; expired: ExpiredHold[] }> {
    const head = await this.vault.blockNumber();
    const hash = await this.vault.blockHash(head);
    const followed = this.followed;
    const followedHash = followed && (await this.vault.blockHash(followed.block));
    // No block at the height last read is a node behind the one that answered the last read (one of a pool behind
    // CHAIN_RPC_URL), not a reorganisation: what was followed stays, for a read from a node past it.
    if (followed && followedHash === undefined) return { open: [...followed.open.values()], expired: [] };
    const kept = followed && followedHash === followed.hash ? followed : undefined;
    const open = new Map(kept?.open);
    const expired: ExpiredHold[] = [];
    for (let from = kept ? kept.block + 1n : this.vault.info().deployedAt; from <= head; from += HOLDS_SPAN) {
      const to = from + HOLDS_SPAN - 1n < head ? from + HOLDS_SPAN - 1n : head;
      // The last span's from a node whose block at the head is the one `hash` names: what is followed is that chain's.
      apply(open, expired, await this.vault.holds(from, to, to === head ? hash : undefined));
    }
    this.followed = hash === undefined ? undefined : { open, block: head, hash };
    return { open: [...open.values()], expired };
  }
}

/**
 * Adds what the blocks opened, then takes off what they ended, adding to `expired` those their deadline ended (an
 * ending's block is never before its opening's, so spans fold in order).
 */
function apply(open: Map<string, OpenHold>, expired: ExpiredHold[], e: HoldEvents): void {
  for (const l of e.locks) open.set(`lock ${l.orderId.toLowerCase()}`, { kind: "lock", orderId: l.orderId, client: l.client, amount: l.amount, lockTx: l.txHash });
  for (const x of e.escrows) open.set(`escrow ${x.orderId.toLowerCase()}`, { kind: "escrow", orderId: x.orderId, client: x.client, tokenId: x.tokenId, shares: x.shares, lockTx: x.txHash });
  const end = (key: string, ending: HoldEvents["endings"][number] | HoldEvents["escrowEndings"][number]): void => {
    const hold = open.get(key);
    open.delete(key);
    if (hold && ending.kind === "released" && ending.expired) expired.push({ ...hold, releaseTx: ending.txHash });
  };
  for (const ending of e.endings) end(`lock ${ending.orderId.toLowerCase()}`, ending);
  for (const ending of e.escrowEndings) end(`escrow ${ending.orderId.toLowerCase()}`, ending);
}
