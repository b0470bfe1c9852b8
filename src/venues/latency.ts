import type { LatencyStats } from "./venue.ts";

/**
 * Keeps the most recent round-trip times of one venue and reports their percentiles, so routing
 * by speed follows what the venue does now rather than what it was configured to do.
 */
export class LatencyRecorder {
  private readonly window: number[] = [];
  private next = 0;
  private total = 0;
  /** Percentiles are read on every quote and order but change only when a sample arrives. */
  private cached: LatencyStats | undefined;

  constructor(private readonly capacity = 1_000) {}

  record(ms: number): void {
    if (this.window.length < this.capacity) this.window.push(ms);
    else this.window[this.next] = ms;
    this.next = (this.next + 1) % this.capacity;
    this.total++;
    this.cached = undefined;
  }

  stats(): LatencyStats {
    if (this.cached) return this.cached;
    if (this.window.length === 0) return { p50Ms: undefined, p99Ms: undefined, samples: 0 };
    const sorted = [...this.window].sort((a, b) => a - b);
    this.cached = { p50Ms: nearestRank(sorted, 0.5), p99Ms: nearestRank(sorted, 0.99), samples: this.total };
    return this.cached;
  }
}

function nearestRank(sorted: number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}
