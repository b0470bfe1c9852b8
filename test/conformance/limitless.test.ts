import { webcrypto } from "node:crypto";
import { encodeAbiParameters, keccak256, recoverAddress, toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { MarketCatalog } from "../../src/markets/catalog.ts";
import { createLimitlessVenue, LIMITLESS_CLOB_EXCHANGE, startLimitlessSim } from "../../src/venues/limitless/index.ts";
import { buyOrder, LIMITLESS_CHAIN_ID, limitlessSigningText, signLimitless, signOrder } from "../../src/venues/limitless/signing.ts";
import { simHarness, type FeeExample, type SigningExample } from "./harness.ts";
import { runConformance } from "./suite.ts";

const catalog = MarketCatalog.load();
const ORDERS_DOC = "docs.limitless.exchange POST /orders: feeRateBps 300 on a buy of 100 shares at 0.65 (makerAmount 65000000, takerAmount 100000000)";
const SDK_FEE = "@limitless-exchange/sdk OrderBuilder: feeRateBps in basis points of the order (100 = 1%)";

const fees: FeeExample[] = [
  { what: "the documented order: 100 shares at 0.65 under feeRateBps 300 pay 3% of 65 USDC", source: ORDERS_DOC, model: { kind: "limitless", ratePpm: 30_000n }, levels: [{ price: 650_000n, shares: 100_000_000n }], fee: 1_950_000n },
  { what: "feeRateBps 100 is 1%: 10 shares at 0.5 pay 0.05 USDC", source: SDK_FEE, model: { kind: "limitless", ratePpm: 10_000n }, levels: [{ price: 500_000n, shares: 10_000_000n }], fee: 50_000n },
  {
    what: "one order over two levels is charged once, rounded up to the micro-USDC: 50 bps of 3.33 + 0.334 USDC",
    source: SDK_FEE,
    model: { kind: "limitless", ratePpm: 5_000n },
    levels: [{ price: 333_000n, shares: 10_000_000n }, { price: 334_000n, shares: 1_000_000n }],
    fee: 18_320n,
  },
];

/** The HMAC recomputed with WebCrypto, an implementation independent of the adapter's node:crypto one. */
async function webCryptoHmac(secret: string, text: string): Promise<string> {
  const key = await webcrypto.subtle.importKey("raw", Buffer.from(secret, "base64"), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return Buffer.from(await webcrypto.subtle.sign("HMAC", key, new TextEncoder().encode(text))).toString("base64");
}

/** EIP-712 digest of an Order built by hand from the type string and ABI encoding, independent of viem's typed-data encoder. */
function handDigest(o: ReturnType<typeof buyOrder>, exchange: Hex): Hex {
  const typeHash = keccak256(toHex("Order(uint256 salt,address maker,address signer,address taker,uint256 tokenId,uint256 makerAmount,uint256 takerAmount,uint256 expiration,uint256 nonce,uint256 feeRateBps,uint8 side,uint8 signatureType)"));
  const domainHash = keccak256(
    encodeAbiParameters(
      [{ type: "bytes32" }, { type: "bytes32" }, { type: "bytes32" }, { type: "uint256" }, { type: "address" }],
      [keccak256(toHex("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")), keccak256(toHex("Limitless CTF Exchange")), keccak256(toHex("1")), BigInt(LIMITLESS_CHAIN_ID), exchange],
    ),
  );
  const u = { type: "uint256" } as const;
  const a = { type: "address" } as const;
  const structHash = keccak256(
    encodeAbiParameters(
      [{ type: "bytes32" }, u, a, a, a, u, u, u, u, u, u, { type: "uint8" }, { type: "uint8" }],
      [typeHash, o.salt, o.maker, o.signer, o.taker, o.tokenId, o.makerAmount, o.takerAmount, o.expiration, o.nonce, o.feeRateBps, o.side, o.signatureType],
    ),
  );
  return keccak256(`0x1901${domainHash.slice(2)}${structHash.slice(2)}`);
}

async function signingExamples(): Promise<SigningExample[]> {
  const secret = Buffer.alloc(32, 7).toString("base64");
  const timestamp = "2026-01-15T10:30:00.000Z";
  const body = '{"orderType":"FAK"}';
  const key = generatePrivateKey();
  const maker = privateKeyToAccount(key).address;
  const order = buyOrder({ maker, tokenId: "19633204485790857949828516737993423758628930235371629943999544859324645414627", limitPrice: 650_000n, shares: 100_000_000n, feeRateBps: 300n, salt: 1234567890n, expiration: 0n });
  return [
    {
      what: "the HMAC text: ISO timestamp, method, path with its query, body, newline-separated",
      source: "@limitless-exchange/sdk src/api/hmac.ts buildHMACMessage",
      actual: () => limitlessSigningText(timestamp, "post", "/orders?x=1", body),
      expected: `${timestamp}\nPOST\n/orders?x=1\n${body}`,
    },
    {
      what: "lmts-signature: base64 HMAC-SHA256 under the base64-decoded secret, as an independent WebCrypto HMAC computes it",
      source: "@limitless-exchange/sdk src/api/hmac.ts computeHMACSignature",
      actual: () => signLimitless(secret, timestamp, "POST", "/orders", body),
      expected: await webCryptoHmac(secret, `${timestamp}\nPOST\n/orders\n${body}`),
    },
    {
      what: "the EIP-712 order signature recovers, over a hand-built digest, to the wallet that signed it",
      source: "@limitless-exchange/sdk src/orders/signer.ts (domain Limitless CTF Exchange v1, chain 8453, 12-field Order)",
      actual: async () => recoverAddress({ hash: handDigest(order, LIMITLESS_CLOB_EXCHANGE), signature: await signOrder(privateKeyToAccount(key), order, LIMITLESS_CLOB_EXCHANGE) }),
      expected: maker,
    },
  ];
}

const signing = await signingExamples();
let seed = 300;

runConformance("limitless", async () => {
  const sim = await startLimitlessSim({ catalog, seed: ++seed, latencyScale: 0, tickMs: 40 });
  return simHarness(sim, catalog, (options) => createLimitlessVenue({ ...options, startTimeoutMs: 300 }), (c) => ({ ...c, secret: Buffer.alloc(32, 1).toString("base64") }), { fees, signing });
});
