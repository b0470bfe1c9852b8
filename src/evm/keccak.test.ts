import fc from "fast-check";
import { bytesToHex, keccak256 as viemKeccak256, type Hex } from "viem";
import { describe, expect, it } from "vitest";
import { keccak256 } from "./keccak.ts";

describe("keccak256", () => {
  it("hashes bytes, and the bytes a hex string spells, as viem's keccak256", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 700 }), (bytes) => {
        expect(keccak256(bytes)).toBe(viemKeccak256(bytes));
        expect(keccak256(bytesToHex(bytes))).toBe(viemKeccak256(bytesToHex(bytes)));
        expect(keccak256(bytesToHex(bytes).toUpperCase().replace("0X", "0x") as Hex)).toBe(viemKeccak256(bytes));
      }),
      { numRuns: 500, seed: 7 },
    );
    // Known values: the empty input, and the transfer event's topic.
    expect(keccak256("0x")).toBe("0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
    expect(keccak256(new TextEncoder().encode("Transfer(address,address,uint256)"))).toBe("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
  });

  it("reads an odd number of hex digits with a leading 0, as viem does", () => {
    expect(keccak256("0xabc")).toBe(viemKeccak256("0xabc"));
    expect(keccak256("0xabc")).toBe(keccak256("0x0abc"));
  });

  it("refuses a string that is not hex instead of hashing part of it", () => {
    expect(() => keccak256("0x12zz" as Hex)).toThrow(/not a 0x-prefixed hex string/);
    expect(() => keccak256("1234" as Hex)).toThrow(/not a 0x-prefixed hex string/);
  });
});
