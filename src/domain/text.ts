/**
 * What text holds that a name or a title must not, in words for an error; undefined when nothing. A control character
 * (Unicode `Cc`: line breaks, tabs, escapes, C1), printed as it is, forges a line or rewrites the terminal; a
 * bidirectional embedding, override or isolate (U+202A to U+202E, U+2066 to U+2069) shows what follows it reversed
 * ("\u202esniw ON" reads "NO wins").
 */
export function textFault(text: string): string | undefined {
  if (/\p{Cc}/u.test(text)) return "control characters (line breaks, tabs, escapes)";
  if (/[\u202a-\u202e\u2066-\u2069]/u.test(text)) return "bidirectional controls (U+202A to U+202E, U+2066 to U+2069), which show text reversed";
  return undefined;
}
