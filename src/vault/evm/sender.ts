// Group commit for the operator's transactions: calls that arrive while a batch is on its way wait,
// then go together as the next batch (nonces reserved in the nonce book, signed locally, one submit, one
// block on the dev chain). Throughput then depends on batches, not on transactions, and stays flat as load grows.
import { decodeErrorResult, keccak256, parseTransaction, toHex, type Abi, type Hex, type PrivateKeyAccount } from "viem";
import { VaultTxError, type Address } from "../vault.ts";
import { JsonRpc, RpcError, resultOf, type RpcResult } from "../rpc.ts";
import type { NonceBook } from "./nonce-book.ts";

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
  /**
   * false: send without the dry run, under `gas`. For a call that never reverts whole (Vault.batch answers
   * each of its calls' failures itself), where the dry run would only execute it twice.
   */
  dryRun?: false;
}

/** A log of a mined transaction, as its receipt has it. */
export interface ReceiptLog {
  address: Address;
  topics: Hex[];
}

export interface Mined {
  txHash: Hex;
  blockNumber: bigint;
  contractAddress: Address | null;
  logs: readonly ReceiptLog[];
  /**
   * Every signed version of the transaction, this one and those of its nonce it replaced or that replaced it: what `deep`
   * waits for, and sends again, while a reorganisation has removed it, as the chain may then mine any of them.
   */
  versions: readonly Sent[];
}

interface Pending extends TxRequest {
  resolve(m: Mined): void;
  reject(e: Error): void;
}

interface Receipt {
  status: Hex;
  blockNumber: Hex;
  contractAddress: Address | null;
  logs: ReceiptLog[];
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
   * How deep a failed transaction's block must be before it is answered as reverted (default 0): until then a
   * reorganisation may remove it, and the same signed transaction be mined again, where it may succeed.
   */
  confirmations?: number;
  /**
   * Where the operator's nonces are reserved, before each submit, for every instance sending as the operator
   * on this chain: two instances never take the same nonce, and a transaction sent by a process that is gone
   * (a request held on the way, a provider that forwards late) still counts as pending until its nonce is taken.
   */
  nonces: NonceBook;
  /**
   * How long a nonce reserved by someone may stay missing at the node before it is taken for lost (ms, default
   * 5000): another instance may be about to send it, and taking it then would make its transactions refused.
   */
  gapGraceMs?: number;
  /** Told of each transaction's answer and each batch, for /metrics. It only watches. */
  observer?: TxObserver;
}

export interface TxObserver {
  /** From send() to the answer: queue, batch, dry run, mining and receipt. `outcome` is "mined" or the VaultTxError's. */
  transaction(label: string, seconds: number, outcome: "mined" | "reverted" | "unknown"): void;
  /** A batch's size (transactions taken from the queue together) and the time it took, from its dry run to its last receipt. */
  batch(size: number, seconds: number): void;
  /** Vault calls (locks, settles, releases) sent in one transaction through Vault.batch. */
  calls?(count: number): void;
}

export class TxSender {
  private queue: Pending[] = [];
  private running: Promise<void> | undefined;
  /**
   * Nonces this sender reserved that the node may not have: their submit failed, or the node refused them.
   * Every later nonce, this instance's and the others', waits behind them, and no one else is about to send
   * them, so they are taken at once by transfers of nothing. Forgotten once the node's count passes them.
   */
  private readonly lost = new Set<number>();
  /** Mined transactions waiting for their block's depth (`final`), outside the batches: the next batches go meanwhile. */
  private readonly waiting = new Set<Promise<void>>();
  /** Aborted by stopWaits(): the transactions still waiting for their block's depth are answered unknown, for recovery to read from the chain. */
  private readonly closing = new AbortController();
  private readonly grace: number;
  private readonly maxBatch: number;

  constructor(private readonly o: SenderOptions) {
    this.grace = o.gapGraceMs ?? 5_000;
    this.maxBatch = o.maxBatch ?? 1000;
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
   * How many of the operator's transactions may still land: the nonces handed out (the node's pending count,
   * or the nonce book's, which also holds what any instance reserved for a submit the node never got) past
   * those mined. 0 means none can: whatever is not on chain now never will be. The mined count is read first,
   * the book last: all three only grow and pending >= mined at any moment, so a transaction mined between the
   * reads is counted as still pending (a safe over-count), never missed. Read the chain's state after a 0, not before.
   *
   * Nonces reserved for a submit the node never got would keep the count above 0 until later transactions
   * take them, and when nothing else is sent (the orders waiting on that count are all there is) none
   * would. So they are taken here, between batches, by transfers of nothing: either the lost transaction
   * still reaches the node first and the filler is refused, or the filler is mined and the lost one never can
   * be. This sender's own lost nonces are taken at once; the others only once the latest reservation is older
   * than the grace, since another instance may be about to send them.
   */
  async pendingCount(): Promise<number> {
    let { latest, pending } = await this.counts();
    const { next, at } = await this.o.nonces.handedOut();
    if (pending < next && !this.running) {
      const missing = Date.now() - at >= this.grace ? range(pending, next) : this.lostFrom(pending);
      if (missing.length > 0) {
        // A filler that fails leaves its nonce lost, and the count says so.
        await this.fill(missing).catch(() => undefined);
        ({ latest, pending } = await this.counts());
      }
    }
    return Math.max(0, Math.max(pending, next) - latest);
  }

  private async counts(): Promise<{ latest: number; pending: number }> {
    const latest = Number(await this.o.rpc.call<Hex>("eth_getTransactionCount", [this.o.account.address, "latest"]));
    return { latest, pending: await this.pendingNonce() };
  }

  /** The node's next nonce: past every transaction of the operator it has, mined or waiting, short of a gap. */
  private async pendingNonce(): Promise<number> {
    return Number(await this.o.rpc.call<Hex>("eth_getTransactionCount", [this.o.account.address, "pending"]));
  }

  /** This sender's lost nonces the node has not passed yet; the others are forgotten. */
  private lostFrom(pending: number): number[] {
    for (const n of this.lost) if (n < pending) this.lost.delete(n);
    return [...this.lost].sort((a, b) => a - b);
  }

  /** Resolves once every call made so far has its answer. */
  async idle(): Promise<void> {
    while (this.running || this.waiting.size > 0) await Promise.all([this.running, ...this.waiting]);
  }

  /**
   * Answers unknown, from now on, every transaction waiting for its block's depth: a stop is not held for blocks (twelve
   * of 12 s), and recovery reads from the chain what became of them.
   */
  stopWaits(): void {
    this.closing.abort(new Error("the vault closed while the block was not yet deep enough"));
  }

  private async drain(): Promise<void> {
    // The sends made in the same synchronous run (the Vault.batch transactions of one round) go together.
    await Promise.resolve();
    for (;;) {
      const batch = this.queue.splice(0, this.maxBatch);
      // Checked and cleared in one step: a call queued after this point starts a new drain.
      if (batch.length === 0) return void (this.running = undefined);
      const stage = { submitted: false, nonces: [] as number[] };
      const started = performance.now();
      try {
        await this.commit(batch, stage);
      } catch (e) {
        // Once submitted, the batch may be partly on chain, or not at all: callers must reconcile, and its
        // nonces count as lost until the node's count passes them.
        if (stage.submitted) for (const n of stage.nonces) this.lost.add(n);
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
  private async commit(batch: Pending[], stage: { submitted: boolean; nonces: number[] }): Promise<void> {
    const { rpc, account } = this.o;
    const from = account.address;
    const unchecked = (p: Pending): bigint | undefined => (p.dryRun === false ? p.gas : undefined);
    const checked = batch.filter((p) => unchecked(p) === undefined);
    // The fees, the node's next nonce and the dry run in one request (all reads): a call that would revert
    // gets its reason now and costs no nonce.
    const [gasPrice, tip, count, ...dry] = await rpc.batch([
      ...FEE_READS,
      { method: "eth_getTransactionCount", params: [from, "pending"] },
      ...checked.map((p) => {
        const call = { from, to: p.to, data: p.data };
        return p.gas ? { method: "eth_call", params: [call, "latest"] } : { method: "eth_estimateGas", params: [call] };
      }),
    ]);
    const fees = feesOf(gasPrice!, tip!);
    const pending = Number(resultOf<Hex>(count!));
    const go: { p: Pending; gas: bigint }[] = [];
    let next = 0;
    for (const p of batch) {
      const gas = unchecked(p);
      if (gas !== undefined) {
        go.push({ p, gas });
        continue;
      }
      const res = dry[next++]!;
      if (!res.ok) p.reject(this.revertError(p.label, res.error));
      else go.push({ p, gas: p.gas ?? (BigInt(res.result as Hex) * 6n) / 5n + 10_000n });
    }
    if (go.length === 0) return;
    // This sender's lost nonces first: the batch's own would wait behind them. One it cannot take now stays
    // lost, and the wait for the batch's receipts takes it later.
    const lost = this.lostFrom(pending);
    if (lost.length > 0) await this.fill(lost).catch(() => undefined);
    // Committed in the book before anything is signed with them: another instance takes the nonces after these.
    const first = await this.o.nonces.reserve(pending, go.length);
    const raws = await Promise.all(
      go.map(({ p, gas }, i) =>
        account.signTransaction({ chainId: this.o.chainId, type: "eip1559", nonce: first + i, to: p.to ?? null, data: p.data, gas, ...fees }),
      ),
    );
    stage.nonces = go.map((_, i) => first + i);
    stage.submitted = true;
    const submittedAt = Date.now();
    const results = await this.o.submit(raws);
    const held = await this.held(results.map((r, i) => (r.ok ? undefined : keccak256(raws[i]!))));
    const sent: { p: Pending; versions: Sent[] }[] = [];
    const refused: number[] = [];
    results.forEach((r, i) => {
      const p = go[i]!.p;
      const hash = r.ok ? r.hash : held[i];
      if (hash) {
        sent.push({ p, versions: [{ hash, nonce: first + i, raw: raws[i]! }] });
      } else if (!r.ok) {
        p.reject(new VaultTxError("reverted", "Refused", `${p.label}: the node refused the transaction: ${r.error}`));
        refused.push(first + i);
      }
    });
    if (refused.length > 0) {
      // A refused nonce is a gap that holds back every later one, this batch's accepted transactions
      // included: taken now by transfers of nothing, or, failing that, by the receipts' wait below.
      for (const n of refused) this.lost.add(n);
      await this.fill(refused).catch(() => undefined);
    }
    const receipts = await this.receipts(sent.map((x) => x.versions), submittedAt);
    for (const [i, { p, versions }] of sent.entries()) {
      const [s, r] = receipts[i]!;
      if (r.status === "0x1") {
        p.resolve(minedOf(versions, s, r));
        continue;
      }
      // Its nonce is mined: nothing sent after it waits for it, so its depth is waited for outside the batches.
      const wait = this.ending(p.label, versions, s, r, false).then(p.resolve, p.reject);
      this.waiting.add(wait);
      void wait.finally(() => this.waiting.delete(wait));
    }
  }

  /**
   * Of these refused transactions' hashes, those the node has, waiting or mined: a refusal such as "already known" (a
   * second copy of a send) or "nonce too low" (its own nonce) may mean it took the transaction. Only one it does not
   * have was not made; one it cannot be asked about is waited for as sent, its receipt or the deadline deciding.
   */
  private async held(hashes: readonly (Hex | undefined)[]): Promise<(Hex | undefined)[]> {
    const asked = hashes.filter((h): h is Hex => h !== undefined);
    if (asked.length === 0) return [];
    const got = await this.o.rpc.batch(asked.map((h) => ({ method: "eth_getTransactionByHash", params: [h] }))).catch(() => undefined);
    const has = new Set(asked.filter((_, i) => !got || !got[i]!.ok || got[i]!.result));
    return hashes.map((h) => (h && has.has(h) ? h : undefined));
  }

  private async fees(): Promise<Fees> {
    const [gasPrice, tip] = await this.o.rpc.batch(FEE_READS);
    return feesOf(gasPrice!, tip!);
  }

  /**
   * Takes these nonces with transfers of nothing to the operator itself. What the node refuses is left as it
   * was: a nonce already taken, one whose own transaction the node has, or one still lost, which the count says.
   */
  private async fill(nonces: readonly number[]): Promise<void> {
    const { account, chainId } = this.o;
    const fees = await this.fees();
    for (let i = 0; i < nonces.length; i += this.maxBatch) {
      const raws = await Promise.all(
        nonces
          .slice(i, i + this.maxBatch)
          .map((nonce) => account.signTransaction({ chainId, type: "eip1559", nonce, to: account.address, value: 0n, gas: 21_000n, ...fees })),
      );
      await this.o.submit(raws);
    }
  }

  /**
   * Waits for the receipts of the batch's accepted transactions, each answered with the version of it that was mined. One that
   * waits past the grace may be held back by a gap below it: nonces reserved by an instance that died before sending them, or
   * lost by this one. No one is about to send those any more (they were reserved before this batch's), and every later
   * transaction waits behind them, so they are taken by transfers of nothing, once each grace. With no gap below it, the node
   * no longer has it (a reorganisation removed its block): the same signed transactions are sent again, once each grace, as a
   * node puts a reorganised transaction back in its pool. Held by the node while `REPLACE_AFTER_BLOCKS` blocks pass it by, and
   * the node's fees now above its own, it is replaced (`replace`): its nonce lets only one of its versions ever be mined.
   * `versions` holds each transaction's signed versions, the one sent first, then those that replaced it (added here).
   */
  private async receipts(versions: readonly Sent[][], submittedAt: number, stop?: AbortSignal): Promise<[Sent, Receipt][]> {
    const out = new Map<number, [Sent, Receipt]>();
    const deadline = Date.now() + (this.o.receiptTimeoutMs ?? 120_000);
    let fillAt = submittedAt + this.grace;
    // The head when the node was first seen holding them unmined, or when they were last replaced.
    let since: bigint | undefined;
    for (;;) {
      const asked = versions.flatMap((vs, i) => (out.has(i) ? [] : vs.map((v) => ({ i, v }))));
      if (asked.length === 0) return versions.map((_, i) => out.get(i)!);
      const got = await this.o.rpc.batch(asked.map(({ v }) => ({ method: "eth_getTransactionReceipt", params: [v.hash] })));
      got.forEach((g, k) => {
        if (g.ok && g.result) out.set(asked[k]!.i, [asked[k]!.v, g.result as Receipt]);
      });
      if (out.size === versions.length) continue;
      stop?.throwIfAborted();
      if (Date.now() > deadline) throw new Error(`no receipt for ${versions.length - out.size} transaction(s)`);
      if (Date.now() >= fillAt) {
        fillAt = Date.now() + this.grace;
        const waiting = versions.flatMap((vs, i) => (out.has(i) ? [] : [{ i, latest: vs.at(-1)! }]));
        const lowest = Math.min(...waiting.map((w) => w.latest.nonce));
        // A fill, a send or a replacement that fails is tried again after the next grace; the receipts' deadline decides the outcome.
        try {
          const pending = await this.pendingNonce();
          if (pending < lowest) await this.fill(range(pending, lowest));
          else {
            // A node does not count one its base fee passes by (anvil), nor one a reorganisation removed: sent again, "already known" if held.
            if (pending === lowest) await this.o.submit(waiting.map((w) => w.latest.raw));
            const head = BigInt(await this.o.rpc.call<Hex>("eth_blockNumber"));
            since ??= head;
            if (head - since >= REPLACE_AFTER_BLOCKS) {
              since = head;
              const replaced = await this.replace(waiting.map((w) => w.latest));
              replaced.forEach((r, k) => r && versions[waiting[k]!.i]!.push(r));
            }
          }
        } catch {
          // As said above: the next grace tries again.
        }
      }
      await new Promise((r) => setTimeout(r, this.o.receiptPollMs ?? 250));
    }
  }

  /**
   * These transactions signed again, each with its nonce and call, under the node's fees where they now ask more than its own
   * (a base fee risen past its cap leaves it unmined for good), raised by at least the 12.5 % nodes ask of a replacement (geth
   * 10 %): the new versions the node took. Its nonce lets only one version of a transaction be mined, so its call is made
   * once whichever it is, and the nonce book, the journal and a restart count it once; one whose fees still suffice is left as
   * it is, so fees rise only with the node's.
   */
  private async replace(txs: readonly Sent[]): Promise<(Sent | undefined)[]> {
    const fresh = await this.fees();
    const raws = await Promise.all(
      txs.map((s) => {
        const { to, data, value, gas, maxFeePerGas: cap, maxPriorityFeePerGas: paid } = parseTransaction(s.raw);
        if (cap === undefined || paid === undefined || (fresh.maxFeePerGas <= cap && fresh.maxPriorityFeePerGas <= paid)) return undefined;
        const maxFeePerGas = max(fresh.maxFeePerGas, raised(cap));
        const tip = max(fresh.maxPriorityFeePerGas, raised(paid));
        const { chainId, account } = this.o;
        return account.signTransaction({ chainId, type: "eip1559", nonce: s.nonce, to: to ?? null, data, value, gas, maxFeePerGas, maxPriorityFeePerGas: tip < maxFeePerGas ? tip : maxFeePerGas });
      }),
    );
    const signed = raws.flatMap((raw, k) => (raw ? [{ k, raw }] : []));
    if (signed.length === 0) return txs.map(() => undefined);
    const results = await this.o.submit(signed.map((x) => x.raw));
    // A refusal such as "already known" may mean the node took it, as for a batch's first send.
    const held = await this.held(results.map((r, j) => (r.ok ? undefined : keccak256(signed[j]!.raw))));
    const out: (Sent | undefined)[] = txs.map(() => undefined);
    signed.forEach(({ k, raw }, j) => {
      const r = results[j]!;
      const hash = r.ok ? r.hash : held[j];
      if (hash) out[k] = { hash, nonce: txs[k]!.nonce, raw };
    });
    return out;
  }

  /**
   * A transaction this sender mined, as it ends once its block is `confirmations` deep (at once with none): a reorganisation
   * may remove that block and mine the same transaction again, or another version of it, where it does otherwise (a call of a
   * `Vault.batch` refused for want of funds goes through after a deposit). Failed there: reverted; no new block by the
   * receipts' deadline while it is not that deep, or stopWaits() first (the vault closing): unknown.
   */
  async deep(label: string, m: Mined): Promise<Mined> {
    if (!this.o.confirmations) return m;
    const receipt = { status: "0x1" as Hex, blockNumber: toHex(m.blockNumber), contractAddress: m.contractAddress, logs: [...m.logs] };
    const versions = [...m.versions];
    return this.ending(label, versions, versions.find((v) => v.hash === m.txHash)!, receipt, true);
  }

  /** What a mined transaction ends as, by its `final` receipt: mined, reverted on chain, or unknown. */
  private async ending(label: string, versions: Sent[], s: Sent, receipt: Receipt, all: boolean): Promise<Mined> {
    let ended: [Sent, Receipt];
    try {
      ended = await this.final(versions, s, receipt, all);
    } catch (e) {
      throw new VaultTxError("unknown", "Unknown", `${label}: outcome unknown (${(e as Error).message})`);
    }
    const [mined, r] = ended;
    if (r.status !== "0x1") throw await this.revertedOnChain(label, mined.hash);
    return minedOf(versions, mined, r);
  }

  /**
   * The receipt a transaction keeps: a successful one at once unless `all` (its callers judge its depth), a failed one once
   * its block is `confirmations` deep. Until then the receipts of all its `versions` are read again, once each poll, and
   * waited for as any other's while a reorganisation has removed it: mined again, in the version mined before or another, it
   * may end otherwise. Not final by the receipts' deadline, or by stopWaits(): outcome unknown.
   */
  private async final(versions: Sent[], sent: Sent, receipt: Receipt, all: boolean): Promise<[Sent, Receipt]> {
    const stop = this.closing.signal;
    const confirmations = BigInt(this.o.confirmations ?? 0);
    const timeout = this.o.receiptTimeoutMs ?? 120_000;
    let head = -1n;
    let deadline = 0;
    let [s, r] = [sent, receipt];
    for (;;) {
      if ((r.status === "0x1" && !all) || confirmations === 0n) return [s, r];
      stop.throwIfAborted();
      const latest = BigInt(await this.o.rpc.call<Hex>("eth_blockNumber"));
      if (latest - BigInt(r.blockNumber) >= confirmations) return [s, r];
      if (latest > head) [head, deadline] = [latest, Date.now() + timeout];
      else if (Date.now() > deadline) throw new Error(`${s.hash} ${r.status === "0x1" ? "mined" : "failed"} in block ${BigInt(r.blockNumber)}, not yet ${confirmations} deep`);
      await new Promise((res) => setTimeout(res, this.o.receiptPollMs ?? 250));
      [s, r] = (await this.receipts([versions], Date.now(), stop))[0]!;
    }
  }

  /** Two calls in one block can each pass the dry run and the later one revert: ask the node why. */
  private async revertedOnChain(label: string, hash: Hex): Promise<VaultTxError> {
    const output = await this.output(hash);
    if (output) return this.decoded(label, output, ` in ${hash}`);
    return new VaultTxError("reverted", "Reverted", `${label} reverted on chain in ${hash}`);
  }

  /** What a mined transaction's call returned, or its revert data; undefined from a node that does not trace. */
  async output(hash: Hex): Promise<Hex | undefined> {
    try {
      const trace = await this.o.rpc.call<{ output?: Hex }>("debug_traceTransaction", [hash, { tracer: "callTracer" }]);
      return trace.output;
    } catch {
      return undefined;
    }
  }

  private revertError(label: string, e: RpcError): VaultTxError {
    const data = typeof e.data === "string" ? (e.data as Hex) : undefined;
    if (data?.startsWith("0x") && data.length >= 10) return this.decoded(label, data, "");
    return new VaultTxError("reverted", "Reverted", `${label} would revert: ${e.message}`);
  }

  /** The VaultTxError that revert data names: the contract's custom error, with its arguments in the message. */
  decoded(label: string, data: Hex, where: string): VaultTxError {
    try {
      const d = decodeErrorResult({ abi: this.o.errorAbi, data });
      const args = (d.args ?? []).map((a) => String(a)).join(", ");
      return new VaultTxError("reverted", d.errorName, `${label} reverted${where}: ${d.errorName}(${args})`);
    } catch {
      return new VaultTxError("reverted", "Reverted", `${label} reverted${where} with data ${data}`);
    }
  }
}

/** A signed transaction the node took: its hash, and what sends it again. */
type Sent = { hash: Hex; nonce: number; raw: Hex };

function minedOf(versions: readonly Sent[], s: Sent, r: Receipt): Mined {
  return { txHash: s.hash, blockNumber: BigInt(r.blockNumber), contractAddress: r.contractAddress, logs: r.logs, versions };
}

type Fees = { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };

const FEE_READS = [
  { method: "eth_gasPrice", params: [] },
  { method: "eth_maxPriorityFeePerGas", params: [] },
];

/** Twice the node's gas price as the cap, its suggested tip within it. */
function feesOf(gasPrice: RpcResult, tip: RpcResult): Fees {
  const maxFeePerGas = BigInt(resultOf<Hex>(gasPrice)) * 2n;
  const suggested = BigInt(resultOf<Hex>(tip));
  return { maxFeePerGas, maxPriorityFeePerGas: suggested < maxFeePerGas ? suggested : maxFeePerGas };
}

/** Blocks that pass by a transaction the node holds before it is replaced, if the node's fees now ask more than its own. */
const REPLACE_AFTER_BLOCKS = 3n;

/** A fee raised by 12.5 %, rounded up: what nodes ask of a replacement (geth 10 %). */
function raised(fee: bigint): bigint {
  return (fee * 9n + 7n) / 8n;
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** from, from + 1, ..., to - 1. */
function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
}

/** The submit of an ordinary chain: send each transaction; its own blocks will include them. */
export function rpcSubmit(rpc: JsonRpc): Submit {
  return async (raws) => {
    const sent = await rpc.batch(raws.map((r) => ({ method: "eth_sendRawTransaction", params: [r] })));
    return sent.map(submitted);
  };
}

/** eth_sendRawTransaction's answer: the transaction's hash, which the node computed (no need to hash it again). */
export function submitted(sent: RpcResult): SubmitResult {
  return sent.ok ? { ok: true, hash: sent.result as Hex } : { ok: false, error: sent.error.message };
}
