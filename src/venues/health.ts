import type { LatencyStats, VenueHealth } from "./venue.ts";

/**
 * The health of a venue followed over a stream: down when the adapter judges it unreachable,
 * degraded while the stream is down or the oldest book is older than `freshnessMs` (stale), up
 * otherwise.
 */
export function streamedHealth(h: {
  now: number;
  oldestBookAt: number | undefined;
  streamUp: boolean;
  unreachable: boolean;
  freshnessMs: number;
  latency: LatencyStats;
}): VenueHealth {
  const bookAgeMs = h.oldestBookAt === undefined ? undefined : h.now - h.oldestBookAt;
  const state = h.unreachable ? "down" : !h.streamUp || (bookAgeMs ?? 0) > h.freshnessMs ? "degraded" : "up";
  return { state, latency: h.latency, bookAgeMs };
}
