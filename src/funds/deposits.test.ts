import { describe, expect, it } from "vitest";
import { keccak256, toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, privateKeyToAddress, sign } from "viem/accounts";
import { createPublicClient, createWalletClient, defineChain, encodeFunctionData, http } from "viem";
import { testUSDCAbi } from "../contracts/artifacts.ts";
import type { Log } from "../orders/service.ts";
import type { AccountRecord } from "../store/store.ts";
import { keyOf, newClient } from "../vault/testkit.ts";
import { openEvmVault } from "../vault/evm/evm-vault.ts";
import { testChainPerFile } from "../vault/vitest-kit.ts";
import type { Address, Vault } from "../vault/vault.ts";
import { startPool, type RpcReply } from "../../test/helpers/rpc-proxy.ts";
import { depositId } from "./chain-ids.ts";
import { DepositWatcher, depositCursorName, type DepositDeps } from "./deposits.ts";

const USDC = 1_000_000n;
const t = testChainPerFile();

const quiet: Log = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

/** A watcher over the test chain, with no confirmations, signing each account's permits with the key `keyOf` gives it (none: it keeps no key); `over` on top. */
function watcherSigningWith(keyOf: (account: AccountRecord) => Hex | undefined, over: Partial<DepositDeps> = {}): DepositWatcher {
  return new DepositWatcher({
    store: t.store,
    vault: t.vault,
    clock: { now: () => Date.now() },
    log: quiet,
    confirmations: 0,
    signerOf: (account) => {
      const key = keyOf(account);
      return key && ((digest) => sign({ hash: digest, privateKey: key, to: "hex" }));
    },
    instanceId: "test",
    ...over,
  });
}

/** The amount and status of each of the account's deposits. */
async function statusesOf(accountId: string) {
  return (await t.store.depositsInStatus(["detected", "crediting", "credited", "dropped"])).filter((d) => d.accountId === accountId).map((d) => [d.amount, d.status]);
}

/** A deposit as a scan stores it, detected, of `amount` into the account in the transaction `txHash`'s block `block`. */
function detected(accountId: string, txHash: Hex, amount: bigint, block: bigint, fromAddress = privateKeyToAddress(generatePrivateKey()).toLowerCase()) {
  const now = new Date().toISOString();
  return {
    id: depositId(txHash, 0),
    accountId,
    amount,
    fromAddress,
    txHash,
    place: 0,
    logIndex: 0,
    block,
    status: "detected" as const,
    creditTx: null,
    creditBlock: null,
    creditBlockHash: null,
    errorMessage: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** An account whose deposit address the service keeps the key of. */
async function keyedAccount(id: string) {
  const key = generatePrivateKey();
  const account = await t.store.createAccount({ id, email: `${id}@example.com`, address: privateKeyToAddress(key), walletKeyEnc: "enc", passwordHash: null, fundedAt: null });
  return { key, account };
}

/** A wallet holding `amount` USDC of its own (paid out of the Vault) signs a transfer of it to `to`, not sent: a raw transaction. */
async function signedTransfer(to: Address, amount: bigint): Promise<Hex> {
  const payer = await newClient(t);
  await t.vault.fund(payer.address, amount, keyOf(`payer-${payer.address}`));
  const sender = privateKeyToAccount(generatePrivateKey());
  await t.rpc.call("anvil_setBalance", [sender.address, "0xde0b6b3a7640000"]);
  await t.vault.withdrawTo(keyOf(`to-${sender.address}`), payer.address, sender.address, amount);
  const chain = defineChain({ id: t.chain.chainId, name: "dev", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [t.chain.rpcUrl] } } });
  const wallet = createWalletClient({ account: sender, chain, transport: http(t.chain.rpcUrl) });
  const data = encodeFunctionData({ abi: testUSDCAbi, functionName: "transfer", args: [to, amount] });
  return wallet.signTransaction(await wallet.prepareTransactionRequest({ to: t.vault.info().contracts.usdc, data, nonce: 0, gas: 100_000n }));
}

/** Mines the raw transactions in one block; resolves to their receipts. */
async function mine(raws: Hex[]) {
  const chain = defineChain({ id: t.chain.chainId, name: "dev", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [t.chain.rpcUrl] } } });
  const reader = createPublicClient({ chain, transport: http(t.chain.rpcUrl) });
  const hashes = await Promise.all(raws.map((raw) => t.rpc.call<Hex>("eth_sendRawTransaction", [raw])));
  await t.rpc.call("evm_mine");
  return Promise.all(hashes.map((hash) => reader.waitForTransactionReceipt({ hash, pollingInterval: 20 })));
}

/**
 * A JSON-RPC URL in front of the test chain as a pool of two nodes: a request that reads logs goes to one whose head is
 * `head` and answers, as geth does, a range past it with the logs it has and no error, and no block past it (`forked`:
 * blocks of another fork past it, without their logs); any other request goes to the node that has every block.
 */
function poolWithLogsFrom(head: bigint, forked = false): Promise<{ url: string; stop(): Promise<void> }> {
  return startPool(
    t.chain.rpcUrl,
    (c) => c.method === "eth_getLogs",
    async (c, forward) => {
      if (c.method === "eth_getBlockByNumber" && BigInt(c.params[0] as Hex) > head) {
        const block = (await forward(c)) as { result: { hash: Hex } };
        return { ...block, result: forked ? { ...block.result, hash: keccak256(block.result.hash) } : null } as RpcReply;
      }
      if (c.method !== "eth_getLogs") return forward(c);
      const filter = c.params[0] as { fromBlock: Hex; toBlock: Hex };
      if (BigInt(filter.fromBlock) > head) return { jsonrpc: "2.0", id: c.id, result: [] };
      const to = BigInt(filter.toBlock) > head ? toHex(head) : filter.toBlock;
      return forward({ ...c, params: [{ ...filter, toBlock: to }] });
    },
  );
}

describe("the deposit watcher", () => {
  it("credits a transfer into one deposit address among 50,000 accounts, and nothing sent elsewhere", async () => {
    // Deposit addresses whose keys the service keeps; the watcher only signs for the ones this test made keys for.
    const keys = new Map<string, Hex>();
    const keyed = async (id: string): Promise<AccountRecord> => {
      const key = generatePrivateKey();
      const address = privateKeyToAddress(key);
      keys.set(address.toLowerCase(), key);
      return t.store.createAccount({ id, email: `${id}@example.com`, address, walletKeyEnc: "enc", passwordHash: null, fundedAt: null });
    };
    for (let i = 0; i < 50_000; i++) {
      const address = `0x${keccak256(toHex(`account ${i}`)).slice(-40)}`;
      await t.store.createAccount({ id: `acc_${i}`, email: `${i}@example.com`, address, walletKeyEnc: "enc", passwordHash: null, fundedAt: null });
    }
    const depositor = await keyed("acc_depositor");
    // A user's own wallet: the service keeps no key for it, so USDC sent to it is no deposit.
    const ownWallet = privateKeyToAddress(generatePrivateKey());
    await t.store.createAccount({ id: "acc_wallet", email: "wallet@example.com", address: ownWallet, walletKeyEnc: null, passwordHash: null, fundedAt: null });

    const watcher = watcherSigningWith((account) => keys.get(account.address.toLowerCase()));
    await watcher.pass();

    // A payer's vault balance withdrawn to each address: USDC transfers from the Vault.
    const payer = await newClient(t);
    await t.vault.fund(payer.address, 100n * USDC, keyOf(`payer-${payer.address}`));
    const send = (to: string, amount: bigint) => t.vault.withdrawTo(keyOf(`to-${to}-${amount}`), payer.address, to as Address, amount);
    const sent = await send(depositor.address, 7n * USDC);
    await send(ownWallet, 2n * USDC);
    await send(privateKeyToAddress(generatePrivateKey()), 3n * USDC);

    expect(await watcher.pass()).toBe(1);
    const deposits = await t.store.depositsInStatus(["detected", "crediting", "credited", "dropped"]);
    expect(deposits).toEqual([expect.objectContaining({ accountId: "acc_depositor", amount: 7n * USDC, txHash: sent.txHash.toLowerCase(), status: "credited" })]);
    expect(await t.vault.balanceOf(depositor.address as Address)).toEqual({ available: 7n * USDC, locked: 0n });
    expect(await t.vault.balanceOf(ownWallet)).toEqual({ available: 0n, locked: 0n });
    // The next pass finds nothing new.
    expect(await watcher.pass()).toBe(0);
  }, 120_000);

  it("waits for a transfer while the node answering has not reached its block, and drops one whose block is there without it", async () => {
    const key = generatePrivateKey();
    const account = await t.store.createAccount({ id: "acc_lag", email: "lag@example.com", address: privateKeyToAddress(key), walletKeyEnc: "enc", passwordHash: null, fundedAt: null });
    const head = await t.vault.blockNumber();
    const deposit = (txHash: Hex, block: bigint) => detected(account.id, txHash, USDC, block);
    // Seen by a node ahead of this one, in a block this one does not have yet; and one in a block it has, without it.
    const ahead = deposit(keccak256(toHex("a transfer in a block to come")), head + 1_000n);
    const gone = deposit(keccak256(toHex("a transfer reorganised away")), head);
    await t.store.insertDeposits([ahead, gone]);
    const watcher = watcherSigningWith(() => key);
    await watcher.pass();
    const status = new Map((await t.store.depositsInStatus(["detected", "crediting", "credited", "dropped"])).map((d) => [d.id, d.status]));
    expect([status.get(ahead.id), status.get(gone.id)]).toEqual(["detected", "dropped"]);
  }, 60_000);

  it("drops a transfer a reorganisation mined again where it failed once that block is under the confirmations, and not before", async () => {
    const { key, account } = await keyedAccount("acc_failed_again");
    // The transfer as the new chain has it, mined again where it failed: its sender no longer held the USDC there.
    const sender = privateKeyToAccount(generatePrivateKey());
    await t.rpc.call("anvil_setBalance", [sender.address, "0xde0b6b3a7640000"]);
    const chain = defineChain({ id: t.chain.chainId, name: "dev", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [t.chain.rpcUrl] } } });
    const wallet = createWalletClient({ account: sender, chain, transport: http(t.chain.rpcUrl) });
    const data = encodeFunctionData({ abi: testUSDCAbi, functionName: "transfer", args: [account.address as Address, 3n * USDC] });
    const [failed] = await mine([await wallet.signTransaction(await wallet.prepareTransactionRequest({ to: t.vault.info().contracts.usdc, data, nonce: 0, gas: 100_000n }))]);
    expect(failed!.status).toBe("reverted");
    // As the scan stored it from the old chain, where the transfer went through.
    await t.store.insertDeposits([detected(account.id, failed!.transactionHash, 3n * USDC, failed!.blockNumber, sender.address.toLowerCase())]);
    const watcher = watcherSigningWith(() => key, { confirmations: 1 });
    const statuses = () => statusesOf(account.id);
    // The failed transfer's block is the head: a reorganisation may yet replace it with one where the transfer goes through.
    await watcher.pass();
    expect(await statuses()).toEqual([[3n * USDC, "detected"]]);
    // A block over it: the chain says for good that it moved nothing.
    await t.rpc.call("evm_mine");
    await watcher.pass();
    expect(await statuses()).toEqual([[3n * USDC, "dropped"]]);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 0n, locked: 0n });
  }, 60_000);

  it("drops a transfer whose receipt the chain lacks, its block there without it, only once that block is under the confirmations", async () => {
    const { key, account } = await keyedAccount("acc_gone_shallow");
    const txHash = keccak256(toHex("a transfer a reorganisation removed from the head"));
    await t.rpc.call("evm_mine");
    // As the scan stored it from the old chain; the new chain's block at its height, the head, is there without it.
    await t.store.insertDeposits([detected(account.id, txHash, 2n * USDC, await t.vault.blockNumber())]);
    const watcher = watcherSigningWith(() => key, { confirmations: 1 });
    const statuses = () => statusesOf(account.id);
    // That block is the head: a reorganisation may yet replace it with one that holds the transfer.
    await watcher.pass();
    expect(await statuses()).toEqual([[2n * USDC, "detected"]]);
    // A block over it: the chain says for good that the transfer is not there.
    await t.rpc.call("evm_mine");
    await watcher.pass();
    expect(await statuses()).toEqual([[2n * USDC, "dropped"]]);
  }, 60_000);

  it("drops a transfer whose transaction a reorganisation mined again without it only once that block is under the confirmations", async () => {
    const { key, account } = await keyedAccount("acc_mined_without");
    await watcherSigningWith(() => key, { confirmations: 1 }).pass();
    const deposit = await signedTransfer(account.address as Address, 3n * USDC);
    const fork = await t.rpc.call<Hex>("evm_snapshot");
    await mine([deposit]);
    await t.rpc.call("evm_mine");
    // The scan finds the transfer; then the new chain mines its transaction where it goes through without it (a contract's
    // call that did otherwise there): its receipt holds no transfer into the address.
    const remined = Object.create(t.vault, { usdcTransfersOf: { value: async () => [] } }) as Vault;
    const atHead = Object.create(remined, {
      blockOf: { value: async () => ({ number: await t.vault.blockNumber(), hash: (await t.vault.blockHash(await t.vault.blockNumber()))! }) },
    }) as Vault;
    const statuses = () => statusesOf(account.id);
    // Mined again in the head block: a reorganisation may yet mine it where it makes the transfer.
    await watcherSigningWith(() => key, { confirmations: 1, vault: atHead }).pass();
    expect(await statuses()).toEqual([[3n * USDC, "detected"]]);
    // Mined again in a block under the confirmations: the chain says for good that it moved nothing to the address.
    await watcherSigningWith(() => key, { confirmations: 1, vault: remined }).pass();
    expect(await statuses()).toEqual([[3n * USDC, "dropped"]]);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 0n, locked: 0n });
    // The chain as the receipts said: without the transfer, which the next tests' scans would otherwise find again.
    await t.rpc.call("evm_revert", [fork]);
  }, 60_000);

  it("credits what a transfer moved when a reorganisation mined its transaction again where it moved another amount, instead of dropping it and stranding that USDC in the deposit address", async () => {
    const { key, account } = await keyedAccount("acc_mined_other_amount");
    await watcherSigningWith(() => key, { confirmations: 1 }).pass();
    const [receipt] = await mine([await signedTransfer(account.address as Address, 3n * USDC)]);
    // As the scan stored it from the old chain, where the transaction (a swap paying its output to the address, say) moved 5 USDC.
    await t.store.insertDeposits([detected(account.id, receipt!.transactionHash, 5n * USDC, receipt!.blockNumber)]);
    await t.rpc.call("evm_mine");
    const watcher = watcherSigningWith(() => key, { confirmations: 1 });
    await watcher.pass();
    await watcher.pass();
    // Its credit under a block, as every credit is recorded.
    await t.rpc.call("evm_mine");
    await watcher.pass();
    expect(await statusesOf(account.id)).toEqual([[3n * USDC, "credited"]]);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 3n * USDC, locked: 0n });
  }, 60_000);
  it("credits the account a transfer went into when a reorganisation mined its transaction again where it paid another account's deposit address", async () => {
    const a = await keyedAccount("acc_mined_other_payee");
    const b = await keyedAccount("acc_mined_payee");
    const keys = new Map([a, b].map(({ key, account }) => [account.id, key]));
    await watcherSigningWith((account) => keys.get(account.id), { confirmations: 1 }).pass();
    const [receipt] = await mine([await signedTransfer(b.account.address as Address, 3n * USDC)]);
    // As the scan stored it from the old chain, where the transaction paid the same place to the first account's address.
    await t.store.insertDeposits([detected(a.account.id, receipt!.transactionHash, 3n * USDC, receipt!.blockNumber)]);
    await t.rpc.call("evm_mine");
    const watcher = watcherSigningWith((account) => keys.get(account.id), { confirmations: 1 });
    await watcher.pass();
    await watcher.pass();
    await t.rpc.call("evm_mine");
    await watcher.pass();
    expect([await statusesOf(a.account.id), await statusesOf(b.account.id)]).toEqual([[], [[3n * USDC, "credited"]]]);
    expect(await t.vault.balanceOf(b.account.address as Address)).toEqual({ available: 3n * USDC, locked: 0n });
  }, 60_000);

  it("keeps the lease of a deposit it credits for as long as the credit takes, so no other instance credits it meanwhile", async () => {
    const key = generatePrivateKey();
    const account = await t.store.createAccount({ id: "acc_slow", email: "slow@example.com", address: privateKeyToAddress(key), walletKeyEnc: "enc", passwordHash: null, fundedAt: null });
    const payer = await newClient(t);
    await t.vault.fund(payer.address, 5n * USDC, keyOf(`payer-${payer.address}`));
    await t.vault.withdrawTo(keyOf(`to-${account.address}`), payer.address, account.address as Address, 5n * USDC);
    // Two instances credit it; A's credit is slow to land (a busy chain).
    const clock = { t: Date.now(), now: () => clock.t };
    const credits: string[] = [];
    let land!: () => void;
    const landed = new Promise<void>((r) => (land = r));
    const instance = (id: string, lands: Promise<void>) => {
      const creditDeposit = async (...args: Parameters<Vault["creditDeposit"]>) => (credits.push(id), await lands, t.vault.creditDeposit(...args));
      return watcherSigningWith(() => key, { instanceId: id, clock, vault: Object.create(t.vault, { creditDeposit: { value: creditDeposit } }) });
    };
    const [a, b] = [instance("A", landed), instance("B", Promise.resolve())];

    const crediting = a.pass();
    await expect.poll(() => credits).toEqual(["A"]);
    // main.ts's timer renews A's leases every few seconds, for longer than a lease lasts; B's pass then runs.
    for (let i = 0; i < 7; i++) {
      clock.t += 5_000;
      await a.renewLeases();
    }
    await b.pass();
    land();
    const credited = await crediting;
    expect(credits).toEqual(["A"]);
    expect(credited).toBe(1);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 5n * USDC, locked: 0n });
  }, 60_000);

  it("does not drop a transfer whose receipt one node of a pool lacks while another has its block", async () => {
    const { key, account } = await keyedAccount("acc_lag_receipt");
    await watcherSigningWith(() => key).pass();
    const payer = await newClient(t);
    await t.vault.fund(payer.address, 6n * USDC, keyOf(`payer-${payer.address}`));
    await t.vault.withdrawTo(keyOf(`deposit-${account.address}`), payer.address, account.address as Address, 6n * USDC);
    // The receipt asked of a node behind, the block of one that has it: two requests, two nodes.
    const lagging = Object.create(t.vault, { usdcTransfersOf: { value: async () => undefined } }) as Vault;
    await watcherSigningWith(() => key, { vault: lagging }).pass();
    await watcherSigningWith(() => key).pass();
    const mine = (await t.store.depositsInStatus(["detected", "crediting", "credited", "dropped"])).filter((d) => d.accountId === account.id);
    expect(mine.map((d) => d.status)).toEqual(["credited"]);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 6n * USDC, locked: 0n });
  }, 60_000);

  it.each([
    { why: "the node that read them lacked, one of a pool behind the others", fork: false, refused: /has no block/ },
    { why: "it read from a node on another fork there, one of a pool", fork: true, refused: /another block/ },
  ])("moves its cursor past no block whose transfers $why", async ({ fork, refused }) => {
    const { key, account } = await keyedAccount(fork ? "acc_pool_fork" : "acc_pool_behind");
    const watcher = watcherSigningWith(() => key);
    await watcher.pass();
    const payer = await newClient(t);
    await t.vault.fund(payer.address, 3n * USDC, keyOf(`payer-${payer.address}`));
    const last = await t.vault.blockNumber();
    await t.vault.withdrawTo(keyOf(`deposit-${account.address}`), payer.address, account.address as Address, 3n * USDC);
    // One URL before a pool: the head and the blocks come from a node that has the transfer's block, the logs from one
    // still at `last`, or one whose blocks past `last` are another fork's, without it.
    const pool = await poolWithLogsFrom(last, fork);
    const vault = await openEvmVault({ rpcUrl: pool.url, operatorKey: t.chain.operatorKey, store: t.store, faucet: true, devChain: t.chain });
    try {
      await expect(watcherSigningWith(() => key, { vault }).pass()).rejects.toThrow(refused);
    } finally {
      await vault.close();
      await pool.stop();
    }
    await watcher.pass();
    expect(await statusesOf(account.id)).toEqual([[3n * USDC, "credited"]]);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 3n * USDC, locked: 0n });
  }, 60_000);

  it("takes a node of a pool that lacks the scan's cursor block for one behind, not a reorganisation: what was credited stays credited, the cursor where it was", async () => {
    const { key, account } = await keyedAccount("acc_node_behind");
    const deposit = await signedTransfer(account.address as Address, 2n * USDC);
    const watcher = watcherSigningWith(() => key, { confirmations: 1 });
    await mine([deposit]);
    await t.rpc.call("evm_mine");
    const behind = await t.vault.blockNumber();
    // The credit is mined in the block after the scan's cursor, and recorded once the next pass's cursor is over it.
    await watcher.pass();
    await t.rpc.call("evm_mine");
    await watcher.pass();
    await t.rpc.call("evm_mine");
    expect(await statusesOf(account.id)).toEqual([[2n * USDC, "credited"]]);
    const name = depositCursorName(t.vault.info());
    const cursor = await t.store.chainCursor(name);
    // A node still at `behind`, under the cursor: it lacks the blocks above it, the credit's among them.
    const lagging = Object.create(t.vault, {
      blockNumber: { value: async () => behind },
      blockHash: { value: async (n: bigint) => (n > behind ? undefined : t.vault.blockHash(n)) },
      blockOf: { value: async (tx: Hex) => [await t.vault.blockOf(tx)].find((at) => at && at.number <= behind) },
      depositState: { value: async (k: Hex) => [await t.vault.depositState(k)].find((s) => s.kind === "none" || s.blockNumber <= behind) ?? { kind: "none" } },
    }) as Vault;
    // Asked for the head, and then asked for the rest while another node gives the head.
    const laggingButTheHead = Object.create(lagging, { blockNumber: { value: () => t.vault.blockNumber() } }) as Vault;
    for (const vault of [lagging, laggingButTheHead]) {
      await watcherSigningWith(() => key, { confirmations: 1, vault }).pass();
      expect(await statusesOf(account.id)).toEqual([[2n * USDC, "credited"]]);
      expect(await t.store.chainCursor(name)).toEqual(cursor);
    }
  }, 60_000);

  it("leaves a deposit credited while a reorganisation that removed its transfer and credit keeps the chain under the cursor, its USDC gone from the vault balance withdrawals draw on; credits it again once the chain is past the cursor", async () => {
    const { key, account } = await keyedAccount("acc_chain_shorter");
    const deposit = await signedTransfer(account.address as Address, 3n * USDC);
    const watcher = watcherSigningWith(() => key);
    await watcher.pass();
    const fork = await t.rpc.call<Hex>("evm_snapshot");
    await mine([deposit]);
    await watcher.pass();
    await t.rpc.call("evm_mine");
    await watcher.pass();
    expect(await statusesOf(account.id)).toEqual([[3n * USDC, "credited"]]);
    const name = depositCursorName(t.vault.info());
    const cursor = (await t.store.chainCursor(name))!;
    // The chain is replaced from before the transfer by one shorter than the cursor: neither the transfer nor its credit is on it.
    await t.rpc.call("evm_revert", [fork]);
    expect(await t.vault.blockNumber()).toBeLessThan(cursor.block);
    await watcher.pass();
    // The record still reads credited, the cursor where it was; the vault balance, which a withdrawal and an order are
    // checked against before they are sent and which the Vault itself draws on, holds none of it.
    expect(await statusesOf(account.id)).toEqual([[3n * USDC, "credited"]]);
    expect(await t.store.chainCursor(name)).toEqual(cursor);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 0n, locked: 0n });
    // The transfer is mined again and the chain grows past the cursor: a pass finds the reorganisation and puts the deposit
    // back to crediting; the passes wait while the removed credit's nonce may still land (the sender's 5 s grace), then credit it again.
    await mine([deposit]);
    while ((await t.vault.blockNumber()) <= cursor.block) await t.rpc.call("evm_mine");
    await watcher.pass();
    expect(await statusesOf(account.id)).toEqual([[3n * USDC, "crediting"]]);
    await expect.poll(async () => (await watcher.pass(), statusesOf(account.id)), { timeout: 30_000, interval: 500 }).toEqual([[3n * USDC, "credited"]]);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 3n * USDC, locked: 0n });
  }, 60_000);

  it("scans again blocks a reorganisation replaced while it read them, and credits the transfer the new chain put there", async () => {
    const { key, account } = await keyedAccount("acc_reorg");
    // A wallet holding USDC of its own, paid out of the Vault before the fork.
    const sender = privateKeyToAccount(generatePrivateKey());
    await t.rpc.call("anvil_setBalance", [sender.address, "0xde0b6b3a7640000"]);
    const payer = await newClient(t);
    await t.vault.fund(payer.address, 4n * USDC, keyOf(`payer-${payer.address}`));
    await t.vault.withdrawTo(keyOf(`to-${sender.address}`), payer.address, sender.address, 4n * USDC);
    await watcherSigningWith(() => key).pass();
    const fork = await t.rpc.call<Hex>("evm_snapshot");
    // The chain the watcher reads: a block without the transfer.
    await t.rpc.call("evm_mine");
    // Once the watcher has read that block's transfers, the block is replaced by one in which the wallet pays the deposit address.
    const chain = defineChain({ id: t.chain.chainId, name: "dev", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [t.chain.rpcUrl] } } });
    const wallet = createWalletClient({ account: sender, chain, transport: http(t.chain.rpcUrl) });
    const reorganising = Object.create(t.vault, {
      usdcTransfers: {
        value: async (...args: Parameters<Vault["usdcTransfers"]>) => {
          const read = await t.vault.usdcTransfers(...args);
          await t.rpc.call("evm_revert", [fork]);
          const hash = await wallet.writeContract({ address: t.vault.info().contracts.usdc, abi: testUSDCAbi, functionName: "transfer", args: [account.address as Address, 4n * USDC] });
          await t.rpc.call("evm_mine");
          await createPublicClient({ chain, transport: http(t.chain.rpcUrl) }).waitForTransactionReceipt({ hash, pollingInterval: 20 });
          return read;
        },
      },
    }) as Vault;
    await watcherSigningWith(() => key, { vault: reorganising }).pass();
    await watcherSigningWith(() => key).pass();
    const mine = (await t.store.depositsInStatus(["detected", "crediting", "credited", "dropped"])).filter((d) => d.accountId === account.id);
    expect(mine.map((d) => [d.amount, d.status])).toEqual([[4n * USDC, "credited"]]);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 4n * USDC, locked: 0n });
  }, 60_000);

  it("finds a transfer a reorganisation mined under the scan's cursor after the pass had found that cursor's block still there", async () => {
    const { key, account } = await keyedAccount("acc_under_cursor");
    const deposit = await signedTransfer(account.address as Address, 7n * USDC);
    const watcher = watcherSigningWith(() => key);
    await watcher.pass();
    const fork = await t.rpc.call<Hex>("evm_snapshot");
    await t.rpc.call("evm_mine");
    await watcher.pass();
    const cursor = await t.vault.blockNumber();
    await t.rpc.call("evm_mine");
    // The pass finds its cursor's block as it left it; at once the chain is replaced from under it by one whose first new block holds the transfer.
    let reorganised = false;
    const forking = Object.create(t.vault, {
      blockHash: {
        value: async (number: bigint) => {
          const hash = await t.vault.blockHash(number);
          if (number === cursor && !reorganised) {
            reorganised = true;
            await t.rpc.call("evm_revert", [fork]);
            await mine([deposit]);
            await t.rpc.call("evm_mine");
          }
          return hash;
        },
      },
    }) as Vault;
    // The transfers are read from the new chain, whose block at the target is not the one the pass read first: the pass fails, its cursor left.
    await expect(watcherSigningWith(() => key, { vault: forking }).pass()).rejects.toThrow(/another block/);
    expect(reorganised).toBe(true);
    await watcher.pass();
    const stored = (await t.store.depositsInStatus(["detected", "crediting", "credited", "dropped"])).filter((d) => d.accountId === account.id);
    expect(stored.map((d) => [d.amount, d.status])).toEqual([[7n * USDC, "credited"]]);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 7n * USDC, locked: 0n });
  }, 60_000);

  it("credits again a deposit whose credit a deep reorganisation removed, its transfer mined again at the same log index", async () => {
    const { key, account } = await keyedAccount("acc_uncredited");
    const deposit = await signedTransfer(account.address as Address, 4n * USDC);
    const watcher = watcherSigningWith(() => key);
    await watcher.pass();
    const fork = await t.rpc.call<Hex>("evm_snapshot");
    const [first] = await mine([deposit]);
    expect(await watcher.pass()).toBe(1);
    // A reorganisation deeper than the confirmations: the new chain has an empty block first, then the transfer, its block's first log again.
    await t.rpc.call("evm_revert", [fork]);
    await t.rpc.call("evm_mine");
    const [again] = await mine([deposit]);
    expect(again!.logs.map((l) => l.logIndex)).toEqual(first!.logs.map((l) => l.logIndex));
    // The passes wait while the removed credit's nonce may still land (the sender's 5 s grace), then credit it again.
    const statuses = async () => {
      await watcher.pass();
      return (await t.store.depositsInStatus(["detected", "crediting", "credited", "dropped"])).filter((d) => d.accountId === account.id).map((d) => [d.amount, d.status]);
    };
    await expect.poll(statuses, { timeout: 30_000, interval: 500 }).toEqual([[4n * USDC, "credited"]]);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 4n * USDC, locked: 0n });
  }, 60_000);

  it("drops a deposit whose transfer and credit a deep reorganisation removed only once its credit can no longer land again", async () => {
    const { key, account } = await keyedAccount("acc_credit_pending");
    const deposit = await signedTransfer(account.address as Address, 7n * USDC);
    const watcher = watcherSigningWith(() => key);
    await watcher.pass();
    const fork = await t.rpc.call<Hex>("evm_snapshot");
    await mine([deposit]);
    expect(await watcher.pass()).toBe(1);
    // A reorganisation deeper than the confirmations removes the transfer (its sender spent it otherwise) and the credit; the node
    // keeps the removed credit in its pool, where it may land again and pull another deposit's USDC from the address.
    await t.rpc.call("evm_revert", [fork]);
    await t.rpc.call("evm_mine");
    await t.rpc.call("evm_mine");
    const creditPending = Object.create(t.vault, { pendingTransactions: { value: async () => 1 } }) as Vault;
    await watcherSigningWith(() => key, { vault: creditPending }).pass();
    const statuses = async () => (await t.store.depositsInStatus(["detected", "crediting", "credited", "dropped"])).filter((d) => d.accountId === account.id).map((d) => d.status);
    expect(await statuses()).toEqual(["crediting"]);
    // Nothing pending any more (once the sender's 5 s grace for the removed credit's nonce is over): no credit of it can land, and there is nothing to credit.
    await expect.poll(async () => (await watcher.pass(), statuses()), { timeout: 30_000, interval: 500 }).toEqual(["dropped"]);
  }, 60_000);

  it("refuses a removed credit that lands again after a deep reorganisation, so it takes no other deposit's USDC from the address", async () => {
    const { key, account } = await keyedAccount("acc_relanded");
    const vanishing = await signedTransfer(account.address as Address, 4n * USDC);
    const real = await signedTransfer(account.address as Address, 4n * USDC);
    const watcher = watcherSigningWith(() => key);
    await watcher.pass();
    const fork = await t.rpc.call<Hex>("evm_snapshot");
    const [first] = await mine([vanishing]);
    expect(await watcher.pass()).toBe(1);
    const [removed] = (await t.store.depositsInStatus(["credited"])).filter((d) => d.accountId === account.id);
    const credit = await t.rpc.call<Hex>("eth_getRawTransactionByHash", [removed!.creditTx]);
    // A reorganisation deeper than the confirmations removes the transfer (its sender spent it otherwise) and the credit;
    // another transfer of the same amount arrives at the address, then the node puts the removed credit back in a block.
    await t.rpc.call("evm_revert", [fork]);
    for (let i = 0; i < 3; i++) await t.rpc.call("evm_mine");
    const [second] = await mine([real]);
    const [relanded] = await mine([credit]);
    expect(relanded!.status).toBe("reverted");
    const statuses = async () => {
      await watcher.pass();
      const stored = (await t.store.depositsInStatus(["detected", "crediting", "credited", "dropped"])).filter((d) => d.accountId === account.id);
      return stored.map((d) => [d.txHash, d.status]);
    };
    await expect.poll(statuses, { timeout: 30_000, interval: 500 }).toEqual([
      [first!.transactionHash, "dropped"],
      [second!.transactionHash, "credited"],
    ]);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 4n * USDC, locked: 0n });
  }, 60_000);

  it("keeps credited the deposits whose credit a deep reorganisation left on chain", async () => {
    const { key, account } = await keyedAccount("acc_kept");
    const deposit = await signedTransfer(account.address as Address, 3n * USDC);
    const elsewhere = await signedTransfer(privateKeyToAddress(generatePrivateKey()), USDC);
    const watcher = watcherSigningWith(() => key);
    await mine([deposit]);
    expect(await watcher.pass()).toBe(1);
    const fork = await t.rpc.call<Hex>("evm_snapshot");
    await t.rpc.call("evm_mine");
    await watcher.pass();
    // The block the scan stopped at is replaced; the transfer and its credit, below it, are not.
    await t.rpc.call("evm_revert", [fork]);
    await mine([elsewhere]);
    // Searched for in the Vault's logs, a credit made long ago costs a request per 10,000 blocks of history.
    const noSearch = Object.create(t.vault, { depositState: { value: async () => expect.unreachable("the Vault's logs searched for a credit") } }) as Vault;
    await watcherSigningWith(() => key, { vault: noSearch }).pass();
    const stored = (await t.store.depositsInStatus(["detected", "crediting", "credited", "dropped"])).filter((d) => d.accountId === account.id);
    expect(stored.map((d) => [d.amount, d.status])).toEqual([[3n * USDC, "credited"]]);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 3n * USDC, locked: 0n });
  }, 60_000);

  it("reads no receipt of the credits a deep reorganisation left below where it forked, however many were made before", async () => {
    const { key, account } = await keyedAccount("acc_below_fork");
    const deposits = [await signedTransfer(account.address as Address, 2n * USDC), await signedTransfer(account.address as Address, 3n * USDC)];
    const elsewhere = await signedTransfer(privateKeyToAddress(generatePrivateKey()), USDC);
    const watcher = watcherSigningWith(() => key);
    for (const deposit of deposits) {
      await mine([deposit]);
      expect(await watcher.pass()).toBe(1);
    }
    const fork = await t.rpc.call<Hex>("evm_snapshot");
    await t.rpc.call("evm_mine");
    await watcher.pass();
    // The block the scan stopped at is replaced; every credit so far (this file's tests') is below the fork.
    await t.rpc.call("evm_revert", [fork]);
    await mine([elsewhere]);
    const credits = new Set((await t.store.depositsInStatus(["credited"])).map((d) => d.creditTx));
    expect(credits.size).toBeGreaterThan(1);
    const receipts: string[] = [];
    const counting = Object.create(t.vault, {
      usdcTransfersOf: { value: (tx: Hex) => (receipts.push(tx), t.vault.usdcTransfersOf(tx)) },
      blockOf: { value: (tx: Hex) => (receipts.push(tx), t.vault.blockOf(tx)) },
    }) as Vault;
    await watcherSigningWith(() => key, { vault: counting }).pass();
    expect(receipts.filter((tx) => credits.has(tx))).toEqual([]);
    const stored = (await t.store.depositsInStatus(["detected", "crediting", "credited", "dropped"])).filter((d) => d.accountId === account.id);
    expect(stored.map((d) => [d.amount, d.status])).toEqual([[2n * USDC, "credited"], [3n * USDC, "credited"]]);
  }, 60_000);

  it("credits again a deposit whose credit a reorganisation shallower than the confirmations removed, the scan's cursor block kept", async () => {
    const { key, account } = await keyedAccount("acc_shallow");
    const deposit = await signedTransfer(account.address as Address, 5n * USDC);
    const watcher = watcherSigningWith(() => key, { confirmations: 1 });
    await mine([deposit]);
    await t.rpc.call("evm_mine");
    const fork = await t.rpc.call<Hex>("evm_snapshot");
    await watcher.pass();
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 5n * USDC, locked: 0n });
    // A reorganisation of one block, under the confirmations: the credit's block is replaced by an empty one; the transfer, and the block the scan stopped at, are kept.
    await t.rpc.call("evm_revert", [fork]);
    await t.rpc.call("evm_mine");
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 0n, locked: 0n });
    // The passes wait while the lost credit's nonce may still land (the sender's 5 s grace), then credit again, and record it once a block is over it.
    const statuses = async () => {
      await watcher.pass();
      await t.rpc.call("evm_mine");
      return (await t.store.depositsInStatus(["detected", "crediting", "credited", "dropped"])).filter((d) => d.accountId === account.id).map((d) => [d.amount, d.status]);
    };
    await expect.poll(statuses, { timeout: 30_000, interval: 500 }).toEqual([[5n * USDC, "credited"]]);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 5n * USDC, locked: 0n });
  }, 60_000);

  it("credits again a deposit whose credit was confirmed by a head that moved after the scan, and that a reorganisation above the scan's cursor removed", async () => {
    const { key, account } = await keyedAccount("acc_late_head");
    const deposit = await signedTransfer(account.address as Address, 6n * USDC);
    const watcher = watcherSigningWith(() => key, { confirmations: 1 });
    await mine([deposit]);
    await t.rpc.call("evm_mine");
    const fork = await t.rpc.call<Hex>("evm_snapshot");
    // The credit is sent, mined in the block after the scan's cursor, and waits for a block over it.
    await watcher.pass();
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 6n * USDC, locked: 0n });
    // The next pass scans to the block under the head, then a block is mined while it reads the credit: the head it confirms the credit by is past the cursor's.
    const late = Object.create(t.vault, {
      depositState: { value: async (...args: Parameters<Vault["depositState"]>) => (await t.rpc.call("evm_mine"), t.vault.depositState(...args)) },
    }) as Vault;
    await watcherSigningWith(() => key, { confirmations: 1, vault: late }).pass();
    // A reorganisation of the blocks above the scan's cursor: the credit's block is replaced by an empty one, the cursor's block kept.
    await t.rpc.call("evm_revert", [fork]);
    await t.rpc.call("evm_mine");
    await t.rpc.call("evm_mine");
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 0n, locked: 0n });
    const statuses = async () => {
      await watcher.pass();
      await t.rpc.call("evm_mine");
      return (await t.store.depositsInStatus(["detected", "crediting", "credited", "dropped"])).filter((d) => d.accountId === account.id).map((d) => [d.amount, d.status]);
    };
    await expect.poll(statuses, { timeout: 30_000, interval: 500 }).toEqual([[6n * USDC, "credited"]]);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 6n * USDC, locked: 0n });
  }, 60_000);

  it("records no credit that a node of a pool on another fork logged under the scan's cursor while the chain's credit is above it, so a reorganisation that removes that credit credits it again", async () => {
    const { key, account } = await keyedAccount("acc_fork_credit");
    const deposit = await signedTransfer(account.address as Address, 4n * USDC);
    const watcher = watcherSigningWith(() => key, { confirmations: 1 });
    await mine([deposit]);
    await t.rpc.call("evm_mine");
    const fork = await t.rpc.call<Hex>("evm_snapshot");
    // The credit is sent, mined above the scan's cursor, and waits for a block over it; the next pass moves the cursor to the block under it.
    await watcher.pass();
    await watcher.pass();
    expect(await statusesOf(account.id)).toEqual([[4n * USDC, "crediting"]]);
    const cursor = (await t.store.chainCursor(depositCursorName(t.vault.info())))!.block;
    // One URL before a pool: the logs come from a node on another fork from the cursor's block up, which mined the credit
    // in that block; the head, the blocks and the Vault's state from the node on the chain.
    const pool = await startPool(
      t.chain.rpcUrl,
      (c) => c.method === "eth_getLogs",
      async (c, forward) => {
        const answer = await forward(c);
        if (c.method === "eth_getBlockByNumber" && BigInt(c.params[0] as Hex) >= cursor) {
          const block = answer.result as { hash: Hex };
          return { ...answer, result: { ...block, hash: keccak256(block.hash) } };
        }
        if (c.method !== "eth_getLogs") return answer;
        return { ...answer, result: (answer.result as { blockNumber: Hex }[]).map((l) => ({ ...l, blockNumber: toHex(cursor) })) };
      },
    );
    const vault = await openEvmVault({ rpcUrl: pool.url, operatorKey: t.chain.operatorKey, store: t.store, faucet: true, devChain: t.chain });
    try {
      await watcherSigningWith(() => key, { confirmations: 1, vault }).pass();
    } finally {
      await vault.close();
      await pool.stop();
    }
    expect(await statusesOf(account.id)).toEqual([[4n * USDC, "crediting"]]);
    // A reorganisation of the blocks above the cursor: the credit's block is replaced by an empty one, the cursor's block kept.
    await t.rpc.call("evm_revert", [fork]);
    await t.rpc.call("evm_mine");
    await t.rpc.call("evm_mine");
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 0n, locked: 0n });
    const statuses = async () => {
      await watcher.pass();
      await t.rpc.call("evm_mine");
      return statusesOf(account.id);
    };
    await expect.poll(statuses, { timeout: 30_000, interval: 500 }).toEqual([[4n * USDC, "credited"]]);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 4n * USDC, locked: 0n });
  }, 60_000);

  it("credits once a transfer that a deep reorganisation mined again at another log index", async () => {
    const { key, account } = await keyedAccount("acc_remined");
    const elsewhere = await signedTransfer(privateKeyToAddress(generatePrivateKey()), 2n * USDC);
    const deposit = await signedTransfer(account.address as Address, 4n * USDC);
    const watcher = watcherSigningWith(() => key);
    await watcher.pass();
    const fork = await t.rpc.call<Hex>("evm_snapshot");
    // The deposit is its block's second transfer, found and credited there.
    const [, first] = await mine([elsewhere, deposit]);
    expect(first!.logs.map((l) => l.logIndex)).toEqual([1]);
    expect(await watcher.pass()).toBe(1);
    // A reorganisation deeper than the confirmations: the new chain mines the deposit's transaction alone, its transfer now the block's first log.
    await t.rpc.call("evm_revert", [fork]);
    const [again] = await mine([deposit]);
    expect(again!.logs.map((l) => l.logIndex)).toEqual([0]);
    // The passes wait while the removed credit's nonce may still land (the sender's 5 s grace), then credit it again.
    const credited = async () => {
      await watcher.pass();
      const stored = (await t.store.depositsInStatus(["detected", "crediting", "credited", "dropped"])).filter((d) => d.accountId === account.id);
      return stored.filter((d) => d.status !== "dropped").map((d) => [d.amount, d.status]);
    };
    await expect.poll(credited, { timeout: 30_000, interval: 500 }).toEqual([[4n * USDC, "credited"]]);
    expect(await t.vault.balanceOf(account.address as Address)).toEqual({ available: 4n * USDC, locked: 0n });
  }, 60_000);

  it("finishes a zero-value transfer into a deposit address instead of trying to credit it at every pass for ever", async () => {
    const { key, account } = await keyedAccount("acc_zero");
    // Anyone may send 0 USDC to any address: it needs gas only, no USDC.
    const spammer = privateKeyToAccount(generatePrivateKey());
    await t.rpc.call("anvil_setBalance", [spammer.address, "0xde0b6b3a7640000"]);
    const chain = defineChain({ id: t.chain.chainId, name: "dev", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [t.chain.rpcUrl] } } });
    const wallet = createWalletClient({ account: spammer, chain, transport: http(t.chain.rpcUrl) });
    const hash = await wallet.writeContract({ address: t.vault.info().contracts.usdc, abi: testUSDCAbi, functionName: "transfer", args: [account.address as Address, 0n] });
    await t.rpc.call("evm_mine");
    await createPublicClient({ chain, transport: http(t.chain.rpcUrl) }).waitForTransactionReceipt({ hash, pollingInterval: 20 });
    const attempts: bigint[] = [];
    const counting = Object.create(t.vault, {
      creditDeposit: { value: (...args: Parameters<Vault["creditDeposit"]>) => (attempts.push(args[2]), t.vault.creditDeposit(...args)) },
    }) as Vault;
    for (let i = 0; i < 3; i++) await watcherSigningWith(() => key, { vault: counting }).pass();
    const mine = (await t.store.depositsInStatus(["detected", "crediting", "credited", "dropped"])).filter((d) => d.accountId === account.id);
    expect(mine.map((d) => [d.amount, d.status])).toEqual([[0n, "dropped"]]);
    expect(attempts).toEqual([]);
  }, 60_000);

  it("credits the next deposit at its first pass after the Vault refused a withdrawal in its dry run, which leaves no operator transaction pending", async () => {
    const { key, account } = await keyedAccount("acc_after_refusal");
    const watcher = watcherSigningWith(() => key);
    await watcher.pass();
    const payer = await newClient(t);
    await t.vault.fund(payer.address, 2n * USDC, keyOf(`payer-${payer.address}`));
    const nonce = () => t.rpc.call<Hex>("eth_getTransactionCount", [privateKeyToAddress(t.chain.operatorKey), "pending"]);
    const before = BigInt(await nonce());
    // Alone, and in one batch with a withdrawal the Vault pays: the refused one is sent under no nonce.
    await expect(t.vault.withdrawTo(keyOf(`refused-${payer.address}`), payer.address, account.address as Address, 3n * USDC)).rejects.toMatchObject({ outcome: "reverted", reason: "InsufficientAvailable" });
    const [refused, paid] = await Promise.allSettled([
      t.vault.withdrawTo(keyOf(`refused-again-${payer.address}`), payer.address, account.address as Address, 3n * USDC),
      t.vault.withdrawTo(keyOf(`deposit-${account.address}`), payer.address, account.address as Address, 2n * USDC),
    ]);
    expect(refused).toMatchObject({ status: "rejected", reason: { outcome: "reverted", reason: "InsufficientAvailable" } });
    expect(paid.status).toBe("fulfilled");
    expect(BigInt(await nonce())).toBe(before + 1n);
    expect(await t.vault.pendingTransactions()).toBe(0);
    expect(await watcher.pass()).toBe(1);
    expect(await statusesOf(account.id)).toEqual([[2n * USDC, "credited"]]);
    expect(await t.vault.pendingTransactions()).toBe(0);
  }, 60_000);
});
