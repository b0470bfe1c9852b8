// `npm run bench:router`: time per plan of the router as venues grow, 1,000 ask levels a venue.
// Pure CPU, no server: it runs the router on synthetic books of every fee kind and prints the
// median and p99 of many plans at each venue count.
import { plan } from "../src/router/index.ts";
import type { FeeModel } from "../src/domain/fees.ts";
import type { PlanRequest, VenueQuote } from "../src/router/types.ts";

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
 * the others 0.01 shares, every third venue with a 5-share minimum.
 */
function venue(v: number): VenueQuote {
  const feeModel = MODELS[v % MODELS.length]!;
  const start = 500_000 + ((v * 37) % 50) * 100 - (feeModel.kind === "kalshi" ? 9_000 : 0);
  const asks = Array.from({ length: LEVELS }, (_, i) => ({
    price: BigInt(start + i * 100),
    shares: BigInt(40 + ((i * 131 + v * 17) % 361)) * 1_000_000n + BigInt(((i * 7 + v) % 100) * 10_000),
  }));
  return {
    venue: `venue-${v}`,
    venueMarketId: `m-${v}`,
    asks,
    feeModel,
    tickSize: 100n,
    minOrderShares: v % 3 === 0 ? 5_000_000n : 10_000n,
    lotShares: feeModel.kind === "kalshi" ? 1_000_000n : 10_000n,
    latencyMs: 20 + (v % 7) * 10,
  };
}

const orders: [string, PlanRequest][] = [
  ["$10k FOK 1%", { amount: 10_000_000_000n, maxSlippage: 10_000n, strategy: "optimize_price", timeInForce: "FOK" }],
  ["$250 IOC 1%", { amount: 250_000_000n, maxSlippage: 10_000n, strategy: "optimize_price", timeInForce: "IOC" }],
  ["$10k speed FOK", { amount: 10_000_000_000n, maxSlippage: 10_000n, strategy: "optimize_speed", timeInForce: "FOK" }],
];

function measure(req: PlanRequest, quotes: VenueQuote[]): { p50: number; p99: number; legs: number; outcome: string } {
  const first = plan(req, quotes);
  const times: number[] = [];
  const deadline = performance.now() + 1_000;
  while (times.length < 20 || (performance.now() < deadline && times.length < 2_000)) {
    const t = performance.now();
    plan(req, quotes);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return {
    p50: times[Math.floor(times.length / 2)]!,
    p99: times[Math.floor(times.length * 0.99)]!,
    legs: first.kind === "plan" ? first.legs.length : 0,
    outcome: first.kind === "plan" ? `${Number(first.shares) / 1e6} shares` : first.code,
  };
}

console.log(`router: ${LEVELS} levels a venue; ms per plan (median, p99), legs, outcome`);
for (const n of COUNTS) {
  const quotes = Array.from({ length: n }, (_, v) => venue(v));
  for (const [name, req] of orders) {
    const r = measure(req, quotes);
    console.log(`${String(n).padStart(4)} venues  ${name.padEnd(16)} ${r.p50.toFixed(3).padStart(9)} ${r.p99.toFixed(3).padStart(9)}  ${String(r.legs).padStart(3)} legs  ${r.outcome}`);
  }
}
