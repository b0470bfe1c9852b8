import { invalidCursor } from "../domain/errors.ts";

/** Where a page of a list, newest first, ended: its last item's creation time and id. Opaque to clients. */
export interface PageCursor {
  createdAt: string;
  id: string;
}

export function encodeCursor(last: PageCursor): string {
  return Buffer.from(JSON.stringify([last.createdAt, last.id]), "utf8").toString("base64url");
}

/**
 * A cursor the server did not make is invalid_request: one whose time is not an instant as the store writes it
 * (`toISOString`), which a page would otherwise be cut at as text, and one holding a NUL character (which
 * PostgreSQL's text cannot hold) among them.
 */
export function decodeCursor(cursor: string): PageCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || typeof parsed[0] !== "string" || typeof parsed[1] !== "string" || !isInstant(parsed[0]) || parsed[1].includes("\0")) {
    throw invalidCursor();
  }
  return { createdAt: parsed[0], id: parsed[1] };
}

/** Whether `text` is an instant written as `Date.prototype.toISOString` writes it. */
function isInstant(text: string): boolean {
  const time = Date.parse(text);
  return !Number.isNaN(time) && new Date(time).toISOString() === text;
}
