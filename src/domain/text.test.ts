import { describe, expect, it } from "vitest";
import { printable } from "./text.ts";

describe("printable", () => {
  it.each([
    ["a zero-width space (U+200B)", "ada\u200b@example.com", "ada\\u200b@example.com"],
    ["a zero-width joiner (U+200D)", "a\u200db", "a\\u200db"],
    ["a word joiner (U+2060)", "a\u2060b", "a\\u2060b"],
    ["a byte order mark (U+FEFF)", "\ufeffada", "\\ufeffada"],
    ["a soft hyphen (U+00AD)", "ad\u00ada", "ad\\u00ada"],
    ["a Hangul filler (U+3164), which shows as a blank", "\u3164@example.com", "\\u3164@example.com"],
    ["a variation selector (U+FE0F)", "a\ufe0fb", "a\\ufe0fb"],
    ["a tag character beyond the first plane (U+E0041)", "a\u{e0041}b", "a\\u{e0041}b"],
    ["an escape and a right-to-left override, as before", "a\u001b[2J\u202eb", "a\\u001b[2J\\u202eb"],
  ])("writes %s as its \\u escape", (_name, text, shown) => {
    expect(printable(text)).toBe(shown);
  });

  it("leaves visible text as it is, accents, other scripts and emoji too", () => {
    for (const text of ["ada@example.com", "café Zürich", "Кремль 東京", "🚀 wins"]) expect(printable(text)).toBe(text);
  });
});
