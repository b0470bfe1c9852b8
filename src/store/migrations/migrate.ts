import { Migrator, type Kysely, type Migration } from "kysely";
import { initial } from "./001_initial.ts";
import { sessions } from "./002_sessions.ts";
import { orderLegs } from "./003_order_legs.ts";
import { catalog } from "./004_catalog.ts";
import { orderLeases } from "./005_order_leases.ts";
import { chainRecords } from "./006_chain_records.ts";
import { funds } from "./007_funds.ts";
import { sells } from "./008_sells.ts";
import { resolutions } from "./009_resolutions.ts";
import { childExpiries } from "./010_child_expiries.ts";
import { accountAddresses } from "./011_account_addresses.ts";
import { venueInventory } from "./012_venue_inventory.ts";
import { positionBooks } from "./013_position_books.ts";
import { activityTimes } from "./014_activity_times.ts";
import { shortPositionBooks } from "./015_short_position_books.ts";
import { lockTimes } from "./016_lock_times.ts";
import { depositPlaces } from "./017_deposit_places.ts";
import { plannedInFull } from "./018_planned_in_full.ts";
import { dustLeft } from "./019_dust_left.ts";
import { creditBlocks } from "./020_credit_blocks.ts";
import { escrowTimes } from "./021_escrow_times.ts";
import { errorDetails } from "./022_error_details.ts";
import { fillKeys } from "./023_fill_keys.ts";
import { rejectedHolding } from "./024_rejected_holding.ts";
import { failedHolding } from "./025_failed_holding.ts";
import { resettling } from "./026_resettling.ts";

/** Every migration, keyed by a name that sorts in the order they must run. Append; never edit one that shipped. */
export const MIGRATIONS: Record<string, Migration> = {
  "001_initial": initial,
  "002_sessions": sessions,
  "003_order_legs": orderLegs,
  "004_catalog": catalog,
  "005_order_leases": orderLeases,
  "006_chain_records": chainRecords,
  "007_funds": funds,
  "008_sells": sells,
  "009_resolutions": resolutions,
  "010_child_expiries": childExpiries,
  "011_account_addresses": accountAddresses,
  "012_venue_inventory": venueInventory,
  "013_position_books": positionBooks,
  "014_activity_times": activityTimes,
  "015_short_position_books": shortPositionBooks,
  "016_lock_times": lockTimes,
  "017_deposit_places": depositPlaces,
  "018_planned_in_full": plannedInFull,
  "019_dust_left": dustLeft,
  "020_credit_blocks": creditBlocks,
  "021_escrow_times": escrowTimes,
  "022_error_details": errorDetails,
  "023_fill_keys": fillKeys,
  "024_rejected_holding": rejectedHolding,
  "025_failed_holding": failedHolding,
  "026_resettling": resettling,
};

/** Applies the migrations not yet applied; a database already at the latest version is left untouched. */
export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS } });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    // No failed migration means none ran: the database could not be reached or locked. The cause's own
    // sentence goes in the message, since start-up and the CLI print only the message.
    const failed = results?.find((r) => r.status === "Error")?.migrationName;
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(failed ? `database migration ${failed} failed: ${why}` : `database migrations could not run: ${why}`, { cause: error });
  }
}
