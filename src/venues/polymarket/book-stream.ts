import WebSocket from "ws";
import type { Clock } from "../../domain/types.ts";
import { parseStreamFrame, type StreamEvent } from "./wire.ts";

export interface BookStreamOptions {
  /** The market channel, e.g. wss://ws-subscriptions-clob.polymarket.com/ws/market. */
  url: string;
  clock: Clock;
  /** With nothing heard for this long the connection is presumed dead and replaced. */
  silenceMs: number;
  /** Polymarket expects a PING at least every 10 s to keep the connection. */
  pingMs: number;
  backoff: { initialMs: number; maxMs: number };
  onEvents(events: StreamEvent[]): void;
}

export type StreamState = "idle" | "connecting" | "open" | "waiting";

/**
 * The market channel of one set of tokens: subscribes, hands every event on, answers silence
 * and disconnection by reconnecting with exponential back-off, and re-subscribes each time so the
 * venue sends fresh snapshots.
 */
export class BookStream {
  private socket: WebSocket | undefined;
  private assetIds: string[] = [];
  private attempt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private stopped = true;
  private state_: StreamState = "idle";
  /** When the current connection subscribed, until its snapshots arrive; a connection that keeps answering PINGs but never sends them is replaced. */
  private awaitingSnapshotSince: number | undefined;
  /** When anything (an event or a PONG) last arrived, ms since the epoch. */
  lastHeardAt: number | undefined;
  /** Connections opened so far; the first is 1. */
  connections = 0;

  constructor(private readonly opts: BookStreamOptions) {}

  get state(): StreamState {
    return this.state_;
  }

  start(assetIds: string[]): void {
    this.assetIds = assetIds;
    this.stopped = false;
    if (assetIds.length > 0) this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    this.socket?.terminate();
    this.socket = undefined;
    this.state_ = "idle";
  }

  private connect(): void {
    this.state_ = "connecting";
    const socket = new WebSocket(this.opts.url, { handshakeTimeout: Math.max(this.opts.silenceMs, 1_000) });
    this.socket = socket;
    let heardSinceOpen = false;
    socket.on("open", () => {
      this.state_ = "open";
      this.connections++;
      this.lastHeardAt = this.opts.clock.now();
      this.awaitingSnapshotSince = this.lastHeardAt;
      socket.send(JSON.stringify({ assets_ids: this.assetIds, type: "market" }));
      clearInterval(this.pingTimer);
      this.pingTimer = setInterval(() => this.tickWatch(socket), this.opts.pingMs);
    });
    socket.on("message", (data, isBinary) => {
      if (isBinary) return;
      this.lastHeardAt = this.opts.clock.now();
      if (!heardSinceOpen) {
        heardSinceOpen = true;
        // a connection that carries data is healthy: the next failure starts the back-off afresh
        this.attempt = 0;
      }
      const text = data.toString();
      if (text === "PONG") return;
      let events: StreamEvent[];
      try {
        events = parseStreamFrame(text);
      } catch {
        // a frame we cannot read is dropped; the books it would have changed age until the next snapshot
        return;
      }
      if (events.some((e) => e.type === "book")) this.awaitingSnapshotSince = undefined;
      this.opts.onEvents(events);
    });
    socket.on("error", () => {
      // 'close' follows every error and schedules the reconnection
    });
    socket.on("close", () => {
      if (this.socket !== socket) return;
      clearInterval(this.pingTimer);
      this.socket = undefined;
      if (!this.stopped) this.scheduleReconnect();
    });
  }

  private tickWatch(socket: WebSocket): void {
    const now = this.opts.clock.now();
    const unanswered = this.awaitingSnapshotSince !== undefined && now - this.awaitingSnapshotSince > this.opts.silenceMs;
    if (now - (this.lastHeardAt ?? 0) > this.opts.silenceMs || unanswered) {
      socket.terminate();
      return;
    }
    if (socket.readyState === WebSocket.OPEN) socket.send("PING");
  }

  private scheduleReconnect(): void {
    this.state_ = "waiting";
    const { initialMs, maxMs } = this.opts.backoff;
    const delay = Math.min(maxMs, initialMs * 2 ** this.attempt);
    this.attempt++;
    this.retryTimer = setTimeout(() => {
      if (!this.stopped) this.connect();
    }, delay);
  }
}
