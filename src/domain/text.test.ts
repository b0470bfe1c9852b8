import { describe, expect, it } from "vitest";
import { printable, textFault } from "./text.ts";

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

describe("textFault", () => {
  it.each([
    ["a zero-width space (U+200B)", "b\u200bot"],
    ["a zero-width non-joiner (U+200C)", "bot\u200c"],
    ["a zero-width joiner (U+200D) outside an emoji sequence", "b\u200dot"],
    ["a zero-width joiner after an emoji, before a letter", "\u{1F600}\u200dbot"],
    ["a word joiner (U+2060)", "bo\u2060t"],
    ["a byte order mark (U+FEFF)", "\ufeffbot"],
  ])("finds %s, which a screen does not show", (_name, text) => {
    expect(textFault(text)).toMatch(/^zero-width characters \(/);
  });

  it("leaves an emoji sequence joined by U+200D as it is, with its U+FE0F and skin tones", () => {
    for (const text of ["\u{1F469}\u200d\u{1F4BB} desk", "\u{1F3F3}\ufe0f\u200d\u{1F308} parade", "\u{1F468}\u{1F3FD}\u200d\u{1F373}", "\u2764\ufe0f bot"]) {
      expect(textFault(text), JSON.stringify(text)).toBeUndefined();
    }
  });
});
