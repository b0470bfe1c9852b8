import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findOrCreateAccount } from "../../src/accounts/service.ts";
import { createApiKey } from "../../src/auth/keys.ts";
import { encryptSecret, loadMasterKey } from "../../src/auth/secrets.ts";
import { loadConfig } from "../../src/config.ts";
import type { PriceMicro } from "../../src/domain/money.ts";
import { startCrossfill, type Crossfill } from "../../src/main.ts";
import { MarketCatalog } from "../../src/markets/catalog.ts";
import { CrossfillClient } from "../../src/sdk/client.ts";
import { openStore } from "../../src/store/open-store.ts";
import { makeDataDirStore } from "../helpers/stores.ts";

const run = promisify(execFile);
const BIN = fileURLToPath(new URL("../../bin/crossfill.mjs", import.meta.url));

interface ProposalJson {
  id: string;
  kind: "new_event" | "add_listing";
  status: string;
  event_id: string;
  score: number;
  reason: string;
  members: { venue: string; venue_market_id: string; title: string }[];
}

/**
 * The whole loop a person runs: `events match` proposes from the simulators' unlisted markets and
 * writes nothing to the catalog; `events accept` writes; the next server start trades the new event
 * on every venue of the match, in one merged book.
 */
describe("crossfill events match → accept → next start", () => {
  let dataDir: string;
  let server: Crossfill | undefined;
  const env = () => ({ ...process.env, DATA_DIR: dataDir, SIM_LATENCY_SCALE: "0", LOG_LEVEL: "silent" });
  const cli = async (...args: string[]) => (await run(process.execPath, [BIN, ...args], { env: env(), timeout: 30_000 })).stdout;
  const cliJson = async <T>(...args: string[]): Promise<T> => JSON.parse(await cli(...args)) as T;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "crossfill-events-"));
    await makeDataDirStore(dataDir);
  });

  afterAll(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  let proposals: ProposalJson[];

  it("match proposes cross-venue events and new listings, with scores and reasons, and writes nothing to the catalog", async () => {
    const out = await cliJson<{ proposals: ProposalJson[]; near_misses: { reason: string }[] }>("events", "match", "--json", "--verbose");
    proposals = out.proposals;
    const fedMarch = proposals.find((p) => p.kind === "new_event" && p.members.some((m) => m.venue_market_id === "KXFEDCUT-27MAR-T25"));
    expect(fedMarch?.members.map((m) => m.venue).sort()).toEqual(["kalshi-sim", "limitless-sim", "polymarket-sim"]);
    expect(fedMarch?.status).toBe("proposed");
    expect(proposals.find((p) => p.kind === "add_listing" && p.event_id === "fed-cut-2027-01" && p.members[0]?.venue === "limitless-sim")?.members).toEqual([
      expect.objectContaining({ venue: "limitless-sim", venue_market_id: "fed-rate-cut-in-january-2027" }),
    ]);
    expect(proposals.find((p) => p.kind === "add_listing" && p.event_id === "fed-cut-2027-01" && p.members[0]?.venue === "opinion-sim")?.members).toEqual([
      expect.objectContaining({ venue: "opinion-sim", venue_market_id: "2260" }),
    ]);
    for (const [eventId, marketId] of [["us-gov-shutdown-2027-01", "2274"], ["spx-above-7500-2026-12-31", "2281"]]) {
      expect(proposals.find((p) => p.kind === "add_listing" && p.event_id === eventId)?.members, eventId).toEqual([expect.objectContaining({ venue: "opinion-sim", venue_market_id: marketId })]);
    }
    for (const p of proposals) {
      expect(p.score).toBeGreaterThanOrEqual(0.6);
      expect(p.score).toBeLessThanOrEqual(1);
      expect(p.reason).toMatch(/same numbers and dates/);
    }
    // the $250k market is the $200k one's near-duplicate: refused, never proposed
    expect(proposals.flatMap((p) => p.members).some((m) => m.venue_market_id === "KXBTCD-27JUN30-T250000")).toBe(false);
    expect(out.near_misses.some((n) => /250000 vs 200000|200000 vs 250000/.test(n.reason))).toBe(true);
    const catalog = await cliJson<{ event_id: string }[]>("events", "list", "--json");
    expect(catalog.map((e) => e.event_id).sort()).toEqual(MarketCatalog.load().events().map((e) => e.eventId).sort());
  });

  it("accept writes the new event and the new listing, and says they take effect at the next start", async () => {
    const fedMarch = proposals.find((p) => p.members.some((m) => m.venue_market_id === "KXFEDCUT-27MAR-T25"))!;
    const addJanuary = proposals.find((p) => p.event_id === "fed-cut-2027-01" && p.members[0]?.venue === "limitless-sim")!;
    const accepted = await cliJson<ProposalJson & { takes_effect: string }>("events", "accept", fedMarch.id, "--event-id", "fed-cut-2027-03", "--title", "Fed rate cut in March 2027?", "--json");
    expect(accepted).toMatchObject({ status: "accepted", event_id: "fed-cut-2027-03", takes_effect: "next_start" });
    expect(await cli("events", "accept", addJanuary.id)).toMatch(/fed-cut-2027-01 is now also listed on limitless-sim[\s\S]*restart the server/);
    await expect(cli("events", "accept", addJanuary.id)).rejects.toThrow(/already accepted/);

    const listed = await cliJson<{ event_id: string; listings: { venue: string }[] }[]>("events", "list", "--json");
    expect(listed.find((e) => e.event_id === "fed-cut-2027-03")?.listings.map((l) => l.venue).sort()).toEqual(["kalshi-sim", "limitless-sim", "polymarket-sim"]);
    expect(listed.find((e) => e.event_id === "fed-cut-2027-01")?.listings.map((l) => l.venue)).toEqual(["polymarket-sim", "kalshi-sim", "limitless-sim"]);

    const again = await cliJson<{ proposals: ProposalJson[] }>("events", "match", "--json");
    expect(again.proposals.some((p) => p.id === fedMarch.id || p.id === addJanuary.id)).toBe(false);
  });

  it("the server started next lists the new event and merges its venues' books", async () => {
    server = await startCrossfill(loadConfig({ DATA_DIR: dataDir, PORT: "0", SIM_LATENCY_SCALE: "0" }), { logger: false });
    const master = await loadMasterKey({ env: undefined, dataDir });
    const { account } = await findOrCreateAccount(server.store, "events@example.com", (k) => encryptSecret(master, k));
    const { apiKey, apiSecret } = await createApiKey(server.store, master, { accountId: account.id, name: "events", scopes: ["read"], ipAllowlist: null });
    const client = new CrossfillClient({ baseUrl: server.url, apiKey, apiSecret });

    const page = await client.markets({ q: "march 2027" });
    const market = page.data.find((m) => m.event_id === "fed-cut-2027-03");
    expect(market?.title).toBe("Fed rate cut in March 2027?");
    expect(market?.venues.map((v) => v.venue).sort()).toEqual(["kalshi-sim", "limitless-sim", "polymarket-sim"]);

    const prices = await client.prices("fed-cut-2027-03", { depth: 200 });
    expect(new Set(prices.orderbook.asks.map(([, , venue]) => venue))).toEqual(new Set(["kalshi-sim", "limitless-sim", "polymarket-sim"]));
    expect(prices.stale_venues).toEqual([]);
    const january = await client.prices("fed-cut-2027-01", { depth: 200 });
    expect(new Set(january.orderbook.asks.map(([, , venue]) => venue))).toContain("limitless-sim");
  });
});

describe("crossfill events match's numbers", () => {
  let dataDir: string;
  const env = () => ({ ...process.env, DATA_DIR: dataDir, SIM_LATENCY_SCALE: "0", LOG_LEVEL: "silent" });
  const cli = (...args: string[]) => run(process.execPath, [BIN, "events", ...args], { env: env(), timeout: 30_000 });
  const refusal = (p: Promise<unknown>) => p.then(() => "", (e: { stderr: string; code: number }) => `${e.code}: ${e.stderr}`);

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "crossfill-match-numbers-"));
    await makeDataDirStore(dataDir);
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("are decimals as written: an exponent, spaces, hex, a sign, Infinity or more than the most is refused, naming the option, and nothing is proposed", async () => {
    for (const [option, value] of [
      ["--min-score", "1e-1"],
      ["--min-score", " 0.5 "],
      ["--min-score", "1.5"],
      ["--close-within-hours", "0x1f"],
      ["--close-within-hours", "+12"],
      ["--close-within-hours", "Infinity"],
    ]) {
      expect(await refusal(cli("match", "--json", option!, value!)), `${option} ${value}`).toMatch(new RegExp(`^2: crossfill: ${option} must be a decimal number from 0 to `));
    }
    expect(JSON.parse((await cli("proposals", "--json")).stdout)).toEqual([]);
  }, 180_000);
});

describe("crossfill events resolve", () => {
  let dataDir: string;
  const env = () => ({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: "silent" });
  const cli = (...args: string[]) => run(process.execPath, [BIN, "events", "resolve", ...args], { env: env(), timeout: 30_000 });
  const refusal = (p: Promise<unknown>) => p.then(() => "", (e: { stderr: string; code: number }) => `${e.code}: ${e.stderr}`);

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "crossfill-resolve-"));
    await makeDataDirStore(dataDir);
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("decides an event once: a wrong outcome, an unknown event and a second, different decision are refused and change nothing", async () => {
    expect(await refusal(cli("fed-cut-2026-12", "yes"))).toMatch(/^2: .*<outcome> must be YES or NO/);
    expect(await refusal(cli("no-such-event", "YES"))).toMatch(/^2: .*no event no-such-event/);
    const decided = JSON.parse((await cli("fed-cut-2026-12", "NO", "--json")).stdout) as Record<string, unknown>;
    expect(decided).toMatchObject({ event_id: "fed-cut-2026-12", status: "resolved", resolution: "NO", decided_by: "operator" });
    expect(await refusal(cli("fed-cut-2026-12", "YES"))).toMatch(/^2: .*already resolved to NO by operator/);
    expect((await cli("fed-cut-2026-12", "NO")).stdout).toContain("fed-cut-2026-12 is resolved to NO");
  });
});

describe("crossfill events list and proposals print venues' titles", () => {
  let dataDir: string;
  const cli = async (...args: string[]) => (await run(process.execPath, [BIN, "events", ...args], { env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: "silent" }, timeout: 30_000 })).stdout;
  // a line break, an escape sequence that clears the screen, and a right-to-left override
  const title = "Fed cut?\nfed-cut-2026-12  resolved\x1b[2J \u202eon 2027";
  const shown = "Fed cut?\\u000afed-cut-2026-12  resolved\\u001b[2J \\u202eon 2027";

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "crossfill-titles-"));
    await makeDataDirStore(dataDir);
    const store = await openStore({ dataDir, databaseUrl: undefined });
    try {
      const listing = { venue: "kalshi-sim", venueMarketId: "KX\nFORGED", outcomeIds: { YES: "y", NO: "n" } };
      await store.seedCatalog([{ eventId: "titled-2027", title, description: "", status: "open", closeTime: "2027-01-01T00:00:00.000Z", resolution: null, basePrice: 500_000n as PriceMicro, listings: [{ ...listing, tickSize: null, feeRatePpm: null }] }]);
      await store.saveProposals([{ id: "prop_titled", kind: "new_event", eventId: "titled-2027-02", title, score: 0.9, reason: "same numbers and dates", members: [{ ...listing, title, closeTime: "2027-02-01T00:00:00.000Z" }] }]);
    } finally {
      await store.close();
    }
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("as \\u escapes of their control characters and bidirectional overrides, each event and member on its own lines; --json as they are", async () => {
    const listed = await cli("list");
    expect(listed).toContain(`titled-2027  open      closes 2027-01-01T00:00:00.000Z  "${shown}"\n    kalshi-sim      KX\\u000aFORGED\n`);
    expect(listed).not.toMatch(/[\x1b\u202e]/);
    const proposals = await cli("proposals");
    expect(proposals).toBe(
      `prop_titled  score 0.900  new event titled-2027-02  "${shown}"\n    kalshi-sim      KX\\u000aFORGED  "${shown}"  closes 2027-02-01T00:00:00.000Z\n    why: same numbers and dates\n`,
    );
    expect((JSON.parse(await cli("list", "--json")) as { event_id: string; title: string }[]).find((e) => e.event_id === "titled-2027")?.title).toBe(title);
  });

  it("accept refuses a --title with a control character, naming --title, and writes nothing", async () => {
    const store = await openStore({ dataDir, databaseUrl: undefined });
    try {
      const member = { venue: "polymarket-sim", venueMarketId: "fed-cut-feb", outcomeIds: { YES: "y", NO: "n" }, title: "Fed cut in February 2027?", closeTime: "2027-02-01T00:00:00.000Z" };
      await store.saveProposals([{ id: "prop_plain", kind: "new_event", eventId: "plain-2027-02", title: member.title, score: 0.9, reason: "same numbers and dates", members: [member] }]);
    } finally {
      await store.close();
    }
    const refused = await cli("accept", "prop_plain", "--title", "Fed cut in February 2027?\nfed-cut-2026-12  resolved").then(
      () => "",
      (e: { stderr: string; code: number }) => `${e.code}: ${e.stderr}`,
    );
    expect(refused).toMatch(/^2: .*--title must have no control characters/);
    expect((JSON.parse(await cli("proposals", "--json")) as { id: string; status: string }[]).find((p) => p.id === "prop_plain")?.status).toBe("proposed");
    expect((JSON.parse(await cli("list", "--json")) as { event_id: string }[]).some((e) => e.event_id === "plain-2027-02")).toBe(false);
  });

  it("accept that conflicts with the catalog names the venue's market as events list prints it, on one line", async () => {
    const refused = await cli("accept", "prop_titled", "--title", "Fed cut by February 2027?").then(
      () => "",
      (e: { stderr: string; code: number }) => `${e.code}: ${e.stderr}`,
    );
    expect(refused).toBe("2: crossfill: prop_titled cannot be accepted: kalshi-sim market KX\\u000aFORGED is already listed under titled-2027; nothing was written\n");
  });

  it("accept refuses a suggested title with a control character, naming --title to give another, and writes nothing; with --title it accepts", async () => {
    const store = await openStore({ dataDir, databaseUrl: undefined });
    try {
      const member = { venue: "kalshi-sim", venueMarketId: "KXFEDCUT-27APR", outcomeIds: { YES: "y", NO: "n" }, title: "Fed cut in April 2027?\nfed-cut-2026-12  resolved", closeTime: "2027-04-01T00:00:00.000Z" };
      await store.saveProposals([{ id: "prop_suggested", kind: "new_event", eventId: "fed-cut-2027-04", title: member.title, score: 0.9, reason: "same numbers and dates", members: [member] }]);
    } finally {
      await store.close();
    }
    const refused = await cli("accept", "prop_suggested").then(
      () => "",
      (e: { stderr: string; code: number }) => `${e.code}: ${e.stderr}`,
    );
    expect(refused).toMatch(/^2: .*prop_suggested's suggested title has control characters .*--title/);
    // still undecided: accepted, it would be refused as already accepted
    expect(await cli("accept", "prop_suggested", "--title", "Fed cut in April 2027?")).toContain('new event fed-cut-2027-04 "Fed cut in April 2027?"');
  });

  it("accept refuses a title with a bidirectional override or isolate, given or suggested, which would show it reversed, and writes nothing", async () => {
    const store = await openStore({ dataDir, databaseUrl: undefined });
    try {
      // stored as "Fed cut in May 2027? \u202esniw ON", shown as "Fed cut in May 2027? NO wins"
      const member = { venue: "kalshi-sim", venueMarketId: "KXFEDCUT-27MAY", outcomeIds: { YES: "y", NO: "n" }, title: "Fed cut in May 2027? \u202esniw ON", closeTime: "2027-05-01T00:00:00.000Z" };
      await store.saveProposals([{ id: "prop_reversed", kind: "new_event", eventId: "fed-cut-2027-05", title: member.title, score: 0.9, reason: "same numbers and dates", members: [member] }]);
    } finally {
      await store.close();
    }
    const refusal = (p: Promise<unknown>) => p.then(() => "", (e: { stderr: string; code: number }) => `${e.code}: ${e.stderr}`);
    expect(await refusal(cli("accept", "prop_reversed"))).toMatch(/^2: .*prop_reversed's suggested title has bidirectional controls .*--title/);
    const given = await refusal(cli("accept", "prop_reversed", "--title", "Fed cut in May 2027? \u2067NO\u2069"));
    expect(given).toMatch(/^2: .*--title must have no bidirectional controls/);
    expect(given).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
    // still undecided: accepted, it would be refused as already accepted
    expect(await cli("accept", "prop_reversed", "--title", "Fed cut in May 2027?")).toContain('new event fed-cut-2027-05 "Fed cut in May 2027?"');
  });
});
