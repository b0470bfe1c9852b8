import { describe, expect, it } from "vitest";
import { ONE } from "../../domain/money.ts";
import { OrderSigner } from "./order-signing.ts";

const signer = new OrderSigner(`0x${"11".repeat(32)}`);
const params = (limitPrice: bigint, shares: bigint) => ({ clientOrderId: "c", tokenId: "1", limitPrice, shares, expiresAt: 1_800_000_000_000 });

describe("Polymarket order amounts", () => {
  it("signs a buy whose pUSD is whole cents, and refuses one the venue would refuse as a market buy of more than 2 decimals", () => {
    expect(signer.buyOrder(params(570_000n, 10n * ONE))?.order).toMatchObject({ makerAmount: 5_700_000n, takerAmount: 10n * ONE });
    // 10.01 shares at 0.57 is 5.7057 pUSD
    expect(signer.buyOrder(params(570_000n, 10_010_000n))).toBeUndefined();
    // 10 shares at 0.571 is 5.71 pUSD
    expect(signer.buyOrder(params(571_000n, 10n * ONE))?.order).toMatchObject({ makerAmount: 5_710_000n, takerAmount: 10n * ONE });
    expect(signer.buyOrder(params(500_000n, 10_000_050n))).toBeUndefined();
  });

  it("signs a sell of 0.01-share lots whose price × size is a whole micro-pUSD", () => {
    expect(signer.sellOrder(params(570_000n, 10_010_000n))?.order).toMatchObject({ makerAmount: 10_010_000n, takerAmount: 5_705_700n });
    expect(signer.sellOrder(params(570_001n, 10_010_000n))).toBeUndefined();
  });

  it("refuses a sell off the venue's 0.01-share step, though its pUSD is a whole micro-pUSD", () => {
    // a position's micro-shares: 5.000002 shares at 0.5 ask 2.500001 pUSD, but the venue takes a SELL's size to 2 decimals
    expect(signer.sellOrder(params(500_000n, 5_000_002n))).toBeUndefined();
    expect(signer.sellOrder(params(500_000n, 5_010_000n))?.order).toMatchObject({ makerAmount: 5_010_000n, takerAmount: 2_505_000n });
  });
});
