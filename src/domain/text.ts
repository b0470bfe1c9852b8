/**
 * A zero-width joiner inside an emoji sequence (an emoji, its U+FE0F or skin tone, U+200D, an emoji: 👩‍💻, 🏳️‍🌈), which
 * a screen shows as one emoji: the one place a zero-width character is what the writer typed.
 */
const EMOJI_JOINER = /(?<=\p{Extended_Pictographic}[\ufe0f\u{1f3fb}-\u{1f3ff}]?)\u200d(?=\p{Extended_Pictographic})/gu;

/**
 * What text holds that a name or a title must not, in words for an error; undefined when nothing. A control character
 * (Unicode `Cc`: line breaks, tabs, escapes, C1), printed as it is, forges a line or rewrites the terminal; a
 * bidirectional embedding, override or isolate (U+202A to U+202E, U+2066 to U+2069) shows what follows it reversed
 * ("\u202esniw ON" reads "NO wins"); a zero-width character (U+200B to U+200D outside an emoji sequence, U+2060,
 * U+FEFF) is not shown at all, so the text reads as the text without it.
 */
export function textFault(text: string): string | undefined {
  if (/\p{Cc}/u.test(text)) return "control characters (line breaks, tabs, escapes)";
  if (/[\u202a-\u202e\u2066-\u2069]/u.test(text)) return "bidirectional controls (U+202A to U+202E, U+2066 to U+2069), which show text reversed";
  if (/[\u200b-\u200d\u2060\ufeff]/u.test(text.replace(EMOJI_JOINER, ""))) {
    return "zero-width characters (U+200B to U+200D outside an emoji, U+2060, U+FEFF), which are not shown";
  }
  return undefined;
}

/**
 * A character a screen shows as something else or not at all: Unicode's "other" category (controls such as ESC and
 * DEL, formats such as U+202E, which shows the text after it reversed, or the zero-width space, joiner and U+FEFF,
 * private-use and unassigned code points) and its default-ignorable code points (a Hangul filler, which shows as a
 * blank, a variation selector). Text holding one reads, on a screen or in a log, as other text.
 */
const HIDDEN = /[\p{C}\p{Default_Ignorable_Code_Point}]/u;
const EVERY_HIDDEN = new RegExp(HIDDEN.source, "gu");

export function hasHiddenCharacter(text: string): boolean {
  return HIDDEN.test(text);
}

/**
 * Text from the store, a venue or the server's answer as a terminal shows it: each hidden character (a key named before
 * names refused control characters, an account's email taken before emails refused hidden ones, a venue's market title,
 * an error page) written as its \u escape (\u{...} beyond the first plane), so that it cannot forge a line, rewrite the
 * screen, reverse what follows it on the line or hide in what it is shown in.
 */
export function printable(text: string): string {
  return text.replace(EVERY_HIDDEN, (c) => {
    const code = c.codePointAt(0)!.toString(16);
    return c.length > 1 ? `\\u{${code}}` : `\\u${code.padStart(4, "0")}`;
  });
}
