import { describe, expect, it } from "vitest";
import { decimal, movement, num, pnl, price, shares, usdc } from "./format.ts";

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

  it("signs a movement of money by what it does to the account's money: in +, out −, a move within the vault unsigned", () => {
    // Out of the account: a withdrawal, and what a buy spent.
    expect(movement("withdrawal", 25, "confirmed")).toBe("−25.00 USDC");
    expect(movement("settle", 9.5, "filled")).toBe("−9.50 USDC");
    // Into it: a deposit, test USDC, a sale's proceeds, a redemption's payout.
    expect(movement("deposit", 100, "credited")).toBe("+100.00 USDC");
    expect(movement("faucet", 10_000, "credited")).toBe("+10,000.00 USDC");
    expect(movement("sell", 4.2, "filled")).toBe("+4.20 USDC");
    expect(movement("redemption", 10, "redeemed")).toBe("+10.00 USDC");
    // A lock and its release move money between available and locked, still the account's.
    expect(movement("lock", 10, "filled")).toBe("10.00 USDC");
    expect(movement("release", 0.5, "filled")).toBe("0.50 USDC");
    // What moved nothing is no money in or out: a withdrawal the chain refused, a deposit dropped, a losing redemption's 0.
    expect(movement("withdrawal", 25, "failed")).toBe("25.00 USDC");
    expect(movement("deposit", 100, "dropped")).toBe("100.00 USDC");
    expect(movement("redemption", 0, "redeemed")).toBe("0.00 USDC");
  });

  it("writes a price to the finest venue tick, 0.0001 (Polymarket's), so two levels of the ladder never read alike", () => {
    expect(price(0.0012)).toBe("0.0012");
    expect(price(0.0014)).toBe("0.0014");
    expect(price(0.9995)).toBe("0.9995");
    expect(price(0.5)).toBe("0.500");
    expect(price(0.125)).toBe("0.125");
  });

  it("writes a price the API works out to the micro-USDC a share (an average, a price with its fees) as it is, not rounded to a tick", () => {
    // Polymarket's 0.89 with its 2 % fee: a buy's cost a share, which 0.8920 would overstate.
    expect(price(0.891958)).toBe("0.891958");
    expect(price(0.512345)).toBe("0.512345");
    expect(price(0.89196)).toBe("0.89196");
  });

  it("writes an amount typed in one way, as the server reads it, so that typed again otherwise it is the same request", () => {
    expect(decimal("25")).toBe("25");
    expect(decimal("25.0")).toBe("25");
    expect(decimal("025.500000")).toBe("25.5");
    expect(decimal("0.000001")).toBe("0.000001");
    expect(decimal("000")).toBe("0");
    expect(decimal("10.10")).toBe("10.1");
    expect(decimal("100")).toBe("100");
  });
});
