import WebSocket from "ws";

export type StreamState = "connecting" | "open" | "closed";

/** Where a venue's stream tells of its reconnections and dropped frames: a logger bound to the venue. */
export interface StreamLog {
  info(o: object, msg: string): void;
  warn(o: object, msg: string): void;
}

/** A venue that sends frames we cannot read may send many: one line this often says how many. */
const DROP_LOG_INTERVAL_MS = 10_000;

export interface ReconnectingSocketOptions {
  url: string;
  /** Called for every connection attempt: signed handshakes need a fresh timestamp each time. */
  headers: () => Record<string, string>;
  onOpen: () => void;
  onMessage: (text: string) => void;
  onClose?: (reason: string) => void;
  minDelayMs?: number;
  maxDelayMs?: number;
  log?: StreamLog;
}

/**
 * A WebSocket that comes back: after any close or failed handshake it reconnects with exponential
 * back-off (with jitter, so many clients do not return in step), resetting the back-off once a
 * connection has carried a message: one the venue accepts and drops at once still backs off.
 * The owner resubscribes in onOpen.
 */
export class ReconnectingSocket {
  private ws: WebSocket | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private running = false;
  private state_: StreamState = "closed";
  /** Connections opened so far; tests and health read it to see reconnections. */
  connections = 0;
  /** Frames the owner could not use (see dropped()). */
  droppedFrames = 0;
  private lastDropLogAt = -Infinity;
  private unloggedDrops = 0;

  /** The URL as the log names it: without its query or user, where a venue's API key goes (Opinion's `?apikey=`). */
  private readonly shownUrl: string;

  constructor(private readonly opts: ReconnectingSocketOptions) {
    const { origin, pathname } = new URL(opts.url);
    this.shownUrl = origin + pathname;
  }

  get state(): StreamState {
    return this.state_;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.connect();
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    const ws = this.ws;
    this.ws = undefined;
    this.state_ = "closed";
    if (ws) {
      ws.removeAllListeners();
      ws.on("error", () => undefined);
      ws.terminate();
    }
  }

  send(message: string): boolean {
    if (this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(message);
    return true;
  }

  /**
   * The owner could not use a frame (unreadable, or out of sequence): counted, and logged with the first
   * bytes of the frame, at most once per interval with the number dropped since the line before.
   */
  dropped(why: string, frame: string): void {
    this.droppedFrames++;
    const now = performance.now();
    if (now - this.lastDropLogAt < DROP_LOG_INTERVAL_MS) {
      this.unloggedDrops++;
      return;
    }
    this.opts.log?.warn({ url: this.shownUrl, why, frame: frame.slice(0, 200), dropped_since_last_line: this.unloggedDrops }, "venue stream frame dropped");
    this.lastDropLogAt = now;
    this.unloggedDrops = 0;
  }

  /** Drops the current connection (a protocol error, a stream that stopped talking) and reconnects after back-off. */
  restart(): void {
    this.ws?.terminate();
  }

  private connect(): void {
    if (!this.running) return;
    this.state_ = "connecting";
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.opts.url, { headers: this.opts.headers(), handshakeTimeout: 10_000 });
    } catch (err) {
      this.scheduleReconnect(`cannot connect: ${String(err)}`);
      return;
    }
    this.ws = ws;
    ws.on("open", () => {
      this.connections++;
      this.state_ = "open";
      if (this.connections > 1) this.opts.log?.info({ url: this.shownUrl, connections: this.connections }, "venue stream reconnected");
      this.opts.onOpen();
    });
    ws.on("message", (data) => {
      this.failures = 0;
      this.opts.onMessage(data.toString());
    });
    ws.on("error", () => undefined);
    ws.on("unexpected-response", (_req, res) => {
      this.scheduleReconnect(`handshake refused: HTTP ${res.statusCode}`);
      ws.terminate();
    });
    ws.on("close", (code) => {
      if (this.ws !== ws) return;
      this.scheduleReconnect(`closed (${code})`);
    });
  }

  private scheduleReconnect(reason: string): void {
    this.ws = undefined;
    if (!this.running) return;
    this.state_ = "connecting";
    this.opts.onClose?.(reason);
    if (this.timer) return;
    const min = this.opts.minDelayMs ?? 250;
    const max = this.opts.maxDelayMs ?? 10_000;
    const delay = Math.min(max, min * 2 ** this.failures) * (0.5 + Math.random() / 2);
    this.failures++;
    this.opts.log?.warn({ url: this.shownUrl, reason, attempt: this.failures, retry_in_ms: Math.round(delay) }, "venue stream lost; reconnecting");
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.connect();
    }, delay);
    this.timer.unref();
  }
}
