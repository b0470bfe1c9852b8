// `npm run bench:router`: time per plan of the router as venues grow, 1,000 ask and 1,000 bid levels
// a venue. Pure CPU, no server: it runs the router on synthetic books of every fee kind, buys over the
// asks and sells over the bids, and prints the median and p99 of many plans at each venue count.
//
// Next to each it times a baseline on the same books in the same loop, run for run: a plain merge of
// the venues' levels, best price first through a heap, until the amount (or the shares) is spent — no
// fees, lots, minimum sizes, rounding or worst case, the least any router reads. The machine is shared,
// so absolute times move with its load; the ratio of the two medians moves far less.
import { plan } from "../src/router/index.ts";
import type { FeeModel } from "../src/domain/fees.ts";
import type { Level } from "../src/domain/types.ts";
import type { Plan, PlanRequest, Refusal, SellPlan, SellQuote, SellRequest, VenueQuote } from "../src/router/types.ts";

const LEVELS = Number(process.env.BENCH_LEVELS ?? 1000);
const COUNTS = (process.env.BENCH_VENUES ?? "4,16,100").split(",").map(Number);
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

/**
 * The baseline: walks the venues' levels best price first (a heap of each venue's next level) until
 * `budget` is spent, a level's cost being its price times its shares, or, for a sell (`sell`), until
 * `budget` shares are sold. Returns the shares taken.
 */
function merge(books: readonly (readonly Level[])[], budget: number, sell: boolean): number {
  const heap: { v: number; i: number; price: number }[] = [];
  const before = (a: { price: number; v: number }, b: { price: number; v: number }) => (sell ? a.price > b.price : a.price < b.price) || (a.price === b.price && a.v < b.v);
  const push = (x: { v: number; i: number; price: number }) => {
    heap.push(x);
    for (let i = heap.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (!before(heap[i]!, heap[p]!)) break;
      [heap[i], heap[p]] = [heap[p]!, heap[i]!];
      i = p;
    }
  };
  const pop = () => {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        let m = i;
        if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
        if (l + 1 < heap.length && before(heap[l + 1]!, heap[m]!)) m = l + 1;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  };
  books.forEach((book, v) => book[0] && push({ v, i: 0, price: Number(book[0].price) }));
  let left = budget;
  let shares = 0;
  while (left > 0 && heap.length > 0) {
    const { v, i, price } = pop();
    const size = Number(books[v]![i]!.shares);
    const cost = sell ? size : (price * size) / 1e6;
    const take = cost <= left ? size : sell ? left : (left * 1e6) / price;
    left -= sell ? take : (price * take) / 1e6;
    shares += take;
    const next = books[v]![i + 1];
    if (next) push({ v, i: i + 1, price: Number(next.price) });
  }
  return shares;
}

const buys: [string, PlanRequest][] = [
  ["$10k FOK 1%", { amount: 10_000_000_000n, maxSlippage: 10_000n, strategy: "optimize_price", timeInForce: "FOK" }],
  ["$10k IOC 1%", { amount: 10_000_000_000n, maxSlippage: 10_000n, strategy: "optimize_price", timeInForce: "IOC" }],
  ["$250 IOC 1%", { amount: 250_000_000n, maxSlippage: 10_000n, strategy: "optimize_price", timeInForce: "IOC" }],
  ["$10k speed FOK", { amount: 10_000_000_000n, maxSlippage: 10_000n, strategy: "optimize_speed", timeInForce: "FOK" }],
];
const sells: [string, SellRequest][] = [
  ["sell 10k FOK 1%", { side: "sell", shares: 10_000_000_000n, maxSlippage: 10_000n, strategy: "optimize_price", timeInForce: "FOK" }],
  ["sell 500 IOC 1%", { side: "sell", shares: 500_000_000n, maxSlippage: 10_000n, strategy: "optimize_price", timeInForce: "IOC" }],
  ["sell 5k speed FOK", { side: "sell", shares: 5_000_000_000n, maxSlippage: 10_000n, strategy: "optimize_speed", timeInForce: "FOK" }],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Runs the router and the baseline alternately, so both see the same load: medians, the router's
 * p99, and the ratio of medians. The baseline takes microseconds, near the clock's grain, so each
 * of its samples repeats it enough times to take about a tenth of a millisecond.
 */
function measure(run: () => Plan | SellPlan | Refusal, baseline: () => number) {
  const first = run();
  // Untimed first: the JIT compiles both before any sample counts.
  for (const warm = performance.now() + 200; performance.now() < warm; ) {
    run();
    baseline();
  }
  let reps = 1;
  for (let t = performance.now(); reps < 1 << 16; reps *= 2) {
    for (let i = 0; i < reps; i++) baseline();
    if (performance.now() - t > 0.1) break;
    t = performance.now();
  }
  const times: number[] = [];
  const base: number[] = [];
  const deadline = performance.now() + 1_000;
  while (times.length < 20 || (performance.now() < deadline && times.length < 2_000)) {
    let t = performance.now();
    run();
    times.push(performance.now() - t);
    t = performance.now();
    for (let i = 0; i < reps; i++) baseline();
    base.push((performance.now() - t) / reps);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const outcome = first.kind === "refusal" ? first.code : "proceeds" in first ? `${Number(first.shares) / 1e6} shares for ${Number(first.proceeds) / 1e6} USDC` : `${Number(first.shares) / 1e6} shares`;
  return {
    p50: median(times),
    p99: sorted[Math.floor(sorted.length * 0.99)]!,
    base: median(base),
    legs: first.kind === "plan" ? first.legs.length : 0,
    outcome,
  };
}

console.log(`router: ${LEVELS} levels a side a venue; ms per plan (median, p99), the baseline merge's median, router ÷ baseline, legs, outcome`);
for (const n of COUNTS) {
  const quotes = Array.from({ length: n }, (_, v) => venue(v));
  const asks = quotes.map((q) => q.asks);
  const bids = quotes.map((q) => q.bids);
  const runs: [string, () => Plan | SellPlan | Refusal, () => number][] = [
    ...buys.map(([name, req]): [string, () => Plan | Refusal, () => number] => [name, () => plan(req, quotes), () => merge(asks, Number(req.amount), false)]),
    ...sells.map(([name, req]): [string, () => SellPlan | Refusal, () => number] => [name, () => plan(req, quotes), () => merge(bids, Number(req.shares), true)]),
  ];
  for (const [name, run, baseline] of runs) {
    const r = measure(run, baseline);
    console.log(
      `${String(n).padStart(4)} venues  ${name.padEnd(18)} ${r.p50.toFixed(3).padStart(8)} ${r.p99.toFixed(3).padStart(8)}  base ${r.base.toFixed(4).padStart(7)}  ×${(r.p50 / r.base).toFixed(1).padStart(6)}  ${String(r.legs).padStart(3)} legs  ${r.outcome}`,
    );
  }
}
