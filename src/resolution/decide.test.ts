import { describe, expect, it } from "vitest";
import type { VenueResolution } from "../venues/venue.ts";
import { decide } from "./decide.ts";

const reports = (entries: Record<string, VenueResolution>) => new Map(Object.entries(entries));
const yes: VenueResolution = { state: "resolved", outcome: "YES" };
const no: VenueResolution = { state: "resolved", outcome: "NO" };

describe("deciding an event from its venues' reports", () => {
  it("resolves it once every venue paid out the same outcome", () => {
    expect(decide(reports({ polymarket: yes, kalshi: yes }))).toEqual({ status: "resolved", outcome: "YES", venueReports: { polymarket: "YES", kalshi: "YES" } });
  });

  it("waits while any venue has not paid out, whatever the others said", () => {
    expect(decide(reports({ polymarket: yes, kalshi: { state: "closed" } }))).toBeUndefined();
    expect(decide(reports({ polymarket: no, kalshi: { state: "open" } }))).toBeUndefined();
    expect(decide(reports({}))).toBeUndefined();
  });

  it("calls it disputed when the venues paid out different outcomes, or one voided its market", () => {
    expect(decide(reports({ polymarket: yes, kalshi: no }))).toEqual({ status: "disputed", venueReports: { polymarket: "YES", kalshi: "NO" } });
    expect(decide(reports({ polymarket: yes, limitless: { state: "voided" } }))).toEqual({ status: "disputed", venueReports: { polymarket: "YES", limitless: "voided" } });
    expect(decide(reports({ kalshi: { state: "voided" } }))).toEqual({ status: "disputed", venueReports: { kalshi: "voided" } });
  });
});
