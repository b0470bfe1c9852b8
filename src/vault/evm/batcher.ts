// Many orders' locks, settles and releases (and sells' escrows, settlements and releases) in one transaction: calls that arrive while the previous
// batch is on its way wait, then go together through Vault.batch, each done or refused on its own. Each
// call's answer is its own: its order's event in the transaction's logs, or the error the contract gave it.
import { decodeFunctionResult, encodeEventTopics, encodeFunctionData, type Hex } from "viem";
import { vaultAbi } from "../../contracts/artifacts.ts";
import { VaultTxError, type Address, type Hex32, type TxRef } from "../vault.ts";
import type { Mined, TxObserver, TxSender } from "./sender.ts";

export type VaultCall = "lock" | "settle" | "release" | "escrow" | "settleSell" | "releaseEscrow";

export interface CallRequest {
  fn: VaultCall;
  orderId: Hex32;
  /** The call, encoded as if sent alone. */
  data: Hex;
  /** What the call may use at most, as if sent alone: the batch's gas limit is their sum. */
  gas: bigint;
}

interface Queued extends CallRequest {
  started: number;
  resolve(ref: TxRef): void;
  reject(e: Error): void;
}

export interface BatcherOptions {
  sender: TxSender;
  vault: Address;
  /**
   * The most gas one batch transaction may ask for (default 15 M: half a 30 M block, under the 2^24 cap of
   * EIP-7825). More calls than fit go as several transactions, sent together.
   */
  maxGas?: bigint;
  observer?: TxObserver;
}

/** The event each call logs when it succeeds, with the order id as its first indexed topic. */
const EVENT_OF = {
  lock: "Locked",
  settle: "Settled",
  release: "Released",
  escrow: "Escrowed",
  settleSell: "SellSettled",
  releaseEscrow: "EscrowReleased",
} as const;
const TOPIC_OF = Object.fromEntries(
  Object.entries(EVENT_OF).map(([fn, eventName]) => [fn, encodeEventTopics({ abi: vaultAbi, eventName })[0].toLowerCase()]),
) as Record<VaultCall, string>;
/** Gas of the batch itself: the transaction, the loop and the failures array, beside its calls' own. */
const BATCH_GAS = 60_000n;
const CALL_GAS = 15_000n;

export class VaultBatcher {
  private queue: Queued[] = [];
  private running: Promise<void> | undefined;
  /** Refused calls waiting for their batch's block to be deep enough, outside the rounds. */
  private readonly waiting = new Set<Promise<void>>();
  private readonly maxGas: bigint;

  constructor(private readonly o: BatcherOptions) {
    this.maxGas = o.maxGas ?? 15_000_000n;
  }

  call(req: CallRequest): Promise<TxRef> {
    return new Promise<TxRef>((resolve, reject) => {
      this.queue.push({ ...req, started: performance.now(), resolve, reject });
      this.running ??= this.drain();
    });
  }

  /** Resolves once every call made so far has its answer. */
  async idle(): Promise<void> {
    while (this.running || this.waiting.size > 0) await Promise.all([this.running, ...this.waiting]);
  }

  /** Everything queued goes now, as few transactions as fit; what arrives meanwhile waits for the next round. */
  private async drain(): Promise<void> {
    for (;;) {
      // The calls made in the same turn of the event loop go together: the orders the last batch answered
      // make their next calls in the continuations it resolved, before this one takes the queue.
      await new Promise((r) => setImmediate(r));
      const batches = this.take();
      // Checked and cleared in one step: a call queued after this point starts a new drain.
      if (batches.length === 0) return void (this.running = undefined);
      await Promise.all(batches.map((b) => this.commit(b).catch((e: unknown) => this.failed(b, e))));
    }
  }

  /**
   * The queue cut into batches within the gas limit. One order's calls never share a batch: its event in
   * the logs then says which of its calls succeeded. A second call for an order waits for the next round.
   */
  private take(): Queued[][] {
    const batches: Queued[][] = [];
    const later: Queued[] = [];
    const orders = new Set<string>();
    let current: Queued[] = [];
    let gas = BATCH_GAS;
    for (const q of this.queue) {
      const key = q.orderId.toLowerCase();
      if (orders.has(key)) {
        later.push(q);
        continue;
      }
      orders.add(key);
      if (current.length > 0 && gas + q.gas + CALL_GAS > this.maxGas) {
        batches.push(current);
        current = [];
        gas = BATCH_GAS;
      }
      current.push(q);
      gas += q.gas + CALL_GAS;
    }
    if (current.length > 0) batches.push(current);
    this.queue = later;
    return batches;
  }

  private async commit(batch: Queued[]): Promise<void> {
    const data = encodeFunctionData({ abi: vaultAbi, functionName: "batch", args: [batch.map((q) => q.data)] });
    const gas = batch.reduce((s, q) => s + q.gas + CALL_GAS, BATCH_GAS);
    this.o.observer?.calls?.(batch.length);
    // No dry run: the batch never reverts whole for a call's sake, it answers each call's failure itself.
    const mined = await this.o.sender.send({ label: "Vault.batch", to: this.o.vault, data, gas, dryRun: false });
    const logged = this.logged(mined);
    const refused: { q: Queued; i: number }[] = [];
    for (const [i, q] of batch.entries()) {
      if (logged(q)) this.answer(q, { txHash: mined.txHash, blockNumber: mined.blockNumber });
      else refused.push({ q, i });
    }
    if (refused.length === 0) return;
    // Outside the round: the next batches go while these wait for their block's depth.
    const waiting = this.refused(refused, mined).catch((e: unknown) => this.failed(refused.map((r) => r.q), e));
    this.waiting.add(waiting);
    void waiting.finally(() => this.waiting.delete(waiting));
  }

  /**
   * The calls a batch that succeeded logged no event for: refused, changing nothing, once its block is DEPOSIT_CONFIRMATIONS
   * deep. Until then a reorganisation may mine the batch again where such a call goes through (a lock, after a deposit), so
   * each is answered as the batch then ends, as the sender answers a transaction that failed whole.
   */
  private async refused(calls: readonly { q: Queued; i: number }[], first: Mined): Promise<void> {
    const mined = await this.o.sender.deep("Vault.batch", first);
    const logged = this.logged(mined);
    let failures: readonly Hex[] | undefined;
    for (const { q, i } of calls) {
      if (logged(q)) {
        this.answer(q, { txHash: mined.txHash, blockNumber: mined.blockNumber });
        continue;
      }
      failures ??= await this.failures(mined.txHash);
      const reason = failures?.[i];
      this.answer(
        q,
        reason && reason !== "0x"
          ? this.o.sender.decoded(`Vault.${q.fn}`, reason, ` in batch ${mined.txHash}`)
          : new VaultTxError("reverted", "Reverted", `Vault.${q.fn} was refused in batch ${mined.txHash}`),
      );
    }
  }

  /** Whether a call's event, its order id the first topic, is in the batch's logs: the call was done. */
  private logged(mined: Mined): (q: Queued) => boolean {
    const vault = this.o.vault.toLowerCase();
    const events = new Set(
      mined.logs.filter((l) => l.address.toLowerCase() === vault && l.topics.length > 1).map((l) => `${l.topics[0]!.toLowerCase()}/${l.topics[1]!.toLowerCase()}`),
    );
    return (q) => events.has(`${TOPIC_OF[q.fn]}/${q.orderId.toLowerCase()}`);
  }

  /**
   * The batch transaction's outcome is every call's: not sent, refused or reverted whole (nothing happened), or unknown.
   * The only VaultTxError a round or a depth wait throws is the sender's answer for the batch transaction itself (`send`,
   * `deep`): after its send, the batcher itself only reads and answers. Any other error (a bug, an observer that threw)
   * says nothing of the transaction: unknown, for recovery to read from the chain.
   */
  private failed(calls: readonly Queued[], e: unknown): void {
    const err = e instanceof VaultTxError ? e : new VaultTxError("unknown", "Unknown", (e as Error).message);
    for (const q of calls) this.answer(q, new VaultTxError(err.outcome, err.reason, `Vault.${q.fn} in a batch: ${err.message}`));
  }

  /** The batch's own answer, one revert reason per call (empty for those that succeeded), read by tracing it. */
  private async failures(hash: Hex): Promise<readonly Hex[] | undefined> {
    const output = await this.o.sender.output(hash);
    if (!output || output === "0x") return undefined;
    try {
      return decodeFunctionResult({ abi: vaultAbi, functionName: "batch", data: output });
    } catch {
      return undefined;
    }
  }

  private answer(q: Queued, result: TxRef | VaultTxError): void {
    const seconds = (performance.now() - q.started) / 1000;
    if (result instanceof VaultTxError) {
      this.o.observer?.transaction(`Vault.${q.fn}`, seconds, result.outcome);
      q.reject(result);
    } else {
      this.o.observer?.transaction(`Vault.${q.fn}`, seconds, "mined");
      q.resolve(result);
    }
  }
}
