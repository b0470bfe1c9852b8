import { type Kysely, type Migration } from "kysely";

/*
 * What every instance on this database must agree on about the chain: where the contracts are
 * (chain_deployments, one row per chain id, also the claim of the one instance deploying them), and
 * how far the operator's nonces were handed out (chain_nonces, one row per chain and operator). The
 * chain is named by its id and its genesis block's hash, so a dev chain started afresh starts at
 * nonce 0 here too. Kysely<any> on purpose, as in 001.
 */
export const chainRecords: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable("chain_deployments")
      .addColumn("chain_id", "bigint", (c) => c.primaryKey())
      // Null until the first deployment is recorded; then all five are set together.
      .addColumn("usdc", "text")
      .addColumn("vault", "text")
      .addColumn("sot", "text")
      .addColumn("block", "bigint")
      .addColumn("build", "text")
      .addColumn("claimed_by", "text")
      .addColumn("claimed_until", "text")
      .execute();

    await db.schema
      .createTable("chain_nonces")
      .addColumn("chain_id", "bigint", (c) => c.notNull())
      .addColumn("genesis", "text", (c) => c.notNull())
      .addColumn("operator", "text", (c) => c.notNull())
      .addColumn("handed_out", "bigint", (c) => c.notNull())
      .addColumn("reserved_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("chain_nonces_pk", ["chain_id", "genesis", "operator"])
      .execute();
  },

  async down(db: Kysely<any>): Promise<void> {
    for (const table of ["chain_nonces", "chain_deployments"]) await db.schema.dropTable(table).execute();
  },
};
