import type { KeyPair, NewApiKey } from "../../auth/keys.ts";
import type { Clock, Outcome } from "../../domain/types.ts";
import type { UnifiedEvent } from "../../markets/catalog.ts";
import type { OrderLimits } from "../../orders/validate.ts";
import type { Plan, PlanRequest, Refusal, VenueQuote } from "../../router/index.ts";
import type { ApiKeyRecord } from "../../store/store.ts";

/** What the quote endpoint needs: the same catalog, books, router and limits as the order path. */
export interface QuoteDeps {
  event(eventId: string): UnifiedEvent | undefined;
  quotes(event: UnifiedEvent, outcome: Outcome): VenueQuote[];
  plan(req: PlanRequest, quotes: readonly VenueQuote[]): Plan | Refusal;
  limits: OrderLimits;
}

/** What the web terminal's routes need beyond the API's own deps; main.ts provides it. */
export interface TerminalDeps {
  clock: Clock;
  /** Encrypts the private key of a new account's on-chain address (see findOrCreateAccount). */
  encryptWalletKey(privateKey: string): string;
  createApiKey(input: NewApiKey): Promise<KeyPair & { record: ApiKeyRecord }>;
  quote: QuoteDeps;
  /** Where the built terminal (index.html and assets/) lives. */
  assetsDir: string;
  /** How often the price stream looks for a changed book. */
  streamIntervalMs?: number;
}
