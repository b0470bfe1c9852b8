import { describe, expect, it, vi } from "vitest";
import { OrderBuilder, Signer, SignatureType } from "@opinion-labs/opinion-clob-sdk";
import { hashTypedData, recoverAddress, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { orderFee } from "../../src/domain/fees.ts";
import { MarketCatalog } from "../../src/markets/catalog.ts";
import { createOpinionVenue, OPINION_SIM_EXCHANGE, startOpinionSim } from "../../src/venues/opinion/index.ts";
import { OPINION_MIN_FEE } from "../../src/venues/opinion/wire.ts";
import { ORDER_TYPES } from "../../src/venues/ctf-order.ts";
import { buyOrder, OPINION_CHAIN_ID, orderDomain, signOrder } from "../../src/venues/opinion/signing.ts";
import { simHarness, type FeeExample, type SigningExample } from "./harness.ts";
import { runConformance } from "./suite.ts";

const catalog = MarketCatalog.load();
const FEES_DOC = "docs.opinion.trade/trade-on-opinion.trade/fees: takers only, 0% to 2%, highest as the probability approaches 50%";
const SDK_FEE = "@opinion-labs/opinion-clob-sdk getFeeRates: max fee rate = fee_rate_bps × 0.25 / 10000 (at P = 0.5)";
const MIN_FEE_DOC = "docs.opinion.trade/trade-on-opinion.trade/fees: $5 minimum order and $0.25 minimum fee, small curve fees revert to $0.25";
const at = (bps: bigint) => ({ kind: "opinion" as const, ratePpm: bps * 100n, minFee: OPINION_MIN_FEE });

const fees: FeeExample[] = [
  { what: "at 50% a rate of 800 bps charges its maximum, 2%: 100 shares at 0.5 pay 1 USDC", source: `${FEES_DOC}; ${SDK_FEE}`, model: at(800n), levels: [{ price: 500_000n, shares: 100_000_000n }], fee: 1_000_000n },
  { what: "nearer certainty the fee falls: 100 shares at 0.9 under 800 bps pay 8% × 0.09 of 90 USDC", source: FEES_DOC, model: at(800n), levels: [{ price: 900_000n, shares: 100_000_000n }], fee: 648_000n },
  {
    what: "one order over two levels is charged once, rounded up to the micro-USDC: 400 bps at 0.333 and 0.334",
    source: SDK_FEE,
    model: at(400n),
    levels: [{ price: 333_000n, shares: 100_000_000n }, { price: 334_000n, shares: 10_000_000n }],
    fee: 325_571n,
  },
  { what: "a curve fee under the minimum is charged the minimum: 11 shares at 0.333 under 400 bps (0.033 USDC by the curve) pay 0.25", source: MIN_FEE_DOC, model: at(400n), levels: [{ price: 333_000n, shares: 10_000_000n }, { price: 334_000n, shares: 1_000_000n }], fee: 250_000n },
  { what: "a market without a fee rate charges nothing, minimum or not", source: MIN_FEE_DOC, model: at(0n), levels: [{ price: 500_000n, shares: 1_000_000n }], fee: 0n },
];

async function signingExamples(): Promise<SigningExample[]> {
  const key = generatePrivateKey();
  const signer = privateKeyToAccount(key).address;
  const safe: Hex = "0x1111111111111111111111111111111111111111";
  const order = buyOrder({ maker: safe, signer, tokenId: "32564853958426237391842158392736571932859361285734859283719283749182736451827", limitPrice: 650_000n, shares: 100_000_000n, decimals: 18, salt: 987_654_321n });
  const sdk = new OrderBuilder(OPINION_SIM_EXCHANGE, OPINION_CHAIN_ID, new Signer(key), () => order.salt);
  const sdkOrder = sdk.buildOrder({
    maker: safe,
    signer,
    taker: order.taker,
    tokenId: order.tokenId.toString(),
    makerAmount: order.makerAmount,
    takerAmount: order.takerAmount,
    side: 0,
    feeRateBps: "0",
    nonce: "0",
    expiration: "0",
    signatureType: SignatureType.POLY_GNOSIS_SAFE,
  });
  return [
    {
      what: "the EIP-712 order signature is the official SDK's OrderBuilder signature of the same order (domain OPINION CTF Exchange v1, chain 56)",
      source: "@opinion-labs/opinion-clob-sdk 0.6.1 OrderBuilder.buildOrderSignature",
      actual: () => signOrder(privateKeyToAccount(key), order, OPINION_SIM_EXCHANGE),
      expected: await sdk.buildOrderSignature(sdkOrder),
    },
    {
      what: "a buy of 100 shares at 0.65 in 18-decimal USDT: makerAmount 65e18, takerAmount 100e18, price = maker/taker exactly",
      source: "@opinion-labs/opinion-clob-sdk calculateOrderAmounts (BUY: price = makerAmount / takerAmount)",
      actual: () => `${order.makerAmount}/${order.takerAmount}`,
      expected: `${65n * 10n ** 18n}/${100n * 10n ** 18n}`,
    },
    {
      what: "the signature recovers to the Safe's owner, who signs for the Safe",
      source: "@opinion-labs/opinion-clob-sdk placeOrder (maker = multiSigAddress, signer = the private key's address, signatureType POLY_GNOSIS_SAFE)",
      actual: async () => recoverAddress({ hash: hashTypedData({ domain: orderDomain(OPINION_SIM_EXCHANGE), types: ORDER_TYPES, primaryType: "Order", message: order }), signature: await signOrder(privateKeyToAccount(key), order, OPINION_SIM_EXCHANGE) }),
      expected: signer,
    },
  ];
}

const signing = await signingExamples();
let seed = 400;

runConformance("opinion", async () => {
  const sim = await startOpinionSim({ catalog, seed: ++seed, latencyScale: 0, tickMs: 40 });
  // a stranger's wallet: the venue refuses orders not signed by the Safe's owner
  return simHarness(sim, catalog, (options) => createOpinionVenue({ ...options, startTimeoutMs: 300 }), (c) => ({ ...c, privateKey: generatePrivateKey() }), { fees, signing });
});

describe("opinion's one bucket of reads and writes", () => {
  it("counts a child order queued or planned as the two requests its placement makes: the order, then its read-back", async () => {
    const sim = await startOpinionSim({ catalog, seed: ++seed, latencyScale: 0, tickMs: 40 });
    const h = await simHarness(sim, catalog, (options) => createOpinionVenue({ ...options, startTimeoutMs: 300 }), (c) => c, { fees, signing });
    try {
      const venue = h.venue;
      // Past the bucket's burst of 15, so that the rest wait for their turns.
      const first = Array.from({ length: 15 }, (_, i) => `burst-${i}`);
      const waiting = Array.from({ length: 6 }, (_, i) => `waiting-${i}`);
      const turns = first.map((id) => venue.writeTurn!(id));
      const before = venue.queueDelayMs!();
      turns.push(...waiting.map((id) => venue.writeTurn!(id)));
      // Six more queued: twelve requests at fifteen a second.
      expect(venue.queueDelayMs!() - before).toBeGreaterThan(700);
      // Three more planned: six requests.
      expect(venue.queueDelayMs!(3) - venue.queueDelayMs!()).toBeGreaterThan(350);
      await Promise.all(turns);
      for (const id of [...first, ...waiting]) venue.returnTurn!(id);
    } finally {
      await h.stop();
    }
  });
});

describe("opinion's fees read again", () => {
  it("takes a fee rate the venue changes after start within its read interval, and charges an order placed after it the new rate", async () => {
    const sim = await startOpinionSim({ catalog, seed: ++seed, latencyScale: 0, tickMs: 40 });
    const venue = createOpinionVenue({ baseUrl: sim.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, startTimeoutMs: 300, feeReadIntervalMs: 50 });
    await venue.start();
    try {
      const id = catalog.events().find((e) => e.status === "open" && e.listings.some((l) => l.venue === venue.id))!.listings.find((l) => l.venue === venue.id)!.venueMarketId;
      const raised = at(1_500n);
      expect(venue.market(id)!.feeModel).not.toEqual(raised);
      sim.exchange.setFeeModel(id, raised);
      await vi.waitFor(() => expect(venue.market(id)!.feeModel).toEqual(raised), { timeout: 5_000, interval: 20 });
      const asks = venue.book(id, "YES")!.asks;
      const placed = await venue.place({ clientOrderId: `fee-read-again-${seed}`, venueMarketId: id, outcome: "YES", side: "buy", limitPrice: asks[asks.length - 1]!.price, shares: 100_000_000n, expiresAt: Date.now() + 60_000 });
      expect(placed.kind).toBe("filled");
      const fills = placed.kind === "filled" ? placed.fills : [];
      expect(fills.reduce((sum, f) => sum + f.fee, 0n)).toBe(orderFee(raised, fills));
    } finally {
      await venue.stop();
      await sim.stop();
    }
  });
});
