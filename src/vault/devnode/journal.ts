// Write-ahead journal of the signed transactions sent to the dev node since its last snapshot.
// A batch is appended and fsynced before any of it is sent, so whatever the node may have executed
// is on disk; at start the journal is replayed on top of the snapshot.
import { closeSync, fsyncSync, readFileSync, writeSync } from "node:fs";
import { keccak256, type Hex } from "viem";
import { openPrivate } from "../../private-files.ts";

/**
 * One line per record. `drop` names transactions the node refused from the batch just before it, so a
 * replay does not resurrect them. Only from that batch: the same transaction may have been accepted in
 * an earlier one and refused as "already imported" when sent again (two instances filling one nonce).
 */
type Record = { batch: Hex[] } | { drop: Hex[] };

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

  appendBatch(raws: readonly Hex[]): void {
    this.write({ batch: [...raws] });
    this.count += raws.length;
  }

  appendDrop(hashes: readonly Hex[]): void {
    this.write({ drop: [...hashes] });
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

  private write(record: Record): void {
    const data = Buffer.from(JSON.stringify(record) + "\n");
    for (let off = 0; off < data.length; ) off += writeSync(this.fd, data, off);
    fsyncSync(this.fd);
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
