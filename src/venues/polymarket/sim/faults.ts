/** Faults the simulator injects on the wire (the conformance suite's FaultSwitches, implemented for Polymarket). */
export interface PolymarketSimFaultSwitches {
  latencyMs: number;
  timeout: boolean;
  serverErrors: number;
  rateLimit: { count: number; retryAfterSeconds: number } | null;
  ackLost: boolean;
  partialFills: boolean;
  streamSilent: boolean;
}

export interface PolymarketSimFaults {
  /** The switches as they are now (a copy). */
  get(): PolymarketSimFaultSwitches;
  set(change: Partial<PolymarketSimFaultSwitches>): void;
  reset(): void;
  /** Terminates every WebSocket connection now. */
  dropStreams(): void;
  /** WebSocket connections accepted since start. */
  streamConnections(): number;
}

export function noFaults(): PolymarketSimFaultSwitches {
  return { latencyMs: 0, timeout: false, serverErrors: 0, rateLimit: null, ackLost: false, partialFills: false, streamSilent: false };
}

/**
 * What the fault switches decide for one REST request before it is routed, counting down the
 * one-shot switches: `respond` answers in place of the venue, `hold` never answers.
 */
export function faultFor(s: PolymarketSimFaultSwitches): { kind: "respond"; status: number; body: unknown; headers?: Record<string, string> } | { kind: "hold" } | undefined {
  if (s.rateLimit && s.rateLimit.count > 0) {
    const retryAfter = s.rateLimit.retryAfterSeconds;
    s.rateLimit = s.rateLimit.count > 1 ? { ...s.rateLimit, count: s.rateLimit.count - 1 } : null;
    return { kind: "respond", status: 429, body: { error: "Too Many Requests" }, headers: { "retry-after": String(retryAfter) } };
  }
  if (s.serverErrors > 0) {
    s.serverErrors--;
    return { kind: "respond", status: 500, body: { error: "Internal Server Error" } };
  }
  if (s.timeout) return { kind: "hold" };
  return undefined;
}
