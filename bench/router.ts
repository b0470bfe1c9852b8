// `npm run bench:router`: time per plan of the router as venues grow, 1,000 ask and 1,000 bid levels
// a venue. Pure CPU, no server: it runs the router on synthetic books of every fee kind, buys over the
// asks and sells over the bids, and prints the median and p99 of many plans at each venue count.
import { plan } from "../src/router/index.ts";
import type { FeeModel } from "../src/domain/fees.ts";
import type { Plan, PlanRequest, Refusal, SellPlan, SellQuote, SellRequest, VenueQuote } from "../src/router/types.ts";

const LEVELS = Number(process.env.BENCH_LEVELS ?? 1000);
const COUNTS = (process.env.BENCH_VENUES ?? "2,8,16,32,100").split(",").map(Number);
const MODELS: FeeModel[] = [
  { kind: "kalshi", ratePpm: 70_000n },
  { kind: "polymarket", ratePpm: 20_000n, exponent: 1 },
  { kind: "limitless", ratePpm: 10_000n },
  { kind: "polymarket", ratePpm: 0n, exponent: 1 },
];

/**
 * Venue v: levels a hundredth of a cent apart from 0.50 plus up to 0.5¢ (so the venues interleave),
 * 40–400 shares each with odd hundredths so lots straddle levels; Kalshi trades whole contracts,
 * the others 0.01 shares, every third venue with a 5-share minimum. Its bids mirror its asks below
 * 0.50 (Kalshi's the other way from its asks, so that after its fee it competes too); the operator
 * holds 8,000 shares on each venue but every fourth, which holds none.
 */
function venue(v: number): VenueQuote & SellQuote {
  const feeModel = MODELS[v % MODELS.length]!;
  const offset = ((v * 37) % 50) * 100;
  const kalshi = feeModel.kind === "kalshi" ? 9_000 : 0;
  const size = (i: number) => BigInt(40 + ((i * 131 + v * 17) % 361)) * 1_000_000n + BigInt(((i * 7 + v) % 100) * 10_000);
  return {
    venue: `venue-${v}`,
    venueMarketId: `m-${v}`,
    asks: Array.from({ length: LEVELS }, (_, i) => ({ price: BigInt(500_000 + offset - kalshi + i * 100), shares: size(i) })),
    bids: Array.from({ length: LEVELS }, (_, i) => ({ price: BigInt(499_000 - offset + kalshi - i * 100), shares: size(i) })),
    feeModel,
    tickSize: 100n,
    minOrderShares: v % 3 === 0 ? 5_000_000n : 10_000n,
    lotShares: feeModel.kind === "kalshi" ? 1_000_000n : 10_000n,
    latencyMs: 20 + (v % 7) * 10,
    inventory: v % 4 === 3 ? 0n : 8_000_000_000n,
  };
}

const buys: [string, PlanRequest][] = [
  ["$10k FOK 1%", { amount: 10_000_000_000n, maxSlippage: 10_000n, strategy: "optimize_price", timeInForce: "FOK" }],
  ["$250 IOC 1%", { amount: 250_000_000n, maxSlippage: 10_000n, strategy: "optimize_price", timeInForce: "IOC" }],
  ["$10k speed FOK", { amount: 10_000_000_000n, maxSlippage: 10_000n, strategy: "optimize_speed", timeInForce: "FOK" }],
];
const sells: [string, SellRequest][] = [
  ["sell 10k FOK 1%", { side: "sell", shares: 10_000_000_000n, maxSlippage: 10_000n, strategy: "optimize_price", timeInForce: "FOK" }],
  ["sell 500 IOC 1%", { side: "sell", shares: 500_000_000n, maxSlippage: 10_000n, strategy: "optimize_price", timeInForce: "IOC" }],
  ["sell 5k speed FOK", { side: "sell", shares: 5_000_000_000n, maxSlippage: 10_000n, strategy: "optimize_speed", timeInForce: "FOK" }],
];

function measure(run: () => Plan | SellPlan | Refusal): { p50: number; p99: number; legs: number; outcome: string } {
  const first = run();
  const times: number[] = [];
  const deadline = performance.now() + 1_000;
  while (times.length < 20 || (performance.now() < deadline && times.length < 2_000)) {
    const t = performance.now();
    run();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const outcome = first.kind === "refusal" ? first.code : "proceeds" in first ? `${Number(first.shares) / 1e6} shares for ${Number(first.proceeds) / 1e6} USDC` : `${Number(first.shares) / 1e6} shares`;
  return {
    p50: times[Math.floor(times.length / 2)]!,
    p99: times[Math.floor(times.length * 0.99)]!,
    legs: first.kind === "plan" ? first.legs.length : 0,
    outcome,
  };
}

console.log(`router: ${LEVELS} levels a side a venue; ms per plan (median, p99), legs, outcome`);
for (const n of COUNTS) {
  const quotes = Array.from({ length: n }, (_, v) => venue(v));
  const runs: [string, () => Plan | SellPlan | Refusal][] = [
    ...buys.map(([name, req]): [string, () => Plan | Refusal] => [name, () => plan(req, quotes)]),
    ...sells.map(([name, req]): [string, () => SellPlan | Refusal] => [name, () => plan(req, quotes)]),
  ];
  for (const [name, run] of runs) {
    const r = measure(run);
    console.log(`${String(n).padStart(4)} venues  ${name.padEnd(18)} ${r.p50.toFixed(3).padStart(9)} ${r.p99.toFixed(3).padStart(9)}  ${String(r.legs).padStart(3)} legs  ${r.outcome}`);
  }
}
