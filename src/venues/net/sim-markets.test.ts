import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MarketCatalog } from "../../markets/catalog.ts";
import { startKalshiSim, type KalshiSim } from "../kalshi/index.ts";
import { concludeSimMarket } from "./sim-markets.ts";

const catalog = MarketCatalog.load();
const TICKER = "KXFEDCUT-26DEC-T25";

describe("a simulator's market control routes, from another process", () => {
  let sim: KalshiSim;
  /** The routes are on the simulator's origin, beside /_sim/faults, whatever path its API has. */
  const route = (path: string, init?: RequestInit) => fetch(new URL(`/_sim/markets/${path}`, sim.url), init);
  const post = (path: string, body: unknown) => route(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  beforeAll(async () => {
    sim = await startKalshiSim({ catalog, seed: 3, latencyScale: 0, tickMs: 1_000 });
  });
  afterAll(async () => {
    await sim.stop();
  });

  it("shows a market's state, closes it, resolves it, and keeps the resolution final", async () => {
    expect(await (await route(TICKER)).json()).toEqual({ venueMarketId: TICKER, state: "open" });
    // the venue's own faults do not touch the control routes
    sim.faults.set({ timeout: true });
    try {
      const closed = await concludeSimMarket(sim.url, TICKER, { state: "closed" });
      expect(closed).toEqual({ venueMarketId: TICKER, state: "closed", at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    } finally {
      sim.faults.reset();
    }
    const resolved = await concludeSimMarket(sim.url, TICKER, { state: "resolved", outcome: "NO" });
    expect(resolved).toMatchObject({ venueMarketId: TICKER, state: "resolved", outcome: "NO" });
    expect(await (await route(TICKER)).json()).toEqual(resolved);
    const again = await post(`${TICKER}/resolve`, { outcome: "YES" });
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ error: { code: "conflict", message: `${TICKER} resolved NO already: a resolution is final` } });
    await expect(concludeSimMarket(sim.url, TICKER, { state: "resolved", outcome: "YES" })).rejects.toThrow(/HTTP 409/);
  });

  it("refuses an outcome that is not YES or NO, and a market the venue does not list", async () => {
    const bad = await post("KXRECSSNBER-26/resolve", { outcome: "MAYBE" });
    expect(bad.status).toBe(400);
    expect(sim.markets.state("KXRECSSNBER-26")).toEqual({ state: "open" });
    expect((await post("NO-SUCH-TICKER/resolve", { outcome: "YES" })).status).toBe(404);
    expect((await route("NO-SUCH-TICKER")).status).toBe(404);
  });
});
