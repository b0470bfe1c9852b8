import BetterSqlite3 from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { QueryShapes } from "./query-shapes.ts";

interface DB {
  items: { id: string; qty: bigint; note: string | null };
}

describe("QueryShapes", () => {
  let db: Kysely<DB>;
  let shapes: QueryShapes<DB>;
  let builds: number;
  beforeEach(async () => {
    const sqlite = new BetterSqlite3(":memory:");
    sqlite.defaultSafeIntegers(true);
    db = new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }) });
    await db.schema.createTable("items").addColumn("id", "text", (c) => c.primaryKey()).addColumn("qty", "integer", (c) => c.notNull()).addColumn("note", "text").execute();
    shapes = new QueryShapes(db);
    builds = 0;
  });
  afterEach(() => db.destroy());

  const insert = (id: string, qty: bigint, note: string | null) =>
    shapes.run(
      "insert",
      (slot) => {
        builds++;
        return db.insertInto("items").values({ id: slot("id"), qty: slot("qty"), note: slot("note") }).returningAll();
      },
      { id, qty, note },
    );
  // A constant of the shape (the 5) stays in every run; only the named values change.
  const bump = (ids: readonly string[], by: bigint) =>
    shapes.run(
      `bump ${ids.length}`,
      (slot) => {
        builds++;
        return db
          .updateTable("items")
          .set((eb) => ({ qty: eb("qty", "+", slot("by")) }))
          .where(
            "id",
            "in",
            ids.map((_, i) => slot(`id ${i}`)),
          )
          .where("qty", "<", 5n)
          .returning(["id", "qty"]);
      },
      { by, ...Object.fromEntries(ids.map((id, i) => [`id ${i}`, id])) },
    );

  it("runs each call with its own values, a shape built and compiled once", async () => {
    expect((await insert("a", 1n, null)).rows).toEqual([{ id: "a", qty: 1n, note: null }]);
    expect((await insert("b", 2n, "two")).rows).toEqual([{ id: "b", qty: 2n, note: "two" }]);
    await insert("c", 9n, null);
    expect(builds).toBe(1);
    expect((await bump(["a", "b", "c"], 3n)).rows).toEqual([
      { id: "a", qty: 4n },
      { id: "b", qty: 5n },
    ]);
    expect((await bump(["a"], 10n)).rows).toEqual([{ id: "a", qty: 14n }]);
    expect((await bump(["b", "c", "a"], 1n)).rows).toEqual([]);
    expect(builds).toBe(3);
    expect(await db.selectFrom("items").selectAll().orderBy("id").execute()).toEqual([
      { id: "a", qty: 14n, note: null },
      { id: "b", qty: 5n, note: "two" },
      { id: "c", qty: 9n, note: null },
    ]);
  });

  it("refuses a run without a value its shape names, or with one undefined, and writes nothing", async () => {
    await expect(shapes.run("insert", (slot) => db.insertInto("items").values({ id: slot("id"), qty: slot("qty") }), { id: "x" })).rejects.toThrow(/no value named qty/);
    await insert("a", 1n, null);
    await expect(insert("b", 1n, undefined as unknown as null)).rejects.toThrow(/note is undefined/);
    expect(await db.selectFrom("items").select("id").execute()).toEqual([{ id: "a" }]);
  });
});
