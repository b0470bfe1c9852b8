import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { sendPrices } from "./stream.ts";

/** A client's connection that takes `buffer` bytes and then nothing until it reads again (release()). */
function slowClient(buffer: number) {
  const received: string[] = [];
  let waiting: (() => void)[] = [];
  let reading = true;
  const res = new Writable({
    highWaterMark: buffer,
    write(chunk: Buffer, _encoding, done) {
      received.push(chunk.toString());
      if (reading) done();
      else waiting.push(done);
    },
  });
  return {
    res,
    received,
    stop() {
      reading = false;
    },
    read() {
      reading = true;
      const done = waiting;
      waiting = [];
      for (const d of done) d();
    },
  };
}

describe("sendPrices", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("sends each new record; to a client that stopped reading it sends nothing more, then the newest once it reads again", () => {
    const client = slowClient(1024);
    let n = 0;
    const record = () => JSON.stringify({ n, pad: "x".repeat(400) });
    const end = sendPrices(client.res, record, record(), 100, () => undefined);
    n++;
    vi.advanceTimersByTime(100);
    expect(client.received.map((c) => JSON.parse(c.split("data: ")[1]!).n)).toEqual([0, 1]);

    client.stop();
    for (let i = 0; i < 1_000; i++) {
      n++;
      vi.advanceTimersByTime(100);
    }
    // A thousand records came; the stream held back all but the few its buffer took before it was full.
    expect(client.received.length).toBeLessThanOrEqual(5);
    expect(client.res.writableLength).toBeLessThan(2 * 1024);

    client.read();
    vi.advanceTimersByTime(100);
    expect(JSON.parse(client.received.at(-1)!.split("data: ")[1]!).n).toBe(n);
    end();
    expect(client.res.writableEnded).toBe(true);
  });

  it("ends the stream when a read fails", () => {
    const client = slowClient(1024);
    const errors: unknown[] = [];
    sendPrices(
      client.res,
      () => {
        throw new Error("book gone");
      },
      "{}",
      100,
      (err) => errors.push(err),
    );
    vi.advanceTimersByTime(100);
    expect(errors).toHaveLength(1);
    expect(client.res.writableEnded).toBe(true);
  });
});
