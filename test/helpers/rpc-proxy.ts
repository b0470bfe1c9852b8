// Test support: a JSON-RPC proxy on loopback that does to each request what a flaky node or network
// would (an error answer, a refused connection, an answer lost after the node acted, a slow or late
// request), and a bare anvil behind it that mines only when told. The sender's unit tests and the
// chain fault suite both go through this one proxy.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Hex } from "viem";
import { anvilListening } from "../../src/vault/devnode/devchain.ts";
import { JsonRpc } from "../../src/vault/rpc.ts";

export interface RpcCall {
  jsonrpc: "2.0";
  id: number;
  method: string;
  params: unknown[];
}

/**
 * What the proxy does with one HTTP request (one call or one JSON-RPC batch):
 * - `pass`: forwards it and answers;
 * - `error`: answers HTTP 500 without forwarding: the node never saw it;
 * - `refuse`: resets the connection without forwarding, as a refused connection: the node never saw it;
 * - `drop`: forwards it, then breaks the connection before answering: the node did it, the client cannot know;
 * - `delay`: forwards it `ms` later and answers if the client still waits. Past the client's timeout the
 *   client has given up by then, and the node does it anyway;
 * - `refuseTxs`: of the batch's eth_sendRawTransaction calls, the node refuses those at `indexes` and takes the others.
 */
export type ProxyFault =
  | { kind: "pass" | "error" | "refuse" | "drop" }
  | { kind: "delay"; ms: number }
  | { kind: "refuseTxs"; indexes: number[] };

export interface RpcProxy {
  /** Give this to the code under test. */
  url: string;
  /** Decides each request's fate (default: pass). */
  decide: (calls: readonly RpcCall[]) => ProxyFault;
  /** Resolves once no request is held or on its way to the node: none of them can still act on it. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

export interface ProxyOptions {
  /** Runs after transactions were forwarded and before they are answered: a node that mines only when told mines here. */
  afterSend?: () => Promise<unknown>;
}

export async function startRpcProxy(upstream: string, opts: ProxyOptions = {}): Promise<RpcProxy> {
  let inFlight = 0;
  let onSettled: (() => void)[] = [];
  const proxy: RpcProxy = {
    url: "",
    decide: () => ({ kind: "pass" }),
    settled: () => (inFlight === 0 ? Promise.resolve() : new Promise((resolve) => onSettled.push(resolve))),
    stop: async () => undefined,
  };
  const handle = async (body: string, res: ServerResponse): Promise<void> => {
    const parsed = JSON.parse(body) as RpcCall | RpcCall[];
    const calls = Array.isArray(parsed) ? parsed : [parsed];
    const fault = proxy.decide(calls);
    if (fault.kind === "error") return void res.writeHead(500, { "content-type": "text/plain" }).end("injected fault");
    if (fault.kind === "refuse") return void res.socket?.resetAndDestroy();
    if (fault.kind === "delay") await new Promise((r) => setTimeout(r, fault.ms));
    const refused = new Set(fault.kind === "refuseTxs" ? fault.indexes.map((i) => calls.filter(isSend)[i]!.id) : []);
    const passed = (await forward(upstream, calls.filter((c) => !refused.has(c.id)))) as { id: number }[];
    if (fault.kind === "drop") return void res.destroy();
    if (opts.afterSend && calls.some(isSend)) await opts.afterSend();
    const byId = new Map(passed.map((r) => [r.id, r]));
    const replies = calls.map((c) => byId.get(c.id) ?? { jsonrpc: "2.0", id: c.id, error: { code: -32000, message: "refused by the test" } });
    if (!res.destroyed) res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(parsed) ? replies : replies[0]));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      inFlight++;
      handle(body, res)
        // The node itself failed (it was stopped): the client sees a broken connection.
        .catch(() => res.destroy())
        .finally(() => {
          if (--inFlight > 0) return;
          const waiting = onSettled;
          onSettled = [];
          for (const resolve of waiting) resolve();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  proxy.stop = () => {
    server.closeAllConnections();
    return close(server);
  };
  return proxy;
}

/** One JSON-RPC answer, as a node sends it. */
export type RpcReply = { jsonrpc: "2.0"; id: number; result?: unknown; error?: unknown };

/**
 * A JSON-RPC URL in front of `upstream` as a pool of two nodes behind one URL: a request (one call or a batch) holding a
 * call `toOther` picks goes to the other node, which answers each of its calls by `other` (`forward` asks `upstream`);
 * any other request goes to `upstream`. A node of the pool behind, or on another fork, is an `other` that rewrites.
 */
export async function startPool(
  upstream: string,
  toOther: (c: RpcCall) => boolean,
  other: (c: RpcCall, forward: (c: RpcCall) => Promise<RpcReply>) => Promise<RpcReply>,
): Promise<{ url: string; stop(): Promise<void> }> {
  const one = async (c: RpcCall) => ((await forward(upstream, [c])) as RpcReply[])[0]!;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      const parsed = JSON.parse(body) as RpcCall | RpcCall[];
      const calls = Array.isArray(parsed) ? parsed : [parsed];
      void (calls.some(toOther) ? Promise.all(calls.map((c) => other(c, one))) : forward(upstream, calls)).then((answers) => {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(parsed) ? answers : answers[0]));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    stop: () => {
      server.closeAllConnections();
      return close(server);
    },
  };
}

function isSend(c: RpcCall): boolean {
  return c.method === "eth_sendRawTransaction";
}

async function forward(url: string, calls: RpcCall[]): Promise<unknown[]> {
  if (calls.length === 0) return [];
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(calls) });
  return (await res.json()) as unknown[];
}

export interface FaultyNode {
  /** The proxy: give this to the code under test. */
  url: string;
  /** anvil itself, for the test's own calls. */
  rpc: JsonRpc;
  /** Decides the fate of each request that sends raw transactions (default: pass); every other request passes. */
  onSend: (raws: Hex[]) => ProxyFault;
  /** See RpcProxy.settled. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

/** A bare anvil that mines only when told (or when the proxy passes transactions), behind the proxy. */
export async function startFaultyNode(): Promise<FaultyNode> {
  const anvil = await startAnvil();
  const proxy = await startRpcProxy(anvil.url, { afterSend: () => anvil.rpc.call("evm_mine") });
  const node: FaultyNode = {
    url: proxy.url,
    rpc: anvil.rpc,
    onSend: () => ({ kind: "pass" }),
    settled: () => proxy.settled(),
    stop: async () => {
      await proxy.stop();
      anvil.child.kill("SIGKILL");
    },
  };
  proxy.decide = (calls) => {
    const raws = calls.filter(isSend).map((c) => c.params[0] as Hex);
    return raws.length === 0 ? { kind: "pass" } : node.onSend(raws);
  };
  return node;
}

/** anvil without the dev chain's idle miner: nothing is mined unless the test or the proxy says so. */
async function startAnvil(): Promise<{ url: string; rpc: JsonRpc; child: ChildProcess }> {
  const require = createRequire(import.meta.url);
  const bin = join(dirname(require.resolve("@foundry-rs/anvil-linux-amd64/package.json")), "bin", "anvil");
  const child = spawn(bin, ["--port", "0", "--no-mining"], { stdio: ["ignore", "pipe", "pipe"] });
  try {
    const url = `http://127.0.0.1:${await anvilListening(child)}`;
    const rpc = new JsonRpc(url);
    await rpc.call("anvil_setLoggingEnabled", [false]);
    return { url, rpc, child };
  } catch (e) {
    child.kill("SIGKILL");
    throw e;
  }
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
