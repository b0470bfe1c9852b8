import type { Compilable, CompiledQuery, Kysely, QueryResult } from "kysely";
import { BoundedMap } from "../domain/bounded-map.ts";

const SLOT = Symbol("slot");
/** Shapes kept: a few dozen in use (an insert of n fills is a shape per n), as many as SQLite's statements kept. */
const KEPT_SHAPES = 500;

/** What a value of the query is, while it is built once: the name of the value each run fills in. */
interface Slot {
  readonly [SLOT]: string;
}

/** Names a value of a query built once (QueryShapes.run): typed as anything, since it stands for the value. */
export type Slots = (name: string) => never;

const slot: Slots = (name) => ({ [SLOT]: name }) as never;

function isSlot(value: unknown): value is Slot {
  return typeof value === "object" && value !== null && SLOT in value;
}

interface Shape {
  compiled: CompiledQuery;
  /** For each parameter of the compiled query, the name of the value that fills it, or undefined for a constant of the shape. */
  names: (string | undefined)[];
}

/**
 * The queries an order runs on every step, built by Kysely and compiled once per shape, then run with
 * each call's values: building and compiling a query through Kysely's immutable nodes took ~0.1 ms of
 * the event loop a query in the server (an order runs about a dozen), the statement itself less.
 *
 * A shape is everything that changes the SQL text (which columns are set, how long an IN list is,
 * which clauses are there); the caller names it in `shape` and builds the query with `slot(name)` in
 * place of each value. Values never change the text (Kysely sends each as a parameter), so one
 * compiled query serves every call of its shape.
 */
export class QueryShapes<DB> {
  private readonly shapes = new BoundedMap<string, Shape>(KEPT_SHAPES);

  constructor(private readonly db: Kysely<DB>) {}

  /** Runs the query of `shape` with `values`, on `on` (a transaction) or else the store's connections. */
  async run<R>(shape: string, build: (slot: Slots) => Compilable<R>, values: Readonly<Record<string, unknown>>, on: Kysely<DB> = this.db): Promise<QueryResult<R>> {
    let s = this.shapes.get(shape);
    if (s === undefined) {
      const compiled = build(slot).compile();
      const names = compiled.parameters.map((p) => (isSlot(p) ? p[SLOT] : undefined));
      for (const name of names) if (name !== undefined && !(name in values)) throw new Error(`query shape ${shape}: no value named ${name}`);
      this.shapes.set(shape, (s = { compiled, names }));
    }
    const { compiled, names } = s;
    const parameters = names.map((name, i) => {
      if (name === undefined) return compiled.parameters[i];
      const value = values[name];
      // Kysely's builder leaves out a column whose value is undefined, which changes the text: a shape's caller must leave it out of the row too.
      if (value === undefined) throw new Error(`query shape ${shape}: ${name} is undefined`);
      return value;
    });
    return on.executeQuery<R>({ ...compiled, parameters } as CompiledQuery<R>);
  }
}
