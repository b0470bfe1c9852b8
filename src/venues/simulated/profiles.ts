import { randomBytes, randomUUID } from "node:crypto";
import { limitlessFee, type FeeModel } from "../../domain/fees.ts";
import type { Ppm, PriceMicro, ShareMicro } from "../../domain/money.ts";
import { OPINION_MIN_FEE } from "../opinion/wire.ts";

/** What a simulator imitates of its venue: trading rules, fee schedule, latency and id formats. */
export interface VenueProfile {
  id: string;
  /** Tick of a market whose catalog listing names none. */
  defaultTick: PriceMicro;
  minOrderShares: ShareMicro;
  lotShares: ShareMicro;
  /** The venue's fee model for a market, given the listing's own rate when it has one. */
  feeModel(ratePpm: Ppm | undefined): FeeModel;
  /** Round trip of a place() before any scaling: mean and standard deviation in ms. */
  latency: { meanMs: number; sdMs: number };
  /** A fresh id in the venue's format; random, so ids never repeat across restarts of the simulator. */
  newOrderId(): string;
}

/**
 * Polymarket CLOB: 0.01 tick (0.001 on markets near 0 or 1), sizes to 0.01 share, 5-share
 * minimum, taker fee C·rate·(p(1−p))^1 set per market and zero on most; order ids are 0x hashes.
 */
export const POLYMARKET_SIM: VenueProfile = {
  id: "polymarket-sim",
  defaultTick: 10_000n,
  minOrderShares: 5_000_000n,
  lotShares: 10_000n,
  feeModel: (ratePpm) => ({ kind: "polymarket", ratePpm: ratePpm ?? 0n, exponent: 1 }),
  latency: { meanMs: 40, sdMs: 15 },
  newOrderId: () => `0x${randomBytes(32).toString("hex")}`,
};

/**
 * Kalshi: whole contracts only (lot and minimum both 1 contract), cent ticks, taker fee
 * ceil_to_cent(0.07·C·P·(1−P)) per order (some index markets charge half that rate); UUID order ids.
 */
export const KALSHI_SIM: VenueProfile = {
  id: "kalshi-sim",
  defaultTick: 10_000n,
  minOrderShares: 1_000_000n,
  lotShares: 1_000_000n,
  feeModel: (ratePpm) => ({ kind: "kalshi", ratePpm: ratePpm ?? 70_000n }),
  latency: { meanMs: 25, sdMs: 10 },
  newOrderId: () => randomUUID(),
};

/** The simulated Limitless's taker fee on a market without a rate of its own, and the account's rank rate. */
export const LIMITLESS_SIM_FEE_PPM = 5_000n;

/**
 * Limitless: a CLOB descended from Polymarket's CTF exchange, so sizes keep its 0.01-share lot;
 * with the finer 0.001 tick, price × size is still a whole number of micro-USDC (a multiple of
 * 0.00001), so every notional is exact. Minimum 1 share; taker fee 0.5 %: a buy's withheld in the
 * contracts it buys, a sell's in USDC. A rate of 100 % or more, or of part of a basis point, is refused.
 */
export const LIMITLESS_SIM: VenueProfile = {
  id: "limitless-sim",
  defaultTick: 1_000n,
  minOrderShares: 1_000_000n,
  lotShares: 10_000n,
  feeModel: (ratePpm) => limitlessFee(ratePpm ?? LIMITLESS_SIM_FEE_PPM),
  latency: { meanMs: 60, sdMs: 25 },
  newOrderId: () => `lmt_${randomBytes(12).toString("hex")}`,
};

/**
 * Opinion: a CTF exchange on BNB Chain, 0.001 tick and 0.01-share lots (assumed), minimum 1 share
 * (the SDK's), taker fee on the notional at rate × P × (1 − P), rate 0.04 unless the catalog names one, at least
 * the venue's minimum fee of 0.25 per order.
 * Not an in-process venue (not in SIM_PROFILES): only its wire-protocol simulator uses it.
 */
export const OPINION_SIM: VenueProfile = {
  id: "opinion-sim",
  defaultTick: 1_000n,
  minOrderShares: 1_000_000n,
  lotShares: 10_000n,
  feeModel: (ratePpm) => ({ kind: "opinion", ratePpm: ratePpm ?? 40_000n, minFee: OPINION_MIN_FEE }),
  latency: { meanMs: 70, sdMs: 25 },
  newOrderId: () => randomUUID().replaceAll("-", ""),
};

export const SIM_PROFILES: readonly VenueProfile[] = [POLYMARKET_SIM, KALSHI_SIM, LIMITLESS_SIM];
