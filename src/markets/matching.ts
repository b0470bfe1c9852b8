/**
 * Cross-venue matching of markets: pure functions that propose which venue markets ask the same
 * question, for a person to accept. Only identical questions may share a book, so the matching is
 * strict where wording is not: every number, date and comparison word must agree exactly, while the
 * remaining words only need to overlap (token-set Jaccard) and may be phrased differently.
 */

/** A venue market as matching sees it: its venue, id, question, close time and outcome names. */
export interface MarketCandidate {
  venue: string;
  venueMarketId: string;
  title: string;
  closeTime: string;
  outcomes: readonly string[];
}

/** An event of the catalog as matching sees it: the venues already listing it can take no second listing. */
export interface EventCandidate {
  eventId: string;
  title: string;
  closeTime: string;
  outcomes: readonly string[];
  venues: readonly string[];
}

export interface MatchOptions {
  /** Lowest score proposed, in [0, 1]. */
  minScore: number;
  /** Close times further apart than this never match. */
  closeWithinMs: number;
}

export const DEFAULT_MATCH_OPTIONS: MatchOptions = { minScore: 0.6, closeWithinMs: 48 * 3_600_000 };

/** A question reduced to what matching compares. */
export interface Tokens {
  /** Plain words, normalised (stop words dropped, plurals folded, synonyms mapped). */
  words: Set<string>;
  /** Numbers, dates and comparison words: two questions that differ in any of them are different questions. */
  keys: Set<string>;
}

export interface Comparison {
  /** In [0, 1]; 0 whenever `match` is false. */
  score: number;
  match: boolean;
  /** Why, in words a person reviewing the proposal can check. */
  reason: string;
  /** Jaccard of the plain words alone: how close a refused pair came (near misses are the refusals with a high one). */
  wordScore: number;
}

const STOP_WORDS = new Set(
  "a an the will be is are was to of in on at by for with than end s this that there its it does do did".split(" "),
);

const SYNONYMS: Record<string, string> = {
  btc: "bitcoin",
  eth: "ethereum",
  sol: "solana",
  fomc: "fed",
  usa: "us",
  gop: "republican",
  democratic: "democrat",
  dems: "democrat",
  over: "above",
  exceed: "above",
  exceeds: "above",
  higher: "above",
  greater: "above",
  under: "below",
  lower: "below",
  less: "below",
  won: "win",
  winning: "win",
  cutting: "cut",
  "%": "percent",
  ">": "above",
  "<": "below",
};

/** Words that reverse or bound a question: "above" and "below" the same price are opposite markets. */
const KEY_WORDS = new Set(["above", "below", "before", "after", "not", "no", "between"]);

const MONTHS: Record<string, number> = {
  jan: 1, january: 1, feb: 2, february: 2, mar: 3, march: 3, apr: 4, april: 4, may: 5, jun: 6, june: 6,
  jul: 7, july: 7, aug: 8, august: 8, sep: 9, sept: 9, september: 9, oct: 10, october: 10, nov: 11, november: 11,
  dec: 12, december: 12,
};

const SCALE: Record<string, number> = { k: 1e3, thousand: 1e3, m: 1e6, million: 1e6, mn: 1e6, b: 1e9, bn: 1e9, billion: 1e9 };

/** Splits a question into words, numbers (with their k/m/b scale) and the symbols that carry meaning. */
function lex(text: string): string[] {
  const plain = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/s&p/g, "sp")
    .replace(/u\.s\./g, "us")
    // ISO dates become their parts, so 2026-12-31 reads as December 31, 2026
    .replace(/\b(\d{4})-(\d{2})-(\d{2})\b/g, (_, y: string, m: string, d: string) => ` ${y} month${Number(m)} ${Number(d)} `)
    // thousands separators, then ordinals: 150,000 → 150000, 31st → 31
    .replace(/(\d),(?=\d{3}\b)/g, "$1")
    .replace(/(\d)(st|nd|rd|th)\b/g, "$1");
  return plain.match(/\d+(?:\.\d+)?(?:k|m|mn|b|bn)?\b|[a-z0-9]+|[%<>$]/g) ?? [];
}

function fold(word: string): string {
  const mapped = SYNONYMS[word] ?? word;
  // plural and third-person s: "rates" is "rate", "cuts" is "cut"; not "us", "bitcoin's" is lexed apart already
  if (mapped.length > 3 && mapped.endsWith("s") && !/(ss|us|is)$/.test(mapped)) return SYNONYMS[mapped.slice(0, -1)] ?? mapped.slice(0, -1);
  return mapped;
}

/** Reduces a question to its words and its must-match keys (numbers as n…, years as y…, months as m…, days as d…). */
export function tokenize(text: string): Tokens {
  const raw = lex(text);
  const words = new Set<string>();
  const keys = new Set<string>();
  const monthAt = (i: number): number | undefined => {
    const t = raw[i];
    if (t === undefined) return undefined;
    const iso = /^month(\d+)$/.exec(t);
    return iso ? Number(iso[1]) : MONTHS[t];
  };
  for (let i = 0; i < raw.length; i++) {
    const t = raw[i]!;
    if (t === "$") continue;
    const month = monthAt(i);
    if (month !== undefined) {
      keys.add(`m${month}`);
      continue;
    }
    const num = /^(\d+(?:\.\d+)?)(k|m|mn|b|bn)?$/.exec(t);
    if (num) {
      let value = Number(num[1]);
      const next = raw[i + 1];
      const scale = num[2] ?? (next !== undefined && SCALE[next] !== undefined && next.length > 1 ? next : undefined);
      if (scale !== undefined) {
        value *= SCALE[scale]!;
        if (num[2] === undefined) i++;
      }
      // a bare 1900–2199 is a year, a dollar amount never is; a small number beside a month is its day
      const plain = scale === undefined && raw[i - 1] !== "$" && Number.isInteger(value);
      const beside = monthAt(i - 1) !== undefined || monthAt(i + 1) !== undefined;
      if (plain && value >= 1900 && value <= 2199) keys.add(`y${value}`);
      else if (plain && beside && value >= 1 && value <= 31) keys.add(`d${value}`);
      else keys.add(`n${Number(value.toPrecision(12))}`);
      continue;
    }
    const w = fold(t);
    if (STOP_WORDS.has(w)) continue;
    if (KEY_WORDS.has(w)) keys.add(w);
    else words.add(w);
  }
  return { words, keys };
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const x of a) if (b.has(x)) shared++;
  return shared / (a.size + b.size - shared);
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}

function hours(ms: number): string {
  const h = ms / 3_600_000;
  return h < 48 ? `${Number(h.toFixed(1))}h` : `${Number((h / 24).toFixed(1))} days`;
}

/** Renders keys readably, amounts first, then the date from year to day, then words: 200000, 2027, month 6, day 30, "above". */
function showKeys(keys: Iterable<string>): string {
  const rank = (k: string) => ["n", "y", "m", "d"].indexOf(k[0]!) + (/^[nymd][\d.]/.test(k) ? 0 : 10);
  const shown = [...keys]
    .sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1))
    .map((k) => {
      if (!/^[nymd][\d.]/.test(k)) return `"${k}"`;
      if (k[0] === "m") return `month ${k.slice(1)}`;
      if (k[0] === "d") return `day ${k.slice(1)}`;
      return k.slice(1);
    });
  return shown.length === 0 ? "none" : shown.join(", ");
}

/**
 * Compares two questions. A match needs the same outcomes, the same numbers, dates and comparison
 * words, close times within the bound, and words that overlap; its score is the Jaccard index of
 * all tokens, lowered by up to a tenth as the close times drift toward the bound. Symmetric in a, b.
 */
export function compareQuestions(
  a: { title: string; closeTime: string; outcomes: readonly string[] },
  b: { title: string; closeTime: string; outcomes: readonly string[] },
  opts: Pick<MatchOptions, "closeWithinMs">,
): Comparison {
  const ta = tokenize(a.title);
  const tb = tokenize(b.title);
  const wordScore = jaccard(ta.words, tb.words);
  const apart = Math.abs(Date.parse(a.closeTime) - Date.parse(b.closeTime));
  const sameOutcomes = a.outcomes.length === b.outcomes.length && a.outcomes.every((o, i) => o === b.outcomes[i]);
  const refused = (why: string): Comparison => ({ score: 0, match: false, reason: why, wordScore });
  if (!sameOutcomes) return refused(`different outcomes: ${a.outcomes.join("/")} vs ${b.outcomes.join("/")}`);
  if (!sameSet(ta.keys, tb.keys)) {
    const onlyA = [...ta.keys].filter((k) => !tb.keys.has(k));
    const onlyB = [...tb.keys].filter((k) => !ta.keys.has(k));
    return refused(`different numbers, dates or comparisons: ${showKeys(onlyA)} vs ${showKeys(onlyB)}`);
  }
  if (!(apart <= opts.closeWithinMs)) return refused(`close times ${hours(apart)} apart, beyond the ${hours(opts.closeWithinMs)} bound`);
  const all = (t: Tokens) => new Set([...t.words, ...t.keys]);
  const text = jaccard(all(ta), all(tb));
  const score = text * (1 - 0.1 * (apart / Math.max(opts.closeWithinMs, 1)));
  const shared = [...ta.words].filter((w) => tb.words.has(w)).length;
  const union = ta.words.size + tb.words.size - shared;
  return {
    score,
    match: score > 0,
    reason:
      `words ${shared}/${union} shared (text ${text.toFixed(2)}), same numbers and dates (${showKeys(ta.keys)}), ` +
      `closes ${hours(apart)} apart (bound ${hours(opts.closeWithinMs)}), both ${a.outcomes.join("/")}`,
    wordScore,
  };
}

export type Proposal =
  | { kind: "add_listing"; eventId: string; members: MarketCandidate[]; score: number; reason: string }
  | { kind: "new_event"; members: MarketCandidate[]; score: number; reason: string };

export interface NearMiss {
  a: string;
  b: string;
  wordScore: number;
  reason: string;
}

export interface MatchResult {
  proposals: Proposal[];
  /** Pairs whose words overlap at least as much as a match needs but that were refused, and why. */
  nearMisses: NearMiss[];
  /** New markets that matched nothing. */
  unmatched: MarketCandidate[];
}

const label = (m: MarketCandidate) => `${m.venue}:${m.venueMarketId}`;
const byLabel = (x: MarketCandidate, y: MarketCandidate) => (label(x) < label(y) ? -1 : label(x) > label(y) ? 1 : 0);

/**
 * Proposes where new venue markets belong: a market that asks an existing event's question is
 * proposed as that event's listing on its venue; the others are grouped with markets of other venues
 * that ask the same question (every pair in a group must match, one market per venue), best pairs
 * first. Deterministic for a given input, whatever its order.
 */
export function proposeMatches(markets: readonly MarketCandidate[], events: readonly EventCandidate[], opts: MatchOptions): MatchResult {
  const sorted = [...markets].sort(byLabel);
  const proposals: Proposal[] = [];
  const nearMisses: NearMiss[] = [];
  const noteMiss = (a: string, b: string, c: Comparison) => {
    if (!c.match && c.wordScore >= opts.minScore) nearMisses.push({ a, b, wordScore: c.wordScore, reason: c.reason });
  };

  const loose: MarketCandidate[] = [];
  for (const m of sorted) {
    let best: { event: EventCandidate; c: Comparison } | undefined;
    for (const e of events) {
      if (e.venues.includes(m.venue)) continue;
      const c = compareQuestions(m, e, opts);
      noteMiss(label(m), `event ${e.eventId}`, c);
      if (c.match && c.score >= opts.minScore && (!best || c.score > best.c.score)) best = { event: e, c };
    }
    if (best) proposals.push({ kind: "add_listing", eventId: best.event.eventId, members: [m], score: best.c.score, reason: `"${m.title}" ~ "${best.event.title}": ${best.c.reason}` });
    else loose.push(m);
  }

  const pairs: { a: MarketCandidate; b: MarketCandidate; c: Comparison }[] = [];
  for (let i = 0; i < loose.length; i++) {
    for (let j = i + 1; j < loose.length; j++) {
      const a = loose[i]!;
      const b = loose[j]!;
      if (a.venue === b.venue) continue;
      const c = compareQuestions(a, b, opts);
      noteMiss(label(a), label(b), c);
      if (c.match && c.score >= opts.minScore) pairs.push({ a, b, c });
    }
  }
  pairs.sort((x, y) => y.c.score - x.c.score || byLabel(x.a, y.a) || byLabel(x.b, y.b));
  const pairOf = new Map(pairs.map((p) => [`${label(p.a)}|${label(p.b)}`, p]));
  const pair = (x: MarketCandidate, y: MarketCandidate) => pairOf.get(`${label(x)}|${label(y)}`) ?? pairOf.get(`${label(y)}|${label(x)}`);
  const groupOf = new Map<MarketCandidate, MarketCandidate[]>();
  for (const { a, b } of pairs) {
    const ga = groupOf.get(a) ?? [a];
    const gb = groupOf.get(b) ?? [b];
    if (ga === gb) continue;
    const venues = new Set(ga.map((m) => m.venue));
    if (gb.some((m) => venues.has(m.venue))) continue;
    if (!ga.every((x) => gb.every((y) => pair(x, y) !== undefined))) continue;
    const merged = [...ga, ...gb].sort(byLabel);
    for (const m of merged) groupOf.set(m, merged);
  }
  for (const group of new Set(groupOf.values())) {
    const links = group.flatMap((x, i) => group.slice(i + 1).map((y) => ({ x, y, p: pair(x, y)! })));
    proposals.push({
      kind: "new_event",
      members: group,
      score: Math.min(...links.map((l) => l.p.c.score)),
      reason: links.map((l) => `"${l.x.title}" (${l.x.venue}) ~ "${l.y.title}" (${l.y.venue}): ${l.p.c.reason}`).join("; "),
    });
  }
  proposals.sort((x, y) => y.score - x.score || byLabel(x.members[0]!, y.members[0]!));
  const matched = new Set(proposals.flatMap((p) => p.members));
  return { proposals, nearMisses, unmatched: sorted.filter((m) => !matched.has(m)) };
}

/** A kebab-case event id from a question: "Will the Fed cut rates in March 2027?" → will-the-fed-cut-rates-in-march-2027. */
export function suggestEventId(title: string, taken: (id: string) => boolean): string {
  const base =
    title
      .normalize("NFKD")
      .replace(/[\u0300-\u036f]/g, "")
      .toLowerCase()
      .replace(/(\d),(?=\d{3}\b)/g, "$1")
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 64)
      .replace(/-+$/, "") || "event";
  let id = base;
  for (let n = 2; taken(id); n++) id = `${base}-${n}`;
  return id;
}
