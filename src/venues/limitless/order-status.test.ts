import { describe, expect, it } from "vitest";
import { startRewritingProxy } from "../../../test/helpers/rewriting-proxy.ts";
import { deliveredShares } from "../../domain/fees.ts";
import { ONE } from "../../domain/money.ts";
import { MarketCatalog } from "../../markets/catalog.ts";
import type { ChildOrder } from "../venue.ts";
import { LimitlessVenue } from "./limitless-venue.ts";
import { startLimitlessSim } from "./sim/limitless-sim.ts";

const catalog = MarketCatalog.load();
const slug = catalog.events().flatMap((e) => e.listings.filter((l) => l.venue === "limitless-sim" && e.status === "open"))[0]!.venueMarketId;

describe("Limitless: an order whose status the adapter does not know", () => {
  it("is not taken for ended: status and cancel throw, as it may still rest and fill", async () => {
    const sim = await startLimitlessSim({ catalog, seed: 43, latencyScale: 0, tickMs: 40 });
    const proxy = await startRewritingProxy(sim.url);
    const venue = new LimitlessVenue({ baseUrl: proxy.url, wsUrl: sim.wsUrl, credentials: sim.credentials, catalog, requestTimeoutMs: 2_000 });
    await venue.start();
    try {
      const m = venue.market(slug)!;
      const room = venue.book(slug, "YES")!.asks[0]!.price + 20n * m.tickSize;
      const child: ChildOrder = { clientOrderId: `unknown-status-${process.pid}`, venueMarketId: slug, outcome: "YES", side: "buy", limitPrice: room < ONE ? room : ONE - m.tickSize, shares: deliveredShares(m.feeModel, m.minOrderShares), expiresAt: Date.now() + 60_000 };
      sim.faults.set({ resting: true });
      const placed = await venue.place(child);
      sim.faults.reset();
      if (placed.kind !== "open") throw new Error(`the child did not rest: ${placed.kind}`);
      const withStatus = (status: string) => (path: string, body: unknown) => {
        if (!path.endsWith(`/orders/${placed.venueOrderId}`)) return body;
        const b = body as { order: object };
        return { ...b, order: { ...b.order, status } };
      };
      proxy.rewrite = withStatus("PENDING");
      await expect(venue.status(child.clientOrderId, child)).rejects.toThrow(/PENDING/);
      await expect(venue.cancel(child.clientOrderId, child)).rejects.toThrow(/PENDING/);
      proxy.rewrite = withStatus("CANCELED");
      expect(await venue.cancel(child.clientOrderId, child)).toMatchObject({ kind: "done", venueOrderId: placed.venueOrderId });
    } finally {
      await venue.stop();
      await proxy.stop();
      await sim.stop();
    }
  });
});
