import { afterEach, describe, expect, it, vi } from "vitest";
import { startRewritingProxy } from "../../test/helpers/rewriting-proxy.ts";
import { AppError } from "../domain/errors.ts";
import { MarketCatalog, type CatalogListing } from "../markets/catalog.ts";
import { KalshiVenue, startKalshiSim } from "./kalshi/index.ts";
import { LimitlessVenue, startLimitlessSim } from "./limitless/index.ts";
import type { StreamLog } from "./net/reconnecting-socket.ts";
import type { SimFaults } from "./net/sim-server.ts";
import { OpinionVenue, startOpinionSim } from "./opinion/index.ts";
import { PolymarketVenue, startPolymarketSim } from "./polymarket/index.ts";
import type { Venue, VenueMarket } from "./venue.ts";

const catalog = MarketCatalog.load();

type Listing = CatalogListing & { open: boolean };

/** The catalog's listings on a simulator's venue (`venue`-sim), and the open ones of the markets only the simulator lists, which discover() finds. */
function listingsOf(venue: string): { listed: Listing[]; found: Listing[] } {
  const on = (events: ReturnType<MarketCatalog["events"]>) => events.flatMap((e) => e.listings.filter((l) => l.venue === `${venue}-sim`).map((l) => ({ ...l, open: e.status === "open" })));
  const listed = on(catalog.events());
  const ids = new Set(listed.map((l) => l.venueMarketId));
  const found = on(MarketCatalog.load(new URL(`./${venue}/sim/own-markets.json`, import.meta.url)).events()).filter((l) => l.open && !ids.has(l.venueMarketId));
  return { listed, found };
}

const running: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of running.splice(0).reverse()) await r.stop();
});

type Discovering = Venue & { discover(): Promise<VenueMarket[]> };
type SimOf = { url: string; wsUrl: string; faults: SimFaults; stop(): Promise<void> };

/**
 * A venue that states, for some markets, what its adapter cannot model: its simulator behind a proxy that
 * rewrites those answers (`unmodelled`). `leftOut` are the catalog's markets it touches and `kept` one it
 * does not; `newLeftOut` and `newKept` the same among the markets discover() finds.
 */
interface Case {
  name: string;
  /** The venue's simulator, and its adapter reading the simulator's REST at `baseUrl` (through the proxy) and its stream directly. */
  start(): Promise<{ sim: SimOf; adapter(baseUrl: string, log: StreamLog): Discovering }>;
  unmodelled(path: string, body: unknown): unknown;
  leftOut: string[];
  kept: string;
  newLeftOut: string;
  newKept: string;
}

const kalshiListings = listingsOf("kalshi");
const inSeries = (ls: CatalogListing[], series: string) => ls.filter((l) => l.venueMarketId.startsWith(`${series}-`)).map((l) => l.venueMarketId);
/** The Kalshi markets the venue states as scalar. */
const kalshiScalar = new Set([kalshiListings.listed[0]!.venueMarketId, kalshiListings.found[0]!.venueMarketId]);
const limitlessListings = listingsOf("limitless");
const opinionListings = listingsOf("opinion");
const polymarketListings = listingsOf("polymarket");
/** The first market the catalog lists and the first discover() finds, which a case makes the adapter unable to model, and another of each, which it leaves alone. */
function firstOfEach({ listed, found }: { listed: Listing[]; found: Listing[] }): Pick<Case, "leftOut" | "kept" | "newLeftOut" | "newKept"> {
  return { leftOut: [listed[0]!.venueMarketId], kept: listed.find((l, i) => i > 0 && l.open)!.venueMarketId, newLeftOut: found[0]!.venueMarketId, newKept: found[1]!.venueMarketId };
}

/** The YES tokens of the Opinion markets whose fee rate the venue states in a form the adapter cannot read. */
const opinionUnrated = new Set([opinionListings.listed[0]!.outcomeIds.YES, opinionListings.found[0]!.outcomeIds.YES]);
/** The NO tokens of the Opinion markets whose two tokens the venue rates apart. */
const opinionNoRatedApart = new Set([opinionListings.listed[0]!.outcomeIds.NO, opinionListings.found[0]!.outcomeIds.NO]);

const CASES: Case[] = [
  {
    name: "Kalshi: the markets of a series whose fee_type is flat",
    async start() {
      const sim = await startKalshiSim({ catalog, seed: 11, latencyScale: 0, tickMs: 40 });
      return { sim, adapter: (baseUrl, log) => new KalshiVenue({ baseUrl, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 400, startTimeoutMs: 300, log }) };
    },
    unmodelled: (path, body) => (path.endsWith("/series/KXFEDCUT") ? { series: { ...(body as { series: object }).series, fee_type: "flat" } } : body),
    leftOut: inSeries(kalshiListings.listed, "KXFEDCUT"),
    kept: inSeries(kalshiListings.listed, "KXBTCD")[0]!,
    newLeftOut: inSeries(kalshiListings.found, "KXFEDCUT")[0]!,
    newKept: inSeries(kalshiListings.found, "KXBTCD")[0]!,
  },
  {
    name: "Kalshi: a scalar market (market_type scalar), which pays its YES holders a settlement value, not 0 or 1",
    async start() {
      const sim = await startKalshiSim({ catalog, seed: 11, latencyScale: 0, tickMs: 40 });
      return { sim, adapter: (baseUrl, log) => new KalshiVenue({ baseUrl, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 400, startTimeoutMs: 300, log }) };
    },
    unmodelled(path, body) {
      if (!path.endsWith("/trade-api/v2/markets")) return body;
      const page = body as { markets: { ticker: string }[] };
      return { ...page, markets: page.markets.map((m) => (kalshiScalar.has(m.ticker) ? { ...m, market_type: "scalar" } : m)) };
    },
    ...firstOfEach(kalshiListings),
  },
  {
    name: "Limitless: a market whose feeRateBps is not a whole number of basis points, and an AMM market among the active ones",
    async start() {
      const sim = await startLimitlessSim({ catalog, seed: 41, latencyScale: 0, tickMs: 40 });
      return { sim, adapter: (baseUrl, log) => new LimitlessVenue({ baseUrl, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 400, startTimeoutMs: 300, log }) };
    },
    unmodelled(path, body) {
      if (path === `/markets/${limitlessListings.listed[0]!.venueMarketId}`) {
        return { ...(body as object), feeRateBps: 1.5 };
      }
      if (path !== "/markets/active") return body;
      const page = body as { data: { slug: string }[] };
      return { ...page, data: page.data.map((m) => (m.slug === limitlessListings.found[0]!.venueMarketId ? { ...m, tradeType: "amm" } : m)) };
    },
    ...firstOfEach(limitlessListings),
  },
  {
    name: "Opinion: a market whose takerFeeBps is not a whole number of basis points",
    async start() {
      const sim = await startOpinionSim({ catalog, seed: 23, latencyScale: 0, tickMs: 40 });
      return { sim, adapter: (baseUrl, log) => new OpinionVenue({ baseUrl, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 400, startTimeoutMs: 300, log }) };
    },
    unmodelled(path, body) {
      const answer = body as { result: { tokenId: string } };
      return path.endsWith("/token/fee-rates") && opinionUnrated.has(answer.result.tokenId) ? { ...answer, result: { ...answer.result, takerFeeBps: "1.5" } } : body;
    },
    ...firstOfEach(opinionListings),
  },
  {
    name: "Opinion: a market whose NO token the venue rates apart from its YES token",
    async start() {
      const sim = await startOpinionSim({ catalog, seed: 23, latencyScale: 0, tickMs: 40 });
      return { sim, adapter: (baseUrl, log) => new OpinionVenue({ baseUrl, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 400, startTimeoutMs: 300, log }) };
    },
    unmodelled(path, body) {
      const answer = body as { result: { tokenId: string; takerFeeBps: string } };
      return path.endsWith("/token/fee-rates") && opinionNoRatedApart.has(answer.result.tokenId) ? { ...answer, result: { ...answer.result, takerFeeBps: String(Number(answer.result.takerFeeBps) + 100) } } : body;
    },
    ...firstOfEach(opinionListings),
  },
  {
    name: "Polymarket: a market whose fee exponent is not 0, 1 or 2, and a listed market of three tokens",
    async start() {
      const sim = await startPolymarketSim({ catalog, seed: 9, latencyScale: 0, tickMs: 50 });
      return { sim, adapter: (baseUrl, log) => new PolymarketVenue({ baseUrl, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 400, retryBackoffMs: 20, log }) };
    },
    unmodelled(path, body) {
      if (path === `/clob-markets/${polymarketListings.listed[0]!.venueMarketId}`) return { ...(body as object), fd: { ...(body as { fd: object }).fd, e: 3 } };
      if (path !== "/markets") return body;
      const page = body as { data: { condition_id: string; tokens: object[] }[] };
      return { ...page, data: page.data.map((m) => (m.condition_id === polymarketListings.found[0]!.venueMarketId ? { ...m, tokens: [...m.tokens, m.tokens[0]] } : m)) };
    },
    ...firstOfEach(polymarketListings),
  },
];

describe.each(CASES)("a market the adapter cannot model is left out, the others load — $name", (c) => {
  async function setup() {
    const { sim, adapter } = await c.start();
    running.push(sim);
    const proxy = await startRewritingProxy(sim.url);
    running.push(proxy);
    proxy.rewrite = c.unmodelled;
    const log = { info: vi.fn(), warn: vi.fn() };
    return { sim, proxy, log, venue: adapter(proxy.url, log) };
  }
  const leftOutIds = (warn: ReturnType<typeof vi.fn>) => warn.mock.calls.map(([o]) => (o as { venue_market_id: string }).venue_market_id).sort();

  it("start(): the server's start goes on without it, with one warning a market; once the venue states it as the adapter models, the next load takes it", async () => {
    const { proxy, log, venue } = await setup();
    await venue.start();
    running.push(venue);
    expect(venue.market(c.kept)).toBeDefined();
    for (const id of c.leftOut) expect(venue.market(id)).toBeUndefined();
    expect(leftOutIds(log.warn)).toEqual([...c.leftOut].sort());
    expect(log.warn.mock.calls[0]![0]).toMatchObject({ venue_id: venue.id, reason: expect.any(String) });

    proxy.rewrite = (_path, body) => body;
    const loaded = (await venue.markets()).map((m) => m.venueMarketId);
    for (const id of c.leftOut) expect(loaded).toContain(id);
    expect(log.warn).toHaveBeenCalledTimes(c.leftOut.length);
  });

  it("markets(): a market it took is left out once the venue states it as the adapter cannot model, not kept as read before", async () => {
    const { proxy, log, venue } = await setup();
    proxy.rewrite = (_path, body) => body;
    for (const id of c.leftOut) expect((await venue.markets()).map((m) => m.venueMarketId)).toContain(id);
    proxy.rewrite = c.unmodelled;
    const loaded = (await venue.markets()).map((m) => m.venueMarketId);
    expect(loaded).toContain(c.kept);
    for (const id of c.leftOut) {
      expect(loaded).not.toContain(id);
      expect(venue.market(id)).toBeUndefined();
    }
    expect(leftOutIds(log.warn)).toEqual([...c.leftOut].sort());
  });

  it("discover(): the markets it can model, less the one it cannot", async () => {
    const { log, venue } = await setup();
    const found = (await venue.discover()).map((m) => m.venueMarketId);
    expect(found).toContain(c.newKept);
    expect(found).not.toContain(c.newLeftOut);
    expect(leftOutIds(log.warn)).toEqual([c.newLeftOut]);
  });

  it("a venue that cannot be reached still fails the load", async () => {
    const { sim, log, venue } = await setup();
    sim.faults.set({ serverErrors: 1_000 });
    await expect(venue.markets()).rejects.toBeInstanceOf(AppError);
    expect(log.warn).not.toHaveBeenCalled();
  });
});
