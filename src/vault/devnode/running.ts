import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileDurably } from "../durable.ts";

const FILE = "running.json";

/**
 * The embedded dev chain belongs to the server that started it: a second node on the same state would
 * replay the journal and snapshot under the first one's feet. So the server leaves the chain's address
 * in its data directory while it runs, and a CLI that needs the chain (the audit) uses that node.
 */
export function announceDevChain(chainDir: string, rpcUrl: string): () => void {
  writeFileDurably(join(chainDir, FILE), JSON.stringify({ pid: process.pid, rpcUrl }) + "\n");
  return () => rmSync(join(chainDir, FILE), { force: true });
}

/** The running server's dev chain of this directory, if a live process announced one. */
export function runningDevChain(chainDir: string): { rpcUrl: string } | undefined {
  let entry: { pid: number; rpcUrl: string };
  try {
    entry = JSON.parse(readFileSync(join(chainDir, FILE), "utf8"));
  } catch {
    return undefined;
  }
  try {
    process.kill(entry.pid, 0);
  } catch {
    // Killed without a chance to clean up: the announcement is stale and the state is free to open.
    return undefined;
  }
  return { rpcUrl: entry.rpcUrl };
}
