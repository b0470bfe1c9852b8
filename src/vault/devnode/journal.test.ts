import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { keccak256 } from "viem";
import { describe, expect, it } from "vitest";
import { tempDir } from "../testkit.ts";
import { TxJournal, readJournal } from "./journal.ts";

describe("TxJournal", () => {
  it("reads batches in order, each minus the transactions dropped from it, ignoring a torn last line", async () => {
    const path = join(tempDir(), "journal.jsonl");
    const j = new TxJournal(path);
    await j.appendBatch(["0x01", "0x02"]);
    await j.appendDrop([keccak256("0x02")]);
    await j.appendBatch(["0x03"]);
    // The same transaction sent again and refused as already known: only this second copy goes.
    await j.appendBatch(["0x03", "0x05"]);
    await j.appendDrop([keccak256("0x03")]);
    j.close();
    appendFileSync(path, '{"batch":["0x04"');
    expect(readJournal(path).batches).toEqual([["0x01"], ["0x03"], ["0x05"]]);
  });

  it("refuses a corrupt line in the middle instead of replaying a guess", () => {
    const path = join(tempDir(), "journal.jsonl");
    writeFileSync(path, '{"batch":["0x01"]}\nnot json\n{"batch":["0x02"]}\n');
    expect(() => readJournal(path)).toThrow(/corrupt journal line 2/);
  });

  it("is empty after clear and when missing", async () => {
    const path = join(tempDir(), "journal.jsonl");
    expect(readJournal(path).batches).toEqual([]);
    const j = new TxJournal(path);
    await j.appendBatch(["0x01"]);
    expect(j.size).toBe(1);
    j.clear();
    expect(j.size).toBe(0);
    j.close();
    expect(readJournal(path).batches).toEqual([]);
  });
});
