#!/usr/bin/env node
// Runs the CLI that `npm run build` emitted into dist/ (npm ci builds it). The test suites set
// CROSSFILL_FROM_SOURCE (vitest.config.ts) so that the CLI they spawn is the TypeScript in src/ as it
// stands, through tsx (a devDependency), rather than whatever dist/ was built from.
if (process.env.CROSSFILL_FROM_SOURCE) {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
} else {
  await import("../dist/cli/main.js");
}
