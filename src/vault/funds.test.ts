import { describe, expect, it } from "vitest";
import { hashTypedData, keccak256, toHex, zeroAddress, zeroHash, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAddress, sign } from "viem/accounts";
import { testUSDCAbi, vaultAbi } from "../contracts/artifacts.ts";
import { permitDigest } from "./evm/funds.ts";
import { keyOf, newClient } from "./testkit.ts";
import { refusedOnChain, reverts, testChainPerFile } from "./vitest-kit.ts";
import type { Address, DigestSigner } from "./vault.ts";

const USDC = 1_000_000n;
const id = (s: string) => keccak256(toHex(`${s}-${Math.random()}`));
const signer = (key: Hex): DigestSigner => (digest) => sign({ hash: digest, privateKey: key, to: "hex" });

const t = testChainPerFile();

/** A deposit address: a key the service keeps, an address that holds no gas. */
function depositAddress() {
  const key = generatePrivateKey();
  return { key, address: privateKeyToAddress(key) as Address };
}

async function usdcOf(address: Address): Promise<bigint> {
  const c = await newClient(t);
  return c.reader.readContract({ address: t.vault.info().contracts.usdc, abi: testUSDCAbi, functionName: "balanceOf", args: [address] });
}

/** A client funded by the faucet: its vault balance is where withdrawals come from. */
async function funded(amount: bigint) {
  const c = await newClient(t);
  await t.vault.fund(c.address, amount, keyOf(`funds-${c.address}`));
  return c;
}

describe("withdrawals by the operator", () => {
  it("pays a client's available USDC to an address, once per withdrawal id", async () => {
    const a = await funded(100n * USDC);
    const to = depositAddress().address;
    const w = id("w");
    const paid = await t.vault.withdrawTo(w, a.address, to, 40n * USDC);
    expect(await usdcOf(to)).toBe(40n * USDC);
    expect(await t.vault.balanceOf(a.address)).toEqual({ available: 60n * USDC, locked: 0n });
    expect(await t.vault.withdrawalState(w)).toEqual({ kind: "paid", client: a.address, to, amount: 40n * USDC, ...paid });
    // Sent again (a retry, a recovery): nothing more is paid, and the first payment is named.
    expect(await t.vault.withdrawTo(w, a.address, to, 40n * USDC)).toEqual(paid);
    expect(await usdcOf(to)).toBe(40n * USDC);
    expect(await t.vault.balanceOf(a.address)).toEqual({ available: 60n * USDC, locked: 0n });
    expect(await t.vault.withdrawalState(id("never"))).toEqual({ kind: "none" });
    // The token would pay the address: nothing of it refuses a withdrawal there.
    expect(await t.vault.transferRefusal(to, 40n * USDC)).toBeUndefined();
    const receipt = await a.reader.getTransactionReceipt({ hash: paid.txHash });
    expect(receipt.status).toBe("success");
  });

  it("refuses more than is available (locked funds included), a zero amount or address, and anyone but the operator", async () => {
    const a = await funded(10n * USDC);
    const to = depositAddress().address;
    await t.vault.lock(id("lock"), a.address, 4n * USDC);
    await reverts(t.vault.withdrawTo(id("big"), a.address, to, 6n * USDC + 1n), "InsufficientAvailable");
    await reverts(t.vault.withdrawTo(id("zero"), a.address, to, 0n), "ZeroAmount");
    await reverts(t.vault.withdrawTo(id("nowhere"), a.address, zeroAddress, 1n), "ZeroAddress");
    await reverts(t.vault.withdrawTo(id("nobody"), zeroAddress, to, 1n), "ZeroAddress");
    const vault = t.vault.info().contracts.vault;
    await refusedOnChain(a.reader.simulateContract({ address: vault, abi: vaultAbi, account: a.address, functionName: "withdrawTo", args: [id("self"), a.address, a.address, 1n] }), "OnlyOperator");
    // A refused withdrawal changed nothing, and its id is still free.
    expect(await t.vault.balanceOf(a.address)).toEqual({ available: 6n * USDC, locked: 4n * USDC });
    expect(await usdcOf(to)).toBe(0n);
  });
});

describe("deposit credits by the operator", () => {
  it("finds a transfer into a deposit address in the USDC logs and credits it once per key, pulled under the address's own permit", async () => {
    const a = await funded(100n * USDC);
    const d = depositAddress();
    const from = (await t.vault.blockNumber()) + 1n;
    const sent = await t.vault.withdrawTo(id("to-deposit"), a.address, d.address, 30n * USDC);
    const [transfer, ...more] = await t.vault.usdcTransfers(from, await t.vault.blockNumber());
    expect(more).toEqual([]);
    expect(transfer).toEqual({ from: t.vault.info().contracts.vault, to: d.address, amount: 30n * USDC, logIndex: expect.any(Number), ...sent });
    expect(await t.vault.usdcTransfersOf(sent.txHash)).toEqual([transfer]);
    expect(await t.vault.usdcTransfersOf(id("no such transaction"))).toBeUndefined();
    expect(await t.vault.blockHash(sent.blockNumber)).toBe((await a.reader.getBlock({ blockNumber: sent.blockNumber })).hash);
    expect(await t.vault.blockHash((await t.vault.blockNumber()) + 100n)).toBeUndefined();

    const key = id("deposit");
    expect(await t.vault.depositState(key)).toEqual({ kind: "none" });
    const block = (await t.vault.blockOf(sent.txHash))!;
    expect(block).toEqual({ number: sent.blockNumber, hash: await t.vault.blockHash(sent.blockNumber) });
    const credit = await t.vault.creditDeposit(key, d.address, 30n * USDC, block, signer(d.key));
    expect(await t.vault.balanceOf(d.address)).toEqual({ available: 30n * USDC, locked: 0n });
    expect(await usdcOf(d.address)).toBe(0n);
    expect(await t.vault.depositState(key)).toEqual({ kind: "credited", client: d.address, amount: 30n * USDC, ...credit });
    // Sent again: nothing more is credited, and the first credit is named.
    expect(await t.vault.creditDeposit(key, d.address, 30n * USDC, block, signer(d.key))).toEqual(credit);
    expect(await t.vault.balanceOf(d.address)).toEqual({ available: 30n * USDC, locked: 0n });
    const { operator, contracts } = t.vault.info();
    await refusedOnChain(
      a.reader.simulateContract({ address: contracts.vault, abi: vaultAbi, account: operator, functionName: "creditDeposit", args: [key, d.address, 1n, 0n, zeroHash, 0n, 27, key, key] }),
      "AlreadyCredited",
    );
  });

  it("refuses a credit the address did not sign, more than the address holds, a zero amount, and anyone but the operator", async () => {
    const a = await funded(20n * USDC);
    const d = depositAddress();
    const sent = await t.vault.withdrawTo(id("fund-d"), a.address, d.address, 5n * USDC);
    const block = (await t.vault.blockOf(sent.txHash))!;
    await reverts(t.vault.creditDeposit(id("forged"), d.address, 5n * USDC, block, signer(generatePrivateKey())), "ERC20InsufficientAllowance");
    await reverts(t.vault.creditDeposit(id("too much"), d.address, 5n * USDC + 1n, block, signer(d.key)), "ERC20InsufficientBalance");
    await reverts(t.vault.creditDeposit(id("zero"), d.address, 0n, block, signer(d.key)), "ZeroAmount");
    // Bound to a block the chain no longer has at that height (a reorganisation replaced the transfer's).
    await reverts(t.vault.creditDeposit(id("replaced"), d.address, 5n * USDC, { number: block.number, hash: id("another block") }, signer(d.key)), "TransferBlockReplaced");
    const vault = t.vault.info().contracts.vault;
    await refusedOnChain(
      a.reader.simulateContract({ address: vault, abi: vaultAbi, account: a.address, functionName: "creditDeposit", args: [id("x"), d.address, 1n, 0n, zeroHash, 0n, 27, id("r"), id("s")] }),
      "OnlyOperator",
    );
    expect(await t.vault.balanceOf(d.address)).toEqual({ available: 0n, locked: 0n });
    expect(await usdcOf(d.address)).toBe(5n * USDC);
  });

  it("credits when the allowance is already there (a permit someone else submitted first), whatever the signature", async () => {
    const a = await funded(20n * USDC);
    const d = await newClient(t);
    const sent = await t.vault.withdrawTo(id("fund-wallet"), a.address, d.address, 7n * USDC);
    await d.approveVault(7n * USDC);
    await t.vault.creditDeposit(id("approved"), d.address, 7n * USDC, (await t.vault.blockOf(sent.txHash))!, signer(generatePrivateKey()));
    expect(await t.vault.balanceOf(d.address)).toEqual({ available: 7n * USDC, locked: 0n });
  });

  it("signs the EIP-2612 digest the token's domain defines", async () => {
    const { usdc, vault } = t.vault.info().contracts;
    const c = await newClient(t);
    const domain = await c.reader.readContract({ address: usdc, abi: testUSDCAbi, functionName: "DOMAIN_SEPARATOR" });
    const permit = { owner: c.address, spender: vault, value: 5n, nonce: 3n, deadline: 1_900_000_000n };
    expect(permitDigest(domain, permit)).toBe(
      hashTypedData({
        domain: { name: "Test USD Coin", version: "1", chainId: t.chain.chainId, verifyingContract: usdc },
        types: { Permit: ["owner", "spender", "value", "nonce", "deadline"].map((name, i) => ({ name, type: i < 2 ? "address" : "uint256" })) },
        primaryType: "Permit",
        message: permit,
      }),
    );
  });
});

describe("the ledger of money in and out", () => {
  it("tells every payout and credit by id, and the Vault's USDC backs every balance", async () => {
    const a = await funded(50n * USDC);
    const d = depositAddress();
    const w = id("ledger-w");
    const paid = await t.vault.withdrawTo(w, a.address, d.address, 12n * USDC);
    const key = id("ledger-d");
    const credited = await t.vault.creditDeposit(key, d.address, 12n * USDC, (await t.vault.blockOf(paid.txHash))!, signer(d.key));
    const ledger = await t.vault.ledger();
    expect(ledger.withdrawnTo.filter((p) => p.withdrawalId === w)).toEqual([{ withdrawalId: w, client: a.address, to: d.address, amount: 12n * USDC, ...paid }]);
    expect(ledger.depositCredits.filter((c) => c.key === key)).toEqual([{ key, client: d.address, amount: 12n * USDC, ...credited }]);
    expect(ledger.balances.find((b) => b.client === d.address)).toEqual({ client: d.address, available: 12n * USDC, locked: 0n });
    expect(ledger.vaultUsdc).toBe(ledger.balances.reduce((s, b) => s + b.available + b.locked, 0n));
  });
});
