import { Option, type Command } from "commander";
import type { BookEntry, PriceRecord } from "../sdk/types.ts";
import { answer, apiClient, count } from "./funds.ts";

interface BookOptions {
  outcome: "YES" | "NO";
  side: "buy" | "sell";
  depth: string;
  json?: boolean;
}

/** The API's bound on levels per side (GET /v1/prices' depth). */
const MAX_DEPTH = 500;

/**
 * `crossfill book <event_id>`: the merged book of GET /v1/prices/{event_id} through the API of the running server,
 * read with the key in CROSSFILL_API_KEY: every venue's levels in one list a side, each tagged with its venue,
 * and the best fee-adjusted execution.
 */
export function registerBookCommand(program: Command, fail: (message: string) => never): void {
  program
    .command("book")
    .description("Show an event's order book merged across venues, each level tagged with its venue, and the best fee-adjusted execution (the key needs the read scope)")
    .argument("<event_id>", "the unified event id")
    .addOption(new Option("--outcome <outcome>", "the outcome whose book to show").choices(["YES", "NO"]).default("YES"))
    .addOption(new Option("--side <side>", "rank for a buy (best execution among the asks) or a sell (among the bids, by what a seller nets after fees)").choices(["buy", "sell"]).default("buy"))
    .option("--depth <n>", `levels a side, best first (at most ${MAX_DEPTH})`, "20")
    .option("--json", "print the API's price record as JSON for scripts")
    .action(async (eventId: string, o: BookOptions) => {
      const depth = count(o.depth, "--depth", MAX_DEPTH, fail);
      const record = await answer(apiClient(fail).prices(eventId, { outcome: o.outcome, side: o.side, depth }), fail);
      console.log(o.json ? JSON.stringify(record) : describeBook(record, o.side));
    });
}

/** The book as a table, bids beside asks, best first; then the spread, the best execution and the venues left out (`stale_venues`: down, not connected, or their book too old). */
function describeBook(r: PriceRecord, side: "buy" | "sell"): string {
  const { bids, asks } = r.orderbook;
  const header = ["bid venue", "size", "bid", "ask", "size", "ask venue"];
  const cells = (e: BookEntry | undefined): [string, string, string] => (e === undefined ? ["", "", ""] : [e[2], String(e[1]), String(e[0])]);
  const rows = Array.from({ length: Math.max(bids.length, asks.length) }, (_, i) => {
    const [bidVenue, bidSize, bid] = cells(bids[i]);
    const [askVenue, askSize, ask] = cells(asks[i]);
    return [bidVenue, bidSize, bid, ask, askSize, askVenue];
  });
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c]!.length)));
  // venues on the outside, numbers right-aligned towards the middle
  const cell = (row: string[], c: number) => (c === 0 || c === 5 ? row[c]!.padEnd(widths[c]!) : row[c]!.padStart(widths[c]!));
  const line = (row: string[]) => `${[0, 1, 2].map((c) => cell(row, c)).join("  ")} | ${[3, 4, 5].map((c) => cell(row, c)).join("  ")}`.trimEnd();
  const out = [`${r.event_id} ${r.outcome}${r.updated_at ? `, updated ${r.updated_at}` : ""}`];
  if (rows.length === 0) out.push("No levels on any venue.");
  else out.push(...[header, ...rows].map(line));
  const s = r.spread;
  if (s.spread !== null) out.push(`Spread ${s.spread} (best bid ${s.best_bid}, best ask ${s.best_ask})`);
  const best = r.best_execution;
  out.push(`Best execution for a ${side}: ${best === null ? "none" : `${best.venue} at ${best.price}, ${best.fee_adjusted_price} after fees`}`);
  if (r.stale_venues.length > 0) out.push(`Left out, no fresh book (venue down or not connected, or its book too old): ${r.stale_venues.join(", ")}`);
  return out.join("\n");
}
