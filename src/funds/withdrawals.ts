import { createHash } from "node:crypto";
import { AppError } from "../domain/errors.ts";
import { OPEN_WITHDRAWAL_STATUSES, type WithdrawalStatus } from "../domain/funds-status.ts";
import { formatMicro, microToNumber } from "../domain/money.ts";
import type { Clock } from "../domain/types.ts";
import type { Log } from "../orders/service.ts";
import type { Lease, Store, WithdrawalPatch, WithdrawalRecord } from "../store/store.ts";
import { VaultTxError, type Address, type TxRef, type Vault } from "../vault/vault.ts";
import { MinedDeep } from "../vault/mined-deep.ts";
import { chainWithdrawalId } from "./chain-ids.ts";
import type { FundsCheckpoint } from "./checkpoints.ts";
import type { WithdrawalRequest } from "./validate.ts";

export interface WithdrawalDeps {
  store: Store;
  vault: Vault;
  clock: Clock;
  log: Log;
  /** Blocks a payment must be under before the withdrawal is confirmed (0: at its receipt); DEPOSIT_CONFIRMATIONS. */
  confirmations: number;
  newWithdrawalId(): string;
  /** This process among the instances sharing the store: it holds the lease of each withdrawal it executes or recovers. */
  instanceId: string;
  /** How long a lease lasts unless renewed (default 30 s). */
  leaseMs?: number;
  checkpoint?: (step: FundsCheckpoint, withdrawalId: string) => void;
}

/** Who asks for a withdrawal: the account, its vault address, and the addresses the key may pay to (null: any). */
export interface Withdrawer {
  accountId: string;
  address: Address;
  allowlist: readonly string[] | null;
}

/**
 * Withdrawals: validate → idempotency → pending → sent → paid on chain under `confirmations` blocks (confirmed) or
 * refused by it (failed, the funds untouched). `sent` is persisted before the transaction goes, so a crash or a
 * lost answer leaves a withdrawal recovery knows to ask the chain about, by its id: the Vault pays each id at most
 * once, and a withdrawal is failed only when no transaction of it can still land.
 */
export class WithdrawalService {
  /** Withdrawals this process is executing right now; recovery leaves them alone. */
  readonly inFlight = new Set<string>();
  /** Withdrawals recovery holds the lease of while it finishes them: renewed with those in flight, however long a payment takes. */
  private readonly recovering = new Set<string>();
  /**
   * Withdrawals recovery found sent, unpaid and with no operator transaction pending: a transaction of theirs that failed
   * is among those the operator had mined then, and is final once they are all `confirmations` deep.
   */
  private readonly unpaid: MinedDeep;
  private running: Promise<number> | undefined;

  constructor(private readonly d: WithdrawalDeps) {
    this.unpaid = new MinedDeep(d.vault, d.confirmations);
  }

  async submit(who: Withdrawer, req: WithdrawalRequest, log: Log = this.d.log): Promise<WithdrawalRecord> {
    if (who.allowlist !== null && !who.allowlist.includes(req.toAddress)) {
      throw new AppError("withdrawal_address_not_allowed", `This API key may only withdraw to ${who.allowlist.join(", ")}.`, { to_address: req.toAddress });
    }
    const { contracts, operator, treasury } = this.d.vault.info();
    const ours = [
      [contracts.vault, "the Vault"],
      [contracts.usdc, "the USDC token contract"],
      [contracts.sot, "the position token contract"],
      [operator, "crossfill's operator"],
      [treasury, "the treasury, which settles pay"],
    ].find(([address]) => address!.toLowerCase() === req.toAddress)?.[1];
    if (ours !== undefined) {
      throw new AppError("invalid_request", `to_address is ${ours}: nothing paid there could be given back to you.`, { fields: { to_address: `is ${ours}` } });
    }
    const requestHash = createHash("sha256").update(`${req.amount}\n${req.toAddress}`).digest("hex");
    // A withdrawal that failed chain_unavailable was answered 503, "try again": its retry runs it again, under its id.
    const existing = await this.earlier(who, req, requestHash);
    if (existing && !retried(existing)) return existing;
    const { available } = await this.d.vault.balanceOf(who.address).catch(() => {
      throw new AppError("chain_unavailable");
    });
    if (available < req.amount) {
      // The same withdrawal sent to another instance at once may have been stored, and paid, since the
      // lookup above: that withdrawal is the answer, not the USDC it took.
      const twin = await this.earlier(who, req, requestHash);
      if (twin && !retried(twin)) return twin;
      throw new AppError("insufficient_funds", `The vault holds ${formatMicro(available)} USDC available; the withdrawal needs ${formatMicro(req.amount)}.`, {
        available_usdc: microToNumber(available),
      });
    }
    let w: WithdrawalRecord;
    if (existing) {
      const reopened = await this.d.store.reopenWithdrawal(existing.id, this.lease());
      // Another instance took the same retry first: its withdrawal is the answer.
      if (!reopened) return (await this.d.store.withdrawal(existing.id))!;
      w = reopened;
    } else {
      const now = new Date(this.d.clock.now()).toISOString();
      w = {
        id: this.d.newWithdrawalId(),
        accountId: who.accountId,
        clientWithdrawalId: req.clientWithdrawalId,
        requestHash,
        amount: req.amount,
        toAddress: req.toAddress,
        status: "pending",
        txHash: null,
        errorCode: null,
        errorMessage: null,
        createdAt: now,
        updatedAt: now,
      };
      const inserted = await this.d.store.insertWithdrawal(w, this.lease());
      if (!inserted.created) return this.sameRequest(inserted.withdrawal, req, requestHash);
    }
    this.inFlight.add(w.id);
    const wlog = log.child({ withdrawal_id: w.id });
    try {
      this.d.checkpoint?.("withdrawal.inserted", w.id);
      return await this.execute(w, who.address, wlog);
    } catch (e) {
      wlog.error({ err: e }, "withdrawal interrupted; recovery will finish it");
      return (await this.d.store.withdrawal(w.id))!;
    } finally {
      this.inFlight.delete(w.id);
    }
  }

  lease(): Lease {
    return { owner: this.d.instanceId, until: new Date(this.d.clock.now() + (this.d.leaseMs ?? 30_000)).toISOString() };
  }

  /** Extends the leases of the withdrawals this process is executing or recovering: called more often than a lease lasts. */
  renewLeases(): Promise<void> {
    return this.d.store.renewWithdrawalLeases([...this.inFlight, ...this.recovering], this.lease());
  }

  /**
   * Finishes every open withdrawal no one is executing, last updated at least `minAgeMs` ago: at start-up and
   * periodically. One pass at a time; resolves to how many it finished.
   */
  pass(minAgeMs: number): Promise<number> {
    this.running ??= this.run(minAgeMs).finally(() => (this.running = undefined));
    return this.running;
  }

  async idle(): Promise<void> {
    while (this.running) await this.running.catch(() => undefined);
  }

  private async run(minAgeMs: number): Promise<number> {
    let finished = 0;
    for (const w of await this.d.store.withdrawalsInStatus(OPEN_WITHDRAWAL_STATUSES)) {
      if (this.inFlight.has(w.id)) continue;
      const now = this.d.clock.now();
      if (now - Date.parse(w.updatedAt) < minAgeMs) continue;
      if (!(await this.d.store.claimWithdrawal(w.id, this.lease(), new Date(now).toISOString()))) continue;
      this.recovering.add(w.id);
      const wlog = this.d.log.child({ withdrawal_id: w.id });
      try {
        // As it is now, not as listed: an instance whose lease ran out since may have sent it meanwhile, its transaction on its way.
        const done = await this.recover((await this.d.store.withdrawal(w.id))!, wlog);
        if (done.status === "confirmed" || done.status === "failed") finished++;
      } catch (e) {
        wlog.warn({ err: e }, "withdrawal recovery failed; will retry");
      } finally {
        this.recovering.delete(w.id);
        await this.d.store.releaseWithdrawal(w.id, this.d.instanceId);
      }
    }
    return finished;
  }

  /**
   * The chain says what became of it, by its id. Paid: confirmed with that transaction. Not paid while a
   * transaction it sent may still land, or one that failed is not yet `confirmations` deep (a reorganisation may mine
   * it again, where it pays): left for a later pass. Otherwise (never sent, or sent and never to land) it is sent,
   * again: the Vault pays an id once, so the worst a resend can do is be refused, and a refusal is then final.
   */
  private async recover(w: WithdrawalRecord, log: Log): Promise<WithdrawalRecord> {
    const id = chainWithdrawalId(w.id);
    const { vault } = this.d;
    let state = await vault.withdrawalState(id);
    if (w.status === "sent" && state.kind === "none") {
      if ((await vault.pendingTransactions()) > 0) return w;
      // Read again after the count: a payment that landed meanwhile is found now.
      state = await vault.withdrawalState(id);
      if (state.kind === "none" && !(await this.unpaid.deep(w.id))) return w;
    }
    this.unpaid.forget(w.id);
    if (state.kind === "paid") return this.paid(w.id, state, log);
    const account = await this.d.store.accountById(w.accountId);
    if (!account) throw new Error(`withdrawal ${w.id} belongs to no account`);
    return this.execute(w, account.address as Address, log);
  }

  private async execute(w: WithdrawalRecord, address: Address, log: Log): Promise<WithdrawalRecord> {
    await this.update(w.id, ["pending", "sent"], { status: "sent", txHash: null });
    this.d.checkpoint?.("withdrawal.sent", w.id);
    const id = chainWithdrawalId(w.id);
    try {
      const paid = await this.d.vault.withdrawTo(id, address, w.toAddress as Address, w.amount);
      this.d.checkpoint?.("withdrawal.paid", w.id);
      return await this.paid(w.id, paid, log);
    } catch (e) {
      if (!(e instanceof VaultTxError)) throw e;
      if (e.outcome === "reverted") {
        // Nothing happened, and no other transaction of this withdrawal can land (this one is the first, or
        // recovery sent it again only once none could): the funds stay where they were.
        if (e.reason === "InsufficientAvailable") {
          log.info({ err: e }, "the Vault refused a withdrawal for want of available USDC");
          const errorMessage = `Nothing was paid: the vault held less than ${formatMicro(w.amount)} USDC available when the withdrawal reached the chain (another withdrawal or order took it first).`;
          return this.finish(w.id, ["sent"], { status: "failed", errorCode: "insufficient_funds", errorMessage }, log);
        }
        // The token's own refusal (real USDC's blacklist, or USDC paused), whatever it reverts with, is told by
        // simulating its transfer: one that the chain, reachable, says would revert now is the token's.
        const refusal = await this.d.vault.transferRefusal(w.toAddress as Address, w.amount).catch(() => undefined);
        if (refusal !== undefined) {
          log.info({ err: e, refusal }, "the USDC token refused a withdrawal's transfer");
          const errorMessage = `Nothing was paid: the USDC token refused to pay ${w.toAddress} (${refusal}).`;
          return this.finish(w.id, ["sent"], { status: "failed", errorCode: "withdrawal_refused", errorMessage }, log);
        }
        return this.finish(w.id, ["sent"], { status: "failed", errorCode: "chain_unavailable", errorMessage: `Nothing was paid: ${e.message}` }, log);
      }
      // It may have been paid, or may yet be: the chain decides, here or in recovery, never a timer.
      const state = await this.d.vault.withdrawalState(id);
      if (state.kind === "paid") return this.paid(w.id, state, log);
      log.warn({ err: e }, "withdrawal outcome unknown; left to recovery");
      return (await this.d.store.withdrawal(w.id))!;
    }
  }

  /** The withdrawal stored under the request's client_withdrawal_id, if any, as sameRequest answers it. */
  private async earlier(who: Withdrawer, req: WithdrawalRequest, requestHash: string): Promise<WithdrawalRecord | undefined> {
    if (req.clientWithdrawalId === null) return undefined;
    const existing = await this.d.store.withdrawalByClientId(who.accountId, req.clientWithdrawalId);
    return existing && this.sameRequest(existing, req, requestHash);
  }

  private sameRequest(existing: WithdrawalRecord, req: WithdrawalRequest, requestHash: string): WithdrawalRecord {
    if (existing.requestHash !== requestHash) {
      const differ = [existing.amount !== req.amount && "amount_usdc", existing.toAddress !== req.toAddress && "to_address"].filter((f) => f !== false);
      throw new AppError(
        "idempotency_conflict",
        `The client_withdrawal_id (or Idempotency-Key) ${JSON.stringify(existing.clientWithdrawalId)} was already used for a different withdrawal${differ.length > 0 ? `: not the same ${differ.join(", ")}` : ""}.`,
        { withdrawal_id: existing.id },
      );
    }
    return existing;
  }

  /**
   * A payment that landed: confirmed once under `confirmations` blocks. Until then a reorganisation may remove it, so
   * the withdrawal stays `sent` with its transaction, and recovery reads its id again: removed, it is sent again.
   */
  private async paid(id: string, tx: TxRef, log: Log): Promise<WithdrawalRecord> {
    if (this.d.confirmations > 0 && (await this.d.vault.blockNumber()) - tx.blockNumber < BigInt(this.d.confirmations)) return this.update(id, ["sent"], { txHash: tx.txHash });
    return this.finish(id, ["sent"], { status: "confirmed", txHash: tx.txHash }, log);
  }

  private async finish(id: string, from: readonly WithdrawalStatus[], patch: WithdrawalPatch, log: Log): Promise<WithdrawalRecord> {
    const w = await this.update(id, from, patch);
    log.info({ status: w.status, amount: formatMicro(w.amount), tx_hash: w.txHash, error: w.errorCode }, "withdrawal finished");
    return w;
  }

  private async update(id: string, from: readonly WithdrawalStatus[], patch: WithdrawalPatch): Promise<WithdrawalRecord> {
    const w = await this.d.store.updateWithdrawal(id, from, patch, this.d.instanceId);
    if (!w) throw new Error(`withdrawal ${id} is no longer ${from.join(" or ")}, or no longer this instance's`);
    return w;
  }
}

/** A withdrawal stored failed for want of the chain: nothing was paid and nothing of it can land, so its retry runs it again. */
function retried(w: WithdrawalRecord): boolean {
  return w.status === "failed" && w.errorCode === "chain_unavailable";
}
