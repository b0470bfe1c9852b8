// The embedded dev chain: anvil (from npm) as a child process on loopback, made durable by our own
// snapshots plus a write-ahead journal of the signed transactions sent since (see docs/chain.md).
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { type Hex } from "viem";
import { keccak256 } from "../../evm/keccak.ts";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { submitted, type SubmitResult } from "../evm/sender.ts";
import { JsonRpc, type RpcError, type RpcResult } from "../rpc.ts";
import { writeFileDurably } from "../durable.ts";
import { PRIVATE_FILE, privateDir, privateTree } from "../../private-files.ts";
import { TxJournal, readJournal } from "./journal.ts";
import { terminate } from "../../child-process.ts";

export const DEV_CHAIN_ID = 31337;

export interface DevChain {
  rpcUrl: string;
  chainId: number;
  /** Generated at first start and kept in `<dataDir>/operator.key`: the journal holds its signatures. */
  operatorKey: Hex;
  /** The anvil process id (for diagnostics and crash tests). */
  pid: number;
  /** Group commit: journals the signed transactions (fsync), sends them in order, then mines one block. */
  submit(raws: readonly Hex[]): Promise<SubmitResult[]>;
  /** Writes a snapshot now and empties the journal. */
  snapshot(): Promise<void>;
  stop(): Promise<void>;
}

export interface DevChainOptions {
  dataDir: string;
  port?: number;
  /** Snapshot after this many journaled transactions (default 5000): bounds replay time at start. */
  snapshotEvery?: number;
  /**
   * Told when a snapshot fails (after a batch, when idle, or the final one of stop()): harmless to the chain
   * (the journal keeps every batch since the last snapshot, and the next start replays them), but the
   * journal, and so the next start's replay, grows until one succeeds.
   */
  onSnapshotError?: (err: unknown) => void;
}

const SNAPSHOT = "state.json.gz";
const JOURNAL = "journal.jsonl";
const OPERATOR_ETH = "0x3635c9adc5dea00000"; // 1000 ETH: gas money for the operator, reset at each start
const IDLE_MINE_MS = 1000;
/** A dump blocks submits for time that grows with the chain (docs/chain.md): take it when nobody waits. */
const IDLE_SNAPSHOT_MS = 10_000;
/** How long a dump may take: anvil answers it whole, in time that grows with the chain's history (docs/chain.md). */
const DUMP_TIMEOUT_MS = 120_000;

export async function startDevChain(opts: DevChainOptions): Promise<DevChain> {
  const dir = opts.dataDir;
  // Everything here is the dev chain's own (snapshot, journal, operator key, anvil's home): owner-only,
  // including what a version that left it world-readable wrote.
  privateTree(dir);
  privateDir(join(dir, "home"));
  const operatorKey = loadOrCreateKey(join(dir, "operator.key"));
  const loadFrom = unpackSnapshot(dir);
  // Without a port of its own, anvil binds a free one itself: one probed here and freed could be taken before anvil binds it.
  const child = spawnAnvil(dir, opts.port ?? 0, loadFrom);
  let rpc: JsonRpc;
  let replayed = 0;
  try {
    rpc = new JsonRpc(`http://127.0.0.1:${await anvilListening(child)}`);
    if (loadFrom) unlinkSync(loadFrom);
    // As quiet from now on as it was under --silent, which would have hidden its "Listening on" line too.
    await rpc.call("anvil_setLoggingEnabled", [false]);
    await rpc.call("anvil_setBalance", [privateKeyToAddress(operatorKey), OPERATOR_ETH]);
    replayed = await replay(rpc, join(dir, JOURNAL));
  } catch (e) {
    child.kill("SIGKILL");
    throw e;
  }
  const node = new DevNode(dir, rpc, child, opts.snapshotEvery ?? 5000, opts.onSnapshotError);
  if (replayed > 0) await node.snapshot();
  return {
    rpcUrl: rpc.url,
    chainId: DEV_CHAIN_ID,
    operatorKey,
    pid: child.pid!,
    submit: (raws) => node.submit(raws),
    snapshot: () => node.snapshot(),
    stop: () => node.stop(),
  };
}

class DevNode {
  private readonly journal: TxJournal;
  /** Submits, snapshots and idle mining run one at a time: a snapshot must see an empty mempool. */
  private tail: Promise<unknown> = Promise.resolve();
  private readonly idleMiner: NodeJS.Timeout;
  private stopped = false;
  private lastSubmit = 0;
  /**
   * The journal's size when a snapshot taken by itself (after a batch, or when idle) last failed, until
   * one succeeds: the next is tried once as many transactions again are journaled (when idle, once any
   * more are), not after every batch, since a dump that failed for its size or time fails again and each
   * try holds the submits back meanwhile.
   */
  private failedAt: number | undefined;
  private readonly dumpRpc: JsonRpc;
  /**
   * Set when a batch may be in the journal but not in anvil (a failed append or send). The journal then
   * holds nonces the live node may not: a later batch would take them here, while the next start's replay
   * would give them to the journaled one. So nothing more is sent until a restart replays the journal.
   */
  private broken: Error | undefined;

  constructor(
    private readonly dir: string,
    private readonly rpc: JsonRpc,
    private readonly child: ChildProcess,
    private readonly snapshotEvery: number,
    private readonly onSnapshotError: ((err: unknown) => void) | undefined,
  ) {
    this.journal = new TxJournal(join(dir, JOURNAL));
    this.dumpRpc = new JsonRpc(rpc.url, DUMP_TIMEOUT_MS);
    // Transactions from other tools (a wallet, cast) would wait forever under --no-mining. They are in no journal,
    // so the block that mines them is snapshotted at once: a deposit credited from it is never lost by a kill
    // (the credit, an operator transaction, is journaled only after that snapshot, being serialized behind it).
    this.idleMiner = setInterval(() => void this.idle().catch(() => undefined), IDLE_MINE_MS);
    this.idleMiner.unref();
  }

  submit(raws: readonly Hex[]): Promise<SubmitResult[]> {
    return this.serial(async () => {
      if (this.stopped) throw new Error("dev chain stopped");
      if (this.broken) throw new Error(`dev chain needs a restart to replay its journal: ${this.broken.message}`);
      this.lastSubmit = Date.now();
      let sent: RpcResult[];
      try {
        await this.journal.appendBatch(raws);
        sent = await this.rpc.batch(raws.map((r) => ({ method: "eth_sendRawTransaction", params: [r] })));
      } catch (e) {
        this.broken = e as Error;
        throw e;
      }
      // A transaction past a refused nonce stays, as on any node: it waits for that nonce, which the sender
      // fills, as it waits for the nonces another instance sharing this chain is about to send.
      const results = sent.map(submitted);
      const refused = raws.filter((_, i) => !sent[i]!.ok).map((r) => keccak256(r));
      if (refused.length > 0) await this.journal.appendDrop(refused);
      await this.rpc.call("evm_mine");
      // A block that also took transactions other tools sent (a deposit from a wallet) is made durable at once.
      const mined = Number(await this.rpc.call<Hex>("eth_getBlockTransactionCountByNumber", ["latest"]));
      if (mined > raws.length - refused.length || this.journal.size >= (this.failedAt ?? 0) + this.snapshotEvery) await this.snapshotByItself();
      return results;
    });
  }

  snapshot(): Promise<void> {
    return this.serial(() => this.writeSnapshot());
  }

  async stop(): Promise<void> {
    clearInterval(this.idleMiner);
    await this.serial(async () => {
      if (this.stopped) return;
      this.stopped = true;
      try {
        await this.writeSnapshot();
      } catch (err) {
        // The journal is cleared only after a snapshot is written, so it still holds every batch since
        // the last one, and the next start replays them onto that snapshot: nothing is lost.
        this.onSnapshotError?.(err);
      } finally {
        this.journal.close();
      }
    });
    await terminate(this.child);
  }

  private async idle(): Promise<void> {
    await this.serial(async () => {
      if (this.stopped) return;
      const status = await this.rpc.call<{ pending: Hex }>("txpool_status");
      const strays = BigInt(status.pending) > 0n;
      if (strays) await this.rpc.call("evm_mine");
      if (strays || (this.journal.size > (this.failedAt ?? 0) && Date.now() - this.lastSubmit > IDLE_SNAPSHOT_MS)) await this.snapshotByItself();
    });
  }

  /** A snapshot the node takes by itself: one that fails leaves the batch before it mined and answered, and is told, not thrown. */
  private async snapshotByItself(): Promise<void> {
    try {
      await this.writeSnapshot();
    } catch (err) {
      this.failedAt = this.journal.size;
      this.onSnapshotError?.(err);
    }
  }

  private async writeSnapshot(): Promise<void> {
    // A dump holds the chain, not the mempool: a transaction waiting there for an earlier nonce (one that
    // another instance is about to send, or that is lost until a filler takes it) would be in no file once
    // the journal is emptied. So the journal keeps everything until nothing waits.
    const pool = await this.rpc.call<{ pending: Hex; queued: Hex }>("txpool_status");
    if (BigInt(pool.pending) + BigInt(pool.queued) > 0n) return;
    const state = await this.dumpRpc.call<Hex>("anvil_dumpState");
    writeFileDurably(join(this.dir, SNAPSHOT), Buffer.from(state.slice(2), "hex"));
    this.journal.clear();
    this.failedAt = undefined;
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }
}

/**
 * Re-sends each journaled batch and mines it as its own block, as it first was: a batch the node refused
 * whole made an empty block too, and blocks must not come out fewer than they were, or the Vault's recorded
 * deployment block would lie past its own events. A batch already in the snapshot is refused as "nonce too
 * low" and skipped: snapshots are only taken between batches.
 */
async function replay(rpc: JsonRpc, path: string): Promise<number> {
  let replayed = 0;
  for (const raws of readJournal(path).batches) {
    const sent = await rpc.batch(raws.map((r) => ({ method: "eth_sendRawTransaction", params: [r] })));
    let accepted = 0;
    for (const s of sent) {
      if (s.ok) accepted++;
      else if (!isNonceTooLow(s.error)) throw new Error(`journal replay: ${s.error.message}`);
    }
    if (accepted > 0 || raws.length === 0) await rpc.call("evm_mine");
    replayed += accepted;
  }
  return replayed;
}

function isNonceTooLow(e: RpcError): boolean {
  return /nonce too low/i.test(e.message);
}

function spawnAnvil(dir: string, port: number, loadFrom: string | undefined): ChildProcess {
  const anvil = anvilBinary();
  const args = [
    "--pdeathsig", "TERM", "--", anvil,
    "--host", "127.0.0.1",
    "--port", String(port),
    "--chain-id", String(DEV_CHAIN_ID),
    "--no-mining",
    "--disable-block-gas-limit",
    ...(loadFrom ? ["--load-state", loadFrom] : []),
  ];
  // setpriv (util-linux) makes the kernel end anvil when the server dies, even by SIGKILL. Detached:
  // anvil leads a process group of its own, so a signal to the server's group (Ctrl-C in a terminal)
  // reaches only the server, which then takes its final snapshot and ends anvil itself.
  return spawn("setpriv", args, {
    env: { ...process.env, HOME: join(dir, "home") },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
}

/**
 * The port anvil (spawned with its stdout and stderr piped) prints once it listens. Rejects, with what it
 * printed, if it cannot start, exits first, or prints no such line within 15 s. Its stdout is drained after,
 * so a full pipe never blocks it.
 */
export function anvilListening(child: ChildProcess): Promise<number> {
  let stdout = "";
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const printed = () => `${stderr}${stdout}`.trim() || "nothing";
  return new Promise<number>((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(deadline);
      reject(new Error(`${why}; it printed: ${printed()}`));
    };
    const deadline = setTimeout(() => fail('anvil printed no "Listening on" line within 15 s'), 15_000);
    const onData = (d: Buffer) => {
      stdout = (stdout + d.toString()).slice(-4000);
      const line = /Listening on \S+:(\d+)\r?\n/.exec(stdout);
      if (!line) return;
      child.stdout!.off("data", onData).resume();
      clearTimeout(deadline);
      resolve(Number(line[1]));
    };
    child.stdout!.on("data", onData);
    child.once("error", (e) => fail(`cannot start anvil: ${e.message}`));
    child.once("exit", (code, signal) => fail(`anvil exited (${code ?? signal}) before it listened`));
  });
}

/**
 * anvil_dumpState gives gzipped JSON, which we keep (13x smaller to write and fsync), but anvil's
 * --load-state reads only plain JSON, and anvil_loadState over HTTP fails on large states (EPIPE at ~4 MB).
 */
function unpackSnapshot(dir: string): string | undefined {
  const snapshot = join(dir, SNAPSHOT);
  if (!existsSync(snapshot)) return undefined;
  const plain = join(dir, "home", "load-state.json");
  writeFileSync(plain, gunzipSync(readFileSync(snapshot)), { mode: PRIVATE_FILE });
  return plain;
}

/**
 * anvil's binary comes from its platform package, an optional dependency of ours: the registry this
 * project installs from carries only the linux-x64 one, and the `@foundry-rs/anvil` wrapper's other
 * platform packages would break `npm ci` there. Elsewhere, point CHAIN_RPC_URL at any EVM node.
 */
function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  const pkg = `@foundry-rs/anvil-${process.platform}-${process.arch === "x64" ? "amd64" : process.arch}`;
  try {
    return join(dirname(require.resolve(`${pkg}/package.json`)), "bin", "anvil");
  } catch {
    throw new Error(`The embedded chain needs ${pkg}, which is not installed on this platform: set CHAIN_RPC_URL and OPERATOR_PRIVATE_KEY to use another EVM node.`);
  }
}

function loadOrCreateKey(path: string): Hex {
  if (existsSync(path)) return readFileSync(path, "utf8").trim() as Hex;
  const key = generatePrivateKey();
  writeFileDurably(path, Buffer.from(key + "\n"));
  return key;
}
