#!/usr/bin/env node
// Runs the TypeScript CLI directly: tsx compiles it on load, so no build step stands between a clone and the CLI.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
