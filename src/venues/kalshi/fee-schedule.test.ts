import { describe, expect, it } from "vitest";
import { KalshiFeeSchedule, type Scheduled } from "./fee-schedule.ts";
import type { KalshiEventFee, KalshiSeriesFee } from "./wire.ts";

const market = { ticker: "KXBTCD-26DEC31-T150000", event_ticker: "KXBTCD-26DEC31" };
const rate = (ratePpm: bigint) => ({ kind: "kalshi" as const, ratePpm });
const quadratic = (fee_multiplier: number): KalshiSeriesFee => ({ fee_type: "quadratic", fee_multiplier });

/** A schedule that read KXBTCD at multiplier 1 and its event with no override at time 100. */
function schedule(series: Scheduled<KalshiSeriesFee>[] = [], events: Scheduled<KalshiEventFee>[] = []): KalshiFeeSchedule {
  const s = new KalshiFeeSchedule();
  s.readSeries("KXBTCD", { at: 100, fee: quadratic(1) });
  s.readEvent("KXBTCD-26DEC31", { at: 100, fee: {} });
  s.schedule(new Map([["KXBTCD", series]]), new Map([["KXBTCD-26DEC31", events]]));
  return s;
}

describe("KalshiFeeSchedule", () => {
  it("charges the fee as read where nothing is scheduled", () => {
    const s = schedule();
    expect(s.changes(market)).toBe(false);
    expect(s.at(market, 1_000)).toEqual(rate(70_000n));
  });

  it("applies a change from its time on, and the latest change of several", () => {
    const s = schedule([
      { at: 300, fee: quadratic(0.5) },
      { at: 200, fee: quadratic(1.5) },
    ]);
    expect(s.changes(market)).toBe(true);
    expect(s.at(market, 199)).toEqual(rate(70_000n));
    expect(s.at(market, 200)).toEqual(rate(105_000n));
    expect(s.at(market, 300)).toEqual(rate(35_000n));
  });

  it("does not apply a change from before the read again: the read already shows it, or what came after it", () => {
    const s = schedule([{ at: 50, fee: quadratic(2) }], [{ at: 100, fee: { fee_multiplier_override: 3 } }]);
    expect(s.changes(market)).toBe(false);
    expect(s.at(market, 1_000)).toEqual(rate(70_000n));
  });

  it("lets an event's change override its series, and a cleared override fall back to the series' fee", () => {
    const s = schedule([], [
      { at: 200, fee: { fee_multiplier_override: 0.25 } },
      { at: 300, fee: { fee_type_override: null, fee_multiplier_override: null } },
    ]);
    expect(s.at(market, 250)).toEqual(rate(17_500n));
    expect(s.at(market, 300)).toEqual(rate(70_000n));
  });

  it("prices the highest fee of a window: a raise ahead counts, one past its end or a cut does not", () => {
    const s = schedule([
      { at: 200, fee: quadratic(0.5) },
      { at: 400, fee: quadratic(2) },
    ]);
    expect(s.highest(market, 150, 350)).toEqual(rate(70_000n));
    expect(s.highest(market, 250, 399)).toEqual(rate(35_000n));
    expect(s.highest(market, 250, 400)).toEqual(rate(140_000n));
  });

  it("throws for a window in which a fee the adapter cannot model applies, and not before it", () => {
    const s = schedule([{ at: 200, fee: { fee_type: "flat", fee_multiplier: 1 } }]);
    expect(s.highest(market, 100, 199)).toEqual(rate(70_000n));
    expect(() => s.highest(market, 100, 200)).toThrow(/flat/);
  });

  it("gives no fee, at any time, to a market with a change whose time cannot be read, until a read lists it no more", () => {
    const s = schedule([], [{ at: undefined, fee: { fee_multiplier_override: 2 } }]);
    expect(s.changes(market)).toBe(true);
    expect(() => s.at(market, 1_000)).toThrow(/scheduled_ts is not a time/);
    expect(() => s.highest(market, 1_000, 2_000)).toThrow(/scheduled_ts is not a time/);
    s.schedule(new Map(), new Map());
    expect(s.at(market, 1_000)).toEqual(rate(70_000n));
  });
});
