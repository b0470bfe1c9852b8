import { Agent, request } from "node:http";

export interface LoadResult {
  requests: number;
  errors: number;
  statuses: Record<number, number>;
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

/**
 * Closed-loop load: `concurrency` workers each send a request and wait for its answer, for `seconds`
 * (bounded in time and count, loopback only). `next()` builds each request, so signed requests can
 * carry a fresh timestamp and signature.
 */
export async function load(
  baseUrl: string | readonly string[],
  next: () => RequestSpec,
  opts: { concurrency: number; seconds: number; maxRequests: number },
): Promise<LoadResult> {
  // Several servers (instances behind a load balancer): the workers take them in turn.
  const urls = (typeof baseUrl === "string" ? [baseUrl] : baseUrl).map((u) => new URL(u));
  const agent = new Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let errors = 0;
  let sent = 0;
  const started = performance.now();
  const deadline = started + opts.seconds * 1000;

  const one = (url: URL, spec: RequestSpec) =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        { host: url.hostname, port: url.port, method: spec.method, path: spec.path, headers: spec.headers, agent },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(spec.body);
    });

  const worker = async (w: number) => {
    const url = urls[w % urls.length]!;
    while (performance.now() < deadline && sent < opts.maxRequests) {
      sent++;
      const t0 = performance.now();
      try {
        const status = await one(url, next());
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status >= 400) errors++;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, (_, w) => worker(w)));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { requests: latencies.length, errors, statuses, seconds, rps: latencies.length / seconds, p50Ms: pct(0.5), p99Ms: pct(0.99) };
}
