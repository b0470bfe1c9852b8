import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { LazyLogger } from "./lazy-logger.ts";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  return { lines, log: pino({ level: "info" }, stream) };
}

describe("LazyLogger", () => {
  it("writes a child's lines with its bindings and its parents', as pino's own children would", () => {
    const { lines, log } = capture();
    const root = new LazyLogger(log);
    const request = root.child({ request_id: "req_1" });
    request.child({ order_id: "ord_1" }).info({ step: "placed" }, "order placed");
    request.error({ err: new Error("boom") }, "request failed");
    root.info("serving");
    expect(lines.map(({ time: _time, pid: _pid, hostname: _hostname, err: _err, ...l }) => l)).toEqual([
      { level: 30, request_id: "req_1", order_id: "ord_1", step: "placed", msg: "order placed" },
      { level: 50, request_id: "req_1", msg: "request failed" },
      { level: 30, msg: "serving" },
    ]);
    expect(lines[1]!.err).toMatchObject({ type: "Error", message: "boom" });
  });

  it("makes no pino child for a child that never logs", () => {
    const { log } = capture();
    let made = 0;
    const counting = Object.assign(Object.create(log) as typeof log, {
      child: (...args: Parameters<typeof log.child>) => {
        made++;
        return log.child(...args);
      },
    });
    const root = new LazyLogger(counting);
    for (let i = 0; i < 100; i++) root.child({ request_id: `req_${i}` });
    expect(made).toBe(0);
    root.child({ request_id: "req_x" }).warn("once");
    expect(made).toBe(1);
  });
});
