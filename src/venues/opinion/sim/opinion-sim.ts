import { createHash, randomUUID } from "node:crypto";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { formatMicro } from "../../../domain/money.ts";
import type { Outcome } from "../../../domain/types.ts";
import { MarketCatalog, type CatalogEvent } from "../../../markets/catalog.ts";
import { serveVenueSim, simExchange, SimFaults, type SimReply, type SimRequest, type VenueSim, type VenueSimOptions } from "../../net/sim-server.ts";
import { OPINION_SIM } from "../../simulated/profiles.ts";
import type { VenueMarket } from "../../venue.ts";
import { OPINION_API_KEY_HEADER, OPINION_CHAIN_ID, type OpinionCredentials } from "../signing.ts";
import type { OpinionMarket, OpinionOrderbook } from "../wire.ts";
import { ERRNO_INVALID, ERRNO_NOT_FOUND, OpinionOrderDesk, type DeskMarket } from "./orders.ts";
import { OpinionStream } from "./stream.ts";

/** BNB Chain's USDT (18 decimals), the collateral the simulated markets trade in. */
export const OPINION_QUOTE_TOKEN: Hex = "0x55d398326f99059fF775485246999027B3197955";
/** The simulator's own exchange contract address (Opinion's is served by `GET /quoteToken`; this one is not the venue's). */
export const OPINION_SIM_EXCHANGE: Hex = "0x5F45344126D6488025B0b84A3A8189F2487a7246";
const QUOTE_DECIMALS = 18;
/** Markets the simulated Opinion lists beyond the catalog's: listings of catalog questions for `crossfill events match` to add. */
const OWN_MARKETS = MarketCatalog.load(new URL("./own-markets.json", import.meta.url));
/** The backend's largest page (the SDK's "Backend max page size"). */
const MAX_PAGE = 20;
const ERRNO_UNAUTHORIZED = 10_401;

export type OpinionSimOptions = VenueSimOptions;
export type OpinionSim = VenueSim<OpinionCredentials> & {
  /**
   * Another trader's order takes up to `shares` of what rests of the account's order (by its orderId; the `resting`
   * fault leaves orders resting): a trade the account is in as the maker, listed with a fee of 0. Answers its tradeNo.
   */
  takeResting(orderId: string, shares: bigint): string;
};

/**
 * Opinion's OpenAPI on a loopback port (under `/openapi`, as the venue's base URL): quote tokens,
 * markets, token orderbooks and fee rates, EIP-712 limit orders posted for a Safe, order lookup and
 * listing, cancel, the account's trades, all behind the `apikey` header; and the market websocket
 * with `market.depth.diff`. Backed by the shared simulated exchange with the opinion-sim profile.
 */
export async function startOpinionSim(opts: OpinionSimOptions): Promise<OpinionSim> {
  const { clock, events, exchange, markets } = simExchange(opts, OPINION_SIM, OWN_MARKETS);
  const privateKey = generatePrivateKey();
  const signer = privateKeyToAccount(privateKey).address;
  // the Safe's address is the signer's own in the venue's records: any fixed address derived from it serves here
  const safe = `0x${createHash("sha256").update(`safe:${signer}`).digest("hex").slice(0, 40)}` as Hex;
  const credentials: OpinionCredentials = { apiKey: randomUUID().replaceAll("-", ""), privateKey, multiSigAddress: safe };
  const eventOf = new Map<string, CatalogEvent>();
  for (const e of events) for (const l of e.listings) if (l.venue === OPINION_SIM.id) eventOf.set(l.venueMarketId, e);
  const deskMarket = (marketId: number): DeskMarket | undefined => {
    const m = exchange.market(String(marketId));
    return m && { marketId, slug: m.venueMarketId, title: m.title, tokens: m.outcomeIds };
  };
  const stream: OpinionStream = new OpinionStream(
    exchange,
    (marketId) => {
      const m = exchange.market(String(marketId));
      return m && { slug: m.venueMarketId, yesToken: m.outcomeIds.YES };
    },
    () => faults.switches.streamSilent,
  );
  const faults: SimFaults = new SimFaults(exchange, stream.sockets);
  const desk = new OpinionOrderDesk(exchange, { signer, safe, exchange: OPINION_SIM_EXCHANGE, quoteToken: OPINION_QUOTE_TOKEN, decimals: QUOTE_DECIMALS }, deskMarket, () => clock.now());

  const handle = async (req: SimRequest): Promise<SimReply> => {
    if (!req.path.startsWith("/openapi/")) return { status: 404, body: envelope(ERRNO_NOT_FOUND, `Cannot ${req.method} ${req.path}`) };
    if (req.headers[OPINION_API_KEY_HEADER] !== credentials.apiKey) return { status: 401, body: envelope(ERRNO_UNAUTHORIZED, "invalid apikey") };
    const route = req.path.slice("/openapi".length);
    const q = req.query;
    let m: RegExpExecArray | null;
    if (req.method === "GET" && route === "/quoteToken") {
      return ok({ total: 1, list: [{ id: 1, quoteTokenName: "Tether USD", symbol: "USDT", quoteTokenAddress: OPINION_QUOTE_TOKEN, ctfExchangeAddress: OPINION_SIM_EXCHANGE, decimal: QUOTE_DECIMALS, chainId: String(OPINION_CHAIN_ID), createdAt: 1_735_689_600 }] });
    }
    if (req.method === "GET" && route === "/market") {
      const page = paging(q);
      if (typeof page === "string") return ok(undefined, ERRNO_INVALID, page);
      // the SDK's TopicStatusFilter: "activated", "resolved", or "" for all
      const wanted = ({ activated: "open", resolved: "resolved" } as Record<string, string>)[q.get("status") ?? ""];
      const listed = exchange.markets().filter((mk) => wanted === undefined || mk.status === wanted);
      return ok({ total: listed.length, list: listed.slice(page.from, page.to).map(opinionMarket) });
    }
    if (req.method === "GET" && (m = /^\/market\/(\d+)$/.exec(route))) {
      const market = exchange.market(m[1]!);
      return market ? ok({ data: opinionMarket(market) }) : ok(undefined, ERRNO_NOT_FOUND, `market ${m[1]} not found`);
    }
    if (req.method === "GET" && (route === "/token/orderbook" || route === "/token/fee-rates")) {
      // the OpenAPI requires the chain of a token's fee rates, snake_case as its token_id (the generated client's GetTokenFeeRatesData)
      if (route === "/token/fee-rates" && q.get("chain_id") !== String(OPINION_CHAIN_ID)) return ok(undefined, ERRNO_INVALID, `chain_id must be ${OPINION_CHAIN_ID}`);
      const token = q.get("token_id") ?? "";
      const found = exchange.markets().flatMap((mk) => (Object.keys(mk.outcomeIds) as Outcome[]).filter((o) => mk.outcomeIds[o] === token).map((o) => ({ market: mk, outcome: o })))[0];
      if (!found) return ok(undefined, ERRNO_NOT_FOUND, `token ${token} not found`);
      if (route === "/token/fee-rates") return ok({ tokenId: token, makerFeeBps: "0", takerFeeBps: String(found.market.feeModel.ratePpm / 100n) });
      return ok(orderbook(found.market, found.outcome));
    }
    if (req.method === "POST" && route === "/order") {
      const out = await desk.create(req.body);
      if (faults.switches.ackLost) return "cut";
      return out.kind === "created" ? ok({ orderData: out.order }) : ok(undefined, out.errno, out.errmsg);
    }
    if (req.method === "GET" && route === "/order") {
      const page = paging(q);
      if (typeof page === "string") return ok(undefined, ERRNO_INVALID, page);
      const status = q.get("status");
      const orders = desk.list(q.has("marketId") ? Number(q.get("marketId")) : undefined, status ? Number(status) : undefined);
      return ok({ total: orders.length, list: orders.slice(page.from, page.to) });
    }
    if (req.method === "GET" && (m = /^\/order\/([^/]+)$/.exec(route))) {
      const order = desk.order(decodeURIComponent(m[1]!));
      return order ? ok({ orderData: order }) : ok(undefined, ERRNO_NOT_FOUND, "order not found");
    }
    if (req.method === "POST" && route === "/order/cancel") {
      const out = desk.cancel((req.body as { orderId?: unknown } | undefined)?.orderId);
      return ok({ result: out.errno === 0 }, out.errno, out.errmsg);
    }
    if (req.method === "GET" && route === "/trade") {
      const page = paging(q);
      if (typeof page === "string") return ok(undefined, ERRNO_INVALID, page);
      const marketId = q.get("marketId");
      const trades = desk.trades().filter((t) => marketId === null || String(t.marketId) === marketId);
      return ok({ total: trades.length, list: trades.slice(page.from, page.to) });
    }
    return { status: 404, body: envelope(ERRNO_NOT_FOUND, `Cannot ${req.method} ${req.path}`) };
  };

  function opinionMarket(market: VenueMarket): OpinionMarket {
    const event = eventOf.get(market.venueMarketId)!;
    const lifecycle = exchange.lifecycle(market.venueMarketId)!;
    // the SDK's TopicStatus: 2 activated, 3 resolving (trading stopped, outcome pending), 4 resolved
    const status = lifecycle.state === "open" ? 2 : lifecycle.state === "resolved" ? 4 : 3;
    return {
      marketId: Number(market.venueMarketId),
      marketTitle: market.title,
      marketType: 0,
      status,
      statusEnum: ["", "Created", "Activated", "Resolving", "Resolved"][status],
      yesTokenId: market.outcomeIds.YES,
      noTokenId: market.outcomeIds.NO,
      yesLabel: "Yes",
      noLabel: "No",
      resultTokenId: lifecycle.state === "resolved" ? market.outcomeIds[lifecycle.outcome] : "",
      resolvedAt: lifecycle.state === "resolved" ? Math.floor(lifecycle.at / 1000) : 0,
      cutoffAt: Math.floor(Date.parse(market.closeTime) / 1000),
      createdAt: 1_735_689_600,
      quoteToken: OPINION_QUOTE_TOKEN,
      chainId: String(OPINION_CHAIN_ID),
      conditionId: createHash("sha256").update(`condition:${market.venueMarketId}`).digest("hex"),
      questionId: createHash("sha256").update(`question:${market.venueMarketId}`).digest("hex"),
      rules: event.description,
      slug: event.eventId,
      volume: formatMicro(market.volume),
      labels: [],
      labelIds: [],
    };
  }

  function orderbook(market: VenueMarket, outcome: Outcome): OpinionOrderbook {
    const book = exchange.book(market.venueMarketId, outcome);
    const level = (l: { price: bigint; shares: bigint }) => ({ price: formatMicro(l.price), size: formatMicro(l.shares) });
    return { market: market.venueMarketId, tokenId: market.outcomeIds[outcome], timestamp: clock.now(), bids: (book?.bids ?? []).map(level), asks: (book?.asks ?? []).map(level) };
  }

  const sim = await serveVenueSim(opts, {
    profile: OPINION_SIM,
    exchange,
    markets,
    faults,
    streams: stream.sockets,
    credentials,
    restPath: "/openapi",
    wsPath: "",
    handle,
    errorBody: (status, _code, message) => envelope(status, message),
    upgrade: (req, socket, head) => {
      const url = new URL(req.url ?? "/", "http://sim");
      if (url.pathname !== "/" || url.searchParams.get("apikey") !== credentials.apiKey) {
        socket.end("HTTP/1.1 401 Unauthorized\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
        return;
      }
      stream.sockets.accept(req, socket, head);
    },
  });
  return { ...sim, takeResting: (orderId, shares) => desk.takeResting(orderId, shares) };
}

function envelope(errno: number, errmsg: string, result?: unknown): unknown {
  return { errno, errmsg, result: result ?? null };
}

/** Opinion answers HTTP 200 with its own errno (assumed for refusals: the SDK reads errno from 200 answers). */
function ok(result: unknown, errno = 0, errmsg = ""): SimReply {
  return { status: 200, body: envelope(errno, errmsg, result) };
}

function paging(q: URLSearchParams): { from: number; to: number } | string {
  const page = Number(q.get("page") ?? "1");
  const limit = Number(q.get("limit") ?? "10");
  if (!Number.isInteger(page) || page < 1 || !Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) return `page must be ≥ 1 and limit between 1 and ${MAX_PAGE}`;
  return { from: (page - 1) * limit, to: page * limit };
}
