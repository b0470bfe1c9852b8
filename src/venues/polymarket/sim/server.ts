import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { keccak256, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { systemClock, type Clock, type Outcome } from "../../../domain/types.ts";
import { MarketCatalog, simulatedVenueEvents, type CatalogEvent, type CatalogListing } from "../../../markets/catalog.ts";
import { SimExchange } from "../../simulated/exchange.ts";
import { Rng, seedFor } from "../../simulated/prng.ts";
import { POLYMARKET_SIM } from "../../simulated/profiles.ts";
import { l2Signature, sameSignature, type PolymarketCredentials } from "../auth.ts";
import { formatDecimal } from "../decimal.ts";
import { faultFor, noFaults, type PolymarketSimFaults } from "./faults.ts";
import { SimOrderBook, type Answer, type SimMarketRef } from "./orders.ts";
import { renderBook, renderMarket } from "./render.ts";
import { MarketChannel } from "./stream.ts";

export interface PolymarketSimOptions {
  catalog: MarketCatalog;
  seed: number;
  /** Multiplies the venue's latency profile: 1 is realistic, 0 answers at once. */
  latencyScale: number;
  clock?: Clock;
  /** 0 or absent: any free loopback port. */
  port?: number;
  /** Books move every this many ms. */
  tickMs?: number;
  /** Markets per page of `GET /markets` (Polymarket pages by the thousand; small pages exercise the cursor). */
  pageSize?: number;
}

export interface PolymarketSim {
  /** REST base URL, e.g. http://127.0.0.1:40123. */
  url: string;
  /** The market channel, e.g. ws://127.0.0.1:40123/ws/market. */
  wsUrl: string;
  /** The one account the simulator knows: its API key and the wallet that signs its orders. */
  credentials: PolymarketCredentials;
  faults: PolymarketSimFaults;
  stop(): Promise<void>;
}

const VENUE = POLYMARKET_SIM.id;
/** Markets the simulated Polymarket lists beyond the catalog's: new questions for `crossfill events match` to place. */
const OWN_MARKETS = MarketCatalog.load(new URL("./own-markets.json", import.meta.url));
const UNAUTHORIZED: Answer = { status: 401, body: { error: "Unauthorized/Invalid api key" } };

/** Starts a Polymarket CLOB simulator on loopback: REST and the market WebSocket, over the shared matching engine. */
export async function startPolymarketSim(opts: PolymarketSimOptions): Promise<PolymarketSim> {
  const clock = opts.clock ?? systemClock;
  const pageSize = opts.pageSize ?? 4;
  const credentials = simCredentials(opts.seed);
  const address = privateKeyToAccount(credentials.privateKey).address;
  const events = simulatedVenueEvents(opts.catalog, OWN_MARKETS, VENUE);
  const exchange = new SimExchange({ profile: POLYMARKET_SIM, events, seed: opts.seed, clock });
  const latencyRng = new Rng(seedFor(opts.seed, VENUE, "wire-latency"));
  const switches = noFaults();

  const listed: { event: CatalogEvent; listing: CatalogListing }[] = [];
  const tokens = new Map<string, SimMarketRef & { listing: CatalogListing }>();
  for (const event of events) {
    const listing = event.listings.find((l) => l.venue === VENUE);
    if (!listing) continue;
    listed.push({ event, listing });
    const m = exchange.market(listing.venueMarketId)!;
    const feeRateBps = m.feeModel.ratePpm / 100n;
    for (const outcome of ["YES", "NO"] as Outcome[]) {
      tokens.set(listing.outcomeIds[outcome], { conditionId: listing.venueMarketId, outcome, feeRateBps, tickSize: m.tickSize, minOrderShares: m.minOrderShares, listing });
    }
  }
  const lastTrade = new Map<string, bigint>();
  const tokenBook = (assetId: string) => {
    const ref = tokens.get(assetId);
    const book = ref && exchange.book(ref.conditionId, ref.outcome);
    if (!ref || !book) return undefined;
    return { summary: renderBook(book, assetId, exchange.market(ref.conditionId)!, lastTrade.get(assetId)), bids: book.bids, asks: book.asks };
  };
  const orders = new SimOrderBook(exchange, clock, (id) => tokens.get(id));

  const held = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    void handle(req, res).catch(() => send(res, { status: 500, body: { error: "Internal Server Error" } }));
  });
  const channel = new MarketChannel({ server, clock, faults: switches, book: tokenBook });
  // Polymarket sends deltas as the book changes, and whole snapshots after a trade
  const publish = (venueMarketId: string, snapshot: boolean) => {
    const l = listed.find((x) => x.listing.venueMarketId === venueMarketId)?.listing;
    if (l) channel.publish([l.outcomeIds.YES, l.outcomeIds.NO], snapshot);
  };
  exchange.onBook(({ venueMarketId }) => publish(venueMarketId, false));

  const faults: PolymarketSimFaults = {
    get: () => ({ ...switches, rateLimit: switches.rateLimit && { ...switches.rateLimit } }),
    set(change) {
      Object.assign(switches, change);
      exchange.faults.partial = switches.partialFills;
    },
    reset() {
      Object.assign(switches, noFaults());
      exchange.faults.partial = false;
      for (const res of held) res.destroy();
    },
    dropStreams: () => channel.dropAll(),
    streamConnections: () => channel.connections,
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    // the admin routes are the simulator's own, outside Polymarket's API and untouched by its faults
    if (req.url?.startsWith("/_sim/")) return send(res, admin(req.method ?? "GET", req.url, body.json));
    const fault = faultFor(switches);
    if (fault?.kind === "hold") {
      held.add(res);
      res.on("close", () => held.delete(res));
      return;
    }
    const wait = switches.latencyMs + Math.max(0, POLYMARKET_SIM.latency.meanMs + POLYMARKET_SIM.latency.sdMs * latencyRng.normal()) * opts.latencyScale;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (fault) return send(res, fault, fault.headers);
    const url = new URL(req.url ?? "/", "http://sim");
    const path = url.pathname;
    const method = req.method ?? "GET";
    const token = url.searchParams.get("token_id") ?? "";
    if (method === "GET" && path === "/") return send(res, { status: 200, body: "OK" });
    if (method === "GET" && path === "/time") return send(res, { status: 200, body: Math.floor(clock.now() / 1000) });
    if (method === "GET" && path === "/markets") return send(res, marketsPage(url.searchParams.get("next_cursor") ?? "MA=="));
    if (method === "GET" && path.startsWith("/markets/")) {
      const entry = listed.find((x) => x.listing.venueMarketId === path.slice("/markets/".length));
      return send(res, entry ? { status: 200, body: marketJson(entry) } : { status: 404, body: { error: "market not found" } });
    }
    if (method === "GET" && path.startsWith("/clob-markets/")) {
      const entry = listed.find((x) => x.listing.venueMarketId === path.slice("/clob-markets/".length));
      return send(res, entry ? { status: 200, body: clobMarketInfo(entry.listing) } : { status: 404, body: { error: "market not found" } });
    }
    if (method === "GET" && path === "/book") return send(res, bookAnswer(token));
    if (method === "POST" && path === "/books") {
      const ids = Array.isArray(body.json) ? body.json.map((x: { token_id?: unknown }) => x?.token_id) : undefined;
      if (!ids || ids.some((x) => typeof x !== "string")) return send(res, { status: 400, body: { error: "Invalid payload" } });
      return send(res, { status: 200, body: ids.map((id) => tokenBook(id as string)?.summary).filter(Boolean) });
    }
    if (method === "GET" && (path === "/tick-size" || path === "/neg-risk" || path === "/fee-rate")) {
      const ref = tokens.get(token);
      if (!ref) return send(res, { status: 400, body: { error: "Invalid token id" } });
      if (path === "/tick-size") return send(res, { status: 200, body: { minimum_tick_size: Number(ref.tickSize) / 1e6 } });
      if (path === "/neg-risk") return send(res, { status: 200, body: { neg_risk: false } });
      return send(res, { status: 200, body: { base_fee: Number(ref.feeRateBps) } });
    }
    const authed = (method === "POST" && path === "/order") || path.startsWith("/data/") || path.startsWith("/order/");
    if (!authed) return send(res, { status: 404, body: { error: "not found" } });
    if (!authorized(req, method, path, body.text)) return send(res, UNAUTHORIZED);
    if (method === "POST" && path === "/order") {
      const answer = await orders.post(body.json, { apiKey: credentials.apiKey, address }, (conditionId) => publish(conditionId, true));
      if (answer.status === 200 && switches.ackLost) {
        req.socket.destroy();
        return;
      }
      return send(res, answer);
    }
    if (method === "GET" && (path.startsWith("/data/order/") || path.startsWith("/order/"))) {
      return send(res, orders.order(path.slice(path.lastIndexOf("/") + 1), credentials.apiKey));
    }
    if (method === "GET" && path === "/data/trades") return send(res, orders.tradesPage(url.searchParams, credentials.apiKey));
    return send(res, { status: 404, body: { error: "not found" } });
  }

  function admin(method: string, path: string, change: unknown): Answer {
    if (method === "GET" && path === "/_sim/faults") return { status: 200, body: faults.get() };
    if (method === "POST" && path === "/_sim/faults") {
      if (typeof change !== "object" || change === null) return { status: 400, body: { error: "send the switches to change as a JSON object" } };
      const unknown = Object.keys(change).filter((k) => !(k in noFaults()));
      if (unknown.length > 0) return { status: 400, body: { error: `unknown switches: ${unknown.join(", ")}` } };
      faults.set(change);
      return { status: 200, body: faults.get() };
    }
    if (method === "POST" && path === "/_sim/faults/reset") {
      faults.reset();
      return { status: 200, body: faults.get() };
    }
    if (method === "POST" && path === "/_sim/streams/drop") {
      faults.dropStreams();
      return { status: 200, body: { dropped: true } };
    }
    return { status: 404, body: { error: "not found" } };
  }

  function authorized(req: IncomingMessage, method: string, path: string, body: string): boolean {
    const h = (name: string) => String(req.headers[name.toLowerCase()] ?? "");
    if (h("POLY_API_KEY") !== credentials.apiKey || h("POLY_PASSPHRASE") !== credentials.passphrase) return false;
    if (h("POLY_ADDRESS").toLowerCase() !== address.toLowerCase() || !/^\d+$/.test(h("POLY_TIMESTAMP"))) return false;
    return sameSignature(h("POLY_SIGNATURE"), l2Signature(credentials.secret, h("POLY_TIMESTAMP"), method, path, body));
  }

  function marketJson({ event, listing }: (typeof listed)[number]) {
    const m = exchange.market(listing.venueMarketId)!;
    const book = exchange.book(listing.venueMarketId, "YES");
    const mid = book?.bids[0] && book.asks[0] ? (((book.bids[0].price + book.asks[0].price) / 2n) / m.tickSize) * m.tickSize : undefined;
    return renderMarket(event, listing, m, m.feeModel.ratePpm / 100n, mid);
  }

  /** `GET /clob-markets/{condition_id}`, in its abbreviated field names. */
  function clobMarketInfo(listing: CatalogListing) {
    const m = exchange.market(listing.venueMarketId)!;
    return {
      gst: null,
      r: {},
      t: [
        { t: listing.outcomeIds.YES, o: "Yes" },
        { t: listing.outcomeIds.NO, o: "No" },
      ],
      mos: Number(formatDecimal(m.minOrderShares)),
      mts: Number(formatDecimal(m.tickSize)),
      mbf: 0,
      tbf: Number(m.feeModel.ratePpm / 100n),
      rfqe: false,
      ibce: false,
      fd: { r: Number(formatDecimal(m.feeModel.ratePpm)), e: m.feeModel.kind === "polymarket" ? m.feeModel.exponent : 1, to: true },
      oas: 0,
    };
  }

  /** Polymarket's cursor is the base64 of the offset; "LTE=" (base64 of -1) marks the end. */
  function marketsPage(cursor: string): Answer {
    const offset = Number(Buffer.from(cursor, "base64").toString("utf8"));
    if (!Number.isInteger(offset) || offset < 0) return { status: 400, body: { error: "invalid next_cursor" } };
    const data = listed.slice(offset, offset + pageSize).map(marketJson);
    const next = offset + pageSize < listed.length ? String(offset + pageSize) : "-1";
    return { status: 200, body: { limit: pageSize, count: data.length, next_cursor: Buffer.from(next).toString("base64"), data } };
  }

  function bookAnswer(token: string): Answer {
    if (!/^\d+$/.test(token)) return { status: 400, body: { error: "Invalid token id" } };
    const b = tokenBook(token);
    return b ? { status: 200, body: b.summary } : { status: 404, body: { error: "No orderbook exists for the requested token id" } };
  }

  const timer = setInterval(() => exchange.step(), opts.tickMs ?? 150);
  timer.unref();
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/ws/market`,
    credentials,
    faults,
    async stop() {
      clearInterval(timer);
      for (const res of held) res.destroy();
      await channel.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The simulator's account, derived from the seed so a restarted simulator accepts the same credentials. */
export function simCredentials(seed: number): PolymarketCredentials {
  const bytes = (label: string) => createHash("sha256").update(`polymarket-sim:${seed}:${label}`).digest();
  const id = bytes("key").toString("hex");
  return {
    apiKey: `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20, 32)}`,
    secret: bytes("secret").toString("base64url"),
    passphrase: bytes("passphrase").toString("hex"),
    privateKey: keccak256(toHex(`polymarket-sim:${seed}:wallet`)),
  };
}

async function readBody(req: IncomingMessage): Promise<{ text: string; json: unknown }> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { text, json };
}

function send(res: ServerResponse, a: Answer, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(a.status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(a.body));
}
