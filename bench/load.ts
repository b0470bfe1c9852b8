import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
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
  /** Share of one core the loader used meanwhile (a loader near 1 per process may itself be what limits the rate). */
  loaderCores: number;
}

export interface RequestSpec {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** What one loader saw: every answer's latency, not yet summarised, so that several loaders' can be merged. */
export interface Loaded {
  latencies: number[];
  errors: number;
  statuses: Record<string, number>;
  seconds: number;
  cpuSeconds: number;
}

interface LoadOptions {
  connections: number;
  seconds: number;
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
 * Closed-loop load with autocannon, from this process: `connections` keep-alive connections each send a
 * request and wait for its answer, for `seconds`. `next()` builds each request, so signed requests carry a
 * fresh timestamp and signature. Several servers (instances behind a load balancer) share the connections.
 * Latencies are every answer's, whatever its status, to the microsecond (autocannon's own histogram keeps
 * whole milliseconds of 2xx answers only).
 */
export async function load(baseUrl: string | readonly string[], next: () => RequestSpec, opts: LoadOptions): Promise<LoadResult> {
  return summarise([await run(baseUrl, next, opts)]);
}

export interface LoaderJob {
  baseUrl: string;
  request: RequestSpec;
  connections: number;
  seconds: number;
}

/**
 * Loader processes of their own (bench/loader.ts), kept for the whole bench, each sending one fixed
 * request: the loader's CPU is apart from the bench's process, and a request built once is sent as it is
 * (autocannon builds a request from `next()` again for every send, which cost the loader as much CPU as a
 * bare server spends answering).
 */
export class Loaders {
  private constructor(private readonly processes: { child: ChildProcess; lines: AsyncIterator<string> }[]) {}

  static async start(processes: number): Promise<Loaders> {
    const started = Array.from({ length: processes }, () => {
      const child = spawn(process.execPath, ["--import", "tsx", new URL("./loader.ts", import.meta.url).pathname], { stdio: ["pipe", "pipe", "inherit"] });
      return { child, lines: createInterface({ input: child.stdout! })[Symbol.asyncIterator]() };
    });
    // Each says it is ready once node and tsx are loaded, so that no load's window holds a start-up.
    for (const p of started) if ((await p.lines.next()).value !== "ready") throw new Error("bench/loader.ts did not start");
    return new Loaders(started);
  }

  /** One window of load, the connections shared among the processes; `onStart` just before they are told to go. */
  async load(baseUrl: string, request: RequestSpec, opts: LoadOptions & { onStart?: () => void }): Promise<Loaded> {
    const n = this.processes.length;
    const shares = this.processes.map((p, i) => ({ p, connections: Math.floor(opts.connections / n) + (i < opts.connections % n ? 1 : 0) })).filter((s) => s.connections > 0);
    opts.onStart?.();
    for (const { p, connections } of shares) p.child.stdin!.write(JSON.stringify({ baseUrl, request, connections, seconds: opts.seconds } satisfies LoaderJob) + "\n");
    return merge(await Promise.all(shares.map(async ({ p }) => JSON.parse((await p.lines.next()).value as string) as Loaded)));
  }

  stop(): void {
    for (const p of this.processes) p.child.stdin!.end();
  }
}

/** The parts of one window, run side by side. */
function merge(parts: readonly Loaded[]): Loaded {
  const statuses: Record<string, number> = {};
  for (const p of parts) for (const [status, count] of Object.entries(p.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
  return {
    latencies: parts.flatMap((p) => p.latencies),
    errors: parts.reduce((n, p) => n + p.errors, 0),
    statuses,
    seconds: Math.max(...parts.map((p) => p.seconds)),
    cpuSeconds: parts.reduce((n, p) => n + p.cpuSeconds, 0),
  };
}

/** Runs autocannon in this process: `next` builds each request, a fixed request is built once. */
export async function run(baseUrl: string | readonly string[], next: (() => RequestSpec) | RequestSpec, opts: LoadOptions): Promise<Loaded> {
  const urls = typeof baseUrl === "string" ? [baseUrl] : baseUrl;
  const latencies: number[] = [];
  const cpu = process.cpuUsage();
  const started = performance.now();
  const results = await Promise.all(
    urls.map((url, i) => {
      const instance = autocannon({
        url,
        connections: Math.floor(opts.connections / urls.length) + (i < opts.connections % urls.length ? 1 : 0),
        duration: opts.seconds,
        requests: [typeof next === "function" ? { setupRequest: (req) => ({ ...req, ...next() }) } : next],
      });
      instance.on("response", (_client: unknown, _status: number, _bytes: number, ms: number) => latencies.push(ms));
      return instance;
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const statuses: Record<string, number> = {};
  let errors = 0;
  for (const r of results) {
    errors += r.errors;
    for (const [status, { count }] of Object.entries(r.statusCodeStats)) {
      statuses[status] = (statuses[status] ?? 0) + count;
      if (Number(status) >= 400) errors += count;
    }
  }
  return { latencies, errors, statuses, seconds, cpuSeconds: (used.user + used.system) / 1e6 };
}

/** What windows of load, one after the other, saw together. */
export function summarise(windows: readonly Loaded[]): LoadResult {
  const all = merge(windows);
  const latencies = all.latencies.sort((a, b) => a - b);
  const seconds = windows.reduce((n, w) => n + w.seconds, 0);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return {
    requests: latencies.length,
    errors: all.errors,
    statuses: all.statuses,
    seconds,
    rps: latencies.length / seconds,
    p50Ms: pct(0.5),
    p99Ms: pct(0.99),
    loaderCores: all.cpuSeconds / seconds,
  };
}
