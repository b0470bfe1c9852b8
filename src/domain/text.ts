/**
 * Whether text holds a control character (Unicode `Cc`: line breaks, tabs, escapes, C1), which a name or a title
 * must not: printed as it is, a line break forges a line and an escape sequence rewrites the terminal.
 */
export function hasControlCharacter(text: string): boolean {
  return /\p{Cc}/u.test(text);
}
