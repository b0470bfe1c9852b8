import { OrderBuilder, Side } from "@limitless-exchange/sdk";
import { describe, expect, it } from "vitest";
import { verifyTypedData } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { LIMITLESS_CLOB_EXCHANGE } from "./sim/limitless-sim.ts";
import { ORDER_TYPES } from "../ctf-order.ts";
import { buyOrder, limitlessAuthHeaders, orderDomain, orderExpiration, orderFromWire, orderSigner, saltFor, sellOrder, signOrder, verifyLimitless, wireOrder } from "./signing.ts";

const TOKEN = "19633204485790857949828516737993423758628930235371629943999544859324645414627";

describe("Limitless order signing (EIP-712, Limitless CTF Exchange v1 on Base)", () => {
  const key = generatePrivateKey();
  const maker = privateKeyToAccount(key).address;
  const order = buyOrder({ maker, tokenId: TOKEN, limitPrice: 650_000n, shares: 100_000_000n, feeRateBps: 300n, salt: saltFor("child-1"), expiration: 0n });

  it("builds a buy as the documented example: 65 USDC offered for 100 shares, any taker, no expiry, EOA", () => {
    expect(order).toMatchObject({ maker, signer: maker, taker: "0x0000000000000000000000000000000000000000", makerAmount: 65_000_000n, takerAmount: 100_000_000n, expiration: 0n, nonce: 0n, side: 0, signatureType: 0 });
    // USDC offered is rounded up to the micro, so the limit price is always covered: 0.01 share at 0.333333 is 0.00333333, offered as 0.003334
    expect(buyOrder({ maker, tokenId: TOKEN, limitPrice: 333_000n, shares: 10_000n, feeRateBps: 0n, salt: 1n, expiration: 0n }).makerAmount).toBe(3_330n);
    expect(buyOrder({ maker, tokenId: TOKEN, limitPrice: 333_333n, shares: 10_000n, feeRateBps: 0n, salt: 1n, expiration: 0n }).makerAmount).toBe(3_334n);
  });

  it("builds a sell as the official SDK builds a SELL: the shares offered (maker), the USDC asked (taker), side 1", () => {
    const sell = sellOrder({ maker, tokenId: TOKEN, limitPrice: 651_000n, shares: 37_250_000n, feeRateBps: 300n, salt: 1n, expiration: 0n });
    const sdk = new OrderBuilder(maker, 300).buildOrder({ tokenId: TOKEN, price: 0.651, size: 37.25, side: Side.SELL });
    expect({ makerAmount: sell.makerAmount, takerAmount: sell.takerAmount, side: sell.side }).toEqual({ makerAmount: BigInt(sdk.makerAmount), takerAmount: BigInt(sdk.takerAmount), side: sdk.side });
    expect(sell).toMatchObject({ makerAmount: 37_250_000n, takerAmount: 24_249_750n, side: 1, feeRateBps: 300n, signatureType: 0 });
  });

  it("signs a child's expiry as unix seconds, rounded down so the venue never holds it longer, and never as 0 (no expiry)", async () => {
    expect(orderExpiration(Date.UTC(2026, 10, 23, 12, 0, 0, 999))).toBe(BigInt(Date.UTC(2026, 10, 23, 12) / 1000));
    expect(orderExpiration(999)).toBe(1n);
    expect(() => orderExpiration(Number.POSITIVE_INFINITY)).toThrow(/not a time/);
    const expiring = { ...order, expiration: orderExpiration(Date.UTC(2026, 10, 23, 12)) };
    const signature = await signOrder(privateKeyToAccount(key), expiring, LIMITLESS_CLOB_EXCHANGE);
    expect(await orderSigner(expiring, LIMITLESS_CLOB_EXCHANGE, signature)).toBe(maker);
    expect(await orderSigner(order, LIMITLESS_CLOB_EXCHANGE, signature)).not.toBe(maker);
    expect(wireOrder(expiring).expiration).toBe(String(Date.UTC(2026, 10, 23, 12) / 1000));
  });

  it("signs so that viem recovers the wallet, for that exchange contract only", async () => {
    const signature = await signOrder(privateKeyToAccount(key), order, LIMITLESS_CLOB_EXCHANGE);
    expect(await orderSigner(order, LIMITLESS_CLOB_EXCHANGE, signature)).toBe(maker);
    expect(await verifyTypedData({ address: maker, domain: orderDomain(LIMITLESS_CLOB_EXCHANGE), types: ORDER_TYPES, primaryType: "Order", message: order, signature })).toBe(true);
    expect(await orderSigner(order, "0x0000000000000000000000000000000000000001", signature)).not.toBe(maker);
    expect(await orderSigner({ ...order, takerAmount: order.takerAmount + 1n }, LIMITLESS_CLOB_EXCHANGE, signature)).not.toBe(maker);
  });

  it("signs the same order the same way, so a retry is the very same order", async () => {
    expect(await signOrder(privateKeyToAccount(key), order, LIMITLESS_CLOB_EXCHANGE)).toBe(await signOrder(privateKeyToAccount(key), order, LIMITLESS_CLOB_EXCHANGE));
  });

  it("derives the salt from the client order id: stable, distinct, and exact as a JSON number", () => {
    expect(saltFor("child-1")).toBe(saltFor("child-1"));
    expect(saltFor("child-1")).not.toBe(saltFor("child-2"));
    for (const id of ["a", "order-7:leg-2", "x".repeat(200)]) expect(saltFor(id) <= BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
  });

  it("posts the order with JSON-number amounts and reads it back to the same signed struct", () => {
    const wire = wireOrder(order);
    expect(wire).toMatchObject({ tokenId: TOKEN, makerAmount: 65_000_000, takerAmount: 100_000_000, expiration: "0", feeRateBps: 300 });
    expect(orderFromWire(JSON.parse(JSON.stringify(wire)))).toEqual(order);
    expect(() => wireOrder({ ...order, makerAmount: 2n ** 60n })).toThrow(/JSON number/);
  });
});

describe("Limitless request signing (lmts-* HMAC)", () => {
  const secret = Buffer.alloc(32, 9).toString("base64");

  it("stamps an ISO-8601 timestamp with milliseconds and signs path, query and body", () => {
    const h = limitlessAuthHeaders("token-1", secret, Date.UTC(2026, 0, 15, 10, 30), "POST", "/orders", "{}");
    expect(h["lmts-api-key"]).toBe("token-1");
    expect(h["lmts-timestamp"]).toBe("2026-01-15T10:30:00.000Z");
    expect(verifyLimitless(secret, h["lmts-timestamp"]!, "POST", "/orders", "{}", h["lmts-signature"]!)).toBe(true);
    expect(verifyLimitless(secret, h["lmts-timestamp"]!, "POST", "/orders", "{ }", h["lmts-signature"]!)).toBe(false);
    expect(verifyLimitless(secret, h["lmts-timestamp"]!, "POST", "/orders?a=1", "{}", h["lmts-signature"]!)).toBe(false);
    expect(verifyLimitless(Buffer.alloc(32, 8).toString("base64"), h["lmts-timestamp"]!, "POST", "/orders", "{}", h["lmts-signature"]!)).toBe(false);
  });
});
