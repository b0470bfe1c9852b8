import { createHash } from "node:crypto";
import { recoverTypedDataAddress, type Hex } from "viem";
import { l2Signature, sameSignature } from "../auth.ts";
import { POLYGON_CHAIN_ID } from "../order-signing.ts";
import type { Answer, SimAccount } from "./orders.ts";

/**
 * L1 authentication (docs.polymarket.com/api-reference/authentication): the wallet signs this EIP-712
 * ClobAuth message; POLY_ADDRESS, POLY_SIGNATURE, POLY_TIMESTAMP and POLY_NONCE carry it. Its domain
 * stayed at version "1" in CLOB V2 (only the exchange's moved to "2").
 */
const CLOB_AUTH_DOMAIN = { name: "ClobAuthDomain", version: "1", chainId: POLYGON_CHAIN_ID } as const;
const CLOB_AUTH_TYPES = {
  ClobAuth: [
    { name: "address", type: "address" },
    { name: "timestamp", type: "string" },
    { name: "nonce", type: "uint256" },
    { name: "message", type: "string" },
  ],
} as const;
const CLOB_AUTH_MESSAGE = "This message attests that I control the given wallet";

/** The venue's words (docs.polymarket.com/resources/error-codes, and what clob-client-v2 expects of `createOrDeriveApiKey`). */
const INVALID_L1: Answer = { status: 401, body: { error: "Invalid L1 Request headers" } };
const UNAUTHORIZED: Answer = { status: 401, body: { error: "Unauthorized/Invalid api key" } };
const CANNOT_CREATE: Answer = { status: 400, body: { error: "Could not create api key" } };
const CANNOT_DERIVE: Answer = { status: 400, body: { error: "Could not derive api key!" } };

type Headers = Record<string, string | string[] | undefined>;

/**
 * The simulator's API keys: one per wallet and L1 nonce, created by `POST /auth/api-key` and found
 * again by `GET /auth/derive-api-key`, each derived from the seed so that a restarted simulator
 * derives the same. `own` is the account the simulator starts with (its wallet's key at nonce 0).
 */
export class SimAccounts {
  private readonly byKey = new Map<string, SimAccount>();
  private readonly byWallet = new Map<string, SimAccount>();

  constructor(
    private readonly seed: number,
    own: SimAccount,
  ) {
    this.add(own, 0n);
  }

  /** `POST /auth/api-key`: a new key for the wallet and nonce, refused when it already has one. */
  async create(headers: Headers): Promise<Answer> {
    const wallet = await this.l1Wallet(headers);
    if (!wallet) return INVALID_L1;
    if (this.byWallet.has(walletKey(wallet.address, wallet.nonce))) return CANNOT_CREATE;
    const bytes = (label: string) => createHash("sha256").update(`polymarket-sim:${this.seed}:${wallet.address.toLowerCase()}:${wallet.nonce}:${label}`).digest();
    const id = bytes("key").toString("hex");
    const account: SimAccount = {
      apiKey: `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20, 32)}`,
      secret: bytes("secret").toString("base64url"),
      passphrase: bytes("passphrase").toString("hex"),
      address: wallet.address,
    };
    this.add(account, wallet.nonce);
    return { status: 200, body: credentialsBody(account) };
  }

  /** `GET /auth/derive-api-key`: the key the wallet made with this nonce. */
  async derive(headers: Headers): Promise<Answer> {
    const wallet = await this.l1Wallet(headers);
    if (!wallet) return INVALID_L1;
    const account = this.byWallet.get(walletKey(wallet.address, wallet.nonce));
    return account ? { status: 200, body: credentialsBody(account) } : CANNOT_DERIVE;
  }

  /** The account an L2-signed request comes from, or the venue's 401 when its headers do not check out. */
  authorize(headers: Headers, method: string, path: string, rawBody: string): SimAccount | Answer {
    const h = (name: string) => String(headers[name.toLowerCase()] ?? "");
    const account = this.byKey.get(h("POLY_API_KEY"));
    if (!account || h("POLY_PASSPHRASE") !== account.passphrase) return UNAUTHORIZED;
    if (h("POLY_ADDRESS").toLowerCase() !== account.address.toLowerCase() || !/^\d+$/.test(h("POLY_TIMESTAMP"))) return UNAUTHORIZED;
    return sameSignature(h("POLY_SIGNATURE"), l2Signature(account.secret, h("POLY_TIMESTAMP"), method, path, rawBody)) ? account : UNAUTHORIZED;
  }

  private add(account: SimAccount, nonce: bigint): void {
    this.byKey.set(account.apiKey, account);
    this.byWallet.set(walletKey(account.address, nonce), account);
  }

  /** The wallet whose ClobAuth signature the L1 headers carry, or undefined when they do not prove one. */
  private async l1Wallet(headers: Headers): Promise<{ address: Hex; nonce: bigint } | undefined> {
    const h = (name: string) => String(headers[name.toLowerCase()] ?? "");
    const address = h("POLY_ADDRESS");
    const timestamp = h("POLY_TIMESTAMP");
    const nonceText = h("POLY_NONCE") || "0";
    if (!/^0x[0-9a-fA-F]{40}$/.test(address) || !/^\d+$/.test(timestamp) || !/^\d+$/.test(nonceText)) return undefined;
    const nonce = BigInt(nonceText);
    const signer = await recoverTypedDataAddress({
      domain: CLOB_AUTH_DOMAIN,
      types: CLOB_AUTH_TYPES,
      primaryType: "ClobAuth",
      message: { address: address as Hex, timestamp, nonce, message: CLOB_AUTH_MESSAGE },
      signature: h("POLY_SIGNATURE") as Hex,
    }).catch(() => undefined);
    return signer && signer.toLowerCase() === address.toLowerCase() ? { address: signer, nonce } : undefined;
  }
}

function walletKey(address: string, nonce: bigint): string {
  return `${address.toLowerCase()}:${nonce}`;
}

function credentialsBody(a: SimAccount) {
  return { apiKey: a.apiKey, secret: a.secret, passphrase: a.passphrase };
}
