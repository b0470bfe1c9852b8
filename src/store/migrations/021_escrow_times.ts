import { sql, type Kysely, type Migration } from "kysely";

/*
 * When each sell's escrow was recorded (locked_at), for the sells escrowed before 016: it gave the buys' locks their
 * creation time and left the sells' escrows without one, so recovery, which waits for an unanswered order's hold
 * deadline from its lock time, read such a sell's escrow on chain at every pass until it ended. They get their
 * order's creation time, the best they have (before the escrow, so the deadline is read no later than it passes).
 * Kysely<any> on purpose, as in 001. Down leaves the lock times as they are.
 */
export const escrowTimes: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.updateTable("orders").set({ locked_at: sql.ref("created_at") }).where("escrowed", ">", 0).where("locked_at", "is", null).execute();
  },

  async down(): Promise<void> {},
};
