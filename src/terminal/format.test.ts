import { describe, expect, it } from "vitest";
import { num, pnl, shares, usdc } from "./format.ts";

describe("amounts as the terminal writes them", () => {
  it("writes USDC and shares to the micro unit the API answers in, never rounded to the cent", () => {
    // A balance of 9.999999 read as 10.00 would invite a withdrawal of 10 the vault refuses.
    expect(usdc(9.999999)).toBe("9.999999 USDC");
    expect(usdc(0.005)).toBe("0.005 USDC");
    expect(usdc(1_234_567.123456)).toBe("1,234,567.123456 USDC");
    expect(usdc(10)).toBe("10.00 USDC");
    expect(pnl(-0.000001)).toBe("−0.000001 USDC");
    expect(pnl(1.25)).toBe("+1.25 USDC");
    expect(num(0.004)).toBe("0.004");
    // A position of 42.815 shares read as 42.82 is more than is held: selling that is refused.
    expect(shares(42.815)).toBe("42.815");
    expect(shares(0.000001)).toBe("0.000001");
    expect(shares(100)).toBe("100");
  });
});
