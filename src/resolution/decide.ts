import type { Outcome } from "../domain/types.ts";
import type { VenueResolution } from "../venues/venue.ts";

/** What the venues listing an event say of it, once every one of them has paid out. */
export type Decision =
  | { status: "resolved"; outcome: Outcome; venueReports: Record<string, string> }
  /** The venues paid out differently (another outcome, or voided): an operator decides. */
  | { status: "disputed"; venueReports: Record<string, string> };

/**
 * Decides an event from each listing venue's report: nothing until every one has paid out (a venue still
 * open or closed may yet resolve either way); resolved when all name the same outcome; disputed when
 * they differ or any voided its market, since crossfill's shares then have no single value to pay.
 */
export function decide(reports: ReadonlyMap<string, VenueResolution>): Decision | undefined {
  if (reports.size === 0) return undefined;
  const venueReports: Record<string, string> = {};
  for (const [venue, r] of reports) {
    if (r.state === "open" || r.state === "closed") return undefined;
    venueReports[venue] = r.state === "resolved" ? r.outcome : "voided";
  }
  const said = new Set(Object.values(venueReports));
  const [only] = said;
  return said.size === 1 && only !== "voided" ? { status: "resolved", outcome: only as Outcome, venueReports } : { status: "disputed", venueReports };
}
