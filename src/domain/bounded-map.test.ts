import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BoundedMap } from "./bounded-map.ts";

describe("BoundedMap", () => {
  it("keeps the newest keys set, at most its capacity, each with its last value", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 12 }), fc.integer())), (capacity, sets) => {
        const m = new BoundedMap<number, number>(capacity);
        // The model: a plain Map whose oldest first-set key goes once it holds more than `capacity`.
        const model = new Map<number, number>();
        for (const [k, v] of sets) {
          m.set(k, v);
          model.set(k, v);
          if (model.size > capacity) model.delete(model.keys().next().value!);
          expect(m.size).toBeLessThanOrEqual(capacity);
        }
        expect([...m]).toEqual([...model]);
      }),
    );
  });

  it("setting a key it holds lets nothing go", () => {
    const m = new BoundedMap<string, number>(2);
    m.set("a", 1).set("b", 2).set("a", 3);
    expect([...m]).toEqual([
      ["a", 3],
      ["b", 2],
    ]);
  });

  it("refuses a capacity that is not a positive integer", () => {
    expect(() => new BoundedMap(0)).toThrow(RangeError);
    expect(() => new BoundedMap(1.5)).toThrow(RangeError);
  });
});
