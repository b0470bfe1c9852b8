import { describe, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAddress, sign } from "viem/accounts";
import { DepositWatcher } from "../funds/deposits.ts";
import { WithdrawalService } from "../funds/withdrawals.ts";
import type { Log } from "../orders/service.ts";
import type { Store } from "../store/store.ts";
import { keyOf, newClient } from "../vault/testkit.ts";
import { testChainPerFile } from "../vault/vitest-kit.ts";
import type { Address, Vault } from "../vault/vault.ts";
import { audit } from "./run.ts";

const USDC = 1_000_000n;
const t = testChainPerFile();
const quiet: Log = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

describe("crossfill audit beside a running server", () => {
  it("does not report as missing a deposit the watcher stored after the audit read the store's deposits", async () => {
    const key = generatePrivateKey();
    const account = await t.store.createAccount({ id: "acc_audit", email: "audit@example.com", address: privateKeyToAddress(key), walletKeyEnc: "enc", passwordHash: null, fundedAt: null });
    const watcher = new DepositWatcher({
      store: t.store,
      vault: t.vault,
      clock: { now: () => Date.now() },
      log: quiet,
      confirmations: 0,
      signerOf: () => (digest) => sign({ hash: digest, privateKey: key, to: "hex" }),
      instanceId: "server",
    });
    await watcher.pass();
    // USDC sent to the deposit address: the server's next pass stores it and moves its cursor past it.
    const payer = await newClient(t);
    await t.vault.fund(payer.address, 4n * USDC, keyOf(`payer-${payer.address}`));
    await t.vault.withdrawTo(keyOf(`deposit-${account.address}`), payer.address, account.address as Address, 4n * USDC);
    // That pass runs while the audit reads the chain, after it read the store's deposits.
    let passed = false;
    const store = Object.create(t.store, {
      depositsInStatus: {
        value: async (...args: Parameters<Store["depositsInStatus"]>) => {
          const deposits = await t.store.depositsInStatus(...args);
          if (!passed) {
            passed = true;
            await watcher.pass();
          }
          return deposits;
        },
      },
    }) as Store;
    const report = await audit(store, t.vault, undefined, new Date());
    expect(passed).toBe(true);
    expect(report.invariants.find((i) => i.name === "deposits_found")).toMatchObject({ violations: 0, examples: [] });
  }, 60_000);

  it("does not report as never paid a withdrawal the server paid and confirmed while the audit read the store", async () => {
    const client = await newClient(t);
    await t.vault.fund(client.address, 5n * USDC, keyOf(`audit-withdrawal-${client.address}`));
    await t.store.createAccount({ id: "acc_audit_w", email: "audit-w@example.com", address: client.address, walletKeyEnc: null, passwordHash: null, fundedAt: null });
    const server = new WithdrawalService({
      store: t.store,
      vault: t.vault,
      clock: { now: () => Date.now() },
      log: quiet,
      confirmations: 0,
      newWithdrawalId: () => `wd_audit_${Math.random().toString(36).slice(2)}`,
      instanceId: "server",
    });
    // The chain's history as the audit reads it, whenever it reads it.
    let ledgerRead: Promise<unknown> | undefined;
    const vault = Object.create(t.vault, { ledger: { value: () => (ledgerRead = t.vault.ledger()) } }) as Vault;
    // The server pays and confirms a withdrawal once the audit has read the chain, if it has, and before it has read the store's withdrawals.
    let paid: string | undefined;
    const store = Object.create(t.store, {
      withdrawalsInStatus: {
        value: async (...args: Parameters<Store["withdrawalsInStatus"]>) => {
          if (paid === undefined) {
            paid = "";
            await ledgerRead;
            const w = await server.submit({ accountId: "acc_audit_w", address: client.address, allowlist: null }, { amount: 2n * USDC, toAddress: privateKeyToAddress(generatePrivateKey()).toLowerCase(), clientWithdrawalId: null, password: undefined });
            expect(w.status).toBe("confirmed");
            paid = w.id;
          }
          return t.store.withdrawalsInStatus(...args);
        },
      },
    }) as Store;
    const report = await audit(store, vault, undefined, new Date());
    expect(paid).toMatch(/^wd_audit_/);
    // The file's first test paid a payout of no withdrawal on this chain: only this withdrawal is this test's.
    expect(report.invariants.find((i) => i.name === "withdrawals_paid_once")!.examples.filter((e) => e.includes(paid!))).toEqual([]);
  }, 60_000);
});
