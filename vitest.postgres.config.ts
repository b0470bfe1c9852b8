import { readdirSync, readFileSync } from "node:fs";
import { defineConfig } from "vitest/config";
import base from "./vitest.config.ts";

/*
 * The integration suite a second time, on PostgreSQL: CROSSFILL_TEST_STORE=postgres gives every server
 * that test/helpers/server.ts starts a fresh database on TEST_DATABASE_URL. The files chosen are those
 * that start their servers through that helper, found by its import, so a new one joins by itself; the
 * others start the server and the CLI on a data directory of their own (SQLite), and the main run has them.
 */
const integration = readdirSync("test/integration")
  .filter((f) => f.endsWith(".test.ts") && readFileSync(`test/integration/${f}`, "utf8").includes('from "../helpers/server.ts"'))
  .map((f) => `test/integration/${f}`);

// The main run's settings, but for which files run and on which store.
export default defineConfig({
  ...base,
  test: { ...base.test, include: integration, env: { ...base.test?.env, CROSSFILL_TEST_STORE: "postgres" } },
});
