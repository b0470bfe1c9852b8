import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { JsonRpc } from "../rpc.ts";
import { tempDir } from "../testkit.ts";
import { DEV_CHAIN_ID, startDevChain, type DevChain } from "./devchain.ts";

// Another process (a test worker's anvil, a connection's ephemeral port) taking, as anvil starts, the port it is told to use.
const taken = vi.hoisted(() => ({ servers: [] as Server[], steal: false }));
vi.mock("node:child_process", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:child_process")>();
  return {
    ...real,
    spawn: (...call: Parameters<typeof real.spawn>) => {
      const args = call[1] as string[];
      const port = Number(args[args.indexOf("--port") + 1]);
      if (taken.steal && port > 0) taken.servers.push(createServer((socket) => socket.destroy()).listen(port, "127.0.0.1"));
      return real.spawn(...call);
    },
  };
});

afterEach(async () => {
  taken.steal = false;
  await Promise.all(taken.servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

function portOf(chain: DevChain): number {
  return Number(new URL(chain.rpcUrl).port);
}

/** The loopback TCP ports process `pid` listens on (Linux, as the embedded anvil is). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set(readdirSync(`/proc/${pid}/fd`).map((fd) => /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1]));
  return readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f[3] === "0A" && inodes.has(f[9]))
    .map((f) => parseInt(f[1]!.split(":")[1]!, 16));
}

async function answers(chain: DevChain): Promise<number> {
  return Number(await new JsonRpc(chain.rpcUrl).call<string>("eth_chainId"));
}

describe("the dev chain's start", () => {
  it("listens where its own anvil bound: two chains started at once each get a port of their own", async () => {
    const chains = await Promise.all([startDevChain({ dataDir: join(tempDir(), "node") }), startDevChain({ dataDir: join(tempDir(), "node") })]);
    try {
      expect(portOf(chains[0])).not.toBe(portOf(chains[1]));
      for (const chain of chains) {
        expect(listeningPorts(chain.pid)).toEqual([portOf(chain)]);
        expect(await answers(chain)).toBe(DEV_CHAIN_ID);
      }
    } finally {
      await Promise.all(chains.map((c) => c.stop()));
    }
  });

  it("starts when another process takes, as anvil starts, a port that was free a moment before", async () => {
    taken.steal = true;
    const chain = await startDevChain({ dataDir: join(tempDir(), "node") });
    try {
      expect(listeningPorts(chain.pid)).toEqual([portOf(chain)]);
      expect(await answers(chain)).toBe(DEV_CHAIN_ID);
    } finally {
      await chain.stop();
    }
  });

  it("keeps a configured port, and says in anvil's words why it cannot start when another process holds it", async () => {
    const holder = createServer().listen(0, "127.0.0.1");
    await new Promise((r) => holder.once("listening", r));
    const port = (holder.address() as { port: number }).port;
    await expect(startDevChain({ dataDir: join(tempDir(), "node"), port })).rejects.toThrow(/anvil exited \(1\) before it listened; it printed: .*Address already in use/);
    await new Promise((r) => holder.close(r));
    const chain = await startDevChain({ dataDir: join(tempDir(), "node"), port });
    try {
      expect(chain.rpcUrl).toBe(`http://127.0.0.1:${port}`);
      expect(await answers(chain)).toBe(DEV_CHAIN_ID);
    } finally {
      await chain.stop();
    }
  });
});
