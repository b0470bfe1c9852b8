import { createServer, type Server } from "node:http";
import { request } from "undici";
import type { Hex } from "viem";
import type { DevChain } from "./devchain.ts";

interface Call {
  jsonrpc?: string;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

/**
 * The dev chain's JSON-RPC endpoint for processes other than the one running it (`crossfill chain`,
 * several server instances): every call goes to anvil as it is, except the operator's signed
 * transactions, which go through the dev chain's journal (`DevChain.submit`: journaled, then sent and
 * mined as one block) so that they survive a kill of the chain's process as the embedded chain's do.
 * The raw transactions of one JSON-RPC batch are one journaled batch.
 */
export async function startRpcFront(chain: DevChain, port = 0): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void answer(chain, Buffer.concat(chunks).toString("utf8")).then(
        (body) => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(body);
        },
        (err: unknown) => {
          res.writeHead(502, { "content-type": "application/json" });
          res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32603, message: err instanceof Error ? err.message : String(err) } }));
        },
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the dev chain's RPC front has no TCP address");
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function answer(chain: DevChain, text: string): Promise<string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
  }
  const calls = (Array.isArray(parsed) ? parsed : [parsed]) as Call[];
  const raws = calls.flatMap((c, i) => (c.method === "eth_sendRawTransaction" && Array.isArray(c.params) ? [{ i, raw: c.params[0] as Hex }] : []));
  const others = calls.flatMap((c, i) => (raws.some((r) => r.i === i) ? [] : [{ i, call: c }]));
  const replies: unknown[] = new Array(calls.length);
  if (raws.length > 0) {
    const results = await chain.submit(raws.map((r) => r.raw));
    raws.forEach(({ i }, k) => {
      const r = results[k]!;
      replies[i] = r.ok ? { jsonrpc: "2.0", id: calls[i]!.id, result: r.hash } : { jsonrpc: "2.0", id: calls[i]!.id, error: { code: -32000, message: r.error } };
    });
  }
  if (others.length > 0) {
    const res = await request(chain.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(others.map((o) => o.call)) });
    const got = (await res.body.json()) as { id?: unknown }[];
    others.forEach(({ i, call }) => (replies[i] = got.find((g) => g.id === call.id) ?? { jsonrpc: "2.0", id: call.id, error: { code: -32603, message: "no reply" } }));
  }
  return JSON.stringify(Array.isArray(parsed) ? replies : replies[0]);
}
