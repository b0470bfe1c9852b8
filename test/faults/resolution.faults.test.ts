// Resolution under kills: holders of both outcomes of each event, an operator's `crossfill events
// resolve`, and the server killed at each step of the redemption (positions planned, the redeem
// transaction about to be sent, the transaction landed but not yet recorded), then started again. Each
// holder must be paid exactly once — every winning share 1 USDC, every losing share burned — and
// `crossfill audit`, reading the chain, must find every invariant intact.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Account, Order } from "../../src/sdk/types.ts";
import { Chain, expectAuditOk, makeTraders, ServerProcess, Simulators, type Env, type Trader } from "./harness.ts";

const BIN = fileURLToPath(new URL("../../bin/crossfill.mjs", import.meta.url));
/** Each kill point on an event of its own: an event is decided once. */
const CASES = [
  { event: "fed-cut-2026-12", killAt: "redeem.stored" },
  { event: "spx-above-7500-2026-12-31", killAt: "redeem.sent" },
  { event: "btc-above-150k-2026-12-31", killAt: "redeem.landed" },
] as const;

let root: string;
let chain: Chain;
let sims: Simulators;
let traders: Trader[];
let env: Env;
let server: ServerProcess | undefined;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "crossfill-resolution-faults-"));
  chain = await Chain.start(join(root, "chain"));
  sims = await Simulators.start(join(root, "sim"), 7);
  env = { DATA_DIR: join(root, "server"), ...chain.env, ...sims.env };
  mkdirSync(env.DATA_DIR!);
  traders = await makeTraders(env.DATA_DIR!, 3);
}, 180_000);

afterAll(async () => {
  await server?.kill();
  await sims?.stop();
  await chain?.stop();
  if (process.env.FAULT_KEEP) console.log(`resolution fault suite directory kept: ${root}`);
  else rmSync(root, { recursive: true, force: true });
});

function resolveByCli(eventId: string, outcome: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, "events", "resolve", eventId, outcome], { env: { ...process.env, LOG_LEVEL: "silent", ...env } });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`crossfill events resolve exited with ${code}: ${out}`))));
  });
}

const sharesOf = (o: Order) => BigInt(Math.round(o.filled_shares * 1e6));
const micro = (usdc: number) => BigInt(Math.round(usdc * 1e6));

describe("resolution fault suite", () => {
  it("pays every holder of a resolved event exactly once, whichever step of the redemption the server was killed at", async () => {
    for (const { event, killAt } of CASES) {
      server = await ServerProcess.start(env);
      // Every trader holds both outcomes: the winning shares pay, the losing ones burn.
      const held: { trader: Trader; yes: bigint; before: Account }[] = [];
      for (const trader of traders) {
        const c = trader.client(server.url);
        const orders: Order[] = [];
        for (const outcome of ["YES", "NO"] as const) {
          orders.push(await c.order({ market_id: event, outcome, side: "buy", amount_usdc: 25, max_slippage: 0.05, time_in_force: "IOC" } as never));
        }
        expect(orders.every((o) => o.filled_shares > 0), `${event}: ${JSON.stringify(orders)}`).toBe(true);
        held.push({ trader, yes: sharesOf(orders[0]!), before: await c.account() });
      }
      await server.stop();

      expect(await resolveByCli(event, "YES")).toContain(`${event} is resolved to YES`);
      // The start-up pass redeems, and the kill comes at the step under test, before the server serves.
      const killed = await ServerProcess.start({ ...env, CROSSFILL_KILL_AT: `${killAt}:1` }).then(
        (s) => s,
        (e: Error) => e,
      );
      expect(killed, `the server was to die at ${killAt}`).toBeInstanceOf(Error);
      expect((killed as Error).message).toMatch(/exited with null before serving/);

      server = await ServerProcess.start(env);
      for (const { trader, yes, before } of held) {
        const after = await trader.client(server.url).account();
        expect(micro(after.available_usdc) - micro(before.available_usdc), `${event} killed at ${killAt}`).toBe(yes);
        // Redeemed whole: the positions stay listed with no shares left, for the P&L they realized.
        expect(after.positions.filter((p) => p.event_id === event && p.shares !== 0)).toEqual([]);
      }
      await server.stop();
      server = undefined;
      await expectAuditOk(env, (what) => new Error(`${event} killed at ${killAt}: ${what}`));
    }
  });
});
