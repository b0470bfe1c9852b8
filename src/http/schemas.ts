import { Type, type Static } from "@sinclair/typebox";
import { MARKET_STATUSES } from "../domain/types.ts";

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const Num = (description: string) => Type.Number({ description });
const NullableNum = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: "Stable machine-readable code; see the error catalog." }),
      message: Type.String({ description: "A human sentence." }),
      details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      request_id: Type.String(),
    }),
  },
  { $id: "Error", description: "Every non-2xx response has this body." },
);

const Decimal = (description: string) => Type.Union([Type.Number(), Type.String()], { description });

export const OrderRequest = Type.Object(
  {
    market_id: Type.String({ description: "Unified event id (see GET /v1/markets)." }),
    outcome: Type.String({ enum: ["YES", "NO"] }),
    side: Type.String({ enum: ["buy", "sell"] }),
    amount_usdc: Type.Optional(Decimal("A buy's USDC to spend, fees included: > 0, at most 6 decimals; a number or a decimal string. Refused on a sell.")),
    shares: Type.Optional(
      Decimal("A sell's shares to sell: > 0, at most 6 decimals, at most the position's unlocked shares (else insufficient_position). Refused on a buy."),
    ),
    max_slippage: Type.Optional(Decimal("Fraction 0 to 0.5 above the best fee-adjusted ask (a buy), below the best fee-adjusted bid (a sell); default 0.01.")),
    strategy: Type.Optional(Type.String({ enum: ["optimize_price", "optimize_speed"], description: "Default optimize_price." })),
    client_order_id: Type.Optional(Type.String({ description: "Idempotency key: 1-64 printable characters, no space of any kind (a no-break space, U+2000 to U+200A, U+3000 ...) and no hidden one (a control, a zero-width or bidirectional format character, a variation selector); the Idempotency-Key header works the same." })),
    time_in_force: Type.Optional(Type.String({ enum: ["FOK", "IOC"], description: "FOK (default): fill all within slippage or nothing. IOC: fill what fits." })),
  },
  // Documents what validateOrder refuses: a field it does not name (the route validates the body itself).
  { $id: "OrderRequest", additionalProperties: false },
);

const Fill = Type.Object({
  venue: Type.String(),
  price: Num("Price per share"),
  shares: Num("Shares filled"),
  fee_usdc: Num("Venue fee"),
  venue_order_id: Type.String(),
});

export const Order = Type.Object(
  {
    order_id: Type.String(),
    status: Type.String({ enum: ["pending", "locked", "routing", "filled", "partially_filled", "rejected", "failed"] }),
    executed_price: NullableNum("Volume-weighted average price per share, fees excluded."),
    routed_to: Nullable(Type.String({ description: "The venue that filled the largest part." })),
    sot_minted: Nullable(Type.String({ description: "CAIP-19 id of the position token minted to the client by a buy; null for a sell." })),
    tx_hash: Nullable(
      Type.String({
        description:
          "Hash of the transaction that settled the order: its logs hold this order's own Settled event (a buy) or SellSettled event with the SOT burn (a sell). Settlements are batched, so other orders may carry the same hash.",
      }),
    ),
    filled_shares: Num("Shares bought, or sold"),
    spent_usdc: Num("USDC spent, fees included; 0 for a sell"),
    fees_usdc: Num("Venue fees"),
    proceeds_usdc: NullableNum("A sell's USDC credited to available, after fees; null for a buy."),
    sot_burned: Nullable(Type.String({ description: "CAIP-19 id of the position token a sell burned; null for a buy." })),
    fills: Type.Array(Fill),
    created_at: Type.String(),
    updated_at: Type.String(),
    client_order_id: Nullable(Type.String()),
    market_id: Type.String(),
    outcome: Type.String(),
    side: Type.String(),
    amount_usdc: NullableNum("USDC a buy asked to spend; null for a sell"),
    shares: NullableNum("Shares a sell asked to sell; null for a buy"),
    max_slippage: Num("Slippage bound"),
    strategy: Type.String(),
    time_in_force: Type.String(),
    lock_tx_hash: Nullable(Type.String({ description: "The transaction that locked a buy's USDC, or escrowed a sell's shares." })),
    release_tx_hash: Nullable(Type.String({ description: "The transaction that released a buy's lock, or returned a sell's shares." })),
    error: Type.Union([
      Type.Object({
        code: Type.String(),
        message: Type.String(),
        details: Type.Record(Type.String(), Type.Unknown(), { description: "What the message names, as the refusal's error.details did: empty when nothing" }),
      }),
      Type.Null(),
    ]),
  },
  { $id: "Order" },
);
export type OrderBody = Static<typeof Order>;

const BookEntry = Type.Tuple([Type.Number(), Type.Number(), Type.String()], { description: "[price, size, venue]" });

export const PriceRecord = Type.Object(
  {
    event_id: Type.String(),
    outcome: Type.String(),
    best_execution: Type.Union([
      Type.Object({ venue: Type.String(), price: Type.Number(), fee_adjusted_price: Type.Number() }),
      Type.Null(),
    ]),
    orderbook: Type.Object({ bids: Type.Array(BookEntry), asks: Type.Array(BookEntry) }),
    spread: Type.Object({ best_bid: NullableNum("Best bid"), best_ask: NullableNum("Best ask"), spread: NullableNum("Ask minus bid: negative when the venues' books cross, one venue bidding above another's ask") }),
    updated_at: Nullable(Type.String()),
    stale_venues: Type.Array(Type.String()),
  },
  { $id: "PriceRecord" },
);

export const Market = Type.Object(
  {
    event_id: Type.String(),
    title: Type.String(),
    description: Type.String(),
    outcomes: Type.Array(Type.String()),
    status: Type.String({ enum: [...MARKET_STATUSES] }),
    close_time: Type.String(),
    resolution: Nullable(Type.String()),
    venues: Type.Array(
      Type.Object({
        venue: Type.String(),
        venue_market_id: Type.String(),
        outcome_ids: Type.Record(Type.String(), Type.String()),
        fee_model: Type.Record(Type.String(), Type.Unknown()),
        tick_size: Type.Number(),
        min_order_size: Type.Number(),
      }),
    ),
    best_bid: NullableNum("Best YES bid across venues"),
    best_ask: NullableNum("Best YES ask across venues"),
    volume_usdc: Type.Number(),
  },
  { $id: "Market" },
);

/** A page of a list: items by reference to a registered schema, and the cursor of the next page. */
export const Page = (itemId: string) =>
  Type.Object({ data: Type.Array(Type.Unsafe({ $ref: `${itemId}#` })), next_cursor: Nullable(Type.String()) });

export const ListQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  cursor: Type.Optional(Type.String()),
};

export const Account = Type.Object(
  {
    account_id: Type.String(),
    email: Type.String(),
    vault_address: Type.String(),
    deposit_address: Nullable(
      Type.String({ description: "Send USDC here (an ERC-20 transfer on the Vault's chain): it is credited to available_usdc once, after DEPOSIT_CONFIRMATIONS blocks. Null when the service keeps no key for the account's address." }),
    ),
    available_usdc: Type.Number(),
    locked_usdc: Type.Number(),
    positions: Type.Array(
      Type.Object({
        event_id: Type.String(),
        outcome: Type.String(),
        sot: Type.String({ description: "CAIP-19 id of the position token" }),
        shares: Type.Number(),
        avg_cost: NullableNum("USDC a share the shares held cost, fees included (average cost method); null with none held"),
        mark_price: NullableNum("What selling a share nets now: the best fee-adjusted bid across venues (1 or 0 once the event resolved); null with no bid that nets anything"),
        unrealized_pnl_usdc: NullableNum("(mark_price − avg_cost) × shares: the shares held at the mark less their cost; null without a mark"),
        realized_pnl_usdc: Num("What sells and redemptions paid less the average cost of the shares they removed"),
        event_status: Nullable(
          Type.String({
            enum: [...MARKET_STATUSES],
            description: "The event's status: the position is sold only while it is open (a sell of a closed, resolved or disputed event's is refused market_closed); a resolved event's shares are redeemed. Null for an event no longer listed",
          }),
        ),
      }),
    ),
  },
  { $id: "Account" },
);

export const WithdrawalRequest = Type.Object(
  {
    amount_usdc: Decimal("USDC to pay out of the available balance: > 0, at most 6 decimals; a number or a decimal string."),
    to_address: Type.String({ description: "Where to pay it: a 0x address, EIP-55 checksummed or all lower case." }),
    client_withdrawal_id: Type.Optional(Type.String({ description: "Idempotency key: 1-64 printable characters, no space of any kind (a no-break space, U+2000 to U+200A, U+3000 ...) and no hidden one (a control, a zero-width or bidirectional format character, a variation selector): the same body sent again answers the same withdrawal; the Idempotency-Key header works the same." })),
    password: Type.Optional(Type.String({ description: "The account's password: required, and only accepted, from the web terminal's session." })),
  },
  // Documents what validateWithdrawal refuses: a field it does not name (the route validates the body itself).
  { $id: "WithdrawalRequest", additionalProperties: false },
);

export const Withdrawal = Type.Object(
  {
    withdrawal_id: Type.String(),
    status: Type.String({ enum: ["pending", "sent", "confirmed", "failed"], description: "pending: stored; sent: its transaction may be on its way, or paid under fewer than DEPOSIT_CONFIRMATIONS blocks (tx_hash names it); confirmed: paid, that deep; failed: refused by the chain, nothing paid." }),
    amount_usdc: Num("USDC paid out"),
    to_address: Type.String({ description: "Lower case" }),
    tx_hash: Nullable(Type.String({ description: "The transaction that paid it: its logs hold this withdrawal's WithdrawnTo event." })),
    client_withdrawal_id: Nullable(Type.String()),
    created_at: Type.String(),
    updated_at: Type.String(),
    error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
  },
  { $id: "Withdrawal" },
);
export type WithdrawalBody = Static<typeof Withdrawal>;

export const Activity = Type.Object(
  {
    activity_id: Type.String(),
    type: Type.String({
      description:
        "deposit (USDC sent to the deposit address), faucet (dev chain test USDC), lock / settle / release (a buy's USDC locked, spent, or given back: its lock is its settle plus its release, a settled buy's release being the rest its settlement gave back), sell (a sell's proceeds, after fees, credited by the settlement that burned its shares), withdrawal, redemption (a resolved event's position paid out: 1 USDC a winning share, 0 for a losing one); more kinds may come.",
    }),
    amount_usdc: Num("USDC moved: deposited, locked, spent by a settle, released, or withdrawn"),
    tx_hash: Nullable(Type.String({ description: "The transaction that moved it (a deposit's credit, not its transfer): null until there is one." })),
    status: Type.String({ description: "The state of the deposit, withdrawal or order it belongs to" }),
    reference: Type.String({ description: "The order id, withdrawal id, deposit id (<transfer tx hash>:<n>, n counting from 0 the transaction's transfers into deposit addresses, not its log index), faucet key, or a redemption's event id" }),
    address: Nullable(Type.String({ description: "A deposit's sender, a withdrawal's recipient" })),
    created_at: Type.String(),
  },
  { $id: "Activity" },
);
export type ActivityBody = Static<typeof Activity>;

export const Health = Type.Object(
  {
    status: Type.String({ enum: ["ok", "degraded"], description: "degraded when the chain, the store, Redis or a venue is not up" }),
    version: Type.String(),
    chain: Type.Object({
      chain_id: Type.Integer(),
      rpc_url: Type.String({ description: "The chain's JSON-RPC origin: without the path, query or user of CHAIN_RPC_URL, where a provider puts its API key" }),
      contracts: Type.Object({ usdc: Type.String(), vault: Type.String(), sot: Type.String() }),
      state: Type.String({ enum: ["up", "down"], description: "down when the chain did not answer a read of its latest block within 2 s" }),
    }),
    store: Type.Object({ state: Type.String({ enum: ["up", "down"], description: "down when the database did not answer a read within 2 s" }) }),
    redis: Type.Union([Type.Object({ state: Type.String({ enum: ["up", "down"], description: "down when Redis did not answer a PING within 2 s" }) }), Type.Null()], {
      description: "null without REDIS_URL",
    }),
    venues: Type.Array(
      Type.Object({
        venue: Type.String(),
        adapter: Type.String({ description: "The adapter serving the venue" }),
        base_url: Nullable(Type.String({ description: "Where the adapter points, the venue or its local simulator: the origin of its *_BASE_URL, without the user, path or query that may hold a key" })),
        stream_state: Nullable(Type.String({ description: "State of the book stream's connection" })),
        state: Type.String(),
        latency_p50_ms: NullableNum("Median measured order round trip"),
        latency_p99_ms: NullableNum("99th percentile measured order round trip"),
        book_age_ms: NullableNum("Age of the oldest book held"),
      }),
    ),
  },
  { $id: "Health" },
);
