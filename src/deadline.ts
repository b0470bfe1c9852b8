/**
 * Runs `work` with a signal that aborts once `ms` have passed (with a DOMException named TimeoutError, as
 * AbortSignal.timeout's), and clears its timer as soon as `work` settles. AbortSignal.timeout keeps its timer
 * and a weak reference to the signal for the whole `ms`, whether the request ended or not: at several HTTP
 * requests an order, each with a timeout of seconds, those outlived the young generation's collections and
 * were copied and promoted (docs/bench.md, sixteenth pass).
 */
export async function withDeadline<T>(ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${ms} ms`, "TimeoutError")), ms);
  try {
    return await work(controller.signal);
  } finally {
    clearTimeout(timer);
  }
}
