import { defineConfig } from "vitest/config";

/** The fault suite (test/faults): long, seeded runs of kills and faults, after the main suite. */
export default defineConfig({
  test: {
    include: ["test/faults/**/*.test.ts"],
    pool: "forks",
    fileParallelism: false,
    testTimeout: 60 * 60_000,
    hookTimeout: 300_000,
    reporters: ["default"],
    // As in vitest.config.ts: the CLI the suite spawns runs src/, not dist/.
    env: { CROSSFILL_FROM_SOURCE: "1" },
  },
});
