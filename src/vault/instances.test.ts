// Several server instances on one PostgreSQL database and one dev chain run apart (`crossfill chain`:
// the chain's JSON-RPC front journals the operator's transactions), all sending as the same operator:
// each instance is a vault of its own over a store of its own (its own connection pool).
import { join } from "node:path";
import { keccak256, toHex, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/postgres.ts";
import { sotTokenId } from "../contracts/sot.ts";
import { openPostgresStore } from "../store/postgres/postgres-store.ts";
import type { Store } from "../store/store.ts";
import { startDevChain, type DevChain } from "./devnode/devchain.ts";
import { startRpcFront } from "./devnode/rpc-front.ts";
import { openEvmVault } from "./evm/evm-vault.ts";
import { storeNonceBook } from "./evm/nonce-book.ts";
import { TxSender, rpcSubmit } from "./evm/sender.ts";
import { JsonRpc } from "./rpc.ts";
import { keyOf, tempDir } from "./testkit.ts";
import type { Vault } from "./vault.ts";

const client = "0x00000000000000000000000000000000000c11e9" as const;
const tokenId = sotTokenId("instances", "YES");

/** What a test opened, closed after it whatever happens. */
let cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.reverse()) await close();
  cleanup = [];
});

/** `crossfill chain` on a fresh directory (or an existing one: a restart): the dev chain behind its JSON-RPC front. */
async function chainApart(dir = tempDir()): Promise<{ dir: string; chain: DevChain; url: string; rpc: JsonRpc }> {
  const chain = await startDevChain({ dataDir: join(dir, "node"), snapshotEvery: 1_000_000 });
  const front = await startRpcFront(chain);
  cleanup.push(() => chain.stop(), () => front.close());
  return { dir, chain, url: front.url, rpc: new JsonRpc(chain.rpcUrl) };
}

/** A fresh database, and `n` stores on it as `n` instances open them (migrating at once). */
async function instancesOn(n: number): Promise<Store[]> {
  const db: TestDatabase = await createTestDatabase();
  cleanup.push(() => db.drop());
  const stores = await Promise.all(Array.from({ length: n }, () => openPostgresStore(db.url)));
  cleanup.push(...stores.map((s) => () => s.close()));
  await Promise.all(stores.map((s) => s.migrate()));
  return stores;
}

function openVaults(c: { url: string; chain: DevChain }, stores: Store[]): Promise<Vault[]> {
  return Promise.all(
    stores.map(async (store) => {
      const vault = await openEvmVault({ rpcUrl: c.url, operatorKey: c.chain.operatorKey, store, faucet: true, receiptPollMs: 20 });
      cleanup.push(() => vault.close());
      return vault;
    }),
  );
}

async function operatorNonce(rpc: JsonRpc, chain: DevChain, tag: "latest" | "pending"): Promise<number> {
  return Number(await rpc.call<Hex>("eth_getTransactionCount", [privateKeyToAccount(chain.operatorKey).address, tag]));
}

describe("several instances on one PostgreSQL database and one chain", () => {
  it("opening at once on a fresh chain and a fresh database, deploy the contracts once and all use them", async () => {
    const c = await chainApart();
    const stores = await instancesOn(5);
    const vaults = await openVaults(c, stores);
    const contracts = vaults[0]!.info().contracts;
    for (const v of vaults) expect(v.info().contracts).toEqual(contracts);
    // Three operator transactions in all: one TestUSDC, one Vault, the treasury's approval of the Vault.
    expect(await operatorNonce(c.rpc, c.chain, "latest")).toBe(3);
    expect((await stores[3]!.chainDeployment(c.chain.chainId)).deployment).toMatchObject({ usdc: contracts.usdc, vault: contracts.vault, sot: contracts.sot });
  });

  it("sending at once, every transaction lands, no nonce is taken twice, and nothing is left pending", async () => {
    const c = await chainApart();
    const [a, b] = await openVaults(c, await instancesOn(2));
    await a!.fund(client, 200_000_000n, keyOf("instances"));
    const orders = 120;
    const refs = await Promise.all(
      Array.from({ length: orders }, async (_, i) => {
        const by = i % 2 === 0 ? a! : b!;
        const o = keccak256(toHex(`instances-${i}`));
        const lock = await by.lock(o, client, 1_000_000n);
        // The other instance settles: the lock is on chain, whoever sent it.
        const settle = await (by === a ? b! : a!).settle(o, 400_000n, { tokenId, shares: 2_000_000n });
        return [lock.txHash, settle.txHash];
      }),
    );
    // Each instance batches its orders' calls: many orders share a transaction, and no two transactions a nonce.
    const hashes = [...new Set(refs.flat())];
    expect(hashes.length).toBeLessThan(2 * orders);
    const nonces = await Promise.all(hashes.map(async (h) => Number((await c.rpc.call<{ nonce: Hex }>("eth_getTransactionByHash", [h])).nonce)));
    expect(new Set(nonces).size).toBe(hashes.length);
    // Deploys, the approval and the drip, then exactly the batches: no filler was needed, none lost.
    expect(await operatorNonce(c.rpc, c.chain, "latest")).toBe(4 + hashes.length);
    expect(await a!.pendingTransactions()).toBe(0);
    expect(await b!.pendingTransactions()).toBe(0);
    expect(await b!.balanceOf(client)).toEqual({ available: 200_000_000n - BigInt(orders) * 400_000n, locked: 0n });
    expect(await a!.sotBalance(client, tokenId)).toBe(BigInt(orders) * 2_000_000n);
  });

  it("a batch reaching the chain before the earlier nonces it waits for is mined when they come, and replayed so after a kill", async () => {
    const c = await chainApart();
    const [store] = await instancesOn(1);
    const account = privateKeyToAccount(c.chain.operatorKey);
    const rpc = new JsonRpc(c.url);
    const genesis = (await rpc.call<{ hash: Hex }>("eth_getBlockByNumber", ["0x0", false])).hash;
    const nonces = storeNonceBook(store!, { chainId: c.chain.chainId, genesis, operator: account.address });
    const sender = (submit = rpcSubmit(rpc)) => new TxSender({ rpc, account, chainId: c.chain.chainId, submit, errorAbi: [], receiptPollMs: 20, nonces });
    const send = (s: TxSender, mark: number) => s.send({ label: `call ${mark}`, to: "0x000000000000000000000000000000000000dEaD", data: toHex(mark, { size: 1 }), gas: 30_000n });

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // The first instance reserved nonce 0, and its batch is held on the way; the second's nonce 1 is journaled first.
    const first = send(sender(async (raws) => (await held, rpcSubmit(rpc)(raws))), 1);
    await expect.poll(async () => (await nonces.handedOut()).next).toBe(1);
    const second = send(sender(), 2);
    await expect.poll(async () => BigInt((await c.rpc.call<{ queued: Hex }>("txpool_status")).queued)).toBe(1n);
    expect(await operatorNonce(c.rpc, c.chain, "latest")).toBe(0);
    release();
    const mined = await Promise.all([first, second]);
    expect(await operatorNonce(c.rpc, c.chain, "latest")).toBe(2);

    // anvil killed before any snapshot: the journal, second batch first, is all there is, and replays to the same chain.
    process.kill(c.chain.pid, "SIGKILL");
    await new Promise((r) => setTimeout(r, 200));
    const again = await chainApart(c.dir);
    expect(await operatorNonce(again.rpc, again.chain, "latest")).toBe(2);
    for (const m of mined) expect((await again.rpc.call<{ status: Hex } | null>("eth_getTransactionReceipt", [m.txHash]))?.status).toBe("0x1");
  });
});
