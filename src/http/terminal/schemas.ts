import { Type } from "@sinclair/typebox";
import { PASSWORD_MAX, PASSWORD_MIN } from "../../accounts/password.ts";
import { KEY_NAME_MAX } from "../../auth/keys.ts";

export const Credentials = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 255, description: "The account's email; the CLI's --account names the same account." }),
    password: Type.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX }),
  },
  { additionalProperties: false },
);

export const SessionInfo = Type.Object(
  {
    account_id: Type.String(),
    email: Type.String(),
    csrf_token: Type.String({ description: "Send it as X-CSRF-Token on every state-changing /v1/session and /v1/keys call." }),
    expires_at: Type.String(),
  },
);

export const ApiKeyInfo = Type.Object(
  {
    api_key: Type.String(),
    name: Type.String(),
    scopes: Type.Array(Type.String({ enum: ["read", "trade", "withdraw"] })),
    ip_allowlist: Type.Union([Type.Array(Type.String()), Type.Null()]),
    withdrawal_allowlist: Type.Union([Type.Array(Type.String()), Type.Null()], { description: "The only addresses withdrawals with this key may pay to; null: any." }),
    created_at: Type.String(),
    last_used_at: Type.Union([Type.String(), Type.Null()]),
    revoked_at: Type.Union([Type.String(), Type.Null()]),
  },
);

export const NewKeyRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: KEY_NAME_MAX }),
    scopes: Type.Array(Type.String({ enum: ["read", "trade", "withdraw"] }), {
      minItems: 1,
      maxItems: 3,
      uniqueItems: true,
      description: "withdraw (pay money out of the vault) only when asked for: the terminal's form leaves it unticked",
    }),
    // An empty list is refused, as the CLI's empty --ip or --withdraw-to is: taken as none, it made a key without the limit asked for.
    ip_allowlist: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 50, description: "Addresses the key may be used from; leave it out for any" })),
    withdrawal_allowlist: Type.Optional(
      Type.Array(Type.String({ maxLength: 42 }), { minItems: 1, maxItems: 50, description: "Addresses withdrawals with this key may pay to; leave it out for any" }),
    ),
    password: Type.Optional(
      Type.String({ maxLength: PASSWORD_MAX, description: "The account's password again: required when the scopes include withdraw, as a withdrawal from the session asks for it" }),
    ),
  },
  { additionalProperties: false },
);

export const NewKey = Type.Object(
  {
    ...ApiKeyInfo.properties,
    api_secret: Type.String({ description: "Shown in this response only; it cannot be retrieved later." }),
  },
);

/** A decimal as an order's body may write it, exponent form too: the order's validator reads it (parseMicro, exactly) and refuses it in its words. */
const Amount = Type.String();

export const QuoteQuery = Type.Object(
  {
    market_id: Type.String({ minLength: 1, maxLength: 128, description: "Unified event id" }),
    outcome: Type.String({ enum: ["YES", "NO"] }),
    side: Type.Optional(Type.String({ enum: ["buy", "sell"], description: "Default buy" })),
    amount_usdc: Type.Optional({ ...Amount, description: "A buy's USDC to spend, fees included" }),
    shares: Type.Optional({ ...Amount, description: "A sell's shares to sell" }),
    max_slippage: Type.Optional({ ...Amount, description: "Fraction 0 to 0.5; default 0.01" }),
    strategy: Type.Optional(Type.String({ enum: ["optimize_price", "optimize_speed"] })),
    time_in_force: Type.Optional(Type.String({ enum: ["FOK", "IOC"] })),
  },
  { additionalProperties: false },
);

const NullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

export const Quote = Type.Object(
  {
    market_id: Type.String(),
    outcome: Type.String(),
    side: Type.String({ enum: ["buy", "sell"] }),
    strategy: Type.String(),
    time_in_force: Type.String(),
    amount_usdc: NullableNumber("A buy's amount asked; null for a sell"),
    shares: Type.Number({ description: "Shares the plan buys, or sells" }),
    average_price: Type.Number({ description: "Volume-weighted price per share, fees excluded" }),
    fee_adjusted_price: Type.Number({ description: "A buy's cost per share, fees included; a sell's net per share, after fees" }),
    notional_usdc: Type.Number(),
    fees_usdc: Type.Number(),
    cost_usdc: NullableNumber("A buy's notional + fees, never more than amount_usdc; null for a sell"),
    proceeds_usdc: NullableNumber("A sell's notional − fees: what it would pay; null for a buy"),
    reference_price: Type.Number({ description: "Best fee-adjusted ask (a buy), or bid of the venues that can sell (a sell), across venues now" }),
    limit_price: Type.Number({
      description: "A buy's reference × (1 + max_slippage): no share is bought above it; a sell's reference × (1 − max_slippage): none is sold below it",
    }),
    legs: Type.Array(
      Type.Object({
        venue: Type.String(),
        shares: Type.Number(),
        average_price: Type.Number(),
        limit_price: Type.Number({ description: "Worst level taken on this venue" }),
        notional_usdc: Type.Number(),
        fee_usdc: Type.Number(),
      }),
    ),
    quoted_at: Type.String(),
  },
);
