import { isDeepStrictEqual } from "node:util";
import { buySide } from "./buy.ts";
import { route } from "./route.ts";
import { sellSide } from "./sell.ts";
import type { Plan, PlanRequest, Refusal, RouteRequest, SellPlan, SellQuote, SellRequest, VenueQuote } from "./types.ts";

export type { ChildLeg, Leg, Plan, PlanRequest, Refusal, RefusalCode, RouteRequest, SellLeg, SellPlan, SellQuote, SellRequest, VenueQuote } from "./types.ts";
export { MAX_QUEUE_MS } from "./route.ts";
export { leastLegAsk } from "./buy.ts";
export { leastLegBid } from "./sell.ts";

/**
 * Routes an order over the venues' books. Pure and deterministic: the same request and quotes
 * always give the same plan or refusal.
 *
 * A buy (`side` absent or "buy") spends `amount` micro-USDC, fees included, over the asks for the
 * most shares (src/router/buy.ts); a sell (`side: "sell"`) sells `shares` over the bids, each
 * venue's sell capped by its inventory, for the most USDC after fees (src/router/sell.ts). Both route
 * the same way (src/router/route.ts): optimize_price splits across venues, optimize_speed takes the
 * fastest venue that fills the whole order alone; FOK fills all or refuses, IOC takes what the books
 * within the slippage limit hold.
 */
export function plan(req: PlanRequest, quotes: readonly VenueQuote[]): Plan | Refusal;
export function plan(req: SellRequest, quotes: readonly SellQuote[]): SellPlan | Refusal;
export function plan(req: RouteRequest, quotes: readonly VenueQuote[] | readonly SellQuote[]): Plan | SellPlan | Refusal {
  return req.side === "sell" ? route(sellSide(req), quotes as readonly SellQuote[]) : route(buySide(req), quotes as readonly VenueQuote[]);
}

/**
 * Whether two sets of quotes are the same input to plan(), field by field and level by level: a plan
 * made on one is the plan of the other. A book's sides are its adapter's own arrays until it changes,
 * so an unchanged book compares at once.
 */
export function sameQuotes<Q extends VenueQuote | SellQuote>(a: readonly Q[], b: readonly Q[]): boolean {
  return isDeepStrictEqual(a, b);
}
