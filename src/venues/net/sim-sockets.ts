import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";

/**
 * The websocket side of a venue simulator: completes upgrades the simulator has authorised, keeps a
 * record per connection, and serves the fault switches (connections counted, all dropped at once).
 */
export class SimSockets<C extends { ws: WebSocket }> {
  private readonly wss = new WebSocketServer({ noServer: true });
  /** The open connections' records. */
  readonly clients = new Set<C>();
  /** The open connections' sockets, which corked() holds. */
  private readonly sockets = new Set<Duplex>();
  private accepted = 0;

  constructor(
    private readonly opts: {
      /** The record of a new connection, made as it opens (a venue that speaks first sends from here). */
      client: (ws: WebSocket) => C;
      onMessage: (client: C, text: string) => void;
      /** Once a connection has closed or been dropped. */
      onClose?: (client: C) => void;
    },
  ) {}

  accept(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.accepted++;
      const client = this.opts.client(ws);
      this.clients.add(client);
      this.sockets.add(socket);
      ws.on("message", (data) => this.opts.onMessage(client, data.toString()));
      ws.on("close", () => {
        this.clients.delete(client);
        this.sockets.delete(socket);
        this.opts.onClose?.(client);
      });
      ws.on("error", () => undefined);
    });
  }

  /**
   * Runs `send` with every connection's socket corked, so that the frames it sends leave in one write a
   * connection: a step of the books sends tens of frames, and a write each kept the simulators' process in
   * the kernel, on a CPU the server then waited for (docs/bench.md, sixteenth pass).
   */
  corked<T>(send: () => T): T {
    const held = [...this.sockets];
    for (const s of held) s.cork();
    try {
      return send();
    } finally {
      for (const s of held) s.uncork();
    }
  }

  /** Connections accepted since start: a reconnection shows as an increase. */
  connections(): number {
    return this.accepted;
  }

  dropAll(): void {
    for (const c of this.clients) c.ws.terminate();
    this.clients.clear();
  }

  close(): void {
    this.dropAll();
    this.wss.close();
  }
}
