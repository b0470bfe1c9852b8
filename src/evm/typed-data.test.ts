import fc from "fast-check";
import { bytesToHex, hashTypedData, type Hex, type TypedDataDomain } from "viem";
import { describe, expect, it } from "vitest";
import { ORDER_TYPES as CTF_ORDER } from "../venues/ctf-order.ts";
import { ORDER_TYPES as POLYMARKET_V2_ORDER } from "../venues/polymarket/order-signing.ts";
import { address, bytesN, ctfOrder, uint256, uint8 } from "./arbitraries.ts";
import { typedDataHash } from "./typed-data.ts";

// Every field of a domain may be absent: an absent field is not part of the domain's type.
const domain: fc.Arbitrary<TypedDataDomain> = fc.record(
  {
    name: fc.string(),
    version: fc.string({ maxLength: 3 }),
    chainId: fc.oneof(fc.integer({ min: 1, max: 2 ** 40 }), fc.bigInt({ min: 1n, max: 2n ** 64n })),
    verifyingContract: address,
    salt: bytesN(32),
  },
  { requiredKeys: [] },
) as fc.Arbitrary<TypedDataDomain>;
const v2Order = fc.record({
  salt: uint256,
  maker: address,
  signer: address,
  tokenId: uint256,
  makerAmount: uint256,
  takerAmount: uint256,
  side: uint8,
  signatureType: uint8,
  timestamp: uint256,
  metadata: bytesN(32),
  builder: bytesN(32),
});
const RUNS = { numRuns: 400, seed: 12 };

describe("typedDataHash", () => {
  it("gives viem's EIP-712 digest of every venue's order, under any domain, the same domain met again included", () => {
    // Few contracts, so that domains repeat and their kept separators are read back.
    // Few values, each field present or not, so that domains repeat and their kept separators are read back,
    // and a field absent is met beside the same field empty.
    const repeating = fc.record(
      {
        name: fc.constantFrom("Limitless CTF Exchange", ""),
        version: fc.constantFrom("1", ""),
        chainId: fc.constantFrom(137, 8453n),
        verifyingContract: fc.constantFrom<Hex>("0xE111180000d2663C0091e4f400237545B87B996B", "0xe2222d279d744050d28e00520010520000310f59"),
      },
      { requiredKeys: [] },
    ) as fc.Arbitrary<TypedDataDomain>;
    fc.assert(
      fc.property(fc.oneof(domain, repeating), ctfOrder, v2Order, (d, ctf, v2) => {
        expect(typedDataHash({ domain: d, types: CTF_ORDER, primaryType: "Order", message: ctf })).toBe(hashTypedData({ domain: d, types: CTF_ORDER, primaryType: "Order", message: ctf }));
        expect(typedDataHash({ domain: d, types: POLYMARKET_V2_ORDER, primaryType: "Order", message: v2 })).toBe(
          hashTypedData({ domain: d, types: POLYMARKET_V2_ORDER, primaryType: "Order", message: v2 }),
        );
      }),
      RUNS,
    );
  });

  it("hashes structs with strings, bytes or nested structs as viem does", () => {
    const types = {
      Person: [
        { name: "name", type: "string" },
        { name: "wallet", type: "address" },
      ],
      Mail: [
        { name: "from", type: "Person" },
        { name: "contents", type: "string" },
        { name: "data", type: "bytes" },
      ],
    } as const;
    fc.assert(
      fc.property(domain, fc.string(), address, fc.string(), fc.uint8Array({ maxLength: 80 }), (d, name, wallet, contents, data) => {
        const typed = { domain: d, types, primaryType: "Mail", message: { from: { name, wallet }, contents, data: bytesToHex(data) } } as const;
        expect(typedDataHash(typed)).toBe(hashTypedData(typed));
        const person = { domain: d, types, primaryType: "Person", message: { name, wallet } } as const;
        expect(typedDataHash(person)).toBe(hashTypedData(person));
      }),
      { numRuns: 100, seed: 13 },
    );
  });

  it("refuses a field out of its type's range, or a malformed address, as viem refuses it", () => {
    const order = { salt: 1n, maker: "0x1111111111111111111111111111111111111111", signer: "0x1111111111111111111111111111111111111111", taker: "0x0000000000000000000000000000000000000000", tokenId: 1n, makerAmount: 1n, takerAmount: 1n, expiration: 1n, nonce: 0n, feeRateBps: 0n, side: 0, signatureType: 0 } as const;
    const d = { name: "x", version: "1", chainId: 1 };
    for (const bad of [{ side: 256 }, { salt: 2n ** 256n }, { maker: "0x1234" }, { tokenId: -1n }]) {
      const typed = { domain: d, types: CTF_ORDER, primaryType: "Order", message: { ...order, ...bad } } as never;
      expect(() => hashTypedData(typed)).toThrow();
      expect(() => typedDataHash(typed)).toThrow();
    }
  });
});
