import { afterEach, beforeEach, vi } from "vitest";

/** Runs the file's tests on fake time (performance.now and setTimeout): the waits asserted are the code's, not a loaded machine's pauses. */
export function onFakeTime(): void {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });
}

/** When `turn` resolves, in ms since the fake clock started, running the timers it waits on. */
export async function resolvedAt(turn: Promise<unknown>): Promise<number> {
  const at = turn.then(() => performance.now());
  await vi.runAllTimersAsync();
  return at;
}
