#!/usr/bin/env node
// Runs the CLI that `npm run build` emitted into dist/ (npm ci builds it). The test suites set
// CROSSFILL_FROM_SOURCE (vitest.config.ts) so that the CLI they spawn is the TypeScript in src/ as it
// stands, through tsx (a devDependency), rather than whatever dist/ was built from.
import { existsSync } from "node:fs";

if (process.env.CROSSFILL_FROM_SOURCE) {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
} else {
  const main = new URL("../dist/cli/main.js", import.meta.url);
  // a tree installed with npm ci --omit=dev, or checked out, has none
  if (!existsSync(main)) {
    console.error("crossfill: dist/ is not built: run npm run build (npm ci runs it)");
    process.exit(2);
  }
  await import(main.href);
}
