import { spawn } from "node:child_process";
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
interface Loaded {
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

/**
 * The same load of one fixed request, from `processes` loader processes of their own (bench/loader.ts),
 * the connections shared among them: the loader's CPU is then apart from the bench's process, and a
 * request built once is sent as it is (autocannon builds a request from `next()` again for every send,
 * which cost the loader as much CPU as a bare server spends answering).
 */
export async function loadApart(baseUrl: string, request: RequestSpec, opts: LoadOptions & { processes: number; onStart?: () => void }): Promise<LoadResult> {
  const shares = Array.from({ length: opts.processes }, (_, i) => Math.floor(opts.connections / opts.processes) + (i < opts.connections % opts.processes ? 1 : 0));
  const loaders = shares.filter((c) => c > 0).map((connections) => startLoader({ baseUrl, request, connections, seconds: opts.seconds }));
  // All started (node and tsx loaded) before any loads, so that the load's window holds nothing else.
  await Promise.all(loaders.map((l) => l.ready));
  opts.onStart?.();
  for (const l of loaders) l.go();
  return summarise(await Promise.all(loaders.map((l) => l.done)));
}

export interface LoaderJob {
  baseUrl: string;
  request: RequestSpec;
  connections: number;
  seconds: number;
}

/** A bench/loader.ts process: it says `ready` on stdout, loads when told `go` on stdin, then writes what it saw. */
function startLoader(job: LoaderJob): { ready: Promise<void>; go: () => void; done: Promise<Loaded> } {
  const child = spawn(process.execPath, ["--import", "tsx", new URL("./loader.ts", import.meta.url).pathname, JSON.stringify(job)], { stdio: ["pipe", "pipe", "inherit"] });
  const out: Buffer[] = [];
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  child.stdout.on("data", (b: Buffer) => {
    out.push(b);
    if (Buffer.concat(out).toString().startsWith("ready\n")) ready();
  });
  const done = new Promise<Loaded>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(Buffer.concat(out).toString().slice("ready\n".length)) as Loaded) : reject(new Error(`bench/loader.ts exited with ${code}`))));
  });
  return { ready: Promise.race([isReady, done.then(() => undefined)]), go: () => child.stdin.end("go\n"), done };
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

function summarise(parts: readonly Loaded[]): LoadResult {
  const latencies = parts.flatMap((p) => p.latencies).sort((a, b) => a - b);
  const seconds = Math.max(...parts.map((p) => p.seconds));
  const statuses: Record<string, number> = {};
  for (const p of parts) for (const [status, count] of Object.entries(p.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return {
    requests: latencies.length,
    errors: parts.reduce((n, p) => n + p.errors, 0),
    statuses,
    seconds,
    rps: latencies.length / seconds,
    p50Ms: pct(0.5),
    p99Ms: pct(0.99),
    loaderCores: parts.reduce((s, p) => s + p.cpuSeconds, 0) / seconds,
  };
}
