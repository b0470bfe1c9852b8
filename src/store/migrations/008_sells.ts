import type { Kysely, Migration } from "kysely";

/**
 * What a sell order needs beyond a buy's columns (DESIGN §12): the shares it asks to sell, the shares
 * the vault holds in escrow for it, and the USDC its fills paid after fees. The shares sold are
 * `filled_shares`, the escrow's, settlement's and return's transactions `lock_tx`, `settle_tx` and
 * `release_tx`, as for a buy. A buy's row keeps 0 in each. Kysely<any> on purpose, as in 001.
 */
export const sells: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    for (const column of ["shares", "escrowed", "proceeds"]) {
      await db.schema.alterTable("orders").addColumn(column, "bigint", (c) => c.notNull().defaultTo(0)).execute();
    }
  },
  async down(db: Kysely<any>): Promise<void> {
    for (const column of ["proceeds", "escrowed", "shares"]) await db.schema.alterTable("orders").dropColumn(column).execute();
  },
};
