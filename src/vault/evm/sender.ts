// Group commit for the operator's transactions: calls that arrive while a batch is on its way wait,
// then go together as the next batch (nonces assigned here, signed locally, one submit, one block on
// the dev chain). Throughput then depends on batches, not on transactions, and stays flat as load grows.
import { readFileSync } from "node:fs";
import { decodeErrorResult, keccak256, type Abi, type Hex, type PrivateKeyAccount } from "viem";
import { writeFileDurably } from "../durable.ts";
import { VaultTxError, type Address } from "../vault.ts";
import { JsonRpc, RpcError } from "../rpc.ts";

export type SubmitResult = { ok: true; hash: Hex } | { ok: false; error: string };
/** Gets signed transactions onto the chain, in order. The dev chain's journals them and mines a block. */
export type Submit = (raws: readonly Hex[]) => Promise<SubmitResult[]>;

export interface TxRequest {
  /** Omitted for a contract creation. */
  to?: Address;
  data: Hex;
  /** For error messages: "Vault.lock" etc. */
  label: string;
  /**
   * A fixed gas limit for a call whose cost is known: the dry run is then an eth_call, ten times
   * cheaper than eth_estimateGas on anvil. Only gas used is paid, so a generous limit costs nothing.
   */
  gas?: bigint;
}

export interface Mined {
  txHash: Hex;
  blockNumber: bigint;
  contractAddress: Address | null;
}

interface Pending extends TxRequest {
  resolve(m: Mined): void;
  reject(e: Error): void;
}

interface Receipt {
  status: Hex;
  blockNumber: Hex;
  contractAddress: Address | null;
}

export interface SenderOptions {
  rpc: JsonRpc;
  account: PrivateKeyAccount;
  chainId: number;
  submit: Submit;
  /** Every ABI whose custom errors a revert may carry. */
  errorAbi: Abi;
  maxBatch?: number;
  receiptPollMs?: number;
  receiptTimeoutMs?: number;
  /**
   * Where `handedOut` is kept, written durably before each submit. A transaction this process sent may still
   * reach the node after the process is gone (a request held on the way, a provider that forwards late), and
   * the next process must count it as pending until its nonce is taken, not tell recovery that nothing can land.
   */
  handedOutFile?: string;
  /** Told of each transaction's answer and each batch, for /metrics. It only watches. */
  observer?: TxObserver;
}

export interface TxObserver {
  /** From send() to the answer: queue, batch, dry run, mining and receipt. `outcome` is "mined" or the VaultTxError's. */
  transaction(label: string, seconds: number, outcome: "mined" | "reverted" | "unknown"): void;
  /** A batch's size (transactions taken from the queue together) and the time it took, from its dry run to its last receipt. */
  batch(size: number, seconds: number): void;
}

export class TxSender {
  private queue: Pending[] = [];
  private running: Promise<void> | undefined;
  private nonce: number | undefined;
  /** One past the highest nonce handed to `submit`: a transaction below it may still land until the chain's count passes it. */
  private handedOut: number;
  /** What `handedOutFile` holds. */
  private kept: number;

  constructor(private readonly o: SenderOptions) {
    this.handedOut = this.kept = o.handedOutFile ? readHandedOut(o.handedOutFile) : 0;
  }

  send(req: TxRequest): Promise<Mined> {
    const started = performance.now();
    const mined = new Promise<Mined>((resolve, reject) => {
      this.queue.push({ ...req, resolve, reject });
      this.running ??= this.drain();
    });
    const observer = this.o.observer;
    if (observer) {
      const seconds = () => (performance.now() - started) / 1000;
      // A branch of its own: the caller still gets the rejection, and this one is handled.
      mined.then(
        () => observer.transaction(req.label, seconds(), "mined"),
        (e: unknown) => observer.transaction(req.label, seconds(), e instanceof VaultTxError ? e.outcome : "unknown"),
      );
    }
    return mined;
  }

  /**
   * How many of the operator's transactions may still land: the nonces handed out (by the node's pending
   * count, or by this sender for a batch whose submit failed before the node had it) past those mined.
   * 0 means none can: whatever is not on chain now never will be. The mined count is read first: both
   * counts only grow and pending >= mined at any moment, so a transaction mined between the two reads is
   * counted as still pending (a safe over-count), never missed. Read the chain's state after a 0, not before.
   *
   * Nonces handed to a submit the node never got would keep the count above 0 until later transactions
   * take them, and when nothing else is sent (the orders waiting on that count are all there is) none
   * would. So they are taken here, between batches, by transfers of nothing: either the lost transaction
   * still reaches the node first and the filler is refused, or the filler is mined and the lost one never can be.
   */
  async pendingCount(): Promise<number> {
    let { latest, pending } = await this.counts();
    const lost = this.handedOut - pending;
    if (lost > 0 && !this.running) {
      const self = this.o.account.address;
      // A filler that fails leaves its nonce lost, and the count says so.
      await Promise.allSettled(Array.from({ length: lost }, () => this.send({ label: "nonce filler", to: self, data: "0x", gas: 21_000n })));
      ({ latest, pending } = await this.counts());
    }
    return Math.max(0, Math.max(pending, this.handedOut) - latest);
  }

  private async counts(): Promise<{ latest: number; pending: number }> {
    const from = this.o.account.address;
    const latest = Number(await this.o.rpc.call<Hex>("eth_getTransactionCount", [from, "latest"]));
    const pending = Number(await this.o.rpc.call<Hex>("eth_getTransactionCount", [from, "pending"]));
    return { latest, pending };
  }

  /** Resolves once every call made so far has its answer. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    for (;;) {
      const batch = this.queue.splice(0, this.o.maxBatch ?? 1000);
      // Checked and cleared in one step: a call queued after this point starts a new drain.
      if (batch.length === 0) return void (this.running = undefined);
      const stage = { submitted: false };
      const started = performance.now();
      try {
        await this.commit(batch, stage);
      } catch (e) {
        // Once submitted, the batch may be partly on chain: nonces must be read again, and callers must reconcile.
        this.nonce = undefined;
        const why = (e as Error).message;
        for (const p of batch) {
          p.reject(
            stage.submitted
              ? new VaultTxError("unknown", "Unknown", `${p.label}: outcome unknown (${why})`)
              : new VaultTxError("reverted", "NotSent", `${p.label}: not sent (${why})`),
          );
        }
      }
      this.o.observer?.batch(batch.length, (performance.now() - started) / 1000);
    }
  }

  /**
   * One batch, start to end. Measured: overlapping the next batch's signing with this one's mining
   * made batches smaller and throughput lower on two cores (docs/chain.md), so batches go one at a time.
   */
  private async commit(batch: Pending[], stage: { submitted: boolean }): Promise<void> {
    const { rpc, account } = this.o;
    const from = account.address;
    const [gasPrice, tip, nonce] = await Promise.all([
      rpc.call<Hex>("eth_gasPrice"),
      rpc.call<Hex>("eth_maxPriorityFeePerGas"),
      this.nonce ?? rpc.call<Hex>("eth_getTransactionCount", [from, "pending"]).then(Number),
    ]);
    // The dry run: a call that would revert gets its reason now and costs no nonce.
    const dry = await rpc.batch(
      batch.map((p) => {
        const call = { from, to: p.to, data: p.data };
        return p.gas ? { method: "eth_call", params: [call, "latest"] } : { method: "eth_estimateGas", params: [call] };
      }),
    );
    const go: { p: Pending; gas: bigint }[] = [];
    dry.forEach((res, i) => {
      const p = batch[i]!;
      if (!res.ok) p.reject(this.revertError(p.label, res.error));
      else go.push({ p, gas: p.gas ?? (BigInt(res.result as Hex) * 6n) / 5n + 10_000n });
    });
    if (go.length === 0) return;
    const maxFeePerGas = BigInt(gasPrice) * 2n;
    const maxPriorityFeePerGas = BigInt(tip) < maxFeePerGas ? BigInt(tip) : maxFeePerGas;
    let next = nonce;
    const raws = await Promise.all(
      go.map(({ p, gas }) =>
        account.signTransaction({
          chainId: this.o.chainId,
          type: "eip1559",
          nonce: next++,
          to: p.to ?? null,
          data: p.data,
          gas,
          maxFeePerGas,
          maxPriorityFeePerGas,
        }),
      ),
    );
    this.nonce = next;
    const handedBefore = this.handedOut;
    this.handOut(Math.max(handedBefore, next));
    stage.submitted = true;
    const results = await this.o.submit(raws);
    const sent: { p: Pending; hash: Hex }[] = [];
    let lastSent = -1;
    results.forEach((r, i) => {
      const p = go[i]!.p;
      if (r.ok) {
        sent.push({ p, hash: r.hash });
        lastSent = i;
      } else {
        p.reject(new VaultTxError("reverted", "Refused", `${p.label}: the node refused the transaction: ${r.error}`));
      }
    });
    if (sent.length < results.length) {
      // The node's count says where the next batch starts; a refused nonce below an accepted one is a gap
      // that would hold the accepted ones back for ever, so it is taken now by a transfer of nothing.
      this.nonce = undefined;
      const gaps = results.flatMap((r, i) => (!r.ok && i < lastSent ? [nonce + i] : []));
      if (gaps.length > 0) await this.fillGaps(gaps, { maxFeePerGas, maxPriorityFeePerGas });
      this.handOut(Math.max(handedBefore, nonce + lastSent + 1));
    }
    const receipts = await this.receipts(sent.map((s) => s.hash));
    await Promise.all(
      sent.map(async ({ p, hash }, i) => {
        const r = receipts[i]!;
        if (r.status === "0x1") {
          p.resolve({ txHash: hash, blockNumber: BigInt(r.blockNumber), contractAddress: r.contractAddress });
        } else {
          p.reject(await this.revertedOnChain(p.label, hash));
        }
      }),
    );
  }

  /** Records how far nonces are handed out, durably first where a file keeps it: a failed write sends nothing. */
  private handOut(next: number): void {
    if (this.o.handedOutFile && next !== this.kept) {
      writeFileDurably(this.o.handedOutFile, JSON.stringify({ handedOut: next }) + "\n");
      this.kept = next;
    }
    this.handedOut = next;
  }

  private async fillGaps(nonces: number[], fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }): Promise<void> {
    const { account, chainId } = this.o;
    const raws = await Promise.all(
      nonces.map((nonce) => account.signTransaction({ chainId, type: "eip1559", nonce, to: account.address, value: 0n, gas: 21_000n, ...fees })),
    );
    const refused = (await this.o.submit(raws)).find((r) => !r.ok);
    if (refused) throw new Error(`a refused transaction left a nonce gap that could not be filled: ${refused.error}`);
  }

  private async receipts(hashes: Hex[]): Promise<Receipt[]> {
    const out = new Map<Hex, Receipt>();
    const deadline = Date.now() + (this.o.receiptTimeoutMs ?? 120_000);
    for (;;) {
      const missing = hashes.filter((h) => !out.has(h));
      if (missing.length === 0) return hashes.map((h) => out.get(h)!);
      const got = await this.o.rpc.batch(missing.map((h) => ({ method: "eth_getTransactionReceipt", params: [h] })));
      got.forEach((g, i) => {
        if (g.ok && g.result) out.set(missing[i]!, g.result as Receipt);
      });
      if (out.size === hashes.length) continue;
      if (Date.now() > deadline) throw new Error(`no receipt for ${hashes.length - out.size} transaction(s)`);
      await new Promise((r) => setTimeout(r, this.o.receiptPollMs ?? 250));
    }
  }

  /** Two calls in one block can each pass the dry run and the later one revert: ask the node why. */
  private async revertedOnChain(label: string, hash: Hex): Promise<VaultTxError> {
    try {
      const trace = await this.o.rpc.call<{ output?: Hex }>("debug_traceTransaction", [hash, { tracer: "callTracer" }]);
      if (trace.output) return this.decoded(label, trace.output, ` in ${hash}`);
    } catch {
      // Not every node traces; the generic message below still names the transaction.
    }
    return new VaultTxError("reverted", "Reverted", `${label} reverted on chain in ${hash}`);
  }

  private revertError(label: string, e: RpcError): VaultTxError {
    const data = typeof e.data === "string" ? (e.data as Hex) : undefined;
    if (data?.startsWith("0x") && data.length >= 10) return this.decoded(label, data, "");
    return new VaultTxError("reverted", "Reverted", `${label} would revert: ${e.message}`);
  }

  private decoded(label: string, data: Hex, where: string): VaultTxError {
    try {
      const d = decodeErrorResult({ abi: this.o.errorAbi, data });
      const args = (d.args ?? []).map((a) => String(a)).join(", ");
      return new VaultTxError("reverted", d.errorName, `${label} reverted${where}: ${d.errorName}(${args})`);
    } catch {
      return new VaultTxError("reverted", "Reverted", `${label} reverted${where} with data ${data}`);
    }
  }
}

function readHandedOut(file: string): number {
  try {
    return (JSON.parse(readFileSync(file, "utf8")) as { handedOut: number }).handedOut;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw e;
  }
}

/** The submit of an ordinary chain: send each transaction; its own blocks will include them. */
export function rpcSubmit(rpc: JsonRpc): Submit {
  return async (raws) => {
    const sent = await rpc.batch(raws.map((r) => ({ method: "eth_sendRawTransaction", params: [r] })));
    return sent.map((s, i) => (s.ok ? { ok: true, hash: keccak256(raws[i]!) } : { ok: false, error: s.error.message }));
  };
}
