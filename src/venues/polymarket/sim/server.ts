import { createHash } from "node:crypto";
import { toHex } from "viem";
import { keccak256 } from "../../../evm/keccak.ts";
import { privateKeyToAccount } from "viem/accounts";
import type { FeeModel } from "../../../domain/fees.ts";
import { formatMicro } from "../../../domain/money.ts";
import type { Outcome } from "../../../domain/types.ts";
import { MarketCatalog, type CatalogEvent, type CatalogListing } from "../../../markets/catalog.ts";
import { serveVenueSim, simExchange, SimFaults, type SimReply, type SimRequest, type VenueSim, type VenueSimOptions } from "../../net/sim-server.ts";
import { POLYMARKET_SIM } from "../../simulated/profiles.ts";
import type { PolymarketCredentials } from "../auth.ts";
import { SimAccounts } from "./accounts.ts";
import { SimOrderBook, type Answer, type SimMarketRef } from "./orders.ts";
import { cursorPage, renderBook, renderMarket } from "./render.ts";
import { MarketChannel } from "./stream.ts";

export interface PolymarketSimOptions extends VenueSimOptions {
  /** Items per page of `GET /markets` and `GET /data/trades` (Polymarket pages by the hundred or more; small pages exercise the cursor). */
  pageSize?: number;
  /** How long a trade takes to settle on chain: its transaction hash shows this long after the match (1 s by default). */
  settleMs?: number;
  /**
   * Fee exponents by condition id, served as the market's `fd.e` and charged on its fills; exponent 0
   * is served as an `fd` without `e`, which clob-client-v2 reads as 0 (default: exponent 1 everywhere).
   */
  feeExponents?: Record<string, 0 | 1 | 2>;
}

export type PolymarketSim = VenueSim<PolymarketCredentials> & {
  /** Makes a trade's settlement fail for good: the venue then lists it as FAILED, with no transaction. */
  failSettlement(tradeId: string): void;
  /**
   * Another trader's order takes up to `shares` of what rests of the account's order (by its id, the order hash;
   * the `resting` fault leaves orders resting): a trade the account is in as a maker. Answers the trade id.
   */
  takeResting(orderId: string, shares: bigint): string;
  /** Changes a market's tick, as Polymarket does near 0 and 1: served from now on, its book quoted on it, and announced on the market channel (`tick_size_change`). */
  changeTick(conditionId: string, tickSize: bigint): void;
  /**
   * Pauses the exchange as Polymarket does (docs.polymarket.com/resources/error-codes): `disabled` answers every order
   * and cancel 503, `cancel-only` every new order; undefined trades again.
   */
  pauseTrading(mode: keyof typeof PAUSED | undefined): void;
  /**
   * Restarts the matching engine as Polymarket does (docs.polymarket.com/trading/matching-engine): the next `requests`
   * order requests (`POST`/`DELETE /order`, `/data/…`, `/order/…`) answer 425 Too Early, doing nothing.
   */
  restartEngine(requests: number): void;
};

/** The simulator's words for a 425: the docs give the status ("Too Early") and no body. */
const RESTARTING = "Too Early: the matching engine is restarting";

/** The exchange's 503 answers while paused (docs.polymarket.com/resources/error-codes): nothing of the request is done. */
const PAUSED = {
  disabled: "Trading is currently disabled. Check polymarket.com for updates",
  "cancel-only": "Trading is currently cancel-only. New orders are not accepted, but cancels are allowed.",
} as const;

const VENUE = POLYMARKET_SIM.id;
/** Markets the simulated Polymarket lists beyond the catalog's: new questions for `crossfill events match` to place. */
const OWN_MARKETS = MarketCatalog.load(new URL("./own-markets.json", import.meta.url));
/** `GET /version`: the CLOB's protocol version, which clob-client-v2 reads to choose how to sign. */
const VERSION = 2;
/** The market channel's path. */
const WS_PATH = "/ws/market";

/** Starts a Polymarket CLOB simulator on loopback: REST and the market WebSocket, over the shared matching engine. */
export async function startPolymarketSim(opts: PolymarketSimOptions): Promise<PolymarketSim> {
  const { clock, events, exchange, markets } = simExchange(opts, POLYMARKET_SIM, OWN_MARKETS);
  for (const [id, exponent] of Object.entries(opts.feeExponents ?? {})) {
    const m = exchange.market(id);
    if (m?.feeModel.kind === "polymarket") exchange.setFeeModel(id, { ...m.feeModel, exponent });
  }
  const pageSize = opts.pageSize ?? 4;
  const credentials = simCredentials(opts.seed);
  const address = privateKeyToAccount(credentials.privateKey).address;
  const accounts = new SimAccounts(opts.seed, { apiKey: credentials.apiKey, secret: credentials.secret, passphrase: credentials.passphrase, address });

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
  const orders = new SimOrderBook(exchange, clock, (id) => tokens.get(id), pageSize, opts.settleMs ?? 1_000);
  let paused: keyof typeof PAUSED | undefined;
  let restarting = 0;

  const channel: MarketChannel = new MarketChannel({ clock, silent: () => faults.switches.streamSilent, book: tokenBook });
  const faults: SimFaults = new SimFaults(exchange, channel.sockets);
  // Polymarket sends deltas as the book changes, and whole snapshots after a trade
  const publish = (venueMarketId: string, snapshot: boolean) => {
    const l = listed.find((x) => x.listing.venueMarketId === venueMarketId)?.listing;
    if (l) channel.publish([l.outcomeIds.YES, l.outcomeIds.NO], snapshot);
  };
  exchange.onBook(({ venueMarketId }) => publish(venueMarketId, false));

  async function handle(req: SimRequest): Promise<SimReply> {
    const { method, path } = req;
    const token = req.query.get("token_id") ?? "";
    if (method === "GET" && path === "/") return { status: 200, body: "OK" };
    if (method === "GET" && path === "/time") return { status: 200, body: Math.floor(clock.now() / 1000) };
    if (method === "GET" && path === "/version") return { status: 200, body: { version: VERSION } };
    if (method === "POST" && path === "/auth/api-key") return accounts.create(req.headers);
    if (method === "GET" && path === "/auth/derive-api-key") return accounts.derive(req.headers);
    if (method === "GET" && path === "/markets") return marketsPage(req.query.get("next_cursor") ?? "MA==");
    if (method === "GET" && path.startsWith("/markets/")) {
      const entry = listed.find((x) => x.listing.venueMarketId === path.slice("/markets/".length));
      return entry ? { status: 200, body: marketJson(entry) } : { status: 404, body: { error: "market not found" } };
    }
    if (method === "GET" && path.startsWith("/clob-markets/")) {
      const entry = listed.find((x) => x.listing.venueMarketId === path.slice("/clob-markets/".length));
      return entry ? { status: 200, body: clobMarketInfo(entry.listing) } : { status: 404, body: { error: "market not found" } };
    }
    if (method === "GET" && path.startsWith("/markets-by-token/")) {
      const ref = tokens.get(path.slice("/markets-by-token/".length));
      if (!ref) return { status: 404, body: { error: "market not found" } };
      return { status: 200, body: { condition_id: ref.conditionId, primary_token_id: ref.listing.outcomeIds.YES, secondary_token_id: ref.listing.outcomeIds.NO } };
    }
    if (method === "GET" && path === "/book") return bookAnswer(token);
    if (method === "POST" && path === "/books") {
      const ids = Array.isArray(req.body) ? req.body.map((x: { token_id?: unknown }) => x?.token_id) : undefined;
      if (!ids || ids.some((x) => typeof x !== "string")) return { status: 400, body: { error: "Invalid payload" } };
      return { status: 200, body: ids.map((id) => tokenBook(id as string)?.summary).filter(Boolean) };
    }
    if (method === "GET" && (path === "/tick-size" || path === "/neg-risk")) {
      const ref = tokens.get(token);
      if (!ref) return { status: 400, body: { error: "Invalid token id" } };
      if (path === "/tick-size") return { status: 200, body: { minimum_tick_size: Number(ref.tickSize) / 1e6 } };
      return { status: 200, body: { neg_risk: false } };
    }
    const authed = ((method === "POST" || method === "DELETE") && path === "/order") || path.startsWith("/data/") || path.startsWith("/order/");
    if (!authed) return { status: 404, body: { error: "not found" } };
    const caller = accounts.authorize(req.headers, req.method, req.path, req.rawBody);
    if ("status" in caller) return caller;
    if (restarting > 0) {
      restarting--;
      return { status: 425, body: { error: RESTARTING } };
    }
    if (paused && path === "/order" && (method === "POST" || paused === "disabled")) return { status: 503, body: { error: PAUSED[paused] } };
    if (method === "POST" && path === "/order") {
      const answer = await orders.post(req.body, caller, (conditionId) => publish(conditionId, true));
      return answer.status === 200 && faults.switches.ackLost ? "cut" : answer;
    }
    if (method === "DELETE" && path === "/order") return orders.cancel(req.body, caller.apiKey);
    if (method === "GET" && (path.startsWith("/data/order/") || path.startsWith("/order/"))) {
      return orders.order(path.slice(path.lastIndexOf("/") + 1), caller.apiKey);
    }
    if (method === "GET" && path === "/data/trades") return orders.tradesPage(req.query, caller.apiKey);
    return { status: 404, body: { error: "not found" } };
  }

  function marketJson({ event, listing }: (typeof listed)[number]) {
    const m = exchange.market(listing.venueMarketId)!;
    const book = exchange.book(listing.venueMarketId, "YES");
    const mid = book?.bids[0] && book.asks[0] ? (((book.bids[0].price + book.asks[0].price) / 2n) / m.tickSize) * m.tickSize : undefined;
    return renderMarket(event, listing, m, exchange.lifecycle(listing.venueMarketId)!, m.feeModel.ratePpm / 100n, mid);
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
      mos: Number(formatMicro(m.minOrderShares)),
      mts: Number(formatMicro(m.tickSize)),
      mbf: 0,
      tbf: Number(m.feeModel.ratePpm / 100n),
      rfqe: false,
      ibce: false,
      nr: false,
      fd: feeDetails(m.feeModel),
      oas: 0,
    };
  }

  function marketsPage(cursor: string): Answer {
    const page = cursorPage(listed, cursor, pageSize);
    return page ? { status: 200, body: { ...page, data: page.data.map(marketJson) } } : { status: 400, body: { error: "invalid next_cursor" } };
  }

  function bookAnswer(token: string): Answer {
    if (!/^\d+$/.test(token)) return { status: 400, body: { error: "Invalid token id" } };
    const b = tokenBook(token);
    return b ? { status: 200, body: b.summary } : { status: 404, body: { error: "No orderbook exists for the requested token id" } };
  }

  const sim = await serveVenueSim(opts, {
    profile: POLYMARKET_SIM,
    exchange,
    markets,
    faults,
    streams: channel.sockets,
    credentials,
    restPath: "",
    wsPath: WS_PATH,
    handle,
    errorBody: (_status, _code, message) => ({ error: message }),
    upgrade: (req, socket, head) => {
      if (new URL(req.url ?? "/", "http://sim").pathname !== WS_PATH) {
        socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
        return;
      }
      channel.sockets.accept(req, socket, head);
    },
  });
  const changeTick = (conditionId: string, tickSize: bigint) => {
    const l = listed.find((x) => x.listing.venueMarketId === conditionId)?.listing;
    const before = exchange.market(conditionId)?.tickSize;
    if (!l || before === undefined) throw new Error(`the simulator lists no market ${conditionId}`);
    exchange.setTick(conditionId, tickSize);
    for (const id of [l.outcomeIds.YES, l.outcomeIds.NO]) tokens.get(id)!.tickSize = tickSize;
    channel.tickChanged([l.outcomeIds.YES, l.outcomeIds.NO], conditionId, before, tickSize);
  };
  return { ...sim, failSettlement: (tradeId) => orders.failSettlement(tradeId), takeResting: (orderId, shares) => orders.takeResting(orderId, shares), changeTick, pauseTrading: (mode) => (paused = mode), restartEngine: (requests) => (restarting = requests) };
}

/** A market's `fd`: its fee curve, left without `e` when the exponent is 0, as a market clob-client-v2 reads as exponent 0. */
function feeDetails(model: FeeModel) {
  const exponent = model.kind === "polymarket" ? model.exponent : 1;
  return { r: Number(formatMicro(model.ratePpm)), ...(exponent === 0 ? {} : { e: exponent }), to: true };
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
