import { randomBytes } from "node:crypto";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import type { WebSocket } from "ws";
import { SimSockets } from "./sim-sockets.ts";

/** A simulator's sockets behind a server, the server's side of a connection, and its client's reads as raw TCP. */
async function connected(): Promise<{ sockets: SimSockets<{ ws: WebSocket }>; serverSide: () => Duplex; chunks: Buffer[] }> {
  const sockets = new SimSockets<{ ws: WebSocket }>({ client: (ws) => ({ ws }), onMessage: () => undefined });
  let serverSide: Duplex | undefined;
  const server = createServer().on("upgrade", (req, socket, head) => {
    serverSide = socket;
    sockets.accept(req, socket, head);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  opened.push({ sockets, server });
  const { port } = server.address() as AddressInfo;
  const raw = await new Promise<Socket>((resolve, reject) =>
    request({ port, host: "127.0.0.1", headers: { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": randomBytes(16).toString("base64") } })
      .on("upgrade", (_res, socket) => resolve(socket))
      .on("error", reject)
      .end(),
  );
  const chunks: Buffer[] = [];
  raw.on("data", (d: Buffer) => chunks.push(d));
  while (sockets.clients.size === 0) await new Promise((r) => setTimeout(r, 5));
  return { sockets, serverSide: () => serverSide!, chunks };
}

const opened: { sockets: SimSockets<{ ws: WebSocket }>; server: Server }[] = [];

describe("SimSockets.corked", () => {
  afterEach(async () => {
    for (const { sockets, server } of opened.splice(0)) {
      sockets.close();
      await new Promise((r) => server.close(r));
    }
  });

  it("holds the frames of one step until it returns, then sends them whole and in order", async () => {
    const c = await connected();
    const client = [...c.sockets.clients][0]!;
    const frames = Array.from({ length: 20 }, (_, i) => JSON.stringify({ seq: i, price: "0.48" }));
    // Unmasked text frames of under 126 bytes: 0x81, the length, the text.
    const bytes = frames.reduce((n, f) => n + 2 + f.length, 0);
    const held = c.sockets.corked(() => {
      for (const f of frames) client.ws.send(f);
      return c.serverSide().writableLength;
    });
    expect(held).toBe(bytes);
    while (c.chunks.reduce((n, b) => n + b.length, 0) < bytes) await new Promise((r) => setTimeout(r, 5));
    const all = Buffer.concat(c.chunks);
    const read: string[] = [];
    for (let at = 0; at < all.length; at += 2 + all[at + 1]!) read.push(all.subarray(at + 2, at + 2 + all[at + 1]!).toString());
    expect(read).toEqual(frames);
  });

  it("uncorks when the step throws", async () => {
    const c = await connected();
    expect(() => c.sockets.corked(() => {
      [...c.sockets.clients][0]!.ws.send("before");
      throw new Error("step failed");
    })).toThrow("step failed");
    while (c.chunks.length === 0) await new Promise((r) => setTimeout(r, 5));
    expect(c.chunks[0]!.subarray(2).toString()).toBe("before");
  });
});
