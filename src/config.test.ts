import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.ts";

describe("loadConfig: LOG_LEVEL", () => {
  it("takes pino's levels, info by default", () => {
    expect(loadConfig({}).logLevel).toBe("info");
    for (const level of ["fatal", "error", "warn", "info", "debug", "trace", "silent"]) expect(loadConfig({ LOG_LEVEL: level }).logLevel).toBe(level);
  });

  it("refuses another value with a sentence naming LOG_LEVEL and its values, not pino's own error at start", () => {
    expect(() => loadConfig({ LOG_LEVEL: "verbose" })).toThrow('LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "verbose").');
  });
});
