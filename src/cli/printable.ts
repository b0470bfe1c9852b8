/**
 * Text from the store, a venue or the server's answer as a terminal shows it: a control character or a bidirectional
 * override (a key named before names refused them, a venue's market title, an error page) written as its \u escape, so that it cannot
 * forge a line, rewrite the screen or reverse what follows it on the line.
 */
export function printable(text: string): string {
  return text.replace(/[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
