/**
 * Whether text holds a control character (Unicode `Cc`: line breaks, tabs, escapes, C1), which a name or a title
 * must not: printed as it is, a line break forges a line and an escape sequence rewrites the terminal.
 */
export function hasControlCharacter(text: string): boolean {
  return /\p{Cc}/u.test(text);
}

/**
 * Whether text holds a bidirectional embedding, override or isolate (U+202A to U+202E, U+2066 to U+2069), which a
 * title must not: printed as it is, U+202E shows what follows it reversed ("\u202esniw ON" reads "NO wins").
 */
export function hasBidiControl(text: string): boolean {
  return /[\u202a-\u202e\u2066-\u2069]/u.test(text);
}
