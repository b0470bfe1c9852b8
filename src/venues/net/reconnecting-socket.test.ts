import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { ReconnectingSocket, type StreamLog } from "./reconnecting-socket.ts";

type Line = { level: "info" | "warn"; o: Record<string, unknown>; msg: string };

function recorder(): StreamLog & { lines: Line[] } {
  const lines: Line[] = [];
  return {
    lines,
    info: (o, msg) => lines.push({ level: "info", o: o as Record<string, unknown>, msg }),
    warn: (o, msg) => lines.push({ level: "warn", o: o as Record<string, unknown>, msg }),
  };
}

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("ReconnectingSocket's log", () => {
  let server: WebSocketServer | undefined;
  let socket: ReconnectingSocket | undefined;
  afterEach(async () => {
    socket?.stop();
    await new Promise((r) => server?.close(r));
  });

  it("tells of a lost connection, the retry, and the reconnection", async () => {
    let accepted = 0;
    server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    // The first connection is dropped by the venue once it has said something; the second stays.
    server.on("connection", (ws) => {
      ws.send("hello");
      if (++accepted === 1) setTimeout(() => ws.terminate(), 20);
    });
    await new Promise((r) => server!.once("listening", r));
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const log = recorder();
    socket = new ReconnectingSocket({ url, headers: () => ({}), onOpen: () => undefined, onMessage: () => undefined, minDelayMs: 10, log });
    socket.start();
    await until(() => socket!.connections === 2);

    const lost = log.lines.find((l) => l.msg === "venue stream lost; reconnecting");
    expect(lost).toMatchObject({ level: "warn", o: { url, attempt: 1 } });
    expect(String(lost!.o.reason)).toMatch(/^closed/);
    expect(log.lines.find((l) => l.msg === "venue stream reconnected")).toMatchObject({ level: "info", o: { url, connections: 2 } });
    // the first connection is no news
    expect(log.lines.filter((l) => l.msg === "venue stream reconnected")).toHaveLength(1);
  });

  it("names the stream by its URL without the query, where a venue's API key goes (Opinion's ?apikey=)", async () => {
    server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    server.on("connection", (ws) => ws.terminate());
    await new Promise((r) => server!.once("listening", r));
    const bare = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`;
    const log = recorder();
    socket = new ReconnectingSocket({ url: `${bare}?apikey=v3nue-k3y`, headers: () => ({}), onOpen: () => undefined, onMessage: () => undefined, minDelayMs: 10, log });
    socket.start();
    socket.dropped("unreadable frame", "{}");
    await until(() => log.lines.some((l) => l.msg === "venue stream lost; reconnecting"));
    expect(log.lines.length).toBeGreaterThanOrEqual(2);
    for (const line of log.lines) expect(line.o.url).toBe(bare);
    expect(JSON.stringify(log.lines)).not.toContain("v3nue-k3y");
  });

  it("logs dropped frames with their first bytes, at most one line per interval, counting them all", () => {
    const log = recorder();
    socket = new ReconnectingSocket({ url: "ws://127.0.0.1:9", headers: () => ({}), onOpen: () => undefined, onMessage: () => undefined, log });
    socket.dropped("unreadable frame", "x".repeat(500));
    socket.dropped("unreadable frame", "{}");
    socket.dropped("sequence gap", "{}");
    expect(socket.droppedFrames).toBe(3);
    const drops = log.lines.filter((l) => l.msg === "venue stream frame dropped");
    expect(drops).toHaveLength(1);
    expect(drops[0]).toMatchObject({ level: "warn", o: { why: "unreadable frame", dropped_since_last_line: 0 } });
    expect(drops[0]!.o.frame).toHaveLength(200);
  });
});
