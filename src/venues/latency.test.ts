import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LatencyRecorder } from "./latency.ts";

/** The nearest-rank percentile of the last `capacity` samples, by sorting them. */
function expected(samples: readonly number[], capacity: number, q: number): number | undefined {
  const last = [...samples.slice(-capacity)].sort((a, b) => a - b);
  return last.length === 0 ? undefined : last[Math.max(0, Math.ceil(q * last.length) - 1)];
}

describe("LatencyRecorder", () => {
  it("reports the median and the 99th percentile of the most recent samples, whatever came before", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(fc.oneof(fc.integer({ min: 0, max: 60 }), fc.double({ min: 0, max: 1_000, noNaN: true })), { maxLength: 200 }), (capacity, samples) => {
        const r = new LatencyRecorder(capacity);
        samples.forEach((ms, i) => {
          r.record(ms);
          const seen = samples.slice(0, i + 1);
          expect(r.stats()).toEqual({ p50Ms: expected(seen, capacity, 0.5), p99Ms: expected(seen, capacity, 0.99), samples: i + 1 });
        });
      }),
      { numRuns: 500 },
    );
    expect(new LatencyRecorder().stats()).toEqual({ p50Ms: undefined, p99Ms: undefined, samples: 0 });
  });
});
