// Each step of a withdrawal and of a deposit credit, killed once with SIGKILL (the server and its embedded
// chain, as a crash would): started again on the same data directory, the server must finish the withdrawal
// and credit its deposit exactly once, answer the trader's retry with the same withdrawal, and leave every
// invariant for `crossfill audit` intact. Deterministic: one kill per checkpoint, in the order they come.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FUNDS_CHECKPOINTS } from "../../src/funds/checkpoints.ts";
import { Rng } from "../../src/venues/simulated/prng.ts";
import { expectAuditOk, makeTraders, ServerProcess, Simulators, Traffic, type Env, type Trader } from "./harness.ts";

let dataDir: string;
let sims: Simulators;
let traders: Trader[];
let traffic: Traffic;
let server: ServerProcess | undefined;
let env: Env;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "crossfill-funds-faults-"));
  sims = await Simulators.start(dataDir, 1);
  traders = await makeTraders(dataDir, 2);
  traffic = new Traffic({ seed: 1, rng: new Rng(1), traders, dataDir, serverLog: () => server?.log.tail });
  env = { DATA_DIR: dataDir, ...sims.env, RECONCILE_INTERVAL_MS: "500", SIM_LATENCY_SCALE: "0.05" };
}, 120_000);

afterAll(async () => {
  await server?.kill();
  await sims?.stop();
  if (process.env.FAULT_KEEP) console.log(`funds fault suite data directory kept: ${dataDir}`);
  else rmSync(dataDir, { recursive: true, force: true });
});

const micro = (usdc: number) => BigInt(Math.round(usdc * 1e6));

describe("a withdrawal to another account's deposit address, killed at each step", () => {
  it.each(FUNDS_CHECKPOINTS.map((step, i) => [step, i] as const))(
    "is paid and credited exactly once after a kill at %s",
    async (step, i) => {
      const [payer, payee] = traders as [Trader, Trader];
      // One server at a time on the data directory, even after a failed case.
      await server?.kill();
      server = await ServerProcess.start({ ...env, CROSSFILL_KILL_AT: `${step}:1` });
      const s = server;
      const balance = async (t: Trader) => micro((await t.client(server!.url).account()).available_usdc);
      const before = { payer: await balance(payer), payee: await balance(payee) };
      const body = { amount_usdc: "3.5", to_address: payee.address, client_withdrawal_id: `kill-${i}` };
      // Killed under the request (a withdrawal step) or in the deposit watcher right after it (a deposit step).
      const first = await payer.client(s.url).withdraw(body).catch(() => undefined);
      await Promise.race([s.exited, new Promise((r) => setTimeout(r, 15_000))]);
      expect(s.alive, `the server passed ${step} without being killed`).toBe(false);

      server = await ServerProcess.start(env);
      const again = await payer.client(server.url).withdraw(body);
      if (first) expect(again.withdrawal_id).toBe(first.withdrawal_id);
      await traffic.quiet(60_000);
      const after = { payer: await balance(payer), payee: await balance(payee) };
      expect(after).toEqual({ payer: before.payer - 3_500_000n, payee: before.payee + 3_500_000n });
      const w = await payer.client(server.url).getWithdrawal(again.withdrawal_id);
      expect(w).toMatchObject({ status: "confirmed", tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
      const credit = (await payee.client(server.url).activity()).data.find((a) => a.type === "deposit" && a.reference.startsWith(w.tx_hash!))!;
      expect(credit).toMatchObject({ status: "credited", amount_usdc: 3.5 });

      await server.stop();
      server = undefined;
      await expectAuditOk(env, (what) => new Error(`after a kill at ${step}: ${what}`));
    },
    180_000,
  );
});
