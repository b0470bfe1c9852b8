import { createHook } from "node:async_hooks";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withDeadline } from "./deadline.ts";
import { JsonRpc } from "./vault/rpc.ts";
import { sendRequest } from "./venues/net/http.ts";

/** A timeout no other timer in the process has. */
const LONG_MS = 61_234;

/**
 * The timers of LONG_MS that `work` created and that are still pending once it settled (async_hooks sees
 * every timer, Node's own unreferenced ones too; a Timeout holds its duration as `_idleTimeout`).
 */
async function timersLeft(work: () => Promise<unknown>): Promise<number> {
  const pending = new Set<number>();
  const hook = createHook({
    init: (id, type, _, resource) => void (type === "Timeout" && (resource as { _idleTimeout?: number })._idleTimeout === LONG_MS && pending.add(id)),
    destroy: (id) => void pending.delete(id),
  }).enable();
  try {
    await work();
    await new Promise((r) => setImmediate(r));
    return pending.size;
  } finally {
    hook.disable();
  }
}

describe("withDeadline", () => {
  it("aborts work still running at the deadline with a TimeoutError", async () => {
    const started = performance.now();
    const err = await withDeadline(50, (signal) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)))).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "TimeoutError", message: "no answer within 50 ms" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
  });

  it("leaves no timer behind once the work settled, answered or failed", async () => {
    expect(await timersLeft(async () => expect(await withDeadline(LONG_MS, async () => 7)).toBe(7))).toBe(0);
    expect(await timersLeft(() => expect(withDeadline(LONG_MS, async () => Promise.reject(new Error("refused")))).rejects.toThrow("refused"))).toBe(0);
  });
});

describe("HTTP clients' deadlines", () => {
  // Answers /fast at once and never answers anything else.
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === "/fast") res.setHeader("content-type", "application/json").end(JSON.stringify([{ jsonrpc: "2.0", id: 0, result: "0x1" }]));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it("a venue that does not answer in time is an unknown outcome, and an answer leaves no timer running", async () => {
    expect(await sendRequest(url, { method: "POST", path: "/slow", body: {}, timeoutMs: 100 })).toEqual({ ok: false, kind: "unknown", reason: "timeout: no answer within 100 ms" });
    expect(await timersLeft(async () => expect(await sendRequest(url, { method: "GET", path: "/fast", timeoutMs: LONG_MS })).toMatchObject({ ok: true, status: 200 }))).toBe(0);
  });

  it("a chain node that does not answer in time fails the call, and an answer leaves no timer running", async () => {
    await expect(new JsonRpc(`${url}/slow`, 100, 1).call("eth_sendRawTransaction", ["0x00"])).rejects.toMatchObject({ name: "TimeoutError" });
    expect(await timersLeft(async () => expect(await new JsonRpc(`${url}/fast`, LONG_MS).call("eth_blockNumber")).toBe("0x1"))).toBe(0);
  });
});
