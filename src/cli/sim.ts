import { rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Command } from "commander";
import { loadConfig } from "../config.ts";
import { systemClock } from "../domain/types.ts";
import { loadCatalog } from "../markets/catalog-db.ts";
import { startVenueSims, VENUE_NAMES, type VenueEndpoints } from "../venues/start.ts";
import { privateDir } from "../private-files.ts";
import { count } from "./funds.ts";
import { withStore } from "./with-store.ts";

/** Characters a value may hold and still be used unquoted in a shell `export`, `env $(cat file)` or an env file. */
const SHELL_SAFE = /^[\w@%+=:,./-]+$/;

/**
 * The settings src/config.ts reads to point each adapter at a venue, for the simulators' endpoints: the
 * inverse of config.ts's venueEndpoints. Kalshi's key is read from a file: kalshiKeyFile, holding its PEM.
 */
function settings(endpoints: VenueEndpoints, kalshiKeyFile: string): [string, string][] {
  const out: [string, string][] = [];
  const { polymarket: p, kalshi: k, limitless: l, opinion: o } = endpoints;
  if (p) {
    out.push(["POLYMARKET_BASE_URL", p.baseUrl], ["POLYMARKET_WS_URL", p.wsUrl]);
    out.push(["POLYMARKET_API_KEY", p.credentials.apiKey], ["POLYMARKET_SECRET", p.credentials.secret]);
    out.push(["POLYMARKET_PASSPHRASE", p.credentials.passphrase], ["POLYMARKET_PRIVATE_KEY", p.credentials.privateKey]);
  }
  if (k) {
    out.push(["KALSHI_BASE_URL", k.baseUrl], ["KALSHI_WS_URL", k.wsUrl]);
    out.push(["KALSHI_KEY_ID", k.credentials.keyId], ["KALSHI_PRIVATE_KEY_FILE", kalshiKeyFile]);
  }
  if (l) {
    out.push(["LIMITLESS_BASE_URL", l.baseUrl], ["LIMITLESS_WS_URL", l.wsUrl]);
    out.push(["LIMITLESS_API_KEY", l.credentials.apiKey], ["LIMITLESS_SECRET", l.credentials.secret]);
    out.push(["LIMITLESS_PRIVATE_KEY", l.credentials.privateKey], ["LIMITLESS_OWNER_ID", String(l.credentials.ownerId)]);
  }
  if (o) {
    out.push(["OPINION_BASE_URL", o.baseUrl], ["OPINION_WS_URL", o.wsUrl], ["OPINION_API_KEY", o.credentials.apiKey]);
    out.push(["OPINION_PRIVATE_KEY", o.credentials.privateKey], ["OPINION_MULTISIG_ADDRESS", o.credentials.multiSigAddress]);
  }
  return out;
}

function writePrivateFile(path: string, text: string): void {
  // narrowed too if it exists: a data directory may have been left world-readable by an older version
  privateDir(dirname(path));
  // removed first: a write keeps an existing file's mode, and the key must never be readable by others
  rmSync(path, { force: true });
  writeFileSync(path, text, { mode: 0o600, flag: "wx" });
}

/**
 * `crossfill sim`: the venue simulators as a process of their own, so a server (or several, or a restart)
 * can run against simulators that outlive it. Stdout carries only the KEY=value settings, for scripts.
 */
export function registerSimCommand(program: Command, fail: (message: string) => never): void {
  program
    .command("sim")
    .description("Run the venue simulators in this process and print, on stdout, the KEY=value settings that point the server at them")
    .option("--port-base <n>", "polymarket listens on n, kalshi on n+1, limitless on n+2, opinion on n+3 (default: free ports)")
    .action(async (o: { portBase?: string }) => {
      const portBase = o.portBase === undefined ? undefined : count(o.portBase, "--port-base", 65535 - (VENUE_NAMES.length - 1), fail);
      const config = loadConfig();
      // the server's catalog, events accepted with `crossfill events accept` included, as the server would read it at start
      const catalog = await withStore((store) => loadCatalog(store), { create: true });
      const sims = await startVenueSims({
        names: config.venues,
        catalog,
        seed: config.simSeed,
        latencyScale: config.simLatencyScale,
        clock: systemClock,
        portBase,
        resolveEveryMs: config.simResolveEveryS > 0 ? config.simResolveEveryS * 1000 : undefined,
        // the venues remember what closed and resolved, as real venues do, across restarts of the simulators
        stateDir: join(config.dataDir, "sim"),
      });
      const kalshiKeyFile = join(config.dataDir, "sim", "kalshi-private-key.pem");
      if (sims.endpoints.kalshi) writePrivateFile(kalshiKeyFile, sims.endpoints.kalshi.credentials.privateKeyPem);
      const lines = settings(sims.endpoints, kalshiKeyFile);
      const unsafe = lines.find(([, v]) => !SHELL_SAFE.test(v));
      if (unsafe) {
        await sims.stop();
        fail(`${unsafe[0]} would need quoting in a shell (${JSON.stringify(unsafe[1])}): choose a DATA_DIR without spaces or special characters`);
      }
      let stopping = false;
      const stop = (signal: NodeJS.Signals) => {
        if (stopping) return;
        stopping = true;
        process.stderr.write(`crossfill sim: ${signal}, stopping the simulators\n`);
        sims.stop().then(
          () => process.exit(0),
          (e: unknown) => fail(`stopping the simulators failed: ${e instanceof Error ? e.message : String(e)}`),
        );
      };
      // one write, so a script that waits for a non-empty file reads every line
      process.stdout.write(lines.map(([k, v]) => `${k}=${v}\n`).join(""));
      // Started by a server (src/venues/sim-process.ts): the same settings over its IPC channel, whole, and
      // the simulators end with that server, whichever way it ends.
      if (process.send) {
        process.send({ settings: Object.fromEntries(lines) });
        process.on("disconnect", () => stop("SIGTERM"));
      }

      for (const name of config.venues) process.stderr.write(`crossfill sim: ${name} at ${sims.endpoints[name]?.baseUrl}\n`);
      process.stderr.write("crossfill sim: running until SIGINT (Ctrl-C) or SIGTERM\n");
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    });
}
