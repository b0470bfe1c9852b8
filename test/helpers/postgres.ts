import { randomBytes } from "node:crypto";
import pg from "pg";

/** TEST_DATABASE_URL (`.ci/run` sets it): a test that needs PostgreSQL fails without it, it never skips. */
export function testDatabaseUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error("TEST_DATABASE_URL is not set: these tests need a PostgreSQL server (e.g. postgres://postgres@127.0.0.1:5432/test).");
  return url;
}

export interface TestDatabase {
  /** TEST_DATABASE_URL with its database replaced by the fresh one. */
  url: string;
  /** Drops the database, closing any connection still open to it. */
  drop(): Promise<void>;
}

/**
 * A fresh, empty database on TEST_DATABASE_URL's server, so that each test or test server starts from
 * nothing, as a new deployment does, and tests running side by side never see each other's rows.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = testDatabaseUrl();
  const name = `crossfill_test_${randomBytes(6).toString("hex")}`;
  await onServer(admin, `CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => onServer(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

async function onServer(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`PostgreSQL at TEST_DATABASE_URL is unreachable: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
