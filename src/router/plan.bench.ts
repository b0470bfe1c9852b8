import { bench, describe } from "vitest";
import { plan } from "./index.ts";
import { KALSHI, quote, usdc } from "./testkit.ts";
import type { PlanRequest, VenueQuote } from "./types.ts";

/**
 * 20 levels a venue, 0.1¢ apart, 400–1150 shares each with odd fractions so lots straddle levels.
 * Kalshi sits lower to offset its fee, so $10k spreads over all three venues.
 */
function book(offset: number): [number, number][] {
  return Array.from({ length: 20 }, (_, i) => [0.5 + offset + i * 0.001, 400 + ((i * 37) % 16) * 50 + ((i * 7) % 10) / 1000]);
}

const quotes: VenueQuote[] = [
  quote("kalshi", book(-0.017), { feeModel: KALSHI, lotShares: 1_000_000n, latencyMs: 80 }),
  quote("polymarket", book(0.0005), { feeModel: { kind: "polymarket", ratePpm: 20_000n, exponent: 1 }, latencyMs: 40 }),
  quote("limitless", book(0.001), { feeModel: { kind: "limitless", ratePpm: 10_000n }, minOrderShares: 5_000_000n, latencyMs: 60 }),
];

const order = (over: Partial<PlanRequest>): PlanRequest => ({
  amount: usdc(10_000),
  maxSlippage: 50_000n,
  strategy: "optimize_price",
  timeInForce: "FOK",
  ...over,
});

describe("plan(): 3 venues × 20 levels, $10k", () => {
  bench("optimize_price FOK", () => {
    plan(order({}), quotes);
  });
  bench("optimize_speed FOK", () => {
    plan(order({ strategy: "optimize_speed" }), quotes);
  });
});
