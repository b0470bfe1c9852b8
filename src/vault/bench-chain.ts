// Reproduces the figures in docs/chain.md: start time, lock+settle throughput as the chain grows,
// anvil's memory, snapshot cost and restart times (clean and after SIGKILL with a journal to replay).
// Usage: node --import tsx src/vault/bench-chain.ts [totalTx=10000] [concurrentOrders=500]
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { toHex } from "viem";
import { keccak256 } from "../evm/keccak.ts";
import { sotTokenId } from "../contracts/sot.ts";
import { keyOf, openTestChain, tempDir, type TestChain } from "./testkit.ts";

const total = Number(process.argv[2] ?? 10_000);
const workers = Number(process.argv[3] ?? 500);
const client = "0x0000000000000000000000000000000000be4c11" as const;
const tokenId = sotTokenId("bench", "YES");

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

/** CPU seconds used so far by a process (user + system), from /proc: wall time means little on a shared box. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const r = await fn();
  return [r, performance.now() - t0];
}

/** `workers` orders in flight at all times, each a lock then a settle, until `txs` transactions are done. */
async function load(t: TestChain, txs: number, tag: string): Promise<void> {
  let next = 0;
  let done = 0;
  let windowStart = performance.now();
  let cpuStart = [cpuSeconds(process.pid), cpuSeconds(t.chain.pid)];
  const report = 1000;
  const worker = async () => {
    while (next < txs / 2) {
      const o = keccak256(toHex(`${tag}-${next++}`));
      await t.vault.lock(o, client, 1_000n);
      await t.vault.settle(o, 600n, { tokenId, shares: 1_000n });
      done += 2;
      if (done % report === 0) {
        const now = performance.now();
        const block = await t.rpc.call<string>("eth_blockNumber");
        const cpu = [cpuSeconds(process.pid), cpuSeconds(t.chain.pid)];
        const perTx = (i: number) => (((cpu[i]! - cpuStart[i]!) * 1000) / report).toFixed(2);
        console.log(
          `  ${String(done).padStart(6)} tx  ${(report / ((now - windowStart) / 1000)).toFixed(0).padStart(4)} tx/s` +
            `  cpu/tx node ${perTx(0)} ms anvil ${perTx(1)} ms  block ${Number(block)}  anvil ${rssMb(t.chain.pid)} MB`,
        );
        windowStart = now;
        cpuStart = cpu;
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
}

const dir = tempDir();
const [t1, startMs] = await timed(() => openTestChain(dir, { snapshotEvery: 1_000_000 }));
console.log(`fresh start + deploy: ${startMs.toFixed(0)} ms`);
await t1.vault.fund(client, 10n ** 15n, keyOf("bench"));
console.log(`lock+settle, ${workers} orders in flight:`);
const [, loadMs] = await timed(() => load(t1, total, "a"));
console.log(`overall ${(total / (loadMs / 1000)).toFixed(0)} tx/s; anvil RSS ${rssMb(t1.chain.pid)} MB, node RSS ${Math.round(process.memoryUsage().rss / 2 ** 20)} MB`);

const [, snapMs] = await timed(() => t1.chain.snapshot());
const snapMb = statSync(join(dir, "node", "state.json.gz")).size / 2 ** 20;
console.log(`snapshot at ${total} tx: ${snapMs.toFixed(0)} ms, ${snapMb.toFixed(1)} MB gzipped`);
await t1.vault.close();
const [, stopMs] = await timed(() => t1.chain.stop());
console.log(`clean stop (final snapshot): ${stopMs.toFixed(0)} ms`);

const [t2, restartMs] = await timed(() => openTestChain(dir, { snapshotEvery: 1_000_000 }));
console.log(`restart from snapshot: ${restartMs.toFixed(0)} ms`);
await load(t2, 2000, "b");
process.kill(t2.chain.pid, "SIGKILL");
await t2.vault.close().catch(() => undefined);
await new Promise((r) => setTimeout(r, 200));

const [t3, replayMs] = await timed(() => openTestChain(dir, { snapshotEvery: 1_000_000 }));
console.log(`restart after SIGKILL, replaying 2000 journaled tx: ${replayMs.toFixed(0)} ms`);
const bal = await t3.vault.balanceOf(client);
console.log(`balance after replay: available ${bal.available}, locked ${bal.locked}`);
await t3.vault.close();
await t3.chain.stop();
