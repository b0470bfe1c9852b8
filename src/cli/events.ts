import type { Command } from "commander";
import { loadConfig } from "../config.ts";
import { printable, textFault } from "../domain/text.ts";
import { OUTCOMES, systemClock, type Outcome } from "../domain/types.ts";
import { isEventId } from "../markets/catalog.ts";
import { loadCatalog } from "../markets/catalog-db.ts";
import { DEFAULT_MATCH_OPTIONS, type NearMiss } from "../markets/matching.ts";
import { acceptedChange, matchDiscovered, type DiscoveredMarket } from "../markets/proposals.ts";
import { PROPOSAL_STATUSES, type ProposalRecord, type ProposalStatus } from "../store/store.ts";
import { startConfiguredVenues } from "../venues/sim-process.ts";
import { withStore } from "./with-store.ts";

const TAKES_EFFECT = "The catalog is read at start: restart the server (crossfill serve / npm start) for it to take effect.";

function proposalJson(p: ProposalRecord) {
  return {
    id: p.id,
    kind: p.kind,
    status: p.status,
    event_id: p.eventId,
    title: p.title,
    score: Number(p.score.toFixed(6)),
    reason: p.reason,
    members: p.members.map((m) => ({ venue: m.venue, venue_market_id: m.venueMarketId, title: m.title, close_time: m.closeTime })),
    created_at: p.createdAt,
    decided_at: p.decidedAt,
  };
}

function printProposal(p: ProposalRecord): void {
  const what = p.kind === "new_event" ? `new event ${p.eventId}` : `add to ${p.eventId}`;
  const decided = p.status === "proposed" ? "" : `  [${p.status} ${p.decidedAt ?? ""}]`;
  console.log(`${p.id}  score ${p.score.toFixed(3)}  ${what}  "${printable(p.title)}"${decided}`);
  for (const m of p.members) console.log(`    ${m.venue.padEnd(15)} ${printable(m.venueMarketId)}  "${printable(m.title)}"  closes ${m.closeTime}`);
  console.log(`    why: ${printable(p.reason)}`);
}

/** A decimal as written ("0.6", "48"): not "1e3", " 12 " or "0x1f", which Number() reads too. */
function number(raw: string, name: string, fail: (m: string) => never, max = Infinity): number {
  const v = Number(raw);
  if (!/^\d+(?:\.\d+)?$/.test(raw) || v > max) fail(`${name} must be a decimal number from 0 to ${max}, like 0.6 (got ${JSON.stringify(raw)})`);
  return v;
}

/** `crossfill events ...`: the catalog in the database, and the proposals that grow it. */
export function registerEventCommands(program: Command, fail: (message: string) => never): void {
  const events = program.command("events").description("The unified event catalog, and cross-venue match proposals");

  events
    .command("list")
    .description("List the catalog's unified events and where each venue lists them")
    .option("--json", "print JSON for scripts")
    .action(async (o: { json?: boolean }) => {
      const catalog = await withStore((store) => loadCatalog(store));
      const rows = catalog.events().map((e) => ({
        event_id: e.eventId,
        title: e.title,
        status: e.status,
        close_time: e.closeTime,
        listings: e.listings.map((l) => ({ venue: l.venue, venue_market_id: l.venueMarketId })),
      }));
      if (o.json) {
        console.log(JSON.stringify(rows));
        return;
      }
      for (const r of rows) {
        console.log(`${r.event_id}  ${r.status.padEnd(8)}  closes ${r.close_time}  "${printable(r.title)}"`);
        for (const l of r.listings) console.log(`    ${l.venue.padEnd(15)} ${printable(l.venue_market_id)}`);
      }
      console.log(`${rows.length} events.`);
    });

  events
    .command("match")
    .description("Propose cross-venue matches for the venues' markets that the catalog does not list; writes nothing to the catalog")
    .option("--json", "print JSON for scripts")
    .option("--min-score <score>", "lowest score to propose, 0 to 1", String(DEFAULT_MATCH_OPTIONS.minScore))
    .option("--close-within-hours <hours>", "close times further apart never match", String(DEFAULT_MATCH_OPTIONS.closeWithinMs / 3_600_000))
    .option("--verbose", "also show near misses: pairs refused for a differing number, date or close time")
    .action(async (o: { json?: boolean; minScore: string; closeWithinHours: string; verbose?: boolean }) => {
      const opts = {
        minScore: number(o.minScore, "--min-score", fail, 1),
        closeWithinMs: number(o.closeWithinHours, "--close-within-hours", fail) * 3_600_000,
      };
      const config = loadConfig();
      const out = await withStore(async (store) => {
        const catalog = await loadCatalog(store);
        // the venues start as the server starts them: against their simulators unless *_BASE_URL points elsewhere
        const setup = await startConfiguredVenues(config, { catalog, clock: systemClock });
        const discovered: DiscoveredMarket[] = [];
        const skipped: string[] = [];
        try {
          for (const v of setup.venues) {
            if (!v.discover) skipped.push(v.id);
            else for (const market of await v.discover()) discovered.push({ venue: v.id, market });
          }
        } finally {
          await setup.stop();
        }
        const { result, proposals } = matchDiscovered(discovered, catalog, opts);
        return { discovered, skipped, result, saved: await store.saveProposals(proposals) };
      });
      const { discovered, skipped, result, saved } = out;
      const missJson = (n: NearMiss) => ({ a: n.a, b: n.b, word_score: Number(n.wordScore.toFixed(6)), reason: n.reason });
      if (o.json) {
        console.log(
          JSON.stringify({
            discovered: discovered.map((d) => ({ venue: d.venue, venue_market_id: d.market.venueMarketId, title: d.market.title, close_time: d.market.closeTime })),
            venues_without_discovery: skipped,
            proposals: saved.map(proposalJson),
            unmatched: result.unmatched.map((m) => ({ venue: m.venue, venue_market_id: m.venueMarketId, title: m.title })),
            ...(o.verbose ? { near_misses: result.nearMisses.map(missJson) } : {}),
          }),
        );
        return;
      }
      const perVenue = [...new Set(discovered.map((d) => d.venue))].map((v) => `${v} ${discovered.filter((d) => d.venue === v).length}`);
      console.log(`Venue markets not in the catalog: ${discovered.length}${perVenue.length ? ` (${perVenue.join(", ")})` : ""}.`);
      if (skipped.length) console.log(`Not searched (the adapter cannot list the venue's other markets): ${skipped.join(", ")}.`);
      console.log(`${saved.length} proposals; nothing was written to the catalog.\n`);
      for (const p of saved) printProposal(p);
      if (result.unmatched.length) {
        console.log("\nMatched nothing:");
        for (const m of result.unmatched) console.log(`    ${m.venue.padEnd(15)} ${printable(m.venueMarketId)}  "${printable(m.title)}"`);
      }
      if (o.verbose && result.nearMisses.length) {
        console.log("\nNear misses (refused: only identical questions merge):");
        for (const n of result.nearMisses) console.log(`    ${printable(n.a)} ~ ${printable(n.b)}: ${printable(n.reason)}`);
      }
      if (saved.some((p) => p.status === "proposed")) console.log("\nAccept one with: crossfill events accept <proposal-id> [--event-id <id>] [--title <title>]");
    });

  events
    .command("proposals")
    .description("List stored match proposals")
    .option("--status <status>", `only those ${PROPOSAL_STATUSES.join(" | ")}`)
    .option("--json", "print JSON for scripts")
    .action(async (o: { status?: string; json?: boolean }) => {
      if (o.status !== undefined && !(PROPOSAL_STATUSES as readonly string[]).includes(o.status)) fail(`--status must be one of ${PROPOSAL_STATUSES.join(", ")}`);
      const list = await withStore((store) => store.listProposals(o.status as ProposalStatus | undefined));
      if (o.json) console.log(JSON.stringify(list.map(proposalJson)));
      else if (list.length === 0) console.log("No proposals: run crossfill events match.");
      else for (const p of list) printProposal(p);
    });

  events
    .command("accept")
    .description("Accept a match proposal: write its new event, or its new listing, to the catalog")
    .argument("<proposal-id>", "the id crossfill events match printed, prop_...")
    .option("--event-id <id>", "the new event's id (kebab-case) instead of the suggested one")
    .option("--title <title>", "the new event's title instead of the suggested one")
    .option("--json", "print JSON for scripts")
    .action(async (id: string, o: { eventId?: string; title?: string; json?: boolean }) => {
      if (o.eventId !== undefined && !isEventId(o.eventId)) fail(`--event-id must be kebab-case, like fed-cut-2027-03 (got ${JSON.stringify(o.eventId)})`);
      const title = o.title?.trim();
      if (title === "") fail("--title must not be empty");
      const given = title === undefined ? undefined : textFault(title);
      if (given !== undefined) fail(`--title must have no ${given} (got ${printable(JSON.stringify(o.title))})`);
      const result = await withStore(async (store) => {
        const proposal = await store.proposal(id);
        if (!proposal) return { kind: "not_found" as const };
        if (proposal.kind === "add_listing" && (o.eventId !== undefined || o.title !== undefined)) {
          fail(`${id} adds a listing to the existing event ${proposal.eventId}: --event-id and --title apply to new events only`);
        }
        // the suggested title is a venue's market title, written to the catalog as the event's
        const suggested = proposal.kind === "new_event" && title === undefined ? textFault(proposal.title) : undefined;
        if (suggested !== undefined) fail(`${id}'s suggested title has ${suggested}: give the new event's title with --title`);
        return store.acceptProposal(id, acceptedChange(proposal, { eventId: o.eventId, title }), new Date().toISOString());
      });
      if (result.kind === "not_found") fail(`no proposal ${id}: run crossfill events match`);
      if (result.kind === "already_decided") fail(`${id} was already ${result.proposal.status} at ${result.proposal.decidedAt}`);
      if (result.kind === "conflict") fail(`${id} cannot be accepted: ${printable(result.reason)}; nothing was written`);
      const p = result.proposal;
      if (o.json) {
        console.log(JSON.stringify({ ...proposalJson(p), takes_effect: "next_start" }));
        return;
      }
      const venues = p.members.map((m) => m.venue).join(", ");
      console.log(p.kind === "new_event" ? `Accepted ${p.id}: new event ${p.eventId} "${printable(p.title)}", listed on ${venues}.` : `Accepted ${p.id}: ${p.eventId} is now also listed on ${venues}.`);
      console.log(TAKES_EFFECT);
    });

  events
    .command("resolve")
    .description("Decide how an event ended, on any deployment: one the venues dispute, or one still undecided (its venues stopped listing it; on the embedded default, not yet resolved by the simulators). The server redeems its positions at its next pass; a resolved event is never decided again")
    .argument("<event-id>", "the event's id, as crossfill events list prints it")
    .argument("<outcome>", `the winning outcome: ${OUTCOMES.join(" or ")}`)
    .option("--json", "print JSON for scripts")
    .action(async (eventId: string, outcome: string, o: { json?: boolean }) => {
      if (!(OUTCOMES as readonly string[]).includes(outcome)) fail(`<outcome> must be ${OUTCOMES.join(" or ")} (got ${JSON.stringify(outcome)})`);
      const record = await withStore(async (store) => {
        if (!(await loadCatalog(store)).get(eventId)) fail(`no event ${eventId}: crossfill events list shows the catalog`);
        return store.decideEvent({ eventId, status: "resolved", outcome: outcome as Outcome, decidedBy: "operator", venueReports: {}, decidedAt: new Date().toISOString() });
      });
      if (record.outcome !== outcome) fail(`${eventId} was already resolved to ${record.outcome} by ${record.decidedBy} at ${record.decidedAt}; a resolved event is never decided again`);
      if (o.json) console.log(JSON.stringify({ event_id: record.eventId, status: record.status, resolution: record.outcome, decided_by: record.decidedBy, venue_reports: record.venueReports, decided_at: record.decidedAt }));
      else console.log(`${eventId} is resolved to ${outcome}. A running server redeems every position in it at its next pass: each ${outcome} share pays 1 USDC.`);
    });

  events
    .command("reject")
    .description("Reject a match proposal; a later match shows it as rejected and never reopens it")
    .argument("<proposal-id>", "the id crossfill events match printed, prop_...")
    .option("--json", "print JSON for scripts")
    .action(async (id: string, o: { json?: boolean }) => {
      const rejected = await withStore((store) => store.rejectProposal(id, new Date().toISOString()));
      if (o.json) console.log(JSON.stringify({ id, rejected }));
      else if (rejected) console.log(`Rejected ${id}.`);
      else console.error(`crossfill: no undecided proposal ${id}`);
      if (!rejected) process.exitCode = 1;
    });
}
