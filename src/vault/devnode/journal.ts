// Write-ahead journal of the signed transactions sent to the dev node since its last snapshot.
// A batch is appended and fsynced before any of it is sent, so whatever the node may have executed
// is on disk; at start the journal is replayed on top of the snapshot.
import { closeSync, fsync, fsyncSync, readFileSync, write } from "node:fs";
import { promisify } from "node:util";
import { type Hex } from "viem";
import { keccak256 } from "../../evm/keccak.ts";
import { openPrivate } from "../../private-files.ts";

/**
 * One line per record. `drop` names transactions the node refused from the batch just before it, so a
 * replay does not resurrect them. Only from that batch: the same transaction may have been accepted in
 * an earlier one and refused as "already imported" when sent again (two instances filling one nonce).
 */
type Record = { batch: Hex[] } | { drop: Hex[] };

const writeAt = promisify(write);
const sync = promisify(fsync);

export class TxJournal {
  private fd: number;
  private count = 0;

  constructor(private readonly path: string) {
    this.fd = openPrivate(path, "a");
  }

  /** Transactions appended since the journal was last emptied. */
  get size(): number {
    return this.count;
  }

  /** Resolves once the batch is on disk (written and fsynced); the caller sends nothing of it before. */
  async appendBatch(raws: readonly Hex[]): Promise<void> {
    await this.write({ batch: [...raws] });
    this.count += raws.length;
  }

  appendDrop(hashes: readonly Hex[]): Promise<void> {
    return this.write({ drop: [...hashes] });
  }

  /** Called once a snapshot holding every journaled transaction is durably on disk. */
  clear(): void {
    closeSync(this.fd);
    this.fd = openPrivate(this.path, "w");
    fsyncSync(this.fd);
    this.count = 0;
  }

  close(): void {
    closeSync(this.fd);
  }

  /**
   * Appends one line and fsyncs it, on libuv's threads: the fsync, a millisecond or more per batch, no
   * longer holds the API's event loop. Callers append one record at a time (the dev node's submits run
   * one after another), so lines never interleave.
   */
  private async write(record: Record): Promise<void> {
    const data = Buffer.from(JSON.stringify(record) + "\n");
    for (let off = 0; off < data.length; ) off += (await writeAt(this.fd, data, off, data.length - off)).bytesWritten;
    await sync(this.fd);
  }
}

/**
 * The journaled batches in order, each without the transactions the node refused from it. A torn last
 * line is what a crash during an append leaves: that batch was never sent (sending waits for the fsync),
 * so it is ignored.
 */
export function readJournal(path: string): { batches: Hex[][] } {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { batches: [] };
    throw e;
  }
  const lines = text.split("\n");
  const batches: Hex[][] = [];
  lines.forEach((line, i) => {
    if (line === "") return;
    let rec: Record;
    try {
      rec = JSON.parse(line) as Record;
    } catch {
      const last = lines.slice(i + 1).every((l) => l === "");
      if (last) return;
      throw new Error(`${path}: corrupt journal line ${i + 1}`);
    }
    if ("batch" in rec) batches.push(rec.batch);
    else {
      const dropped = new Set(rec.drop);
      const last = batches.length - 1;
      if (last >= 0) batches[last] = batches[last]!.filter((r) => !dropped.has(keccak256(r)));
    }
  });
  return { batches };
}
