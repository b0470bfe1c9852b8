import type { LatencyStats } from "./venue.ts";

/**
 * Keeps the most recent round-trip times of one venue and reports their percentiles, so routing
 * by speed follows what the venue does now rather than what it was configured to do.
 */
export class LatencyRecorder {
  /** The samples as they arrived, a ring once full. */
  private readonly window: number[] = [];
  /** The same samples in ascending order, kept so as each arrives: percentiles are read on every quote and order, and sorting the window again after each sample showed in their profile. */
  private readonly sorted: number[] = [];
  private next = 0;
  private total = 0;
  private cached: LatencyStats | undefined;

  constructor(private readonly capacity = 1_000) {}

  record(ms: number): void {
    if (this.window.length < this.capacity) {
      this.window.push(ms);
    } else {
      this.sorted.splice(lowerBound(this.sorted, this.window[this.next]!), 1);
      this.window[this.next] = ms;
    }
    this.sorted.splice(lowerBound(this.sorted, ms), 0, ms);
    this.next = (this.next + 1) % this.capacity;
    this.total++;
    this.cached = undefined;
  }

  stats(): LatencyStats {
    if (this.sorted.length === 0) return { p50Ms: undefined, p99Ms: undefined, samples: 0 };
    this.cached ??= { p50Ms: nearestRank(this.sorted, 0.5), p99Ms: nearestRank(this.sorted, 0.99), samples: this.total };
    return this.cached;
  }
}

/** The first index of `sorted` whose value is not below `value`. */
function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function nearestRank(sorted: readonly number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}
