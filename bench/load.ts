import autocannon from "autocannon";
import { sign } from "../src/auth/hmac.ts";

export interface LoadResult {
  requests: number;
  errors: number;
  statuses: Record<string, number>;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
}

export interface RequestSpec {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** A signed `POST` (DESIGN §5) with this body, stamped now: build one per request, as the timestamp must be fresh. */
export function signedPost(key: { api_key: string; api_secret: string }, path: string, body: string): RequestSpec {
  const ts = String(Math.floor(Date.now() / 1000));
  return {
    method: "POST",
    path,
    headers: { "content-type": "application/json", "x-api-key": key.api_key, "x-timestamp": ts, "x-signature": sign(key.api_secret, ts, "POST", path, body) },
    body,
  };
}

/**
 * Closed-loop load with autocannon: `connections` keep-alive connections each send a request and wait
 * for its answer, for `seconds`. `next()` builds each request, so signed requests carry a fresh
 * timestamp and signature. Several servers (instances behind a load balancer) share the connections.
 * Latencies are every answer's, whatever its status, to the microsecond (autocannon's own histogram
 * keeps whole milliseconds of 2xx answers only).
 */
export async function load(baseUrl: string | readonly string[], next: () => RequestSpec, opts: { connections: number; seconds: number }): Promise<LoadResult> {
  const urls = typeof baseUrl === "string" ? [baseUrl] : baseUrl;
  const latencies: number[] = [];
  const started = performance.now();
  const results = await Promise.all(
    urls.map((url, i) => {
      const run = autocannon({
        url,
        connections: Math.floor(opts.connections / urls.length) + (i < opts.connections % urls.length ? 1 : 0),
        duration: opts.seconds,
        requests: [{ setupRequest: (req) => ({ ...req, ...next() }) }],
      });
      run.on("response", (_client: unknown, _status: number, _bytes: number, ms: number) => latencies.push(ms));
      return run;
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const statuses: Record<string, number> = {};
  let errors = 0;
  for (const r of results) {
    errors += r.errors;
    for (const [status, { count }] of Object.entries(r.statusCodeStats)) {
      statuses[status] = (statuses[status] ?? 0) + count;
      if (Number(status) >= 400) errors += count;
    }
  }
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { requests: latencies.length, errors, statuses, seconds, rps: latencies.length / seconds, p50Ms: pct(0.5), p99Ms: pct(0.99) };
}
