import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const root = new URL("..", import.meta.url).pathname;

/** Starts a child in the repository and resolves once a line of its stdout satisfies `ready`. */
export function startChild(args: string[], env: NodeJS.ProcessEnv, ready: (line: string) => boolean): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`${args.join(" ")} did not start in 60 s`)), 60_000);
    lines.on("line", (line) => {
      if (ready(line)) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.on("exit", (code) => reject(new Error(`${args.join(" ")} exited with ${code}`)));
  });
}

/**
 * Starts the server (`args`: serverArgs(), with any Node flags before) on a port it binds itself (PORT=0), and
 * resolves with its URL, read from its start-up line: a port probed free and closed before the server starts
 * could be taken by another process in between, and the server would exit with EADDRINUSE.
 */
export async function startServer(args: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  let url = "";
  const child = await startChild(args, { ...env, PORT: "0", LOG_LEVEL: "info" }, (line) => {
    // The start-up line is logged at info.
    if (!line.includes("crossfill is serving")) return false;
    url = (JSON.parse(line) as { url: string }).url;
    return true;
  });
  return { child, url };
}

let compiled = false;

/**
 * How to run the server as `npm start` runs it: dist/main.js, compiled from src/ once per bench (tsc, ~10 s),
 * so that a bench measures what users run, and measures src/ as it is now. Run through tsx instead, the
 * server's functions are wrapped for their names, ~5 % of a read's CPU that dist/ does not have.
 */
export function serverArgs(): string[] {
  if (!compiled) {
    execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
    compiled = true;
  }
  return ["--enable-source-maps", "dist/main.js"];
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
export function cpuSeconds(pid: number): number {
  // The fields after the command's name, which is in parentheses and may hold spaces; utime and stime are the 12th and 13th of them, in clock ticks (100 a second).
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export interface Crossfill {
  url: string;
  pid: number;
  key: { api_key: string; api_secret: string };
  /** `crossfill audit` of the running server's store, chain and venues: its report, and whether every invariant holds. */
  audit(): { ok: boolean; report: string };
  /** Stops the server and removes its data directory. */
  stop(): Promise<void>;
}

/**
 * The server on its embedded defaults (venue simulators, dev chain) in a fresh data directory, with an API
 * key of scopes read and trade whose account the dev faucet has funded (its first authenticated request).
 * `env` adds to the server's environment; the rate limit per key is one that never bites, so a bench
 * measures the server with its limiter running, not the limiter's refusals.
 */
export async function startCrossfill(env: Record<string, string> = {}): Promise<Crossfill> {
  const dataDir = mkdtempSync(join(tmpdir(), "crossfill-bench-"));
  const full = { DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: "1000000000", ...env };
  let child: ChildProcess | undefined;
  const stop = async () => {
    child?.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 1000));
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const profile = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
    const started = await startServer([...profile, ...serverArgs()], full);
    child = started.child;
    const cli = { cwd: root, env: { ...process.env, ...full, CROSSFILL_FROM_SOURCE: "1" }, encoding: "utf8" as const };
    const key = JSON.parse(execFileSync(process.execPath, ["bin/crossfill.mjs", "keys", "create", "--name", "bench", "--scopes", "read,trade", "--json"], cli)) as Crossfill["key"];
    const url = started.url;
    await fetch(`${url}/v1/account`, { headers: { "x-api-key": key.api_key } });
    const audit = () => {
      const run = spawnSync(process.execPath, ["bin/crossfill.mjs", "audit"], cli);
      return { ok: run.status === 0, report: `${run.stdout}${run.stderr}`.trim() };
    };
    return { url, pid: child.pid!, key, audit, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
