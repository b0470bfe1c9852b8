import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** How often the worker copies the WAL's new frames into the database. */
const EVERY_MS = 1000;
/**
 * A WAL of this many frames (4 KiB pages, ~64 MiB) after a passive checkpoint is one that writes never
 * left idle long enough to start over: the worker then waits for a moment between writes (a RESTART
 * checkpoint, which holds the writers back for as long as its last frames take) so that the next write
 * starts the WAL from its beginning.
 */
const RESTART_FRAMES = 16_384;
/** The WAL file is cut back to this size when it starts over, after a burst grew it. */
export const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

export interface CheckpointerOptions {
  /** How long the worker's RESTART waits for a writer to finish, as the store's own busy timeout. */
  busyTimeoutMs: number;
  /** The worker failed (it could not open the database, or a checkpoint threw): the caller checkpoints again itself. */
  onFailure(error: Error): void;
}

export interface Checkpointer {
  /** Stops the worker and closes its connection; resolves once it has. */
  stop(): Promise<void>;
}

/**
 * The worker's code, CommonJS so that it runs as written under tsx, vitest and dist/ alike: its own
 * connection to the database, a passive checkpoint every EVERY_MS (it takes no lock the writer needs),
 * and a RESTART when a WAL grew past RESTART_FRAMES.
 */
const WORKER = `
const { parentPort, workerData: d } = require("node:worker_threads");
const Database = require(d.module);
// SQLite's errors reach the parent as plain Errors: a SqliteError would arrive as an object of its code alone.
const plainly = (run) => {
  try {
    return run();
  } catch (e) {
    throw new Error(e.code ? e.code + ": " + e.message : e.message);
  }
};
const db = plainly(() => new Database(d.file, { fileMustExist: true }));
plainly(() => {
  db.pragma("busy_timeout = " + d.busyTimeoutMs);
  db.pragma("journal_size_limit = " + d.walSizeLimit);
});
const timer = setInterval(() => plainly(() => {
  const [passive] = db.pragma("wal_checkpoint(PASSIVE)");
  if (passive.log >= d.restartFrames) db.pragma("wal_checkpoint(RESTART)");
}), d.everyMs);
parentPort.once("message", () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Checkpoints the SQLite database at `file` from a worker thread, for a connection that has turned its
 * own automatic checkpoints off. SQLite's automatic checkpoint runs inside the commit that fills the WAL
 * past 1,000 pages: it copies them into the database and syncs it, ~10–15 ms on this machine's disk
 * during which the server's event loop stood still, every few seconds under orders (docs/bench.md).
 * In WAL mode a checkpoint on another connection runs beside the writer; the worker's thread is the
 * only one that waits for the disk.
 */
export function startCheckpointer(file: string, opts: CheckpointerOptions): Checkpointer {
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: {
      module: createRequire(import.meta.url).resolve("better-sqlite3"),
      file,
      busyTimeoutMs: opts.busyTimeoutMs,
      walSizeLimit: WAL_SIZE_LIMIT,
      everyMs: EVERY_MS,
      restartFrames: RESTART_FRAMES,
    },
  });
  // A store left open does not keep its process alive; a checkpoint cut short by the process's end is safe.
  worker.unref();
  let stopping = false;
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  worker.once("error", (e) => {
    if (!stopping) opts.onFailure(e);
  });
  return {
    async stop() {
      stopping = true;
      // Held by its process until it has closed its connection.
      worker.ref();
      worker.postMessage("stop");
      await exited;
    },
  };
}
