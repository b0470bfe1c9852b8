import fc from "fast-check";
import { bytesToHex, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { ORDER_TYPES } from "../venues/ctf-order.ts";
import { evmAccount } from "./account.ts";
import { address, bytesN, ctfOrder } from "./arbitraries.ts";

// Every valid key: 1 ≤ key < the curve's order.
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const key = fc.bigInt({ min: 1n, max: N - 1n }).map((k) => `0x${k.toString(16).padStart(64, "0")}` as Hex);
const bytes32 = bytesN(32);
const RUNS = { numRuns: 150, seed: 41 };

describe("evmAccount", () => {
  it("signs hashes, messages, orders and transactions byte for byte as viem's own account", async () => {
    await fc.assert(
      fc.asyncProperty(key, bytes32, fc.string(), async (pk, hash, message) => {
        const [ours, viem] = [evmAccount(pk), privateKeyToAccount(pk)];
        expect(ours.address).toBe(viem.address);
        expect(await ours.sign({ hash })).toBe(await viem.sign({ hash }));
        expect(await ours.signMessage({ message })).toBe(await viem.signMessage({ message }));
      }),
      RUNS,
    );
    await fc.assert(
      fc.asyncProperty(key, ctfOrder, address, async (pk, message, verifyingContract) => {
        const typed = { domain: { name: "Exchange", version: "1", chainId: 137, verifyingContract }, types: ORDER_TYPES, primaryType: "Order", message } as const;
        expect(await evmAccount(pk).signTypedData(typed)).toBe(await privateKeyToAccount(pk).signTypedData(typed));
      }),
      RUNS,
    );
    const tx = fc.record({
      nonce: fc.nat(),
      to: address,
      data: fc.uint8Array({ maxLength: 200 }).map((b) => bytesToHex(b)),
      value: fc.bigInt({ min: 0n, max: 10n ** 24n }),
      gas: fc.bigInt({ min: 21_000n, max: 30_000_000n }),
      maxPriorityFeePerGas: fc.bigInt({ min: 0n, max: 10n ** 9n }),
      above: fc.bigInt({ min: 0n, max: 10n ** 12n }),
    });
    await fc.assert(
      fc.asyncProperty(key, tx, async (pk, { above, ...t }) => {
        const transaction = { ...t, maxFeePerGas: t.maxPriorityFeePerGas + above, chainId: 31337, type: "eip1559" } as const;
        expect(await evmAccount(pk).signTransaction(transaction)).toBe(await privateKeyToAccount(pk).signTransaction(transaction));
      }),
      RUNS,
    );
  });

  it("refuses a key that is not on the curve, as viem does", () => {
    expect(() => evmAccount(`0x${N.toString(16)}`)).toThrow();
  });
});
