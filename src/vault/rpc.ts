// A minimal JSON-RPC client over fetch. The dev node needs node-specific methods (anvil_*, evm_mine)
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

interface Reply {
  id: number;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** A node that takes longer than this is taken for gone: the caller then treats the call's outcome as unknown. */
export const DEFAULT_RPC_TIMEOUT_MS = 15_000;

export class JsonRpc {
  constructor(
    readonly url: string,
    private readonly timeoutMs = DEFAULT_RPC_TIMEOUT_MS,
  ) {}

  async call<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    const [r] = await this.batch([{ method, params }]);
    if (!r!.ok) throw r!.error;
    return r!.result as T;
  }

  /** One HTTP request for all calls; each item succeeds or fails on its own, in order. */
  async batch(calls: readonly { method: string; params: unknown[] }[]): Promise<RpcResult[]> {
    if (calls.length === 0) return [];
    const body = calls.map((c, id) => ({ jsonrpc: "2.0", id, method: c.method, params: c.params }));
    const res = await fetch(this.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    if (!res.ok) throw new Error(`JSON-RPC ${this.url}: HTTP ${res.status}`);
    const replies = (await res.json()) as Reply[];
    const byId = new Map(replies.map((r) => [r.id, r]));
    return calls.map((c, id): RpcResult => {
      const r = byId.get(id);
      if (!r) return { ok: false, error: new RpcError(c.method, -32603, "no reply in batch") };
      if (r.error) return { ok: false, error: new RpcError(c.method, r.error.code, r.error.message, r.error.data) };
      return { ok: true, result: r.result };
    });
  }
}
