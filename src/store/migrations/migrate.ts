import { Migrator, type Kysely, type Migration } from "kysely";
import { initial } from "./001_initial.ts";
import { sessions } from "./002_sessions.ts";
import { orderLegs } from "./003_order_legs.ts";
import { catalog } from "./004_catalog.ts";

/** Every migration, keyed by a name that sorts in the order they must run. Append; never edit one that shipped. */
const MIGRATIONS: Record<string, Migration> = {
  "001_initial": initial,
  "002_sessions": sessions,
  "003_order_legs": orderLegs,
  "004_catalog": catalog,
};

/** Applies the migrations not yet applied; a database already at the latest version is left untouched. */
export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS } });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName;
    throw new Error(`database migration ${failed ?? "(unknown)"} failed`, { cause: error });
  }
}
