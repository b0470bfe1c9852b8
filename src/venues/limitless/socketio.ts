/**
 * The slice of Socket.IO v4 (Engine.IO protocol 4, websocket transport only, text packets) that the
 * Limitless market stream uses, framed by hand: no Socket.IO client is a dependency of crossfill.
 *
 * An Engine.IO packet is one text frame, its type a leading digit: 0 open (handshake JSON),
 * 1 close, 2 ping, 3 pong, 4 message. A message carries a Socket.IO packet: its own type digit
 * (0 connect, 1 disconnect, 2 event, 4 connect error), then the namespace when it is not "/"
 * ("/markets,"), then an optional ack id, then JSON ("42/markets,[\"orderbookUpdate\",{…}]").
 * In protocol 4 the server pings and the client answers.
 */

export const ENGINE_IO_PATH = "/socket.io/";
export const PING = "2";
export const PONG = "3";

export interface EngineOpen {
  sid: string;
  upgrades: string[];
  pingInterval: number;
  pingTimeout: number;
  maxPayload: number;
}

export type Packet =
  | { kind: "open"; handshake: EngineOpen }
  | { kind: "close" }
  | { kind: "ping" }
  | { kind: "pong" }
  | { kind: "connect"; nsp: string; data: unknown }
  | { kind: "disconnect"; nsp: string }
  | { kind: "event"; nsp: string; name: string; args: unknown[] }
  | { kind: "connect_error"; nsp: string; data: unknown };

/** The websocket URL of a Socket.IO server at `base` (wss://ws.limitless.exchange → …/socket.io/?EIO=4&transport=websocket). */
export function engineIoUrl(base: string): string {
  const url = new URL(base);
  url.pathname = url.pathname.replace(/\/$/, "") + ENGINE_IO_PATH;
  url.search = "?EIO=4&transport=websocket";
  return url.toString();
}

export function encodeOpen(handshake: EngineOpen): string {
  return "0" + JSON.stringify(handshake);
}

export function encodeConnect(nsp: string, data?: unknown): string {
  return "40" + prefix(nsp) + (data === undefined ? "" : JSON.stringify(data));
}

export function encodeDisconnect(nsp: string): string {
  return "41" + prefix(nsp);
}

export function encodeEvent(nsp: string, name: string, ...args: unknown[]): string {
  return "42" + prefix(nsp) + JSON.stringify([name, ...args]);
}

export function encodeConnectError(nsp: string, message: string): string {
  return "44" + prefix(nsp) + JSON.stringify({ message });
}

function prefix(nsp: string): string {
  return nsp === "/" ? "" : `${nsp},`;
}

/** One frame as a packet; undefined for what this client has no use for (noop, upgrade, binary, acks) or cannot read. */
export function decode(text: string): Packet | undefined {
  switch (text[0]) {
    case "0": {
      const handshake = parseJson(text.slice(1)) as EngineOpen | undefined;
      return handshake && typeof handshake.pingInterval === "number" ? { kind: "open", handshake } : undefined;
    }
    case "1":
      return { kind: "close" };
    case "2":
      return { kind: "ping" };
    case "3":
      return { kind: "pong" };
    case "4":
      return decodeSocketIo(text.slice(1));
    default:
      return undefined;
  }
}

function decodeSocketIo(text: string): Packet | undefined {
  const type = text[0];
  let rest = text.slice(1);
  let nsp = "/";
  if (rest.startsWith("/")) {
    const comma = rest.indexOf(",");
    nsp = comma < 0 ? rest : rest.slice(0, comma);
    rest = comma < 0 ? "" : rest.slice(comma + 1);
  }
  rest = rest.replace(/^\d+/, "");
  const data = rest === "" ? undefined : parseJson(rest);
  switch (type) {
    case "0":
      return { kind: "connect", nsp, data };
    case "1":
      return { kind: "disconnect", nsp };
    case "2":
      if (!Array.isArray(data) || typeof data[0] !== "string") return undefined;
      return { kind: "event", nsp, name: data[0], args: data.slice(1) };
    case "4":
      return { kind: "connect_error", nsp, data };
    default:
      return undefined;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
