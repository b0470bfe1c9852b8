// Test support: a bare anvil that mines only when told, behind a JSON-RPC proxy that can lose, refuse or
// half-answer the operator's eth_sendRawTransaction, as a flaky node or network would.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Hex } from "viem";
import { JsonRpc } from "./rpc.ts";

/**
 * What the node does with one JSON-RPC batch of raw transactions: `pass` sends them all and mines;
 * `lost` sends none and the connection fails; `unanswered` sends them all (no mining) and the connection
 * fails; `refuse` refuses the transactions at the given indexes, sends the others and mines.
 */
export type SendFault = { kind: "pass" | "lost" | "unanswered" } | { kind: "refuse"; indexes: number[] };

interface Call {
  jsonrpc: "2.0";
  id: number;
  method: string;
  params: unknown[];
}

export interface FaultyNode {
  /** The proxy: give this to the code under test. */
  url: string;
  /** anvil itself, for the test's own calls. */
  rpc: JsonRpc;
  /** Decides the fate of each batch of raw transactions (default: pass). */
  onSend: (raws: Hex[]) => SendFault;
  stop(): Promise<void>;
}

export async function startFaultyNode(): Promise<FaultyNode> {
  const anvil = await startAnvil();
  const node: FaultyNode = { url: "", rpc: anvil.rpc, onSend: () => ({ kind: "pass" }), stop: async () => undefined };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      void answer(node, anvil.url, JSON.parse(body) as Call | Call[]).then((reply) => {
        if (reply === undefined) return void res.destroy();
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  node.url = `http://127.0.0.1:${port}`;
  node.stop = async () => {
    await close(server);
    anvil.child.kill("SIGKILL");
  };
  return node;
}

/** The reply to send, or undefined to break the connection instead. */
async function answer(node: FaultyNode, upstream: string, body: Call | Call[]): Promise<unknown> {
  const calls = Array.isArray(body) ? body : [body];
  const sends = calls.filter((c) => c.method === "eth_sendRawTransaction");
  if (sends.length === 0) return forward(upstream, body);
  const fault = node.onSend(sends.map((c) => c.params[0] as Hex));
  if (fault.kind === "lost") return undefined;
  const refused = new Set(fault.kind === "refuse" ? fault.indexes.map((i) => sends[i]!.id) : []);
  const passed = (await forward(upstream, calls.filter((c) => !refused.has(c.id)))) as { id: number }[];
  if (fault.kind === "unanswered") return undefined;
  await node.rpc.call("evm_mine");
  const byId = new Map(passed.map((r) => [r.id, r]));
  return calls.map((c) => byId.get(c.id) ?? { jsonrpc: "2.0", id: c.id, error: { code: -32000, message: "refused by the test" } });
}

async function forward(url: string, body: unknown): Promise<unknown> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return res.json();
}

/** anvil without the dev chain's idle miner: nothing is mined unless the test or the proxy says so. */
async function startAnvil(): Promise<{ url: string; rpc: JsonRpc; child: ChildProcess }> {
  const require = createRequire(import.meta.url);
  const bin = join(dirname(require.resolve("@foundry-rs/anvil-linux-amd64/package.json")), "bin", "anvil");
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await close(probe);
  const child = spawn(bin, ["--port", String(port), "--no-mining", "--silent"], { stdio: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  const rpc = new JsonRpc(url);
  for (let tries = 0; ; tries++) {
    try {
      await rpc.call("eth_chainId");
      return { url, rpc, child };
    } catch (e) {
      if (tries > 500) throw e;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
