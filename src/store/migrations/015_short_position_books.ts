import type { Kysely, Migration } from "kysely";
import { bookPositions } from "./013_position_books.ts";

/*
 * Books folded again from the orders and redemptions: a book that took in a sell before the buy it sold (a
 * buy finished by recovery after its shares were sold) took off only the shares it held then, and the buy
 * added them back, so it holds shares the client sold. applyMove now lets such a book go short until the
 * buy covers it (docs/positions.md); the fold gives every book what its moves leave. Kysely<any> on
 * purpose, as in 001. Down leaves the books as they are.
 */
export const shortPositionBooks: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.deleteFrom("positions").execute();
    await bookPositions(db);
  },

  async down(): Promise<void> {},
};
