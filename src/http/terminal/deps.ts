import type { KeyPair, NewApiKey } from "../../auth/keys.ts";
import type { Clock } from "../../domain/types.ts";
import type { Micro } from "../../domain/money.ts";
import type { AccountRecord, ApiKeyRecord } from "../../store/store.ts";

/** What the web terminal's routes need beyond the API's own deps; main.ts provides it. */
export interface TerminalDeps {
  clock: Clock;
  /** Encrypts the private key of a new account's on-chain address (see findOrCreateAccount). */
  encryptWalletKey(privateKey: string): string;
  createApiKey(input: NewApiKey): Promise<KeyPair & { record: ApiKeyRecord }>;
  /** "Get test USDC": one more drip of the dev faucet into the account's vault (accounts/service.ts topUp). */
  topUp(account: AccountRecord): Promise<{ amount: Micro; txHash: string }>;
  /** Where the built terminal (index.html and assets/) lives. */
  assetsDir: string;
  /** How often the price stream looks for a changed book. */
  streamIntervalMs?: number;
}
