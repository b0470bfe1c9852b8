import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareQuestions, proposeMatches, suggestEventId, tokenize, type MarketCandidate } from "./matching.ts";

const YES_NO = ["YES", "NO"] as const;
const HOUR = 3_600_000;
const BOUND = { closeWithinMs: 48 * HOUR };
const OPTS = { minScore: 0.6, closeWithinMs: 48 * HOUR };

const q = (title: string, closeTime = "2027-06-30T16:00:00Z", outcomes: readonly string[] = YES_NO) => ({ title, closeTime, outcomes });
const market = (venue: string, venueMarketId: string, title: string, closeTime: string): MarketCandidate => ({ venue, venueMarketId, title, closeTime, outcomes: YES_NO });

describe("tokenize", () => {
  it("reads amounts, dates and comparisons the same however a venue writes them", () => {
    const forms = [
      "Will Bitcoin be above $200,000 on June 30, 2027?",
      "Bitcoin above $200k on Jun 30, 2027?",
      "BTC over $200K on 30th June 2027",
      "Bitcoin > $200 thousand on 2027-06-30?",
    ];
    const keys = forms.map((f) => [...tokenize(f).keys].sort());
    for (const k of keys) expect(k).toEqual(["above", "d30", "m6", "n200000", "y2027"]);
    for (const f of forms) expect([...tokenize(f).words]).toEqual(["bitcoin"]);
  });

  it("folds plurals and drops stop words, so rewordings share their words", () => {
    expect([...tokenize("Will the Fed cut rates in March 2027?").words].sort()).toEqual(["cut", "fed", "rate"]);
    expect([...tokenize("Fed cuts rates in March 2027?").words].sort()).toEqual(["cut", "fed", "rate"]);
  });

  it("tells a dollar amount from a year", () => {
    expect([...tokenize("Gold above $2,000 in 2027").keys].sort()).toEqual(["above", "n2000", "y2027"]);
  });
});

describe("compareQuestions", () => {
  it("scores an identical question closing at the same time 1", () => {
    const c = compareQuestions(q("Fed rate cut in March 2027?"), q("Fed rate cut in March 2027?"), BOUND);
    expect(c).toMatchObject({ score: 1, match: true });
  });

  it("matches rewordings and says why", () => {
    const c = compareQuestions(q("Will Bitcoin be above $200,000 on June 30, 2027?"), q("Bitcoin above $200k on Jun 30, 2027?", "2027-06-30T21:00:00Z"), BOUND);
    expect(c.match).toBe(true);
    expect(c.score).toBeGreaterThan(0.95);
    expect(c.reason).toMatch(/same numbers and dates \(200000, 2027, month 6, day 30, "above"\), closes 5h apart/);
  });

  it("refuses a different threshold, date, direction, outcome set or a close time beyond the bound, naming the difference", () => {
    const base = q("Bitcoin above $200k on Jun 30, 2027?");
    const refusals: [ReturnType<typeof q>, RegExp][] = [
      [q("Bitcoin above $250k on Jun 30, 2027?"), /250000 vs 200000|200000 vs 250000/],
      [q("Bitcoin above $200k on Jun 29, 2027?"), /day 29 vs day 30/],
      [q("Bitcoin below $200k on Jun 30, 2027?"), /"below" vs "above"/],
      [q("Bitcoin above $200k on Jun 30, 2027?", "2027-07-03T16:00:00Z"), /3 days apart, beyond the 2 days bound/],
      [q("Bitcoin above $200k on Jun 30, 2027?", undefined, ["UP", "DOWN"]), /different outcomes/],
    ];
    for (const [other, why] of refusals) {
      const c = compareQuestions(other, base, BOUND);
      expect(c).toMatchObject({ score: 0, match: false });
      expect(c.reason).toMatch(why);
      expect(c.wordScore).toBe(1);
    }
  });
});

const WORDS = ["bitcoin", "ethereum", "fed", "rate", "cut", "win", "election", "gold", "cpi", "house", "senate", "republican"];
const MONTHS = ["January", "March", "June", "Dec", "Sept"];
const arbQuestion = fc.record({
  words: fc.subarray(WORDS, { minLength: 1, maxLength: 5 }),
  amount: fc.integer({ min: 1, max: 500 }).map((n) => n * 1000),
  month: fc.constantFrom(...MONTHS),
  year: fc.integer({ min: 2026, max: 2030 }),
  comparison: fc.constantFrom("above", "below", ""),
  closeHours: fc.integer({ min: 0, max: 24 * 200 }),
});
type Arb = typeof arbQuestion extends fc.Arbitrary<infer T> ? T : never;
const render = (a: Arb) => q(`${a.words.join(" ")} ${a.comparison} $${a.amount.toLocaleString("en-US")} in ${a.month} ${a.year}?`, new Date(Date.UTC(2027, 0, 1) + a.closeHours * HOUR).toISOString());

describe("compareQuestions, properties", () => {
  it("is symmetric, and its score stays in [0, 1]", () => {
    fc.assert(
      fc.property(arbQuestion, arbQuestion, (a, b) => {
        const ab = compareQuestions(render(a), render(b), BOUND);
        const ba = compareQuestions(render(b), render(a), BOUND);
        expect(ab.score).toBe(ba.score);
        expect(ab.match).toBe(ba.match);
        expect(ab.score).toBeGreaterThanOrEqual(0);
        expect(ab.score).toBeLessThanOrEqual(1);
      }),
    );
  });

  it("scores a question against itself 1", () => {
    fc.assert(
      fc.property(arbQuestion, (a) => {
        expect(compareQuestions(render(a), render(a), BOUND).score).toBe(1);
      }),
    );
  });

  it("never matches questions whose amounts differ, however alike the rest", () => {
    fc.assert(
      fc.property(arbQuestion, fc.integer({ min: 1, max: 500 }), (a, other) => {
        fc.pre(other * 1000 !== a.amount);
        expect(compareQuestions(render(a), render({ ...a, amount: other * 1000 }), BOUND).match).toBe(false);
      }),
    );
  });

  it("never matches close times beyond the bound", () => {
    fc.assert(
      fc.property(arbQuestion, fc.integer({ min: 49, max: 24 * 400 }), fc.integer({ min: 1, max: 96 }), (a, later, boundHours) => {
        fc.pre(later > boundHours);
        const moved = { ...a, closeHours: a.closeHours + later };
        expect(compareQuestions(render(a), render(moved), { closeWithinMs: boundHours * HOUR }).match).toBe(false);
      }),
    );
  });
});

describe("proposeMatches", () => {
  const markets = [
    market("polymarket-sim", "0xfed", "Will the Fed cut rates in March 2027?", "2027-03-17T18:00:00Z"),
    market("kalshi-sim", "KXFEDCUT-27MAR", "Fed rate cut in March 2027?", "2027-03-17T19:00:00Z"),
    market("limitless-sim", "fed-cuts-rates-in-march-2027", "Fed cuts rates in March 2027?", "2027-03-18T00:00:00Z"),
    market("polymarket-sim", "0xbtc200", "Will Bitcoin be above $200,000 on June 30, 2027?", "2027-06-30T16:00:00Z"),
    market("kalshi-sim", "KXBTCD-T200000", "Bitcoin above $200k on Jun 30, 2027?", "2027-06-30T21:00:00Z"),
    market("kalshi-sim", "KXBTCD-T250000", "Bitcoin above $250k on Jun 30, 2027?", "2027-06-30T21:00:00Z"),
    market("limitless-sim", "fed-rate-cut-in-january-2027", "Fed rate cut in January 2027?", "2027-01-27T20:00:00Z"),
  ];
  const events = [
    { eventId: "fed-cut-2027-01", title: "Fed rate cut in January 2027?", closeTime: "2027-01-27T19:00:00Z", outcomes: YES_NO, venues: ["polymarket-sim", "kalshi-sim"] },
  ];

  it("groups one market per venue that all ask the same question, and adds a new venue to an existing event", () => {
    const { proposals, unmatched, nearMisses } = proposeMatches(markets, events, OPTS);
    const shape = proposals.map((p) => ({ kind: p.kind, event: p.kind === "add_listing" ? p.eventId : undefined, ids: p.members.map((m) => m.venueMarketId) }));
    expect(shape).toEqual([
      { kind: "add_listing", event: "fed-cut-2027-01", ids: ["fed-rate-cut-in-january-2027"] },
      { kind: "new_event", event: undefined, ids: ["KXBTCD-T200000", "0xbtc200"] },
      { kind: "new_event", event: undefined, ids: ["KXFEDCUT-27MAR", "fed-cuts-rates-in-march-2027", "0xfed"] },
    ]);
    for (const p of proposals) {
      expect(p.score).toBeGreaterThanOrEqual(OPTS.minScore);
      expect(p.score).toBeLessThanOrEqual(1);
    }
    expect(unmatched.map((m) => m.venueMarketId)).toEqual(["KXBTCD-T250000"]);
    expect(nearMisses).toContainEqual(expect.objectContaining({ a: "kalshi-sim:KXBTCD-T250000", b: "polymarket-sim:0xbtc200", reason: expect.stringMatching(/250000 vs 200000/) }));
  });

  it("proposes the same whatever order the markets come in", () => {
    const once = proposeMatches(markets, events, OPTS);
    fc.assert(
      fc.property(fc.shuffledSubarray(markets, { minLength: markets.length }), (shuffled) => {
        expect(proposeMatches(shuffled, events, OPTS)).toEqual(once);
      }),
      { numRuns: 30 },
    );
  });

  it("proposes nothing below the minimum score", () => {
    expect(proposeMatches(markets, events, { ...OPTS, minScore: 1 }).proposals.every((p) => p.score >= 1)).toBe(true);
  });
});

describe("suggestEventId", () => {
  it("makes a kebab-case id that is not taken", () => {
    expect(suggestEventId("Bitcoin above $200,000 on June 30, 2027?", () => false)).toBe("bitcoin-above-200000-on-june-30-2027");
    const taken = new Set(["fed-rate-cut-in-march-2027"]);
    expect(suggestEventId("Fed rate cut in March 2027?", (id) => taken.has(id))).toBe("fed-rate-cut-in-march-2027-2");
  });
});
