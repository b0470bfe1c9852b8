import { request } from "undici";
import { OUTCOMES, type Outcome } from "../../domain/types.ts";
import type { SimLifecycle } from "../simulated/exchange.ts";
import type { ConcludeResult, SimMarketLifecycle } from "../simulated/lifecycle.ts";

/** A market's lifecycle as the simulators' control routes answer it; `at` is ISO 8601. */
export type SimMarketView = { venueMarketId: string } & ({ state: "open" } | { state: "closed"; at: string } | { state: "resolved"; outcome: Outcome; at: string });

type Reply = { status: number; body: unknown };

const PREFIX = "/_sim/markets/";

/**
 * The simulator's market control routes, beside its fault switches and like them outside the venue's
 * API: `GET /_sim/markets/{id}`, `POST /_sim/markets/{id}/close`, `POST /_sim/markets/{id}/resolve`
 * with `{"outcome":"YES"}`. Undefined for a path that is not one of them.
 */
export function marketRoute(
  markets: SimMarketLifecycle,
  method: string,
  path: string,
  body: unknown,
  errorBody: (status: number, code: string, message: string) => unknown,
): Reply | undefined {
  if (!path.startsWith(PREFIX)) return undefined;
  const [rawId, action, ...rest] = path.slice(PREFIX.length).split("/");
  if (!rawId || rest.length > 0) return undefined;
  const id = decodeURIComponent(rawId);
  const answer = (r: ConcludeResult): Reply => {
    if (r.kind === "unknown_market") return { status: 404, body: errorBody(404, "not_found", `the simulator lists no market ${id}`) };
    if (r.kind === "conflict") return { status: 409, body: errorBody(409, "conflict", `${id} resolved ${outcomeOf(r.lifecycle)} already: a resolution is final`) };
    return { status: 200, body: view(id, r.lifecycle) };
  };
  if (method === "GET" && action === undefined) {
    const l = markets.state(id);
    return l ? { status: 200, body: view(id, l) } : answer({ kind: "unknown_market" });
  }
  if (method === "POST" && action === "close") return answer(markets.close(id));
  if (method === "POST" && action === "resolve") {
    const outcome = (body as { outcome?: unknown } | undefined)?.outcome;
    if (!OUTCOMES.includes(outcome as Outcome)) return { status: 400, body: errorBody(400, "bad_request", `send {"outcome": ${OUTCOMES.map((o) => `"${o}"`).join(" or ")}}`) };
    return answer(markets.resolve(id, outcome as Outcome));
  }
  return undefined;
}

function view(venueMarketId: string, l: SimLifecycle): SimMarketView {
  return l.state === "open" ? { venueMarketId, state: "open" } : { venueMarketId, ...l, at: new Date(l.at).toISOString() };
}

function outcomeOf(l: SimLifecycle): string {
  return l.state === "resolved" ? l.outcome : l.state;
}

/**
 * The control routes from outside the simulator's process, e.g. the server's child `crossfill sim`: closes
 * or resolves one market on one venue, which may differ from what another venue says (a disputed event).
 * `baseUrl` is the venue's base URL as the adapter has it; the routes are on its origin.
 */
export async function concludeSimMarket(baseUrl: string, venueMarketId: string, to: { state: "closed" } | { state: "resolved"; outcome: Outcome }): Promise<SimMarketView> {
  const path = `${PREFIX}${encodeURIComponent(venueMarketId)}/${to.state === "closed" ? "close" : "resolve"}`;
  const res = await request(new URL(path, baseUrl), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(to.state === "resolved" ? { outcome: to.outcome } : {}),
  });
  const text = await res.body.text();
  if (res.statusCode < 200 || res.statusCode > 299) throw new Error(`${new URL(baseUrl).origin} refused to ${to.state === "closed" ? "close" : "resolve"} ${venueMarketId}: HTTP ${res.statusCode} ${text}`);
  return JSON.parse(text) as SimMarketView;
}
