import { request } from "undici";
import { withDeadline } from "../deadline.ts";

// A minimal JSON-RPC client over HTTP (undici). The dev node needs node-specific methods (anvil_*, evm_mine)
// and JSON-RPC batches whose items fail one by one, which is simpler here than through viem's typed client.

export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`${method}: ${message}`);
    this.name = "RpcError";
  }
}

export type RpcResult = { ok: true; result: unknown } | { ok: false; error: RpcError };

/** One call's answer, or its error thrown. */
export function resultOf<T = unknown>(r: RpcResult): T {
  if (!r.ok) throw r.error;
  return r.result as T;
}

interface Reply {
  id: number;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** A node that takes longer than this is taken for gone: the caller then treats the call's outcome as unknown. */
export const DEFAULT_RPC_TIMEOUT_MS = 15_000;

/** Methods that only read, so sending one again is harmless. eth_getFilterChanges is left out: it consumes what it returns. */
const READ = /^(?:eth_(?:chainId|blockNumber|call|estimateGas|gasPrice|maxPriorityFeePerGas|get(?!FilterChanges)\w+)|debug_trace\w+|txpool_\w+)$/;
/** A read is tried this many times in all by default, waiting 100, 200, 400 ms between tries. */
const READ_ATTEMPTS = 4;
const RETRY_DELAY_MS = 100;

export class JsonRpc {
  constructor(
    readonly url: string,
    private readonly timeoutMs = DEFAULT_RPC_TIMEOUT_MS,
    /** 1 for a caller that polls by itself (waiting for a node to come up) and wants each failure at once. */
    private readonly readAttempts = READ_ATTEMPTS,
  ) {}

  async call<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    const [r] = await this.batch([{ method, params }]);
    return resultOf<T>(r!);
  }

  /**
   * One HTTP request for all calls; each item succeeds or fails on its own, in order. A batch of reads only
   * is sent again when the request fails on the way (no answer, a broken connection, HTTP 5xx): a node or
   * provider that drops a request now and then must not fail a start-up or a recovery pass. A batch with a
   * write never is: the node may have done it, and only the chain can tell.
   */
  async batch(calls: readonly { method: string; params: unknown[] }[]): Promise<RpcResult[]> {
    if (calls.length === 0) return [];
    const reads = calls.every((c) => READ.test(c.method));
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.request(calls);
      } catch (e) {
        if (!reads || attempt >= this.readAttempts || (e instanceof HttpStatusError && e.status < 500)) throw e;
        await new Promise((r) => setTimeout(r, RETRY_DELAY_MS * 2 ** (attempt - 1)));
      }
    }
  }

  private request(calls: readonly { method: string; params: unknown[] }[]): Promise<RpcResult[]> {
    const body = calls.map((c, id) => ({ jsonrpc: "2.0", id, method: c.method, params: c.params }));
    return withDeadline(this.timeoutMs, async (signal) => {
      // undici's request, not fetch: fetch's web streams cost the event loop ~0.5 ms of CPU a call,
      // several calls an order.
      const res = await request(this.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal });
      if (res.statusCode < 200 || res.statusCode > 299) {
        await res.body.dump();
        throw new HttpStatusError(`JSON-RPC ${new URL(this.url).origin}: HTTP ${res.statusCode}`, res.statusCode);
      }
      const replies = (await res.body.json()) as Reply[] | Reply;
      // A node answers a batch it refuses whole (anvil: a body over its size limit) with one error: each call's.
      if (!Array.isArray(replies)) return calls.map((c): RpcResult => ({ ok: false, error: refusal(c.method, replies) }));
      const byId = new Map(replies.map((r) => [r.id, r]));
      return calls.map((c, id): RpcResult => {
        const r = byId.get(id);
        if (r === undefined || r.error) return { ok: false, error: refusal(c.method, r) };
        return { ok: true, result: r.result };
      });
    });
  }
}

/** A call's error: the node's, or none given (no reply for it in the batch). */
function refusal(method: string, r: Reply | undefined): RpcError {
  return r?.error ? new RpcError(method, r.error.code, r.error.message, r.error.data) : new RpcError(method, -32603, "no reply in batch");
}

class HttpStatusError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/**
 * The chain id at CHAIN_RPC_URL, the first call the server and the CLIs make to that chain: one that fails names the
 * setting, by its origin (a provider's key goes in the path or query).
 */
export async function chainIdAt(url: string, timeoutMs: number): Promise<string> {
  return new JsonRpc(url, timeoutMs).call<string>("eth_chainId").catch((e: unknown) => {
    throw new Error(`reading the chain at CHAIN_RPC_URL (${new URL(url).origin}) failed: ${e instanceof Error ? e.message : String(e)}`);
  });
}
