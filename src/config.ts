import { hostname } from "node:os";
import { resolve } from "node:path";
import { readFileSync } from "node:fs";
import { parseMicro, type Micro } from "./domain/money.ts";
import { VENUE_NAMES, type VenueEndpoints, type VenueName } from "./venues/start.ts";
import { MAX_CHILD_ORDER_TTL_MS } from "./venues/venue.ts";

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** The PostgreSQL database of the store; unset = SQLite in dataDir. */
  databaseUrl: string | undefined;
  /** Redis shared by every instance (replay cache, rate limits); unset = the store and this process. */
  redisUrl: string | undefined;
  /** Put before every Redis key, so that several deployments (or test servers) can share one Redis. */
  redisPrefix: string;
  /** Requests a minute per API key (or session, or address); 0 = no limit. */
  rateLimitPerMinute: number;
  /** How long a stop waits for in-flight requests (and so orders) and the reconciler before it leaves them to recovery. */
  shutdownGraceMs: number;
  /** How long a client may take to send a whole request, headers and body; a slower one is answered 408 and its connection closed. */
  requestTimeoutMs: number;
  /** An external EVM chain; unset = the embedded dev chain in dataDir. */
  chainRpcUrl: string | undefined;
  operatorPrivateKey: `0x${string}` | undefined;
  /** How long a JSON-RPC call to the chain may take before its outcome counts as unknown. */
  chainRpcTimeoutMs: number;
  /** Blocks per eth_getLogs request: the Vault's events, USDC transfers (a provider may bound a request's range or its logs). */
  chainLogRangeBlocks: number;
  faucet: Micro;
  /** Blocks a deposit's transfer must be under before it is credited; unset: 0 on the dev chain, 12 elsewhere. */
  depositConfirmations: number | undefined;
  maxOrder: Micro;
  simSeed: number;
  /** Multiplies the simulated venues' latency profiles (0 = no added latency). */
  simLatencyScale: number;
  /** The simulators resolve the catalog's next open event every this many seconds (0 = never by themselves). */
  simResolveEveryS: number;
  logLevel: string;
  trustProxy: boolean;
  venues: VenueName[];
  venueEndpoints: VenueEndpoints;
  /** How long a child order stays valid at its venue. */
  childOrderTtlMs: number;
  /** How far a venue's clock may trail ours before a child order it does not know counts as never placed. */
  expirySkewMs: number;
  /**
   * This instance among those sharing a store: it leases the orders it works on. The same instance
   * started again (same host and port) takes its own leases back at once; another waits for them to run out.
   */
  instanceId: string;
  /** How often recovery looks at open orders, and how long an order must have been untouched before it does. */
  reconcileIntervalMs: number;
  /** How often the venues are asked whether an undecided event has resolved (RESOLUTION_POLL_MS). */
  resolutionPollMs: number;
  /** Shifts the server's clock (ms, either way, up to a week): the fault suite's clock jumps, and its days past a lock's deadline. */
  clockSkewMs: number;
  /** `<checkpoint>:<n>`: the process kills itself with SIGKILL the n-th time the order flow passes that checkpoint. For the fault suite. */
  killAt: string | undefined;
}

/** Reads the configuration from the environment; a bad value stops start-up with a sentence that names it. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const chainRpcUrl = rpcUrl(env.CHAIN_RPC_URL);
  const operator = env.OPERATOR_PRIVATE_KEY || undefined;
  if (chainRpcUrl && !operator) throw new Error("CHAIN_RPC_URL is set but OPERATOR_PRIVATE_KEY is not: the router needs the operator key of that chain.");
  if (operator && !/^0x[0-9a-fA-F]{64}$/.test(operator)) throw new Error("OPERATOR_PRIVATE_KEY must be 0x followed by 64 hex digits.");
  const port = int(env, "PORT", 8080, 0, 65535);
  const dataDir = resolve(env.DATA_DIR || "./data");
  return {
    port,
    host: env.HOST || "127.0.0.1",
    dataDir,
    databaseUrl: databaseUrl(env.DATABASE_URL),
    redisUrl: redisUrl(env.REDIS_URL),
    redisPrefix: env.REDIS_PREFIX || "crossfill:",
    rateLimitPerMinute: int(env, "RATE_LIMIT_PER_MINUTE", 1_200, 0, 1_000_000_000),
    shutdownGraceMs: int(env, "SHUTDOWN_GRACE_MS", 15_000, 0, 600_000),
    requestTimeoutMs: int(env, "REQUEST_TIMEOUT_MS", 30_000, 100, 600_000),
    chainRpcUrl,
    operatorPrivateKey: operator as `0x${string}` | undefined,
    chainRpcTimeoutMs: int(env, "CHAIN_RPC_TIMEOUT_MS", 15_000, 100, 600_000),
    chainLogRangeBlocks: int(env, "CHAIN_LOG_RANGE_BLOCKS", 10_000, 1, 1_000_000),
    faucet: usdc(env, "DEV_FAUCET_USDC", "10000"),
    depositConfirmations: env.DEPOSIT_CONFIRMATIONS ? int(env, "DEPOSIT_CONFIRMATIONS", 0, 0, 10_000) : undefined,
    maxOrder: usdc(env, "MAX_ORDER_USDC", "100000"),
    simSeed: int(env, "SIM_SEED", 42, 0, 2 ** 31 - 1),
    simLatencyScale: num(env, "SIM_LATENCY_SCALE", 1),
    simResolveEveryS: int(env, "SIM_RESOLVE_EVERY_S", 0, 0, 31_536_000),
    logLevel: logLevel(env.LOG_LEVEL),
    trustProxy: env.TRUST_PROXY === "1" || env.TRUST_PROXY === "true",
    venues: venueNames(env.VENUES),
    venueEndpoints: venueEndpoints(env),
    childOrderTtlMs: int(env, "CHILD_ORDER_TTL_MS", 30_000, 1_000, MAX_CHILD_ORDER_TTL_MS),
    expirySkewMs: int(env, "EXPIRY_SKEW_MS", 20_000, 0, 3_600_000),
    // A port chosen by the system differs at each start, so such an instance is named by its data directory.
    instanceId: env.INSTANCE_ID || `${hostname()}:${port === 0 ? dataDir : port}`,
    reconcileIntervalMs: int(env, "RECONCILE_INTERVAL_MS", 5_000, 100, 3_600_000),
    resolutionPollMs: int(env, "RESOLUTION_POLL_MS", 60_000, 0, 86_400_000),
    clockSkewMs: int(env, "CLOCK_SKEW_MS", 0, -WEEK_MS, WEEK_MS),
    killAt: env.CROSSFILL_KILL_AT || undefined,
  };
}

/** The farthest CLOCK_SKEW_MS moves the server's clock: past a lock's deadline (a day) with room to spare. */
const WEEK_MS = 7 * 86_400_000;

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** pino's levels: it refuses any other at start, in words that do not name LOG_LEVEL. */
function logLevel(raw: string | undefined): string {
  if (raw === undefined || raw === "") return "info";
  if (!LOG_LEVELS.includes(raw)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")} (got ${JSON.stringify(raw)}).`);
  return raw;
}

/** Only PostgreSQL is reached by URL: any other scheme is a mistake to report, not to read as SQLite. */
function databaseUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (!/^postgres(ql)?:\/\//.test(raw)) throw new Error("DATABASE_URL must be a postgres:// or postgresql:// URL (unset, the store is SQLite in DATA_DIR).");
  return raw;
}

const HTTP = ["http:", "https:"] as const;
const WS = ["ws:", "wss:"] as const;

/**
 * The URL setting `name`, written with one of `schemes` (without it, "localhost:8545" parses as a URL of the scheme
 * "localhost:"). Not printed back: a provider's or a venue's key may be in its path or query.
 */
function url(name: string, raw: string, schemes: readonly string[], example: string): string {
  if (!schemes.some((s) => raw.toLowerCase().startsWith(`${s}//`)) || !URL.canParse(raw)) {
    throw new Error(`${name} must be a URL beginning ${schemes.map((s) => `${s}//`).join(" or ")}, like ${example} (it is not printed: a key may be in it).`);
  }
  return raw;
}

function rpcUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  return url("CHAIN_RPC_URL", raw, HTTP, "http://127.0.0.1:8545");
}

function redisUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (!/^rediss?:\/\//.test(raw)) throw new Error("REDIS_URL must be a redis:// or rediss:// URL (unset, the replay cache lives in the store and rate limits in each process).");
  return raw;
}

function venueNames(raw: string | undefined): VenueName[] {
  if (raw === undefined || raw.trim() === "") return [...VENUE_NAMES];
  const names = [...new Set(raw.split(",").map((s) => s.trim()).filter(Boolean))];
  const unknown = names.filter((n) => !(VENUE_NAMES as readonly string[]).includes(n));
  if (unknown.length > 0 || names.length === 0) throw new Error(`VENUES must list some of ${VENUE_NAMES.join(", ")} (got ${JSON.stringify(raw)}).`);
  return names as VenueName[];
}

/** A venue whose *_BASE_URL is set is the real one, and needs its credentials; otherwise its simulator runs. */
export function venueEndpoints(env: NodeJS.ProcessEnv): VenueEndpoints {
  const need = (name: string): string => {
    const v = env[name];
    if (!v) throw new Error(`${name} is required when the venue's *_BASE_URL is set.`);
    return v;
  };
  const endpoint = (name: string, schemes: readonly string[], example: string): string => url(name, need(name), schemes, example);
  const out: VenueEndpoints = {};
  if (env.POLYMARKET_BASE_URL) {
    out.polymarket = {
      baseUrl: endpoint("POLYMARKET_BASE_URL", HTTP, "https://clob.polymarket.com"),
      wsUrl: endpoint("POLYMARKET_WS_URL", WS, "wss://ws-subscriptions-clob.polymarket.com/ws/market"),
      credentials: {
        apiKey: need("POLYMARKET_API_KEY"),
        secret: need("POLYMARKET_SECRET"),
        passphrase: need("POLYMARKET_PASSPHRASE"),
        privateKey: need("POLYMARKET_PRIVATE_KEY") as `0x${string}`,
      },
    };
  }
  if (env.KALSHI_BASE_URL) {
    out.kalshi = {
      baseUrl: endpoint("KALSHI_BASE_URL", HTTP, "https://external-api.kalshi.com/trade-api/v2"),
      wsUrl: endpoint("KALSHI_WS_URL", WS, "wss://external-api.kalshi.com/trade-api/ws/v2"),
      credentials: { keyId: need("KALSHI_KEY_ID"), privateKeyPem: readFileSync(need("KALSHI_PRIVATE_KEY_FILE"), "utf8") },
    };
  }
  if (env.LIMITLESS_BASE_URL) {
    const ownerId = Number(need("LIMITLESS_OWNER_ID"));
    if (!Number.isSafeInteger(ownerId) || ownerId < 0) throw new Error("LIMITLESS_OWNER_ID must be the account's numeric owner id.");
    out.limitless = {
      baseUrl: endpoint("LIMITLESS_BASE_URL", HTTP, "https://api.limitless.exchange"),
      wsUrl: endpoint("LIMITLESS_WS_URL", WS, "wss://ws.limitless.exchange"),
      credentials: {
        apiKey: need("LIMITLESS_API_KEY"),
        secret: need("LIMITLESS_SECRET"),
        privateKey: need("LIMITLESS_PRIVATE_KEY") as `0x${string}`,
        ownerId,
      },
    };
  }
  if (env.OPINION_BASE_URL) {
    out.opinion = {
      baseUrl: endpoint("OPINION_BASE_URL", HTTP, "https://openapi.opinion.trade/openapi"),
      wsUrl: endpoint("OPINION_WS_URL", WS, "wss://ws.opinion.trade"),
      credentials: {
        apiKey: need("OPINION_API_KEY"),
        privateKey: need("OPINION_PRIVATE_KEY") as `0x${string}`,
        multiSigAddress: need("OPINION_MULTISIG_ADDRESS") as `0x${string}`,
      },
    };
  }
  return out;
}

function int(env: NodeJS.ProcessEnv, name: string, dflt: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return dflt;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < min || v > max) throw new Error(`${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(raw)}).`);
  return v;
}

function num(env: NodeJS.ProcessEnv, name: string, dflt: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return dflt;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a non-negative number (got ${JSON.stringify(raw)}).`);
  return v;
}

function usdc(env: NodeJS.ProcessEnv, name: string, dflt: string): Micro {
  try {
    return parseMicro((env[name] || dflt).trim(), name);
  } catch {
    throw new Error(`${name} must be a USDC amount with at most 6 decimals (got ${JSON.stringify(env[name])}).`);
  }
}
