import { sql, type Kysely, type Migration } from "kysely";

/*
 * The settled orders whose settlement a reorganisation removed and that the stranded-hold sweep settles again, recorded
 * with no settle_tx before it sends the settlement and read at every recovery tick until its transaction is recorded
 * (Store.resettling). Along orders_status_idx the sweep would read every order ever settled to find the few it wants;
 * these indexes hold those alone, one for each settled status, shaped as 024's for the same reasons. Kysely<any> on
 * purpose, as in 001.
 */
export const resettling: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    for (const status of ["filled", "partially_filled"]) {
      await db.schema
        .createIndex(`orders_${status}_resettling_idx`)
        .on("orders")
        .columns(["status", "created_at", "id"])
        .where("status", "=", status)
        .where(sql.ref("settle_tx"), "is", null)
        .where(sql.ref("release_tx"), "is", null)
        .execute();
    }
  },

  async down(db: Kysely<any>): Promise<void> {
    for (const status of ["filled", "partially_filled"]) await db.schema.dropIndex(`orders_${status}_resettling_idx`).execute();
  },
};
