import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { JsonRpc } from "./rpc.ts";

/** A JSON-RPC endpoint whose next answers the test scripts: a status code, a broken connection, a refusal of the whole batch, or else a result for every call. */
let server: Server;
let url: string;
let script: (number | "reset" | "refused")[];
let requests: number;

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      requests++;
      const next = script.shift();
      if (next === "reset") return void res.socket?.resetAndDestroy();
      if (next === "refused") return void res.writeHead(200).end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid request" } }));
      if (next !== undefined) return void res.writeHead(next).end("scripted");
      const calls = JSON.parse(body) as { id: number }[];
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(calls.map((c) => ({ jsonrpc: "2.0", id: c.id, result: "0x7a69" }))));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  script = [];
  requests = 0;
});

describe("JsonRpc", () => {
  it("sends a read again when the request fails on the way: HTTP 5xx or a broken connection", async () => {
    script = [502, "reset", 500];
    expect(await new JsonRpc(url).call("eth_chainId")).toBe("0x7a69");
    expect(requests).toBe(4);
  });

  it("gives up on a read after four tries", async () => {
    script = [500, 500, 500, 500];
    await expect(new JsonRpc(url).call("eth_call", [{}, "latest"])).rejects.toThrow(/HTTP 500/);
    expect(requests).toBe(4);
  });

  it("never sends a write again, nor a batch holding one: the node may have done it", async () => {
    script = [500];
    await expect(new JsonRpc(url).call("eth_sendRawTransaction", ["0x01"])).rejects.toThrow(/HTTP 500/);
    script = ["reset"];
    await expect(new JsonRpc(url).batch([{ method: "eth_chainId", params: [] }, { method: "evm_mine", params: [] }])).rejects.toThrow();
    expect(requests).toBe(2);
  });

  it("does not send a read again when the endpoint refuses the request itself (HTTP 4xx)", async () => {
    script = [400];
    await expect(new JsonRpc(url).call("eth_getLogs", [{}])).rejects.toThrow(/HTTP 400/);
    expect(requests).toBe(1);
  });

  it("fails each call of a batch the node refuses whole with the node's error (anvil answers one error to a body too large)", async () => {
    script = ["refused"];
    const got = await new JsonRpc(url).batch([{ method: "eth_getLogs", params: [{}] }, { method: "eth_blockNumber", params: [] }]);
    expect(got.map((r) => !r.ok && r.error.message)).toEqual(["eth_getLogs: Invalid request", "eth_blockNumber: Invalid request"]);
    expect(requests).toBe(1);
  });
});
