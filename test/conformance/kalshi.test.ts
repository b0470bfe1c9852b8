import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
// the request signer is not re-exported from the package root
import { KalshiAuth } from "kalshi-typescript/dist/auth.js";
import { parseMicro } from "../../src/domain/money.ts";
import { MarketCatalog } from "../../src/markets/catalog.ts";
import { createKalshiVenue, startKalshiSim } from "../../src/venues/kalshi/index.ts";
import { kalshiSigningText, verifyKalshi } from "../../src/venues/kalshi/signing.ts";
import { simHarness, type FeeExample, type SigningExample } from "./harness.ts";
import { runConformance } from "./suite.ts";

const catalog = MarketCatalog.load();
const table = JSON.parse(readFileSync(new URL("../fixtures/kalshi/fee-table.json", import.meta.url), "utf8"));
const FEE_TABLE = "kalshi.com/docs/kalshi-fee-schedule.pdf, General Trading Fees Table";
const general = { kind: "kalshi" as const, ratePpm: 70_000n };

const fees: FeeExample[] = table.rows.flatMap((row: { price: string; one: string; hundred: string }) => {
  const price = parseMicro(row.price, "price");
  return [
    { what: `1 contract at ${row.price}`, source: FEE_TABLE, model: general, levels: [{ price, shares: 1_000_000n }], fee: parseMicro(row.one, "one") },
    { what: `100 contracts at ${row.price}`, source: FEE_TABLE, model: general, levels: [{ price, shares: 100_000_000n }], fee: parseMicro(row.hundred, "hundred") },
  ];
});
fees.push({
  what: "half-rate series (fee_multiplier 0.5), 100 contracts at 0.50: ceil_to_cent(0.875)",
  source: "kalshi-typescript Series.fee_multiplier: a multiplier applied to the fee calculation",
  model: { kind: "kalshi", ratePpm: 35_000n },
  levels: [{ price: 500_000n, shares: 100_000_000n }],
  fee: 880_000n,
});

/** RSA-PSS signatures are salted, so the official client's signature is checked by verification rather than by equality. */
function signingExamples(): SigningExample[] {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const official = new KalshiAuth("key-id", privateKey.export({ type: "pkcs8", format: "pem" }).toString()).generateAuthHeaders("GET", "/trade-api/v2/portfolio/orders");
  return [
    {
      what: "the signed text of GET /portfolio/orders?limit=5 leaves the query string out",
      source: "docs.kalshi.com API keys: signing requests (timestamp + method + path without query)",
      actual: () => kalshiSigningText("1703123456789", "GET", "/trade-api/v2/portfolio/orders?limit=5"),
      expected: "1703123456789GET/trade-api/v2/portfolio/orders",
    },
    {
      what: "a signature made by kalshi-typescript verifies under the adapter's RSA-PSS parameters",
      source: "kalshi-typescript 3.30.0 KalshiAuth.generateAuthHeaders",
      actual: () => String(verifyKalshi(publicKey, official["KALSHI-ACCESS-TIMESTAMP"]!, "GET", "/trade-api/v2/portfolio/orders", official["KALSHI-ACCESS-SIGNATURE"]!)),
      expected: "true",
    },
  ];
}

const signing = signingExamples();
const wrongKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
let seed = 200;

runConformance("kalshi", async () => {
  const sim = await startKalshiSim({ catalog, seed: ++seed, latencyScale: 0, tickMs: 40 });
  return simHarness(sim, catalog, (options) => createKalshiVenue({ ...options, startTimeoutMs: 300 }), (c) => ({ ...c, privateKeyPem: wrongKey }), { fees, signing }, true);
});
