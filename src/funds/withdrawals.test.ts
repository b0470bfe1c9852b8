import { pino } from "pino";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import type { Hex } from "viem";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { testUSDCAbi } from "../contracts/artifacts.ts";
import { ERRORS, type ErrorCode } from "../domain/errors.ts";
import { openSqliteStore } from "../store/sqlite/sqlite-store.ts";
import type { Store } from "../store/store.ts";
import { keyOf, newClient } from "../vault/testkit.ts";
import { testChainPerFile } from "../vault/vitest-kit.ts";
import { VaultTxError, type Address, type ChainInfo, type Hex32, type Vault, type WithdrawalState } from "../vault/vault.ts";
import { WithdrawalService, type WithdrawalDeps } from "./withdrawals.ts";

// The use-case over a real store and a chain that pays each withdrawal id from one balance: what a client
// sees of withdrawals sent to several instances sharing the store and the chain.
const ACCOUNT = "0x00000000000000000000000000000000000000aa" as Address;
const HASH = `0x${"ab".repeat(32)}` as Hex32;
const who = { accountId: "acc", address: ACCOUNT, allowlist: null };
const req = { amount: 100_000_000n, toAddress: "0x00000000000000000000000000000000000000bb", clientWithdrawalId: "w-1", password: undefined };
const OPERATOR = "0x00000000000000000000000000000000000000Cc" as Address;
const TREASURY = "0x00000000000000000000000000000000000000Dd" as Address;

let store: Store;
let paid: Map<string, WithdrawalState>;
let chain: Vault;

beforeEach(async () => {
  store = await openSqliteStore(":memory:");
  await store.migrate();
  await store.createAccount({ id: "acc", email: "a@example.com", address: ACCOUNT, walletKeyEnc: null, passwordHash: null, fundedAt: null });
  let available = 100_000_000n;
  paid = new Map();
  chain = {
    info: () => ({ contracts: { usdc: "0x01", vault: "0x02", sot: "0x03" }, operator: OPERATOR, treasury: TREASURY }) as Partial<ChainInfo> as ChainInfo,
    balanceOf: async () => ({ available, locked: 0n }),
    withdrawTo: async (id, _client, to, amount) => {
      available -= amount;
      paid.set(id, { kind: "paid", client: ACCOUNT, to, amount, txHash: HASH, blockNumber: 1n } as WithdrawalState);
      return { txHash: HASH, blockNumber: 1n };
    },
    withdrawalState: async (id) => paid.get(id) ?? { kind: "none" },
    transferRefusal: async () => undefined,
    pendingTransactions: async () => 0,
  } satisfies Partial<Vault> as Partial<Vault> as Vault;
});

afterEach(async () => {
  await store.close();
});

/** The service of one instance: `over` on this file's store and chain (or the dev chain's). */
function instance(instanceId: string, over: Partial<WithdrawalDeps> = {}): WithdrawalService {
  return new WithdrawalService({ store, vault: chain, clock: { now: () => Date.now() }, log: pino({ level: "silent" }), confirmations: 0, newWithdrawalId: () => `wd_${Math.random().toString(36).slice(2)}`, instanceId, ...over });
}

describe("withdrawals refused before anything is paid", () => {
  it("refuses a withdrawal to the operator's address, which is also the treasury, naming to_address, and pays nothing", async () => {
    const refused = await instance("A")
      .submit(who, { ...req, toAddress: OPERATOR.toLowerCase() })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "invalid_request", details: { fields: { to_address: expect.stringContaining("operator") } } });
    expect(paid.size).toBe(0);
    expect(await store.listWithdrawals("acc", { limit: 10, cursor: null })).toMatchObject({ data: [] });
  });

  it("refuses a withdrawal to the treasury of a Vault deployed with its own (VAULT_ADDRESS), naming to_address, and pays nothing", async () => {
    const refused = await instance("A")
      .submit(who, { ...req, toAddress: TREASURY.toLowerCase() })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "invalid_request", details: { fields: { to_address: expect.stringContaining("treasury") } } });
    expect(paid.size).toBe(0);
  });

  it("fails a withdrawal USDC refuses to pay to its address (real USDC's blacklist) with a 4xx that says so, not a 503 to retry", async () => {
    // Real USDC (FiatToken) refuses a transfer to a blacklisted address with a require string: the Vault's withdrawTo reverts with it.
    const blacklisted = instance("A", {
      vault: {
        ...chain,
        withdrawTo: () => Promise.reject(new VaultTxError("reverted", "Error", "Vault.withdrawTo would revert: Error(Blacklistable: account is blacklisted)")),
        transferRefusal: async () => "Blacklistable: account is blacklisted",
      },
    });
    const w = await blacklisted.submit(who, req);
    expect(w).toMatchObject({ status: "failed", errorCode: "withdrawal_refused", errorMessage: expect.stringContaining("Blacklistable: account is blacklisted") });
    expect(ERRORS[w.errorCode as ErrorCode].status).toBe(422);
    expect(await chain.balanceOf(ACCOUNT)).toEqual({ available: 100_000_000n, locked: 0n });
  });
});

describe("withdrawals the chain could not take", () => {
  it("pays a withdrawal that failed chain_unavailable when the client sends it again under its client_withdrawal_id once the chain is back, once", async () => {
    let down = true;
    const service = instance("A", {
      vault: { ...chain, withdrawTo: (...args) => (down ? Promise.reject(new VaultTxError("reverted", "NotSent", "Vault.withdrawTo: not sent (fetch failed)")) : chain.withdrawTo(...args)) },
    });
    const first = await service.submit(who, req);
    expect(first).toMatchObject({ status: "failed", errorCode: "chain_unavailable" });
    expect(ERRORS.chain_unavailable.status).toBe(503);
    down = false;
    // The 503 told the client to try again: the same request is the same withdrawal, run again, not the 503 replayed.
    expect(await service.submit(who, req)).toMatchObject({ id: first.id, status: "confirmed", errorCode: null, errorMessage: null, txHash: HASH });
    expect(await service.submit(who, req)).toMatchObject({ id: first.id, status: "confirmed" });
    expect([...paid.keys()]).toHaveLength(1);
    expect(await chain.balanceOf(ACCOUNT)).toEqual({ available: 0n, locked: 0n });
  });

  it("answers a withdrawal the token refused (422) with the same refusal when sent again, running nothing", async () => {
    let sends = 0;
    const service = instance("A", {
      vault: { ...chain, withdrawTo: () => (sends++, Promise.reject(new VaultTxError("reverted", "Error", "Vault.withdrawTo would revert: Error(Pausable: paused)"))), transferRefusal: async () => "Pausable: paused" },
    });
    const first = await service.submit(who, req);
    expect(first).toMatchObject({ status: "failed", errorCode: "withdrawal_refused" });
    expect(await service.submit(who, req)).toMatchObject({ id: first.id, status: "failed", errorCode: "withdrawal_refused" });
    expect(sends).toBe(1);
  });
});

describe("withdrawals whose answer was lost on a chain that reorganises", () => {
  it("sends a withdrawal again only once its transaction that failed is under the confirmations, not stored failed while a reorganisation may still pay it", async () => {
    const clock = { t: Date.now(), now: () => clock.t };
    const lost = instance("dead", { clock, confirmations: 2, vault: { ...chain, withdrawTo: () => Promise.reject(new VaultTxError("unknown", "Unknown", "Vault.withdrawTo: outcome unknown")) } });
    const w = await lost.submit(who, req);
    expect(w.status).toBe("sent");
    // Its transaction (the operator's first) failed in block 10, the head: an order took the client's USDC first. Sent
    // again, it is refused by its dry run; a reorganisation may yet mine the failed one where it pays.
    let head = 10n;
    let sends = 0;
    const vault: Vault = {
      ...chain,
      blockNumber: async () => head,
      minedTransactions: async (block?: bigint) => ((block ?? head) >= 10n ? 1 : 0),
      withdrawTo: () => (sends++, Promise.reject(new VaultTxError("reverted", "InsufficientAvailable", "Vault.withdrawTo would revert: InsufficientAvailable"))),
    };
    const recovery = instance("A", { clock, confirmations: 2, vault });
    clock.t += 31_000;
    await recovery.pass(0);
    head = 11n;
    await recovery.pass(0);
    expect(sends).toBe(0);
    expect(await store.withdrawal(w.id)).toMatchObject({ status: "sent" });
    // Two blocks over it, the failure is final: sent again, refused, nothing paid.
    head = 12n;
    await recovery.pass(0);
    expect(sends).toBe(1);
    expect(await store.withdrawal(w.id)).toMatchObject({ status: "failed", errorCode: "insufficient_funds" });
  });
});

describe("withdrawals on several instances", () => {
  it("answers a withdrawal sent to two instances at once with the one withdrawal, though the second reads the balance after the first was paid", async () => {
    const a = instance("A");
    // Instance B reads the balance more slowly than A pays (a busy event loop, a read the chain client retries).
    const reading: (() => void)[] = [];
    const b = instance("B", { vault: { ...chain, balanceOf: (x) => new Promise<void>((r) => reading.push(r)).then(() => chain.balanceOf(x)) } });
    const twin = b.submit(who, req).catch((e: unknown) => e);
    const other = b.submit(who, { ...req, amount: 50_000_000n }).catch((e: unknown) => e);
    // Both have looked the client_withdrawal_id up, finding nothing, and wait for the balance; A pays meanwhile.
    await expect.poll(() => reading.length).toBe(2);
    const first = await a.submit(who, req);
    expect(first.status).toBe("confirmed");
    for (const read of reading) read();
    expect(await twin).toMatchObject({ id: first.id, status: "confirmed" });
    expect(await other).toMatchObject({ code: "idempotency_conflict", message: expect.stringMatching(/: not the same amount_usdc\.$/), details: { withdrawal_id: first.id } });
    expect(paid.size).toBe(1);
  });

  it("keeps the lease of a withdrawal recovery finishes for as long as its payment takes, so no other instance sends it meanwhile", async () => {
    const clock = { t: Date.now(), now: () => clock.t };
    // An instance that died with the withdrawal sent, its answer lost and nothing paid.
    const lost = instance("dead", { clock, vault: { ...chain, withdrawTo: () => Promise.reject(new VaultTxError("unknown", "Unknown", "Vault.withdrawTo: outcome unknown")) } });
    const w = await lost.submit(who, req);
    expect(w.status).toBe("sent");
    clock.t += 31_000;
    // Two live instances recover it; A's payment is slow to land (a busy chain).
    const sends: string[] = [];
    let land!: () => void;
    const landed = new Promise<void>((r) => (land = r));
    const sending = (id: string, lands: Promise<void>) => instance(id, { clock, vault: { ...chain, withdrawTo: async (...args) => (sends.push(id), await lands, chain.withdrawTo(...args)) } });
    const [a, b] = [sending("A", landed), sending("B", Promise.resolve())];

    const recovering = a.pass(0);
    await expect.poll(() => sends).toEqual(["A"]);
    // main.ts's timer renews A's leases every few seconds, for longer than a lease lasts; B's recovery then passes.
    for (let i = 0; i < 7; i++) {
      clock.t += 5_000;
      await a.renewLeases();
    }
    await b.pass(0);
    land();
    const finished = await recovering;
    expect(sends).toEqual(["A"]);
    expect(finished).toBe(1);
    expect(await store.withdrawal(w.id)).toMatchObject({ status: "confirmed" });
  });

  it("sends nothing again for a withdrawal another instance sent after recovery listed it, while that transaction may still land", async () => {
    const clock = { t: Date.now(), now: () => clock.t };
    const at = new Date(clock.t).toISOString();
    // Stored by instance A.
    const w = { id: "wd_listed", accountId: "acc", clientWithdrawalId: null, requestHash: "h", amount: req.amount, toAddress: req.toAddress, status: "pending" as const, txHash: null, errorCode: null, errorMessage: null, createdAt: at, updatedAt: at };
    await store.insertWithdrawal(w, { owner: "A", until: new Date(clock.t + 30_000).toISOString() });
    clock.t += 31_000;
    // B lists the open withdrawals; A then marks it sent, sends its transaction, which is pending, and dies, its lease running
    // out while B's pass finishes the withdrawals listed before it.
    const inStatus = async (statuses: Parameters<Store["withdrawalsInStatus"]>[0]) => {
      const rows = await store.withdrawalsInStatus(statuses);
      await store.updateWithdrawal(w.id, ["pending"], { status: "sent" }, "A");
      return rows;
    };
    const listed: Store = Object.create(store, { withdrawalsInStatus: { value: inStatus } });
    // Sent again now, B's transaction refused (out of gas, say) was stored failed, "Nothing was paid", while A's may yet pay.
    let sends = 0;
    const withdrawTo = () => (sends++, Promise.reject(new VaultTxError("reverted", "Error", "Vault.withdrawTo would revert: Error(out of gas)")));
    await instance("B", { clock, store: listed, vault: { ...chain, withdrawTo, pendingTransactions: async () => 1 } }).pass(0);
    expect(sends).toBe(0);
    expect(await store.withdrawal(w.id)).toMatchObject({ status: "sent", errorCode: null });
  });
});

describe("withdrawals on a chain that reorganises", () => {
  const t = testChainPerFile();

  it.each([
    ["a custom error", "0x63deadbeef60e01b60005260046000fd", "custom error 0xdeadbeef"],
    ["no data", "0x60006000fd", "execution reverted"],
  ])("fails withdrawal_refused (422), nothing paid, when the USDC token refuses the transfer with %s, not chain_unavailable for ever", async (_, refusing, reason) => {
    const client = await newClient(t);
    await t.vault.fund(client.address, 50n * 1_000_000n, keyOf(`refused-${client.address}`));
    await t.store.createAccount({ id: `acc_${client.address}`, email: `${client.address}@example.com`, address: client.address, walletKeyEnc: null, passwordHash: null, fundedAt: null });
    const service = instance("test", { store: t.store, vault: t.vault });
    const { usdc } = t.vault.info().contracts;
    const code = await t.rpc.call<Hex>("eth_getCode", [usdc, "latest"]);
    // The token refuses every call (a blacklist or a pause of a token that reverts its own way), then is itself again.
    await t.rpc.call("anvil_setCode", [usdc, refusing]);
    const w = await service
      .submit({ accountId: `acc_${client.address}`, address: client.address, allowlist: null }, { amount: 20n * 1_000_000n, toAddress: privateKeyToAddress(generatePrivateKey()).toLowerCase(), clientWithdrawalId: null, password: undefined })
      .finally(() => t.rpc.call("anvil_setCode", [usdc, code]));
    expect(w).toMatchObject({ status: "failed", errorCode: "withdrawal_refused", errorMessage: `Nothing was paid: the USDC token refused to pay ${w.toAddress} (${reason}).` });
    expect(ERRORS[w.errorCode as ErrorCode].status).toBe(422);
    expect(await t.vault.balanceOf(client.address)).toEqual({ available: 50n * 1_000_000n, locked: 0n });
  }, 30_000);

  it("pays again a withdrawal whose payment a reorganisation shallower than the confirmations removed, instead of leaving it confirmed with nothing paid", async () => {
    const client = await newClient(t);
    await t.vault.fund(client.address, 50n * 1_000_000n, keyOf(`reorg-${client.address}`));
    await t.store.createAccount({ id: "acc_reorg", email: "reorg@example.com", address: client.address, walletKeyEnc: null, passwordHash: null, fundedAt: null });
    const to = privateKeyToAddress(generatePrivateKey()).toLowerCase();
    const usdcOf = (address: string) => client.reader.readContract({ address: t.vault.info().contracts.usdc, abi: testUSDCAbi, functionName: "balanceOf", args: [address as Address] });
    const service = instance("test", { store: t.store, vault: t.vault, confirmations: 1 });
    const fork = await t.rpc.call<Hex>("evm_snapshot");
    const w = await service.submit({ accountId: "acc_reorg", address: client.address, allowlist: null }, { amount: 20n * 1_000_000n, toAddress: to, clientWithdrawalId: null, password: undefined });
    expect(w).toMatchObject({ status: "sent", txHash: expect.any(String) });
    expect(await usdcOf(to)).toBe(20n * 1_000_000n);
    // A reorganisation of one block: the payment's block is replaced by an empty one.
    await t.rpc.call("evm_revert", [fork]);
    await t.rpc.call("evm_mine");
    expect(await usdcOf(to)).toBe(0n);
    // Recovery waits while the lost payment's nonce may still land (the sender's 5 s grace), then pays again, and confirms once a block is over it.
    const status = async () => {
      await service.pass(0);
      await t.rpc.call("evm_mine");
      return (await t.store.withdrawal(w.id))!.status;
    };
    await expect.poll(status, { timeout: 30_000, interval: 500 }).toBe("confirmed");
    expect(await usdcOf(to)).toBe(20n * 1_000_000n);
    expect(await t.vault.balanceOf(client.address)).toEqual({ available: 30n * 1_000_000n, locked: 0n });
  }, 60_000);
});
