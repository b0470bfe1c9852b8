import { ExchangeOrderBuilder } from "@polymarket/clob-client";
// the HMAC helper is not re-exported from the package root
import { buildPolyHmacSignature } from "@polymarket/clob-client/dist/signing/hmac.js";
import { createWalletClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { polygon } from "viem/chains";
import { MarketCatalog } from "../../src/markets/catalog.ts";
import { l2Signature } from "../../src/venues/polymarket/auth.ts";
import { createPolymarketVenue } from "../../src/venues/polymarket/index.ts";
import { CTF_EXCHANGE, OrderSigner, orderHash, POLYGON_CHAIN_ID } from "../../src/venues/polymarket/order-signing.ts";
import { startPolymarketSim } from "../../src/venues/polymarket/sim/index.ts";
import { simHarness, type FeeExample, type SigningExample } from "./harness.ts";
import { runConformance } from "./suite.ts";

const catalog = MarketCatalog.load();
const FEES_PAGE = "https://docs.polymarket.com/trading/fees";
const poly = (rate: bigint, exponent: 1 | 2 = 1) => ({ kind: "polymarket" as const, ratePpm: rate, exponent });
const level = (price: bigint, shares: bigint) => [{ price, shares }];

/** fee = C × feeRate × p × (1 − p), at the category rates of Polymarket's fee table, charged to 5 decimals. */
const fees: FeeExample[] = [
  { what: "crypto (0.07), 100 shares at 0.50", source: FEES_PAGE, model: poly(70_000n), levels: level(500_000n, 100_000_000n), fee: 1_750_000n },
  { what: "sports (0.03), 100 shares at 0.50", source: FEES_PAGE, model: poly(30_000n), levels: level(500_000n, 100_000_000n), fee: 750_000n },
  { what: "politics (0.04), 100 shares at 0.30", source: FEES_PAGE, model: poly(40_000n), levels: level(300_000n, 100_000_000n), fee: 840_000n },
  { what: "economics (0.05), 100 shares at 0.90", source: FEES_PAGE, model: poly(50_000n), levels: level(900_000n, 100_000_000n), fee: 450_000n },
  { what: "geopolitics (fee-free), 100 shares at 0.50", source: FEES_PAGE, model: poly(0n), levels: level(500_000n, 100_000_000n), fee: 0n },
  { what: "crypto, 7 shares at 0.33: 0.108339 floored to 0.10833", source: FEES_PAGE, model: poly(70_000n), levels: level(330_000n, 7_000_000n), fee: 108_330n },
  {
    what: "15-minute crypto (rate 0.25, exponent 2), 100 shares at 0.50: 1.5625",
    source: "docs.polymarket.com/trading/fees (15-minute crypto markets, 2025 schedule)",
    model: poly(250_000n, 2),
    levels: level(500_000n, 100_000_000n),
    fee: 1_562_500n,
  },
];

const HMAC_SECRET = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
const WALLET = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318" as const;
/** A token id from Polymarket's documentation examples. */
const DOCS_TOKEN = "71321045679252212594626385532706912750332728571942532289631379312455583992563";

/**
 * The L2 vector is published with py-clob-client's tests; the order hash and signature are what
 * Polymarket's own TypeScript client computes for the same order, so the adapter's hand-built
 * EIP-712 (exact bigint amounts, salt derived from the client order id) is proven identical to it.
 */
async function signingExamples(): Promise<SigningExample[]> {
  const signer = new OrderSigner(WALLET);
  // an expiry off the whole second: the signed expiration is rounded up to 1764000060
  const order = signer.buyOrder({ clientOrderId: "ord_1:leg_0", tokenId: DOCS_TOKEN, limitPrice: 570_000n, shares: 10_000_000n, feeRateBps: 0n, negRisk: false, expiresAt: 1_764_000_059_500 })!;
  const wallet = createWalletClient({ account: privateKeyToAccount(WALLET), chain: polygon, transport: http("http://127.0.0.1:9") });
  const official = new ExchangeOrderBuilder(CTF_EXCHANGE, POLYGON_CHAIN_ID, wallet);
  const decimal = (x: bigint) => x.toString();
  const typed = official.buildOrderTypedData({
    ...order,
    salt: decimal(order.salt),
    tokenId: decimal(order.tokenId),
    makerAmount: decimal(order.makerAmount),
    takerAmount: decimal(order.takerAmount),
    expiration: decimal(order.expiration),
    nonce: decimal(order.nonce),
    feeRateBps: decimal(order.feeRateBps),
  } as Parameters<ExchangeOrderBuilder["buildOrderTypedData"]>[0]);
  const CLIENT = "@polymarket/clob-client 5.8.1";
  return [
    {
      what: "L2 HMAC of py-clob-client's test vector (timestamp 1000000, test-sign /orders)",
      source: "github.com/Polymarket/py-clob-client tests/signing/test_hmac.py",
      actual: () => l2Signature(HMAC_SECRET, 1000000, "test-sign", "/orders", '{"hash": "0x123"}'),
      expected: "ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=",
    },
    {
      what: "L2 HMAC of a POST /order",
      source: `${CLIENT} buildPolyHmacSignature`,
      actual: () => l2Signature(HMAC_SECRET, 1_764_000_000, "POST", "/order", '{"order":{"salt":1}}'),
      expected: await buildPolyHmacSignature(HMAC_SECRET, 1_764_000_000, "POST", "/order", '{"order":{"salt":1}}'),
    },
    {
      what: "EIP-712 order hash (the order id), the child's expiry signed as its expiration",
      source: `${CLIENT} ExchangeOrderBuilder.buildOrderHash`,
      actual: () => orderHash(order, false),
      expected: official.buildOrderHash(typed),
    },
    {
      what: "EIP-712 order signature",
      source: `${CLIENT} ExchangeOrderBuilder.buildOrderSignature`,
      actual: () => signer.sign(order, false),
      expected: await official.buildOrderSignature(typed),
    },
  ];
}

const signing = await signingExamples();

let seed = 100;

runConformance("polymarket", async () => {
  const sim = await startPolymarketSim({ catalog, seed: ++seed, latencyScale: 0, tickMs: 40 });
  return simHarness(
    sim,
    catalog,
    (options) => createPolymarketVenue({ ...options, reconnect: { initialMs: 50, maxMs: 400 }, retryBackoffMs: 30 }),
    (c) => ({ ...c, secret: Buffer.alloc(32, 7).toString("base64") }),
    { fees, signing },
  );
});
