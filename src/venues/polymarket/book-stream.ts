import type { Clock } from "../../domain/types.ts";
import { ReconnectingSocket, type StreamLog, type StreamState } from "../net/reconnecting-socket.ts";
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
  log?: StreamLog;
}

/**
 * The market channel of one set of tokens: hands every event on, and re-subscribes on each
 * (re)connection so the venue sends fresh snapshots. A connection that goes silent, keeps
 * answering PINGs but never sends the snapshots, or sends a frame that cannot be read, is replaced.
 */
export class BookStream {
  private readonly socket: ReconnectingSocket;
  private assetIds: string[] = [];
  private pingTimer: NodeJS.Timeout | undefined;
  /** When the current connection subscribed, until its snapshots arrive. */
  private awaitingSnapshotSince: number | undefined;
  /** When anything (an event or a PONG) last arrived, ms since the epoch. */
  lastHeardAt: number | undefined;

  constructor(private readonly opts: BookStreamOptions) {
    this.socket = new ReconnectingSocket({
      url: opts.url,
      // the market channel is public
      headers: () => ({}),
      onOpen: () => this.opened(),
      onMessage: (text) => this.received(text),
      onClose: () => clearInterval(this.pingTimer),
      minDelayMs: opts.backoff.initialMs,
      maxDelayMs: opts.backoff.maxMs,
      ...(opts.log ? { log: opts.log } : {}),
    });
  }

  get state(): StreamState {
    return this.socket.state;
  }

  /** Connections opened so far; the first is 1. */
  get connections(): number {
    return this.socket.connections;
  }

  start(assetIds: string[]): void {
    this.assetIds = assetIds;
    if (assetIds.length > 0) this.socket.start();
  }

  stop(): void {
    clearInterval(this.pingTimer);
    this.socket.stop();
  }

  private opened(): void {
    this.lastHeardAt = this.opts.clock.now();
    this.awaitingSnapshotSince = this.lastHeardAt;
    this.socket.send(JSON.stringify({ assets_ids: this.assetIds, type: "market" }));
    clearInterval(this.pingTimer);
    this.pingTimer = setInterval(() => this.watch(), this.opts.pingMs);
  }

  private received(text: string): void {
    this.lastHeardAt = this.opts.clock.now();
    if (text === "PONG") return;
    let events: StreamEvent[];
    try {
      events = parseStreamFrame(text);
    } catch (err) {
      // A frame we cannot read is dropped, and with it a change to books it does not say: the connection is replaced,
      // so the venue sends every book afresh. Kept, the books it changed would read as current, on a connection that
      // carries no further change of theirs (a market that does not trade) and answers every PING.
      this.socket.dropped(`unreadable frame: ${err instanceof Error ? err.message : String(err)}`, text);
      this.socket.restart();
      return;
    }
    if (events.some((e) => e.type === "book")) this.awaitingSnapshotSince = undefined;
    this.opts.onEvents(events);
  }

  private watch(): void {
    const now = this.opts.clock.now();
    const unanswered = this.awaitingSnapshotSince !== undefined && now - this.awaitingSnapshotSince > this.opts.silenceMs;
    if (now - (this.lastHeardAt ?? 0) > this.opts.silenceMs || unanswered) this.socket.restart();
    else this.socket.send("PING");
  }
}
