import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPublicClient, createWalletClient, defineChain, getAddress, http, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, sign } from "viem/accounts";
import { hashPassword } from "../../src/accounts/password.ts";
import { decryptSecret, loadMasterKey } from "../../src/auth/secrets.ts";
import { testUSDCAbi } from "../../src/contracts/artifacts.ts";
import { depositId, depositKey } from "../../src/funds/chain-ids.ts";
import { CrossfillClient } from "../../src/sdk/client.ts";
import type { Withdrawal } from "../../src/sdk/types.ts";
import type { DepositRecord } from "../../src/store/store.ts";
import { JsonRpc } from "../../src/vault/rpc.ts";
import type { Address } from "../../src/vault/vault.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

// Money in and out, end to end: the real server, store and dev chain, and viem wallets outside them.
// Recovery runs at start-up only here (RECONCILE_INTERVAL_MS of an hour), so each test says when the
// deposit watcher passes: a pass it runs itself, or the start after a restart.
let s: TestServer;
let payer: Awaited<ReturnType<TestServer["newKey"]>>;
beforeAll(async () => {
  s = await startTestServer({ RECONCILE_INTERVAL_MS: "3600000" });
  payer = await s.newKey({ scopes: ["read", "trade", "withdraw"] });
});
afterAll(async () => s?.stop());

const BIN = fileURLToPath(new URL("../../bin/crossfill.mjs", import.meta.url));
const USDC = 1_000_000n;

async function chain() {
  const h = await s.client.health();
  const def = defineChain({ id: h.chain.chain_id, name: "dev", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [h.chain.rpc_url] } } });
  return { def, reader: createPublicClient({ chain: def, transport: http(h.chain.rpc_url) }), rpc: new JsonRpc(h.chain.rpc_url), usdc: h.chain.contracts.usdc as Address, vault: h.chain.contracts.vault as Address };
}

async function usdcOf(address: string): Promise<bigint> {
  const c = await chain();
  return c.reader.readContract({ address: c.usdc, abi: testUSDCAbi, functionName: "balanceOf", args: [address as Address] });
}

/** A wallet outside crossfill, with gas, that sends test USDC straight to the chain. */
async function wallet() {
  const c = await chain();
  const account = privateKeyToAccount(generatePrivateKey());
  await c.rpc.call("anvil_setBalance", [account.address, "0xde0b6b3a7640000"]);
  const w = createWalletClient({ account, chain: c.def, transport: http() });
  return {
    address: account.address,
    /** An ERC-20 transfer, mined (the dev chain mines other tools' transactions within a second). */
    transfer: async (to: string, amount: bigint) => {
      const hash = await w.writeContract({ address: c.usdc, abi: testUSDCAbi, functionName: "transfer", args: [to as Address, amount] });
      const receipt = await c.reader.waitForTransactionReceipt({ hash, pollingInterval: 50 });
      expect(receipt.status).toBe("success");
      return receipt;
    },
  };
}

/** A wallet holding `amount` test USDC: paid by a withdrawal from the payer's vault. */
async function walletWith(amount: bigint) {
  const w = await wallet();
  await payer.client.withdraw({ amount_usdc: String(Number(amount) / 1e6), to_address: w.address });
  expect(await usdcOf(w.address)).toBe(amount);
  return w;
}

const available = async (client: CrossfillClient) => BigInt(Math.round((await client.account()).available_usdc * 1e6));

describe("withdrawals", () => {
  it("pays available USDC to an external address, with the transaction that did it", async () => {
    const to = (await wallet()).address;
    const before = await available(payer.client);
    const w = await payer.client.withdraw({ amount_usdc: "25.5", to_address: to, client_withdrawal_id: "first" });
    expect(w).toMatchObject({ status: "confirmed", amount_usdc: 25.5, to_address: to.toLowerCase(), client_withdrawal_id: "first", error: null });
    expect(w.withdrawal_id).toMatch(/^wd_/);
    expect(await usdcOf(to)).toBe(25_500_000n);
    expect(await available(payer.client)).toBe(before - 25_500_000n);
    const receipt = await (await chain()).reader.getTransactionReceipt({ hash: w.tx_hash as Hex });
    expect(receipt.status).toBe("success");
    expect(await payer.client.getWithdrawal(w.withdrawal_id)).toEqual(w);
    expect((await payer.client.withdrawals()).data[0]).toEqual(w);
    const activity = (await payer.client.activity()).data;
    expect(activity[0]).toMatchObject({ type: "withdrawal", amount_usdc: 25.5, tx_hash: w.tx_hash, status: "confirmed", reference: w.withdrawal_id, address: to.toLowerCase() });
    expect(activity.find((a) => a.type === "faucet")).toMatchObject({ amount_usdc: 10_000, tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
  });

  it("pays a withdrawal once per client_withdrawal_id: a retry answers it, another body under the same id is a conflict", async () => {
    const to = (await wallet()).address;
    const body = { amount_usdc: 3, to_address: to, client_withdrawal_id: "retried" };
    const first = await payer.client.withdraw(body);
    const before = await available(payer.client);
    // A new signature (another second), and the very same signed request sent again: both answer the first.
    const later = new CrossfillClient({ baseUrl: s.url, apiKey: payer.apiKey, apiSecret: payer.apiSecret, clock: () => Date.now() + 1_000 });
    expect(await later.withdraw(body)).toEqual(first);
    const at = Date.now();
    const fixed = new CrossfillClient({ baseUrl: s.url, apiKey: payer.apiKey, apiSecret: payer.apiSecret, clock: () => at });
    const raw = JSON.stringify({ ...body, client_withdrawal_id: "replayed" });
    const [a, b] = [await fixed.request("POST", "/v1/withdrawals", { body: raw, signed: true }), await fixed.request("POST", "/v1/withdrawals", { body: raw, signed: true })];
    expect(b.body).toEqual(a.body);
    expect(await payer.client.withdraw({ ...body, amount_usdc: 4 }).catch((e) => e)).toMatchObject({ code: "idempotency_conflict", status: 409, details: { withdrawal_id: first.withdrawal_id } });
    expect(await usdcOf(to)).toBe(6n * USDC);
    expect(await available(payer.client)).toBe(before - 3n * USDC);
  });

  it("pays withdrawals sent at once while the balance lasts, and refuses the rest insufficient_funds in plain words", async () => {
    const k = await s.newKey({ scopes: ["read", "withdraw"] });
    const before = await available(k.client);
    const to = (await wallet()).address;
    const amount = (before * 4n) / 10n;
    const sent = await Promise.all(
      [1, 2, 3, 4].map((i) =>
        k.client.request("POST", "/v1/withdrawals", { body: JSON.stringify({ amount_usdc: String(Number(amount) / 1e6), to_address: to, client_withdrawal_id: `at-once-${i}` }), signed: true }),
      ),
    );
    expect(sent.map((r) => r.status).sort()).toEqual([200, 200, 422, 422]);
    for (const r of sent.filter((x) => x.status === 422)) {
      const { error } = r.body as { error: { code: string; message: string } };
      expect(error.code).toBe("insufficient_funds");
      expect(error.message).not.toMatch(/0x|revert/i);
    }
    expect(await usdcOf(to)).toBe(2n * amount);
    expect(await available(k.client)).toBe(before - 2n * amount);
  });

  describe("refuses bad requests with a 4xx and its code, and changes nothing", () => {
    const TO = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
    const cases: [string, () => Promise<{ status: number; body: unknown }>, number, string][] = [
      ["a mistyped checksum", () => post({ amount_usdc: 1, to_address: TO.replace("aAeb", "aaeb") }), 400, "invalid_request"],
      ["an address too short", () => post({ amount_usdc: 1, to_address: TO.slice(0, 40) }), 400, "invalid_request"],
      ["the zero address", () => post({ amount_usdc: 1, to_address: `0x${"0".repeat(40)}` }), 400, "invalid_request"],
      ["the Vault itself", async () => post({ amount_usdc: 1, to_address: (await chain()).vault }), 400, "invalid_request"],
      ["the USDC token contract", async () => post({ amount_usdc: 1, to_address: (await chain()).usdc }), 400, "invalid_request"],
      ["a zero amount", () => post({ amount_usdc: 0, to_address: TO }), 400, "invalid_request"],
      ["seven decimals", () => post({ amount_usdc: "0.0000001", to_address: TO }), 400, "invalid_request"],
      ["an unknown field", () => post({ amount_usdc: 1, to_address: TO, memo: "x" }), 400, "invalid_request"],
      ["not JSON", () => payer.client.request("POST", "/v1/withdrawals", { body: "{", signed: true }), 400, "invalid_json"],
      ["more than available", () => post({ amount_usdc: 1_000_000, to_address: TO }), 422, "insufficient_funds"],
      ["2^63 micro-USDC, past a 64-bit integer", () => post({ amount_usdc: "9223372036854.775808", to_address: TO }), 422, "insufficient_funds"],
      ["no signature", () => payer.client.request("POST", "/v1/withdrawals", { body: JSON.stringify({ amount_usdc: 1, to_address: TO }) }), 401, "missing_signature"],
      ["a key without the withdraw scope", () => s.client.request("POST", "/v1/withdrawals", { body: JSON.stringify({ amount_usdc: 1, to_address: TO }), signed: true }), 403, "insufficient_scope"],
    ];
    const post = (body: object) => payer.client.request("POST", "/v1/withdrawals", { body: JSON.stringify(body), signed: true });

    it("more than available, telling what is available as a decimal number, as every amount the API answers", async () => {
      // Not the body of the case below: sent within the same second, it would be the same signed request, a replay.
      const r = await post({ amount_usdc: 2_000_000, to_address: TO });
      expect((r.body as { error: { details: unknown } }).error.details).toEqual({ available_usdc: Number(await available(payer.client)) / 1e6 });
    });

    it.each(cases)("%s", async (_name, send, status, code) => {
      const before = { balance: await available(payer.client), withdrawals: (await payer.client.withdrawals({ limit: 500 })).data.length, paid: await usdcOf(TO) };
      const r = await send();
      expect(r.status).toBe(status);
      expect((r.body as { error: { code: string } }).error.code).toBe(code);
      expect({ balance: await available(payer.client), withdrawals: (await payer.client.withdrawals({ limit: 500 })).data.length, paid: await usdcOf(TO) }).toEqual(before);
    });

    it("a key with a withdrawal allowlist pays only to those addresses", async () => {
      const allowed = (await wallet()).address;
      const k = await s.newKey({ scopes: ["read", "withdraw"], withdrawalAllowlist: [allowed.toLowerCase()] });
      const refused = await k.client.request("POST", "/v1/withdrawals", { body: JSON.stringify({ amount_usdc: 1, to_address: TO }), signed: true });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ error: { code: "withdrawal_address_not_allowed" } });
      expect(await usdcOf(TO)).toBe(0n);
      expect((await k.client.withdraw({ amount_usdc: 2, to_address: getAddress(allowed) })).status).toBe("confirmed");
      expect(await usdcOf(allowed)).toBe(2n * USDC);
    });

    it("from the web terminal's session, asks for the account's password again", async () => {
      const k = await s.newKey();
      const email = (await k.client.account()).email;
      await s.crossfill.store.setPasswordHash(k.accountId, await hashPassword("correct horse battery"));
      const signin = await fetch(`${s.url}/v1/session/signin`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password: "correct horse battery" }) });
      const { csrf_token } = (await signin.json()) as { csrf_token: string };
      const headers = { "content-type": "application/json", cookie: signin.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": csrf_token };
      const to = (await wallet()).address;
      const send = (body: object) => fetch(`${s.url}/v1/withdrawals`, { method: "POST", headers, body: JSON.stringify({ amount_usdc: 1, to_address: to, ...body }) });
      const missing = await send({});
      expect([missing.status, ((await missing.json()) as { error: { code: string } }).error.code]).toEqual([400, "invalid_request"]);
      const wrong = await send({ password: "wrong horse battery" });
      expect([wrong.status, ((await wrong.json()) as { error: { code: string } }).error.code]).toEqual([401, "invalid_credentials"]);
      expect(await usdcOf(to)).toBe(0n);
      const paid = await send({ password: "correct horse battery" });
      expect(paid.status).toBe(200);
      expect(await usdcOf(to)).toBe(USDC);
      // A stolen cookie cannot guess the password: ten tries a minute per account, then even the right one waits.
      for (let i = 0; i < 8; i++) expect((await send({ password: `guess ${i}` })).status).toBe(401);
      const limited = await send({ password: "correct horse battery" });
      expect([limited.status, ((await limited.json()) as { error: { code: string } }).error.code]).toEqual([429, "rate_limited"]);
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await usdcOf(to)).toBe(USDC);
    });

    it("another account's withdrawal is not found", async () => {
      const mine = (await payer.client.withdrawals()).data[0]!;
      const r = await s.client.request("GET", `/v1/withdrawals/${mine.withdrawal_id}`);
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ error: { code: "withdrawal_not_found" } });
    });
  });
});

describe("deposits", () => {
  it("credits USDC sent with viem to the account's deposit address, once, with the credit's transaction", async () => {
    const k = await s.newKey();
    const account = await k.client.account();
    expect(account.deposit_address).toBe(account.vault_address);
    const before = await available(k.client);
    const from = await walletWith(40n * USDC);
    const sent = await from.transfer(account.deposit_address!, 12_345_678n);
    await s.crossfill.deposits.pass();
    await s.crossfill.deposits.pass();
    expect(await available(k.client)).toBe(before + 12_345_678n);
    expect(await usdcOf(account.deposit_address!)).toBe(0n);
    const entry = (await k.client.activity()).data.find((a) => a.type === "deposit")!;
    expect(entry).toMatchObject({ amount_usdc: 12.345678, status: "credited", address: from.address.toLowerCase(), reference: `${sent.transactionHash}:0` });
    const credit = await (await chain()).reader.getTransactionReceipt({ hash: entry.tx_hash as Hex });
    expect(credit.status).toBe("success");
  });

  /** A transfer into a fresh account's deposit address, and that account's id, address and balance before it. */
  async function transferred(amount: bigint) {
    const k = await s.newKey();
    const account = await k.client.account();
    const before = await available(k.client);
    const from = await walletWith(amount);
    const receipt = await from.transfer(account.deposit_address!, amount);
    const log = receipt.logs.find((l) => l.address.toLowerCase() === (s.crossfill.vault.info().contracts.usdc as string).toLowerCase())!;
    const deposit: DepositRecord = {
      id: depositId(receipt.transactionHash, 0),
      accountId: k.accountId,
      amount,
      fromAddress: from.address.toLowerCase(),
      txHash: receipt.transactionHash,
      place: 0,
      logIndex: log.logIndex,
      block: receipt.blockNumber,
      status: "crediting",
      creditTx: null,
      creditBlock: null,
      creditBlockHash: null,
      errorMessage: null,
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
    };
    return { k, account, before, deposit };
  }

  it("is credited once when the server stopped after marking it crediting and before the credit was sent", async () => {
    const { k, before, deposit } = await transferred(7n * USDC);
    // Where a crash between the two steps leaves it: crediting in the store, nothing on chain.
    await s.crossfill.store.insertDeposits([deposit]);
    await s.restart();
    expect(await available(k.client)).toBe(before + 7n * USDC);
    await s.crossfill.deposits.pass();
    expect(await available(k.client)).toBe(before + 7n * USDC);
    expect((await k.client.activity()).data.filter((a) => a.type === "deposit")).toEqual([expect.objectContaining({ status: "credited", amount_usdc: 7 })]);
  });

  it("is credited once when the server stopped after the credit landed and before the store recorded it", async () => {
    const { k, account, before, deposit } = await transferred(9n * USDC);
    const master = await loadMasterKey({ env: undefined, dataDir: s.dataDir });
    const enc = (await s.crossfill.store.accountById(k.accountId))!.walletKeyEnc!;
    const landed = await s.crossfill.vault.creditDeposit(depositKey(deposit.txHash as Hex, deposit.logIndex), account.deposit_address as Address, deposit.amount, (await s.crossfill.vault.blockOf(deposit.txHash as Hex))!, (digest) =>
      sign({ hash: digest, privateKey: decryptSecret(master, enc) as Hex, to: "hex" }),
    );
    await s.crossfill.store.insertDeposits([deposit]);
    await s.restart();
    await s.crossfill.deposits.pass();
    expect(await available(k.client)).toBe(before + 9n * USDC);
    expect((await k.client.activity()).data.filter((a) => a.type === "deposit")).toEqual([expect.objectContaining({ status: "credited", tx_hash: landed.txHash })]);
  });

  it("is found and credited by the pass at start-up, which finishes what the last run left", async () => {
    const { k, before } = await transferred(2n * USDC);
    await s.restart();
    expect(await available(k.client)).toBe(before + 2n * USDC);
  });
});

describe("the CLI", () => {
  const cli = async (env: Record<string, string>, ...args: string[]) =>
    (await promisify(execFile)(process.execPath, [BIN, ...args], { env: { ...process.env, LOG_LEVEL: "silent", CROSSFILL_URL: s.url, ...env }, timeout: 30_000 })).stdout;

  it("withdraws with crossfill withdraw and lists the account's activity with crossfill activity --json", async () => {
    const to = (await wallet()).address;
    const env = { CROSSFILL_API_KEY: payer.apiKey, CROSSFILL_API_SECRET: payer.apiSecret };
    const w = JSON.parse(await cli(env, "withdraw", "1.25", to, "--client-id", "cli-1", "--json")) as Withdrawal;
    expect(w).toMatchObject({ status: "confirmed", amount_usdc: 1.25, client_withdrawal_id: "cli-1" });
    expect(await usdcOf(to)).toBe(1_250_000n);
    expect(await cli(env, "withdraw", "1.25", to, "--client-id", "cli-1")).toContain(`Withdrawal ${w.withdrawal_id} confirmed`);
    expect(await usdcOf(to)).toBe(1_250_000n);
    type Page = { data: { activity_id: string; type: string; reference: string }[]; next_cursor: string | null };
    const first = JSON.parse(await cli(env, "activity", "--json", "--limit", "1")) as Page;
    expect(first.data).toEqual([expect.objectContaining({ type: "withdrawal", reference: w.withdrawal_id })]);
    const second = JSON.parse(await cli(env, "activity", "--json", "--limit", "1", "--cursor", first.next_cursor!)) as Page;
    expect(second.data).toEqual([(await payer.client.activity({ limit: 2 })).data[1]]);
  });

  it("refuses an empty --client-id, as the API does, instead of paying without an idempotency key", async () => {
    const to = (await wallet()).address;
    const env = { CROSSFILL_API_KEY: payer.apiKey, CROSSFILL_API_SECRET: payer.apiSecret };
    const refused = await cli(env, "withdraw", "1.25", to, "--client-id", "").catch((e: { code: number; stderr: string }) => e);
    expect([(refused as { code: number }).code, (refused as { stderr: string }).stderr]).toEqual([
      2,
      "crossfill: invalid_request: Invalid withdrawal: --client-id must be 1-64 printable characters.\n",
    ]);
    expect(await usdcOf(to)).toBe(0n);
  });
});
