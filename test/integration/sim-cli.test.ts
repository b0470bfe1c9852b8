import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findOrCreateAccount } from "../../src/accounts/service.ts";
import { createApiKey } from "../../src/auth/keys.ts";
import { encryptSecret, loadMasterKey } from "../../src/auth/secrets.ts";
import { loadConfig } from "../../src/config.ts";
import { systemClock } from "../../src/domain/types.ts";
import { startCrossfill, type Crossfill } from "../../src/main.ts";
import { MarketCatalog } from "../../src/markets/catalog.ts";
import type { SimMarketView } from "../../src/venues/net/sim-markets.ts";
import { drawnOutcome, scheduleOrder } from "../../src/venues/simulated/lifecycle.ts";
import { CrossfillClient } from "../../src/sdk/client.ts";
import { startVenues, VENUE_NAMES } from "../../src/venues/start.ts";

const BIN = fileURLToPath(new URL("../../bin/crossfill.mjs", import.meta.url));

/** Exactly what src/config.ts reads to point each adapter elsewhere, for every venue. */
const KEYS = [
  "POLYMARKET_BASE_URL",
  "POLYMARKET_WS_URL",
  "POLYMARKET_API_KEY",
  "POLYMARKET_SECRET",
  "POLYMARKET_PASSPHRASE",
  "POLYMARKET_PRIVATE_KEY",
  "KALSHI_BASE_URL",
  "KALSHI_WS_URL",
  "KALSHI_KEY_ID",
  "KALSHI_PRIVATE_KEY_FILE",
  "LIMITLESS_BASE_URL",
  "LIMITLESS_WS_URL",
  "LIMITLESS_API_KEY",
  "LIMITLESS_SECRET",
  "LIMITLESS_PRIVATE_KEY",
  "LIMITLESS_OWNER_ID",
  "OPINION_BASE_URL",
  "OPINION_WS_URL",
  "OPINION_API_KEY",
  "OPINION_PRIVATE_KEY",
  "OPINION_MULTISIG_ADDRESS",
];

let dataDir: string;
let sim: ChildProcess;
let simStderr = "";
let lines: string[];
let settings: Record<string, string>;
let server: Crossfill | undefined;

/** Starts `crossfill sim` in `dir` and resolves with it and its stdout lines once `settings` lines are printed. */
function spawnSim(dir: string, env: Record<string, string>, settings: number): Promise<{ child: ChildProcess; lines: string[] }> {
  const child = spawn(process.execPath, [BIN, "sim"], { env: { ...process.env, DATA_DIR: dir, SIM_LATENCY_SCALE: "0.05", ...env } });
  child.stderr!.on("data", (d) => (simStderr += d));
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += d;
      const complete = out.split("\n").slice(0, -1);
      if (complete.length >= settings) resolve({ child, lines: complete });
    });
    child.once("exit", (code) => reject(new Error(`crossfill sim exited with ${code} before printing its settings: ${simStderr}`)));
  });
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "crossfill-sim-cli-"));
  ({ child: sim, lines } = await spawnSim(dataDir, {}, KEYS.length));
  settings = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
});
afterAll(async () => {
  await server?.stop();
  if (sim.exitCode === null) sim.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

describe("crossfill sim", () => {
  it("prints only shell-ready KEY=value lines, exactly the settings config.ts reads, and keeps Kalshi's key private", () => {
    expect(lines.map((l) => l.slice(0, l.indexOf("=")))).toEqual(KEYS);
    for (const l of lines) expect(l).toMatch(/^[A-Z_]+=[\w@%+=:,./-]+$/);
    expect(statSync(settings.KALSHI_PRIVATE_KEY_FILE!).mode & 0o777).toBe(0o600);
  });

  it("serves a server that starts no simulator of its own, fills a signed order, and outlives that server", async () => {
    // A gateway in front of a venue may take its key in the URL's user part: GET /v1/health, which needs no key, shows origins only.
    const withKey = new URL(settings.LIMITLESS_BASE_URL!);
    withKey.username = "gateway";
    withKey.password = "g4teway-k3y";
    const config = loadConfig({ ...settings, LIMITLESS_BASE_URL: withKey.href, DATA_DIR: dataDir, PORT: "0" });
    server = await startCrossfill(config, { logger: false });
    const master = await loadMasterKey({ env: undefined, dataDir });
    const { account } = await findOrCreateAccount(server.store, "sim-cli@example.com", (k) => encryptSecret(master, k));
    const key = await createApiKey(server.store, master, { accountId: account.id, name: "test", scopes: ["read", "trade"], ipAllowlist: null });
    const client = new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret });

    // the SDK's Health type leaves out base_url, so read the body as the server sends it
    const health = (await client.request("GET", "/v1/health")).body as { venues: { base_url: string }[] };
    const origins = [settings.POLYMARKET_BASE_URL, settings.KALSHI_BASE_URL, settings.LIMITLESS_BASE_URL, settings.OPINION_BASE_URL].map((u) => new URL(u!).origin);
    expect(health.venues.map((v) => v.base_url).sort()).toEqual(origins.sort());
    expect(JSON.stringify(health)).not.toContain("g4teway-k3y");

    const order = await client.order({ market_id: "fed-cut-2026-12", outcome: "YES", side: "buy", amount_usdc: 10, max_slippage: 0.05, strategy: "optimize_price" });
    // Filled, or in part: the simulators' books move (a fill is all the rest needs).
    expect(order.status).toMatch(/^(partially_)?filled$/);
    const fill = order.fills[0]!;
    await server.stop();
    server = undefined;

    // the simulator that filled still holds the trade, asked through its adapter as the server would ask it
    const name = VENUE_NAMES.find((n) => fill.venue.startsWith(n))!;
    const venues = await startVenues({ names: [name], endpoints: config.venueEndpoints, catalog: MarketCatalog.load(), clock: systemClock });
    try {
      expect((await venues.venues[0]!.trades()).map((t) => t.venueOrderId)).toContain(fill.venue_order_id);
    } finally {
      await venues.stop();
    }

    const faults = new URL("/_sim/faults", settings.KALSHI_BASE_URL);
    const set = await fetch(faults, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ reject: true }) });
    expect(set.status).toBe(200);
    expect(await (await fetch(faults)).json()).toMatchObject({ reject: true });
  });

  it("stops on SIGTERM and exits 0", async () => {
    // "close", not "exit": by then its stderr is read to the end
    const exited = new Promise<number | null>((resolve) => sim.once("close", resolve));
    sim.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(simStderr).toMatch(/running until SIGINT.*\n.*SIGTERM, stopping/);
  });
});

describe("crossfill sim with SIM_RESOLVE_EVERY_S", () => {
  it("resolves the catalog's open events one a period, the same on every venue, and its venues remember them after a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "crossfill-sim-resolve-"));
    const env = { VENUES: "polymarket,kalshi" };
    const settingsOf = (out: string[]) => Object.fromEntries(out.map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
    let child: ChildProcess | undefined;
    const stop = async () => {
      const closed = new Promise((resolve) => child!.once("close", resolve));
      child!.kill("SIGTERM");
      await closed;
    };
    try {
      // a period long enough that a busy machine's pause does not let the next event's turn come before it is read
      const first = await spawnSim(dir, { ...env, SIM_RESOLVE_EVERY_S: "10" }, 10);
      child = first.child;
      const urls = settingsOf(first.lines);
      const [soonest, next] = scheduleOrder(MarketCatalog.load().events());
      const state = async (event: typeof soonest, venue: "polymarket" | "kalshi", base: Record<string, string>) => {
        const id = event!.listings.find((l) => l.venue === `${venue}-sim`)!.venueMarketId;
        return (await (await fetch(new URL(`/_sim/markets/${encodeURIComponent(id)}`, base[`${venue.toUpperCase()}_BASE_URL`]))).json()) as SimMarketView;
      };
      const deadline = Date.now() + 30_000;
      while ((await state(soonest, "polymarket", urls)).state === "open" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const outcome = drawnOutcome(soonest!, loadConfig({}).simSeed);
      for (const venue of ["polymarket", "kalshi"] as const) expect(await state(soonest, venue, urls)).toMatchObject({ state: "resolved", outcome });
      // the next event's turn is a period later
      expect(await state(next, "polymarket", urls)).toMatchObject({ state: "open" });
      await stop();

      // started again without a schedule: what resolved stays resolved, what was open is open
      const again = await spawnSim(dir, env, 10);
      child = again.child;
      const restarted = settingsOf(again.lines);
      for (const venue of ["polymarket", "kalshi"] as const) expect(await state(soonest, venue, restarted)).toMatchObject({ state: "resolved", outcome });
      expect(await state(next, "polymarket", restarted)).toMatchObject({ state: "open" });
      await stop();
    } finally {
      if (child?.exitCode === null) child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
