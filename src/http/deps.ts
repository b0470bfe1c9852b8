import type { AuthNeeds, AuthRequest, Principal } from "../auth/authenticate.ts";
import type { Outcome } from "../domain/types.ts";
import type { OrderSide } from "../markets/merged-book.ts";
import type { OrderService } from "../orders/service.ts";
import type { WithdrawalService } from "../funds/withdrawals.ts";
import type { AccountRecord, Store } from "../store/store.ts";
import type { Static } from "@sinclair/typebox";
import type { Account, Health, Market, PriceRecord } from "./schemas.ts";
import type { MarketStatus } from "../domain/types.ts";
import type { TerminalDeps } from "./terminal/deps.ts";
import type { Redis } from "../redis.ts";

export interface MarketQuery {
  status?: MarketStatus;
  venue?: string;
  q?: string;
  limit: number;
  cursor: string | null;
}

/** What the HTTP layer needs from the rest of the service; main.ts provides it. */
export interface HttpDeps {
  version: string;
  /** TRUST_PROXY: one proxy in front of the server, whose word on the client's address and protocol is taken (fast-prices.ts trustedHop). */
  trustProxy: boolean;
  /** How long a client may take to send a whole request (Node's requestTimeout): a body that never completes holds no connection longer. */
  requestTimeoutMs: number;
  /** The caller, at once for a cached key's unsigned read; a promise when the store or the replay cache is asked. */
  authenticate(req: AuthRequest, needs: AuthNeeds): Principal | Promise<Principal>;
  /** Refuses a request whose headers already refuse it, before its body is sent (Expect: 100-continue); records nothing. Throws what authenticate throws. */
  checkHeaders(req: AuthRequest, needs: AuthNeeds): Promise<void>;
  /** The caller of an unsigned request at once from the key cache; undefined when the key is not cached. Throws what authenticate throws. */
  authenticateCached(req: AuthRequest, needs: AuthNeeds & { signed: false }): Principal | undefined;
  store: Store;
  orders: OrderService;
  withdrawals: WithdrawalService;
  /** The account behind a key, funded from the dev faucet on first use where there is one. */
  account(accountId: string): Promise<AccountRecord>;
  accountView(account: AccountRecord): Promise<Static<typeof Account>>;
  /** The same object while the books it shows have not ticked (so are its serialised bytes). */
  markets(query: MarketQuery): { data: Static<typeof Market>[]; next_cursor: string | null };
  /**
   * Throws unknown_event for an id that is not in the catalog. The same object while the event's books have not ticked.
   * `side` (default buy) is the order side the record ranks for (mergeBooks).
   */
  prices(eventId: string, outcome: Outcome, depth: number, side?: OrderSide): Static<typeof PriceRecord>;
  health(): Promise<Static<typeof Health>>;
  sotAssetId(tokenId: string): string;
  terminal: TerminalDeps;
  metrics: HttpMetrics;
  /** The API-wide limit, per API key (or session, or address); on Redis when given, so that every instance spends one budget. */
  rateLimit: { perMinute: number; redis: Redis | undefined };
}

/** Counts each answered request, and renders every metric for GET /metrics. */
export interface HttpMetrics {
  request(method: string, route: string, statusCode: number, seconds: number): void;
  /** POST /v1/order answers the order `seconds` after the request arrived (the service's own work is that less its waits). */
  orderAnswered(orderId: string, seconds: number): void;
  scrape(): Promise<{ contentType: string; body: string }>;
}
