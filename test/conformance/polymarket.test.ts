import { createL2Headers, OrderBuilder, Side } from "@polymarket/clob-client-v2";
import { vi } from "vitest";
import { createWalletClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { polygon } from "viem/chains";
import { MarketCatalog } from "../../src/markets/catalog.ts";
import { l2Signature } from "../../src/venues/polymarket/auth.ts";
import { createPolymarketVenue } from "../../src/venues/polymarket/index.ts";
import { orderHash, OrderSigner } from "../../src/venues/polymarket/order-signing.ts";
import { startPolymarketSim } from "../../src/venues/polymarket/sim/index.ts";
import { simHarness, type FeeExample, type SigningExample } from "./harness.ts";
import { runConformance } from "./suite.ts";

const catalog = MarketCatalog.load();
const FEES_PAGE = "https://docs.polymarket.com/trading/fees";
const poly = (rate: bigint, exponent: 0 | 1 | 2 = 1) => ({ kind: "polymarket" as const, ratePpm: rate, exponent });
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
  {
    what: "a market whose fd has no e (exponent 0), rate 0.02, 100 shares at 0.50: 2, C × rate",
    source: "@polymarket/clob-client-v2 1.1.0 getClobMarketInfo (`exponent: result.fd?.e ?? 0`), adjustBuyAmountForFees",
    model: poly(20_000n, 0),
    levels: level(500_000n, 100_000_000n),
    fee: 2_000_000n,
  },
];

const HMAC_SECRET = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
const WALLET = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318" as const;
/** A token id from Polymarket's documentation examples. */
const POLYGON = 137;
const DOCS_TOKEN = "71321045679252212594626385532706912750332728571942532289631379312455583992563";

/**
 * The L2 vector is published with py-clob-client's tests; the order's fields and signature are what
 * Polymarket's own V2 client makes of the same buy (its salt and timestamp, random and the clock's in
 * the client, pinned to the adapter's), so the adapter's hand-built EIP-712 V2 order (exact bigint
 * amounts, salt and timestamp derived from the child order) is proven identical to it.
 */
async function signingExamples(): Promise<SigningExample[]> {
  const signer = new OrderSigner(WALLET);
  const expiresAt = 1_764_000_059_500;
  const { order, expiration } = signer.buyOrder({ clientOrderId: "ord_1:leg_0", tokenId: DOCS_TOKEN, limitPrice: 570_000n, shares: 10_000_000n, expiresAt })!;
  const wallet = createWalletClient({ account: privateKeyToAccount(WALLET), chain: polygon, transport: http("http://127.0.0.1:9") });
  vi.spyOn(Date, "now").mockReturnValue(expiresAt);
  vi.spyOn(Math, "random").mockReturnValue(Number(order.salt) / expiresAt);
  const official = await new OrderBuilder(wallet, POLYGON).buildOrder(
    { tokenID: DOCS_TOKEN, price: 0.57, size: 10, side: Side.BUY, expiration: Number(expiration) },
    { tickSize: "0.01", negRisk: false },
    2,
  );
  vi.restoreAllMocks();
  const creds = { key: "k", secret: HMAC_SECRET, passphrase: "p" };
  const l2 = async (method: string, requestPath: string, body: string) => (await createL2Headers(wallet, creds, { method, requestPath, body }, 1_764_000_000)).POLY_SIGNATURE;
  const CLIENT = "@polymarket/clob-client-v2 1.1.0";
  const decimal = (x: bigint) => x.toString();
  return [
    {
      what: "L2 HMAC of py-clob-client's test vector (timestamp 1000000, test-sign /orders)",
      source: "github.com/Polymarket/py-clob-client tests/signing/test_hmac.py",
      actual: () => l2Signature(HMAC_SECRET, 1000000, "test-sign", "/orders", '{"hash": "0x123"}'),
      expected: "ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=",
    },
    {
      what: "L2 HMAC of a POST /order",
      source: `${CLIENT} createL2Headers`,
      actual: () => l2Signature(HMAC_SECRET, 1_764_000_000, "POST", "/order", '{"order":{"salt":1}}'),
      expected: await l2("POST", "/order", '{"order":{"salt":1}}'),
    },
    {
      what: "the 11 signed fields of a V2 buy and its unsigned expiration, the child's expiry rounded down to 1764000059",
      source: `${CLIENT} OrderBuilder.buildOrder (version 2)`,
      actual: () =>
        JSON.stringify({
          salt: decimal(order.salt),
          maker: order.maker,
          signer: order.signer,
          tokenId: decimal(order.tokenId),
          makerAmount: decimal(order.makerAmount),
          takerAmount: decimal(order.takerAmount),
          side: "BUY",
          signatureType: order.signatureType,
          timestamp: decimal(order.timestamp),
          metadata: order.metadata,
          builder: order.builder,
          expiration: decimal(expiration),
        }),
      expected: JSON.stringify({
        salt: official.salt,
        maker: official.maker,
        signer: official.signer,
        tokenId: official.tokenId,
        makerAmount: official.makerAmount,
        takerAmount: official.takerAmount,
        side: official.side,
        signatureType: official.signatureType,
        timestamp: official.timestamp,
        metadata: official.metadata,
        builder: official.builder,
        expiration: official.expiration,
      }),
    },
    {
      what: "EIP-712 V2 order signature (domain version 2, the V2 exchange)",
      source: `${CLIENT} OrderBuilder.buildOrder (version 2)`,
      actual: () => signer.sign(orderHash(order, false)),
      expected: official.signature,
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
    false,
    // a FAK BUY is a market buy: it spends its maker amount
    true,
  );
});
