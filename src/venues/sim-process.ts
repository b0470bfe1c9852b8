import { spawn } from "node:child_process";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import { venueEndpoints, type Config } from "../config.ts";
import type { Clock } from "../domain/types.ts";
import type { MarketCatalog } from "../markets/catalog.ts";
import type { StreamLog } from "./net/reconnecting-socket.ts";
import { startVenues, type VenueEndpoints, type VenueName, type VenueSetup } from "./start.ts";
import { terminate } from "../child-process.ts";

export interface SimProcess {
  /** Where each started simulator listens, with the account to sign as: what config.ts reads from `crossfill sim`'s settings. */
  endpoints: VenueEndpoints;
  stop(): Promise<void>;
}

/**
 * Runs `crossfill sim` for the named venues as a child process, so that the simulators and their
 * streams do not share the server's event loop, and resolves once they all listen, with the settings the
 * child sends over its IPC channel (those it prints on stdout). Whatever venues the CLI simulates, this
 * runs. setpriv makes the kernel end the child when the server dies, even by SIGKILL, and the child also
 * stops when its IPC channel closes. Detached: a Ctrl-C to the server's process group reaches the server
 * alone, which stops the child itself.
 */
export function startSimProcess(opts: { names: readonly VenueName[]; env: Record<string, string>; onLine: (line: string) => void }): Promise<SimProcess> {
  // The CLI beside this module: its TypeScript through tsx when the server runs from src/, else the built one.
  const fromSource = extname(fileURLToPath(import.meta.url)) === ".ts";
  const cli = fileURLToPath(new URL(`../cli/main${fromSource ? ".ts" : ".js"}`, import.meta.url));
  const child = spawn("setpriv", ["--pdeathsig", "TERM", "--", process.execPath, ...(fromSource ? ["--import", "tsx"] : []), cli, "sim"], {
    env: { ...process.env, ...opts.env, VENUES: opts.names.join(",") },
    stdio: ["ignore", "ignore", "pipe", "ipc"],
    detached: true,
  });
  let stderr = "";
  let ready = false;
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    if (!ready) stderr = (stderr + d).slice(-4000);
    else for (const line of d.split("\n")) if (line) opts.onLine(line);
  });
  return new Promise<SimProcess>((resolve, reject) => {
    child.once("error", (e) => reject(new Error(`cannot start crossfill sim under setpriv: ${e.message}`)));
    child.once("exit", (code, signal) => {
      if (ready) opts.onLine(`crossfill sim exited (${code ?? signal})`);
      else reject(new Error(`crossfill sim exited (${code ?? signal}): ${stderr.trim()}`));
    });
    child.once("message", (m: { settings: Record<string, string> }) => {
      ready = true;
      resolve({ endpoints: venueEndpoints(m.settings), stop: () => terminate(child) });
    });
  });
}

/**
 * Starts the configured venues as the server does: each at its *_BASE_URL when set, the others at their
 * simulators, run by `crossfill sim` in a child process that stops with the venues.
 */
export async function startConfiguredVenues(
  config: Config,
  opts: { catalog: MarketCatalog; clock: Clock; log?: { child(bindings: Record<string, unknown>): StreamLog }; onSimLine?: (line: string) => void },
): Promise<VenueSetup> {
  const simulated = config.venues.filter((n) => !config.venueEndpoints[n]);
  const sims =
    simulated.length === 0
      ? undefined
      : await startSimProcess({
          names: simulated,
          env: {
            DATA_DIR: config.dataDir,
            DATABASE_URL: config.databaseUrl ?? "",
            SIM_SEED: String(config.simSeed),
            SIM_LATENCY_SCALE: String(config.simLatencyScale),
            SIM_RESOLVE_EVERY_S: String(config.simResolveEveryS),
          },
          onLine: opts.onSimLine ?? (() => undefined),
        });
  try {
    const setup = await startVenues({ names: config.venues, endpoints: { ...sims?.endpoints, ...config.venueEndpoints }, catalog: opts.catalog, clock: opts.clock, ...(opts.log ? { log: opts.log } : {}) });
    return {
      venues: setup.venues,
      stop: async () => {
        await setup.stop();
        await sims?.stop();
      },
    };
  } catch (e) {
    await sims?.stop();
    throw e;
  }
}
