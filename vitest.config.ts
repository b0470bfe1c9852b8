import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // The fault suite runs after this one, with its own config (vitest.faults.config.ts).
    exclude: ["test/faults/**", "node_modules/**"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // A state a test waits for (a nonce handed out, a transaction queued) comes within milliseconds alone, but
    // can take over a second on two cores busy with the other test files: the default 1 s would fail a run.
    expect: { poll: { timeout: 5_000 } },
    reporters: ["default"],
    // The CLI the tests spawn (bin/crossfill.mjs) runs src/ through tsx, not a dist/ built from other sources.
    env: { CROSSFILL_FROM_SOURCE: "1" },
  },
});
