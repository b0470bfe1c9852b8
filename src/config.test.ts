import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.ts";

describe("loadConfig: LOG_LEVEL", () => {
  it("takes pino's levels, info by default", () => {
    expect(loadConfig({}).logLevel).toBe("info");
    for (const level of ["fatal", "error", "warn", "info", "debug", "trace", "silent"]) expect(loadConfig({ LOG_LEVEL: level }).logLevel).toBe(level);
  });

  it("refuses another value with a sentence naming LOG_LEVEL and its values, not pino's own error at start", () => {
    expect(() => loadConfig({ LOG_LEVEL: "verbose" })).toThrow('LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "verbose").');
  });
});

describe("loadConfig: a venue's URLs", () => {
  const polymarket = { POLYMARKET_API_KEY: "k", POLYMARKET_SECRET: "s", POLYMARKET_PASSPHRASE: "p", POLYMARKET_PRIVATE_KEY: `0x${"1".repeat(64)}` };

  it("takes http(s) for the API and ws(s) for the stream", () => {
    const env = { ...polymarket, POLYMARKET_BASE_URL: "https://clob.polymarket.com", POLYMARKET_WS_URL: "wss://ws-subscriptions-clob.polymarket.com/ws" };
    expect(loadConfig(env).venueEndpoints.polymarket).toMatchObject({ baseUrl: env.POLYMARKET_BASE_URL, wsUrl: env.POLYMARKET_WS_URL });
  });

  it.each([
    ["POLYMARKET_BASE_URL", "clob.polymarket.com/k3y", "wss://ws.example", "POLYMARKET_BASE_URL must be a URL beginning http:// or https://, like https://clob.polymarket.com (it is not printed: a key may be in it)."],
    ["POLYMARKET_BASE_URL", "wss://clob.example/k3y", "wss://ws.example", "POLYMARKET_BASE_URL must be a URL beginning http:// or https://, like https://clob.polymarket.com (it is not printed: a key may be in it)."],
    ["POLYMARKET_WS_URL", "https://clob.example", "https://ws.example/k3y", "POLYMARKET_WS_URL must be a URL beginning ws:// or wss://, like wss://ws-subscriptions-clob.polymarket.com/ws/market (it is not printed: a key may be in it)."],
  ])("refuses %s %s at start, naming it without its value (a key may be in it)", (_name, base, ws, message) => {
    expect(() => loadConfig({ ...polymarket, POLYMARKET_BASE_URL: base, POLYMARKET_WS_URL: ws })).toThrow(message);
  });
});

describe("loadConfig: CHAIN_RPC_URL", () => {
  const operator = `0x${"ab".repeat(32)}`;

  it("takes an http:// or https:// URL, a provider's key in its path included", () => {
    for (const url of ["http://127.0.0.1:8545", "https://rpc.example.com/v2/key-123"]) expect(loadConfig({ CHAIN_RPC_URL: url, OPERATOR_PRIVATE_KEY: operator }).chainRpcUrl).toBe(url);
  });

  it("refuses one without its scheme, or that is no URL, with a sentence naming it and not printing it (it may hold a key), instead of Invalid URL at the first call", () => {
    for (const url of ["localhost:8545", "rpc.example.com/v2/key-123", "ws://127.0.0.1:8545", "http://[::1:8545"]) {
      expect(() => loadConfig({ CHAIN_RPC_URL: url, OPERATOR_PRIVATE_KEY: operator })).toThrow(/^CHAIN_RPC_URL must be a URL beginning http:\/\/ or https:\/\/, like http:\/\/127\.0\.0\.1:8545 \(it is not printed: a key may be in it\)\.$/);
    }
  });
});
