import { randomUUID } from "node:crypto";
import { toHex } from "viem";
import { keccak256 } from "../evm/keccak.ts";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { AppError } from "../domain/errors.ts";
import { hasHiddenCharacter } from "../domain/text.ts";
import type { Micro } from "../domain/money.ts";
import type { Clock } from "../domain/types.ts";
import type { AccountRecord, Store } from "../store/store.ts";
import type { Address, Hex32, TxRef, Vault } from "../vault/vault.ts";
import { BoundedMap } from "../domain/bounded-map.ts";

/** The account the CLI's keys belong to unless --account names another. */
export const LOCAL_ACCOUNT = "local@localhost";

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}$/;

/**
 * An address's form (one @, no spaces): what every account's email has. An account's may hold a hidden character, if it
 * was taken before they were refused.
 */
export function hasEmailForm(email: string): boolean {
  return EMAIL.test(email);
}

/**
 * Refuses an email a new account would take holding a hidden character (invalid_request): an account under it would
 * read, in the terminal, a log or a terminal window, as another's, or as nothing.
 */
export function refuseHiddenCharacters(email: string): void {
  if (hasHiddenCharacter(email)) {
    throw new AppError("invalid_request", "An email address cannot hold control or invisible formatting characters (such as ESC or U+202E).", {
      fields: { email: "must not hold control or invisible formatting characters" },
    });
  }
}

/**
 * Finds the account of `email`, or opens one with a fresh on-chain address whose key the service keeps
 * encrypted (the embedded default; on a real chain the address would be the user's own wallet). An email holding a
 * hidden character is found, if an account took it before they were refused, and opens none.
 */
export async function findOrCreateAccount(
  store: Store,
  email: string,
  encryptKey: (privateKey: string) => string,
  extra: { passwordHash?: string } = {},
): Promise<{ account: AccountRecord; created: boolean }> {
  const normalised = email.trim().toLowerCase();
  const existing = await store.accountByEmail(normalised);
  if (existing) return { account: existing, created: false };
  refuseHiddenCharacters(normalised);
  const key = generatePrivateKey();
  const account = await store.createAccount({
    id: `acc_${randomUUID().replaceAll("-", "")}`,
    email: normalised,
    address: privateKeyToAddress(key),
    walletKeyEnc: encryptKey(key),
    passwordHash: extra.passwordHash ?? null,
    fundedAt: null,
  });
  return { account, created: true };
}

/** Accounts kept by the directory, the newest seen: one let go is read again (and, on the dev chain, its drip found again). */
const ACCOUNTS_KEPT = 10_000;

/**
 * Accounts as the server sees them: cached (their ids and addresses never change) and, on the dev chain,
 * funded with test USDC the first time the server meets them — whichever process created them.
 */
export class AccountDirectory {
  private readonly cache = new BoundedMap<string, AccountRecord>(ACCOUNTS_KEPT);
  private readonly funding = new Map<string, Promise<AccountRecord>>();

  constructor(
    private readonly store: Store,
    private readonly vault: Vault,
    private readonly faucet: Micro,
    private readonly clock: Clock,
  ) {}

  async get(accountId: string): Promise<AccountRecord> {
    const cached = this.cache.get(accountId);
    if (cached) return cached;
    const account = await this.store.accountById(accountId);
    if (!account) throw new Error(`account ${accountId} of a valid key does not exist`);
    const ready = await this.ensureFunded(account);
    this.cache.set(accountId, ready);
    return ready;
  }

  /**
   * Funds the account from the dev faucet, once: the faucet itself refuses a second drip under the account's
   * key, so a retry after a crash or a concurrent caller in another process mints nothing. It is asked on
   * each first sight in a process, not skipped for an account marked funded, so that a dev chain whose
   * contracts were redeployed funds the account again in the new Vault.
   */
  ensureFunded(account: AccountRecord): Promise<AccountRecord> {
    if (!this.vault.info().faucet || this.faucet === 0n) return Promise.resolve(account);
    let pending = this.funding.get(account.id);
    if (!pending) {
      pending = (async () => {
        const key = faucetKey(account.id);
        let drip: TxRef;
        try {
          drip = await this.vault.fund(account.address as Address, this.faucet, key);
        } catch (err) {
          // The chain failed, not the request: nothing is cached, so the next request asks the faucet again
          // (a drip that landed after all is then found, not repeated).
          throw new AppError("chain_unavailable", `The chain did not answer while the dev faucet funded the account; nothing was locked. Try again. (${(err as Error).message})`);
        }
        // Listed in the account's activity; the same drip found again is recorded once.
        await this.store.recordFaucetDrip({ key, txHash: drip.txHash, accountId: account.id, amount: this.faucet, createdAt: new Date(this.clock.now()).toISOString() });
        if (account.fundedAt !== null) return account;
        return this.store.markAccountFunded(account.id, new Date(this.clock.now()).toISOString());
      })().finally(() => this.funding.delete(account.id));
      this.funding.set(account.id, pending);
    }
    return pending;
  }
}

/** The terminal's "Get test USDC" drips at most once per account in this long: a click within it gets the same drip. */
export const TOP_UP_INTERVAL_MS = 60_000;

/**
 * "Get test USDC" (the terminal, on the dev chain only): one more drip of the faucet's amount into the
 * account's vault, at most one a minute per account: a call within a minute of the last drip recorded is
 * answered with it. The n-th top-up is keyed by the account and n, counted from those recorded, so that
 * callers at the same moment ask the faucet for the same drip (it mints one), and a drip that landed
 * but was not recorded (a crash between the two) is found again at the next call and recorded then.
 */
export async function topUp(store: Store, vault: Vault, account: AccountRecord, amount: Micro, clock: Clock): Promise<{ amount: Micro; txHash: string }> {
  if (!vault.info().faucet || amount === 0n) throw new AppError("not_found", "Test USDC is only given on the dev chain.");
  const first = faucetKey(account.id);
  const topUps = (await store.faucetDrips(account.id)).filter((d) => d.key !== first);
  const last = topUps[0];
  if (last !== undefined && clock.now() - Date.parse(last.createdAt) < TOP_UP_INTERVAL_MS) return { amount: last.amount, txHash: last.txHash };
  const key = faucetKey(`${account.id}:top-up:${new Set(topUps.map((d) => d.key)).size}`);
  const drip = await vault.fund(account.address as Address, amount, key).catch((err: unknown) => {
    throw new AppError("chain_unavailable", `The chain did not answer while the dev faucet dripped; try again. (${(err as Error).message})`);
  });
  // Listed in the account's activity; the same drip answered again is recorded once.
  await store.recordFaucetDrip({ key, txHash: drip.txHash, accountId: account.id, amount, createdAt: new Date(clock.now()).toISOString() });
  return { amount, txHash: drip.txHash };
}

/** The faucet's idempotency key of an account: one drip per account id, for good. */
export function faucetKey(accountId: string): Hex32 {
  return keccak256(toHex(accountId));
}
