import { OPEN_DEPOSIT_STATUSES, type DepositStatus } from "../domain/funds-status.ts";
import { formatMicro } from "../domain/money.ts";
import type { Clock } from "../domain/types.ts";
import type { Log } from "../orders/service.ts";
import type { AccountRecord, DepositPatch, DepositRecord, Lease, Store } from "../store/store.ts";
import { VaultTxError, type Address, type ChainInfo, type DigestSigner, type Hex32, type UsdcTransfer, type Vault } from "../vault/vault.ts";
import { depositId, depositKey, placesInTransactions } from "./chain-ids.ts";
import type { FundsCheckpoint } from "./checkpoints.ts";
import { SerialPasses } from "../serial-passes.ts";

export interface DepositDeps {
  store: Store;
  vault: Vault;
  clock: Clock;
  log: Log;
  /** Blocks a transfer must be under before it is credited (0: as soon as it is mined). */
  confirmations: number;
  /** Signs with the key the service keeps for the account; undefined for an account whose key it does not keep. */
  signerOf(account: AccountRecord): DigestSigner | undefined;
  instanceId: string;
  leaseMs?: number;
  checkpoint?: (step: FundsCheckpoint, depositId: string) => void;
}

/** The store's name of how far the deposit watcher scanned this Vault's chain. */
export function depositCursorName(chain: Pick<ChainInfo, "chainId" | "contracts">): string {
  return `deposits:${chain.chainId}:${chain.contracts.vault.toLowerCase()}`;
}

/**
 * Deposits: USDC sent to an account's deposit address (its own on-chain address, whose key the service keeps)
 * is found in the USDC Transfer logs once it is under DEPOSIT_CONFIRMATIONS blocks, stored once per transfer
 * (its transaction hash and place among that transaction's deposits: `depositId`), then credited to the account's
 * vault balance by the Vault, once per key, pulled from the address under a permit its key signs. Each pass scans from where the last one stopped
 * and credits every deposit still open, finishing what a crash or a lost answer interrupted: the chain says
 * by the deposit's key whether it was credited, never a timer.
 */
export class DepositWatcher {
  private readonly passes = new SerialPasses(() => this.run());
  /** The deposits a pass holds the lease of while it credits them: renewed however long a credit takes. */
  private readonly crediting = new Set<string>();

  constructor(private readonly d: DepositDeps) {}

  /** Scans the chain, then credits every open deposit, in a pass that begins after this call (SerialPasses). Resolves to how many it credited. */
  pass(): Promise<number> {
    return this.passes.pass();
  }

  idle(): Promise<void> {
    return this.passes.idle();
  }

  /** Extends the leases of the deposits this process is crediting: called more often than a lease lasts. */
  renewLeases(): Promise<void> {
    return this.d.store.renewDepositLeases([...this.crediting], this.lease(this.d.clock.now()));
  }

  private async run(): Promise<number> {
    const scanned = await this.scan();
    let credited = 0;
    // One at a time: the permits of one address take its nonces in turn.
    for (const deposit of await this.d.store.depositsInStatus(OPEN_DEPOSIT_STATUSES)) {
      const now = this.d.clock.now();
      if (!(await this.d.store.claimDeposit(deposit.id, this.lease(now), new Date(now).toISOString()))) continue;
      this.crediting.add(deposit.id);
      const log = this.d.log.child({ deposit_id: deposit.id });
      try {
        if ((await this.credit(deposit, scanned, log)) === "credited") credited++;
      } catch (e) {
        log.warn({ err: e }, "crediting a deposit failed; will retry");
      } finally {
        this.crediting.delete(deposit.id);
        await this.d.store.releaseDeposit(deposit.id, this.d.instanceId);
      }
    }
    return credited;
  }

  /**
   * Stores every transfer into a deposit address from where the last scan stopped to the latest block under
   * enough confirmations, then moves the cursor there. A cursor whose block the chain has with another hash was
   * passed by a reorganisation: the scan starts again from the Vault's deployment (storing is idempotent, so what
   * was seen before is not stored twice); one the node answering has no block for stays. Resolves to the block the
   * cursor names now (undefined: none the chain still has), the one height this pass counts confirmations by.
   */
  private async scan(): Promise<bigint | undefined> {
    const { store, vault, log } = this.d;
    const chain = vault.info();
    const name = depositCursorName(chain);
    const target = (await vault.blockNumber()) - BigInt(this.d.confirmations);
    if (target < chain.deployedAt) return undefined;
    // The target's hash before the cursor is checked and the transfers read: a reorganisation after either then leaves
    // a cursor the next pass finds replaced, and scans again, instead of one naming the new chain past transfers read
    // from the old, or past blocks under the old cursor that the new chain replaced after they were found unchanged.
    const hash = await vault.blockHash(target);
    let from = chain.deployedAt;
    const cursor = await store.chainCursor(name);
    const cursorHash = cursor && (cursor.block === target ? hash : await vault.blockHash(cursor.block));
    // No block at the cursor's height is a node behind the one the last scan read (one of a pool behind CHAIN_RPC_URL, its
    // head under the cursor, or under the head another node gave), not a reorganisation: taken for one, it put back to
    // `crediting` every credit above its head and scanned the Vault's history again. The cursor stays, and the next pass
    // asks again; a chain a reorganisation made shorter is found out once it has a block at the cursor's height again.
    if (cursor && cursorHash === undefined) return cursor.block;
    const reorganised = cursor !== undefined && cursorHash !== cursor.hash;
    if (cursor && !reorganised) from = cursor.block + 1n;
    if (reorganised) {
      log.warn({ block: cursor.block.toString() }, "the chain has another block where the deposit scan stopped; scanning again from the Vault's deployment");
      await this.uncreditRemoved();
    }
    const kept = cursor && !reorganised ? cursor.block : undefined;
    if (from > target) return kept;
    // Every USDC transfer of these blocks, then the accounts among their recipients: what a pass reads grows with
    // the transfers, not with the accounts (all of them named in the request, a pass read every account and sent
    // a filter per 200 addresses: 0.25 s of blocked event loop at 10,000 accounts, refused by the node at 50,000).
    const now = new Date(this.d.clock.now()).toISOString();
    const found = (await this.intoDepositAddresses(await vault.usdcTransfers(from, target, hash))).map(({ transfer: t, account, place }): DepositRecord => ({
      id: depositId(t.txHash, place),
      accountId: account.id,
      amount: t.amount,
      fromAddress: t.from.toLowerCase(),
      txHash: t.txHash.toLowerCase(),
      place,
      logIndex: t.logIndex,
      block: t.blockNumber,
      status: "detected",
      creditTx: null,
      creditBlock: null,
      creditBlockHash: null,
      errorMessage: null,
      createdAt: now,
      updatedAt: now,
    }));
    await store.insertDeposits(found);
    for (const f of found) {
      log.info({ deposit_id: f.id, account_id: f.accountId, amount: formatMicro(f.amount) }, "deposit found");
      this.d.checkpoint?.("deposit.stored", f.id);
    }
    if (!hash) return kept;
    await store.setChainCursor(name, { block: target, hash });
    return target;
  }

  /**
   * The transfers into deposit addresses (accounts whose key the service keeps) among `transfers`, each with its
   * account and its place among its transaction's.
   */
  private async intoDepositAddresses(transfers: readonly UsdcTransfer[]): Promise<{ transfer: UsdcTransfer; account: AccountRecord; place: number }[]> {
    const recipients = transfers.length === 0 ? [] : await this.d.store.accountsByAddress(transfers.map((t) => t.to));
    const accounts = new Map(recipients.filter((a) => a.walletKeyEnc !== null).map((a) => [a.address.toLowerCase(), a]));
    const deposits = transfers.flatMap((transfer) => {
      const account = accounts.get(transfer.to.toLowerCase());
      return account === undefined ? [] : [{ transfer, account }];
    });
    const places = placesInTransactions(deposits.map((d) => d.transfer));
    return deposits.map((d, i) => ({ ...d, place: places[i]! }));
  }

  /**
   * Puts back to `crediting` every credited deposit whose credit the chain no longer has (a reorganisation removed
   * it): the transfer, if still there, is credited again under the same key, which the Vault credits once; gone, it
   * is dropped. Before the cursor moves past the reorganisation, so a crash here does it again at the next pass.
   * A credit whose block the chain still has (`creditsKept`) is there; any other's receipt is read, one request a
   * deposit, where the Vault's state by key searches its logs back from the head for each: found, in another block,
   * that block is stored. A node of a pool that lacks the receipt only puts it back: crediting it reads the Vault's
   * state by key first, and records the credit made.
   */
  private async uncreditRemoved(): Promise<void> {
    const { store, vault, log } = this.d;
    const credited = await store.depositsInStatus(["credited"]);
    const kept = await this.creditsKept(credited);
    for (const d of credited) {
      if (kept(d)) continue;
      const at = d.creditTx === null ? undefined : await vault.blockOf(d.creditTx as Hex32);
      if (at) {
        await store.updateDeposit(d.id, ["credited"], { creditBlock: at.number, creditBlockHash: at.hash.toLowerCase() });
        continue;
      }
      // `crediting`, not `detected`: the removed credit may land again (a node puts a reorganised transaction back in its pool),
      // so it is waited for while any operator transaction is pending, as a credit whose answer was lost is.
      if (await store.updateDeposit(d.id, ["credited"], { status: "crediting", creditTx: null, creditBlock: null, creditBlockHash: null })) {
        log.warn({ deposit_id: d.id, credit_tx: d.creditTx }, "a reorganisation removed a deposit's credit; crediting it again");
      }
    }
  }

  /**
   * Whether a credited deposit's credit is in a block the chain still has. A block's hash commits to every block under
   * it, so the stored credit blocks are read newest first, down to the first the chain still has: the credits under it
   * are all there, read no further, and a reorganisation costs a request per credit block above where it forked.
   */
  private async creditsKept(credited: readonly DepositRecord[]): Promise<(d: DepositRecord) => boolean> {
    const heights = [...new Set(credited.flatMap((d) => (d.creditBlock === null ? [] : [d.creditBlock])))].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
    const hashes = new Map<bigint, string | undefined>();
    let under = -1n;
    for (const height of heights) {
      const hash = (await this.d.vault.blockHash(height))?.toLowerCase();
      hashes.set(height, hash);
      if (credited.some((d) => d.creditBlock === height && d.creditBlockHash === hash)) {
        under = height;
        break;
      }
    }
    return (d) => d.creditBlock !== null && (d.creditBlock < under || (hashes.has(d.creditBlock) && hashes.get(d.creditBlock) === d.creditBlockHash));
  }

  /**
   * Credits one deposit, or records the credit the chain already made. A credit that may still land is waited
   * for; a transfer the chain no longer has (reorganised away: its block, under the confirmations, is there without it,
   * or its transaction is mined again without it in a block under them), or has failed in a block under the
   * confirmations, or of 0 USDC, is dropped;
   * anything the Vault refused is tried again at the next pass, which is safe: the Vault credits a key once.
   */
  private async credit(deposit: DepositRecord, scanned: bigint | undefined, log: Log): Promise<DepositStatus> {
    const { store, vault } = this.d;
    // Anyone may send 0 USDC to any address, for gas alone; the Vault credits no zero amount, so it would be refused at every pass.
    if (deposit.amount === 0n) return this.finish(deposit, { status: "dropped", errorMessage: "A transfer of 0 USDC: there is nothing to credit." }, log);
    const key = depositKey(deposit.txHash as Hex32, deposit.logIndex);
    let state = await vault.depositState(key);
    if (deposit.status === "crediting" && state.kind === "none") {
      if ((await vault.pendingTransactions()) > 0) return deposit.status;
      state = await vault.depositState(key);
    }
    if (state.kind === "credited") return this.confirmed(state.blockNumber, scanned) ? this.credited(deposit, state.txHash, log) : deposit.status;

    const account = await store.accountById(deposit.accountId);
    const sign = account && this.d.signerOf(account);
    if (!account || !sign) throw new Error(`the service keeps no key for the account of deposit ${deposit.id}`);
    const logged = await vault.usdcTransfersOf(deposit.txHash as Hex32);
    // Mined again where it failed (a reorganisation, its sender no longer holding the USDC there): it moved nothing once
    // that block is under the confirmations. Above them a reorganisation may yet mine it where it goes through: read again next pass.
    if (logged && "failedIn" in logged) {
      return this.confirmed(logged.failedIn, scanned) ? this.finish(deposit, { status: "dropped", errorMessage: "The transfer failed on chain: it moved no USDC, there is nothing to credit." }, log) : deposit.status;
    }
    const found = logged && (await this.intoDepositAddresses(logged)).find((d) => d.place === deposit.place);
    // No receipt: gone only if the block at its height is there without its transaction (reorganised away), and under
    // the confirmations: above them a reorganisation may yet put back a block that holds it. A node behind the one that
    // showed the transfer (a pool of nodes, each request answered by any of them) may lack the block, or the receipt
    // while the next request's node has the block: asked again at the next pass.
    if (!logged && (!this.confirmed(deposit.block, scanned) || (await vault.blockHolds(deposit.block, deposit.txHash as Hex32)) !== false)) return deposit.status;
    if (!found) {
      // A receipt without it: its transaction mined again where it did otherwise. Gone once that block is under the
      // confirmations; above them a reorganisation may yet mine it where it makes the transfer: read again next pass.
      if (logged) {
        const at = await vault.blockOf(deposit.txHash as Hex32);
        if (!at || !this.confirmed(at.number, scanned)) return deposit.status;
      }
      return this.finish(deposit, { status: "dropped", errorMessage: "The transfer is no longer on chain: there is nothing to credit." }, log);
    }
    const { transfer } = found;
    if (!this.confirmed(transfer.blockNumber, scanned)) return deposit.status;
    // Mined again where it moved another amount, or into another deposit address (a contract's call, a swap's output, that
    // did otherwise there): what it moved is the deposit, credited from the next pass on (one of 0 USDC is dropped there), under the same key.
    if (found.account.id !== deposit.accountId || transfer.amount !== deposit.amount) {
      await this.update(deposit.id, ["detected", "crediting"], { accountId: found.account.id, amount: transfer.amount, fromAddress: transfer.from.toLowerCase() });
      log.warn({ was: formatMicro(deposit.amount), amount: formatMicro(transfer.amount), account_id: found.account.id }, "a deposit's transaction was mined again where it moved another amount or paid another account");
      return deposit.status;
    }
    // The block the credit is bound to: one that lands after a reorganisation replaced it reverts, whatever the address holds then.
    const transferBlock = await vault.blockOf(deposit.txHash as Hex32);
    if (!transferBlock) return deposit.status;

    await this.update(deposit.id, ["detected", "crediting"], { status: "crediting" });
    this.d.checkpoint?.("deposit.credit.sent", deposit.id);
    try {
      const credited = await vault.creditDeposit(key, account.address as Address, deposit.amount, transferBlock, sign);
      this.d.checkpoint?.("deposit.credited", deposit.id);
      if (!this.confirmed(credited.blockNumber, scanned)) return "crediting";
      return await this.credited(deposit, credited.txHash, log);
    } catch (e) {
      if (!(e instanceof VaultTxError)) throw e;
      // Refused, nothing happened; or unknown, and the chain decides at the next pass. Either way it stays crediting.
      await this.update(deposit.id, ["crediting"], { errorMessage: e.message });
      log.warn({ err: e }, e.outcome === "reverted" ? "the Vault refused a deposit credit; will retry" : "deposit credit outcome unknown; left to the next pass");
      return "crediting";
    }
  }

  /**
   * Whether a transfer or a credit mined in `block` is under DEPOSIT_CONFIRMATIONS blocks: at or under the block the
   * pass's scan left its cursor at (`scanned`), never judged by a head read later. A credit above that block may be
   * removed by a reorganisation that keeps the cursor's block, which no pass would notice once the deposit is
   * `credited`: until then it stays `crediting` and each pass reads its key again.
   */
  private confirmed(block: bigint, scanned: bigint | undefined): boolean {
    return this.d.confirmations === 0 || (scanned !== undefined && block <= scanned);
  }

  /** Records a deposit credited by `creditTx`, with the block its receipt names (none from a node that lacks it: its receipt is read at a deep reorganisation). */
  private async credited(deposit: DepositRecord, creditTx: Hex32, log: Log): Promise<DepositStatus> {
    const at = await this.d.vault.blockOf(creditTx);
    return this.finish(deposit, { status: "credited", creditTx, creditBlock: at?.number ?? null, creditBlockHash: at?.hash.toLowerCase() ?? null }, log);
  }

  private lease(now: number): Lease {
    return { owner: this.d.instanceId, until: new Date(now + (this.d.leaseMs ?? 30_000)).toISOString() };
  }

  private async finish(deposit: DepositRecord, patch: DepositPatch & { status: DepositStatus }, log: Log): Promise<DepositStatus> {
    await this.update(deposit.id, ["detected", "crediting"], patch);
    log.info({ status: patch.status, amount: formatMicro(deposit.amount), credit_tx: patch.creditTx ?? null }, "deposit finished");
    return patch.status;
  }

  private async update(id: string, from: readonly DepositStatus[], patch: DepositPatch): Promise<void> {
    if (!(await this.d.store.updateDeposit(id, from, patch, this.d.instanceId))) throw new Error(`deposit ${id} is no longer ${from.join(" or ")}, or no longer this instance's`);
  }
}
