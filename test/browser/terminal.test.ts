import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Page, type Request } from "playwright-core";
import { createPublicClient, http, parseAbi } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CrossfillClient, CrossfillError } from "../../src/sdk/client.ts";
import { usdc } from "../../src/terminal/format.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { chromiumLaunch } from "./chromium.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SHOTS = `${ROOT}test-results/terminal`;
// Without the background-networking switches Chromium keeps dialling Google services, which on an
// offline machine is a flood of refused connections.
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const email = `trader-${Date.now()}@example.com`;
const password = "a long enough password";
let key: { apiKey: string; apiSecret: string };
let eventPath: string;
/** Uncaught exceptions in the page: the terminal must have none. */
const pageErrors: Error[] = [];

/** A P&L as the terminal writes it, to the micro-USDC: "+1.25 USDC", "−0.403125 USDC" (exactly 0 has no sign). */
const SIGNED = /^[+−][\d,]+\.\d{2,6} USDC$/;
/**
 * Over plain http to another machine (http://192.168.1.5:8080) the page is no secure context, and the browser leaves out
 * what needs one: crypto.randomUUID among them. The terminal must work there too.
 */
const INSECURE = "Object.defineProperty(crypto, 'randomUUID', { value: undefined, configurable: true })";

async function shot(name: string, p: Page = page): Promise<void> {
  await p.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}

/** A page of its own in the file's browser, its uncaught exceptions counted as the first page's are. */
async function newPage(): Promise<Page> {
  const p = await context.newPage();
  p.on("pageerror", (err) => pageErrors.push(err));
  return p;
}

/** Closes `p` while an answer is awaited: the browser asks first (`beforeunload`), and the answer to "leave?" is no. */
async function closeAndStay(p: Page): Promise<void> {
  const asked = p.waitForEvent("dialog");
  await p.close({ runBeforeUnload: true });
  const dialog = await asked;
  expect(dialog.type()).toBe("beforeunload");
  await dialog.dismiss();
}

/** The order cases' ticket on an event page: a $2 buy at 5 % slippage, ready to be sent. */
/**
 * Answers the page's reads of GET /v1/orders from `orders()`, as it is at each read, a page of the limit asked (at most
 * `cap`) from the cursor, an offset; the size of each page asked goes to `asked`.
 */
async function serveOrders(p: Page, orders: () => unknown[], { cap = Infinity, asked = [] as number[] } = {}): Promise<void> {
  await p.route(
    (url) => url.pathname === "/v1/orders",
    (route) => {
      const url = new URL(route.request().url());
      const from = Number(url.searchParams.get("cursor") ?? 0);
      const to = from + Math.min(cap, Number(url.searchParams.get("limit")));
      asked.push(to - from);
      const all = orders();
      return route.fulfill({ json: { data: all.slice(from, to), next_cursor: to < all.length ? String(to) : null } });
    },
  );
}

async function fillTicket(p: Page): Promise<void> {
  await p.getByLabel("Amount (USDC, fees included)").fill("2");
  await p.getByRole("radio", { name: "5.00 %" }).click();
}

beforeAll(async () => {
  const launch = await chromiumLaunch(`${ROOT}node_modules/.cache/chromium`);
  // Always build: a terminal left in dist/ by an older checkout must not be what gets tested. Built as `npm run build` builds
  // it, for production: under vitest's NODE_ENV=test, Vite would bundle React's development build, which is not what
  // traders get, and which `npm start` would then serve.
  execFileSync(process.execPath, [`${ROOT}node_modules/vite/bin/vite.js`, "build"], { cwd: ROOT, stdio: "inherit", env: { ...process.env, NODE_ENV: "production" } });
  rmSync(SHOTS, { recursive: true, force: true });
  mkdirSync(SHOTS, { recursive: true });
  server = await startTestServer();
  browser = await chromium.launch({ ...launch, args: ARGS });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on("pageerror", (err) => pageErrors.push(err));
}, 180_000);

afterEach(() => {
  expect(pageErrors.map((e) => e.message)).toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("web terminal", { timeout: 120_000 }, () => {
  it("signs up, landing on the markets with venues and best prices", async () => {
    await page.goto(server.url);
    await page.waitForURL(/\/signin/);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await shot("01-sign-in");
    const reads: string[] = [];
    const read = (r: Request) => void (new URL(r.url()).pathname === "/v1/markets" && reads.push(r.url()));
    page.on("request", read);
    await page.getByRole("link", { name: "Create an account" }).click();
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password", { exact: true }).fill(password);
    await page.getByLabel("Repeat the password").fill(password);
    await shot("02-sign-up");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL(/\/markets/);
    await page.locator("table.markets tbody tr").first().waitFor();
    expect(await page.locator("table.markets tbody tr").count()).toBeGreaterThan(0);
    expect(await page.locator("table.markets .chip").count()).toBeGreaterThan(0);
    // The terminal traders get reads the markets once (React's development build, its effects run twice, read them twice).
    page.off("request", read);
    expect(reads).toHaveLength(1);
    await shot("03-markets");
  });

  it("generates a key whose secret is shown once, then never again", async () => {
    await page.getByRole("link", { name: "Settings" }).click();
    await page.getByRole("heading", { name: "API Keys" }).waitFor();
    await page.getByRole("button", { name: "Generate New Key" }).click();
    await page.getByLabel("Name").fill("browser test bot");
    // Paying money out is never granted unless asked for.
    await expect(page.getByRole("checkbox", { name: /^withdraw/ }).isChecked()).resolves.toBe(false);
    await page.getByRole("button", { name: "Generate key" }).click();
    const secret = page.getByTestId("new-api-secret");
    await secret.waitFor();
    key = { apiKey: (await page.getByTestId("new-api-key").textContent())!, apiSecret: (await secret.textContent())! };
    expect(key.apiSecret).toMatch(/^cs_live_[0-9A-Za-z_-]{43}$/);
    await expect(page.getByText("It will not be shown again").isVisible()).resolves.toBe(true);
    await shot("04-new-key-secret");
    // Over plain http to another machine (http://192.168.1.5:8080) the browser has no navigator.clipboard:
    // the copy button still puts the secret on the clipboard, or says it did not.
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await page.evaluate("navigator.clipboard.writeText('')");
    const withoutClipboardApi = "Object.defineProperty(navigator, 'clipboard', { value: undefined, configurable: true })";
    await page.evaluate(withoutClipboardApi);
    await page.getByRole("button", { name: /^Copy secret/ }).click();
    await page.getByRole("button", { name: "Copy secret: copied" }).waitFor();
    await page.evaluate("delete navigator.clipboard");
    await expect(page.evaluate<string>("navigator.clipboard.readText()")).resolves.toBe(key.apiSecret);
    await page.evaluate(`${withoutClipboardApi}; document.execCommand = () => false`);
    await page.getByRole("button", { name: /^Copy secret/ }).click();
    await page.getByRole("button", { name: "Copy secret: not copied, select the text and copy it" }).waitFor();
    await page.evaluate("delete navigator.clipboard; delete document.execCommand");
    await page.getByRole("button", { name: "I have stored the secret" }).press("Enter");
    // Focus is back on the button that opened the dialogs: a keyboard user goes on from there, not from the top of the page.
    await expect(page.evaluate("document.activeElement?.textContent")).resolves.toBe("Generate New Key");

    await page.reload();
    await page.getByTestId("key-row").first().waitFor();
    const html = await page.content();
    expect(html).toContain(key.apiKey);
    expect(html).not.toContain(key.apiSecret);
    await shot("05-api-keys");
  });

  it("limits a withdrawing key to the addresses given, refuses one that is not an address, and makes it only with the password again", async () => {
    const payee = "0x00000000000000000000000000000000000000b0";
    await page.getByRole("button", { name: "Generate New Key" }).click();
    await page.getByLabel("Name").fill("payout bot");
    await page.getByRole("checkbox", { name: /^withdraw/ }).check();
    const allowed = page.getByLabel(/^Withdrawals only to/);
    await allowed.fill("not-an-address");
    const again = page.getByLabel("Your password");
    await again.fill(password);
    await page.getByRole("button", { name: "Generate key" }).click();
    await page.getByText(/Not an address money may be paid to/).waitFor();
    await allowed.fill(payee);
    await page.getByText("to one address only").waitFor();
    await again.fill("not the password");
    await page.getByRole("button", { name: "Generate key" }).click();
    await page.getByRole("alert").getByText(/password is wrong: no key was made/).waitFor();
    await again.fill(password);
    await page.getByRole("button", { name: "Generate key" }).click();
    await page.getByTestId("new-api-secret").waitFor();
    await page.getByRole("button", { name: "I have stored the secret" }).click();
    const row = page.getByTestId("key-row").filter({ hasText: "payout bot" });
    await expect(row.getByTestId("key-allowlist").textContent()).resolves.toMatch(/^withdrawals only to 0x0000.*00b0$/);
  });

  it("says a key whose answer was lost may have been made, and reads the list again, where a key made is to be revoked", async () => {
    await page.getByRole("button", { name: "Generate New Key" }).click();
    await page.getByLabel("Name").fill("lost bot");
    // The key's creation gets no answer: the terminal cannot know whether the key was made.
    await page.route("**/v1/keys", (route) => (route.request().method() === "POST" ? route.abort("connectionreset") : route.fallback()));
    const reread = page.waitForRequest((r) => r.method() === "GET" && new URL(r.url()).pathname === "/v1/keys");
    await page.getByRole("button", { name: "Generate key" }).click();
    await page.getByRole("alert").getByText("The key may have been made, but no answer came back: its secret cannot be shown again. If it is in the list, revoke it.").waitFor();
    await reread;
    await page.unroute("**/v1/keys");
    await page.getByRole("button", { name: "Cancel" }).click();
  });

  it("asks before the page is left while a key is being made, whose secret would be lost", async () => {
    const p = await newPage();
    await p.goto(server.url + "/settings/developer/api-keys");
    await p.getByRole("button", { name: "Generate New Key" }).click();
    await p.getByLabel("Name").fill("left bot");
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    await p.route("**/v1/keys", async (route) => {
      if (route.request().method() !== "POST") return route.fallback();
      const made = await route.fetch();
      await held;
      await route.fulfill({ response: made });
    });
    await p.getByRole("button", { name: "Generate key" }).click();
    await p.getByRole("button", { name: "Generating…" }).waitFor();
    await closeAndStay(p);
    answer();
    await p.getByTestId("new-api-secret").waitFor({ timeout: 30_000 });
    await p.getByRole("button", { name: "I have stored the secret" }).click();
    await p.unrouteAll({ behavior: "ignoreErrors" });
    await p.close();
  });

  it("signs an API call with that key", async () => {
    const client = new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret });
    const account = await client.account();
    expect(account.email).toBe(email);
    const [market] = (await client.markets({ status: "open", limit: 1 })).data;
    const order = await client.order({ market_id: market!.event_id, outcome: "YES", side: "buy", amount_usdc: 5, max_slippage: 0.05 });
    expect(order.status).toMatch(/^(partially_)?filled$/);
  });

  it("shows a live merged book and places an order from the ticket", async () => {
    await page.getByRole("link", { name: "Markets" }).click();
    await page.locator("table.markets tbody tr a.title").first().click();
    await page.waitForURL(/\/events\//);
    eventPath = new URL(page.url()).pathname;
    await page.getByText("Live", { exact: true }).waitFor();
    await page.locator("table.ladder tr.lvl.ask").first().waitFor();
    expect(await page.locator("table.ladder tr.lvl.ask.best").count()).toBe(1);
    await page.locator(".depth svg polygon").first().waitFor();

    await page.getByLabel("Amount (USDC, fees included)").fill("20");
    await page.getByRole("radio", { name: "5.00 %" }).click();
    await page.locator(".quote table.legs tbody tr").first().waitFor();
    await shot("06-event");
    await page.getByRole("button", { name: /^Buy YES for/ }).click();
    const result = page.getByTestId("order-result");
    await result.waitFor({ timeout: 30_000 });
    await expect(result.getByRole("heading").textContent()).resolves.toBe("Order placed");
    const txHash = (await page.getByTestId("tx-hash").textContent())!;
    expect(txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await page.getByTestId("sot").textContent()).toMatch(/^eip155:31337\/erc1155:0x[0-9a-fA-F]{40}\/\d+$/);
    await shot("07-order-result");

    await page.getByRole("link", { name: "See all orders" }).click();
    await page.getByTestId("order-row").first().waitFor();
    expect(await page.getByTestId("order-row").count()).toBe(2);
    // Filled, or in part: the simulators' books move.
    await expect(page.getByTestId("order-row").first().locator(".badge-filled, .badge-partially_filled").isVisible()).resolves.toBe(true);
    await expect(page.locator(`code[title="${txHash}"]`).count()).resolves.toBe(1);
    await shot("08-orders");

    await page.getByRole("link", { name: "Account" }).click();
    await page.getByRole("heading", { name: "Positions" }).waitFor();
    await page.locator("table.table tbody tr").first().waitFor();
    await shot("09-account");
  });

  it("reads the page shown again when its link in the menu is clicked", async () => {
    const client = new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret });
    const shown = async () => Number((await page.getByTestId("available").textContent())!.replace(/[^\d.]/g, ""));
    await page.getByTestId("available").waitFor();
    // An order from a bot spends from the vault while the account page is open.
    const before = await shown();
    const [market] = (await client.markets({ status: "open", limit: 1 })).data;
    await client.order({ market_id: market!.event_id, outcome: "YES", side: "buy", amount_usdc: 5, max_slippage: 0.05 });
    const { available_usdc } = await client.account();
    expect(available_usdc).toBeLessThan(before);
    await page.getByRole("link", { name: "Account" }).click();
    await expect.poll(shown, { timeout: 30_000 }).toBe(available_usdc);
  });

  it("shows only the markets a search matches, also when more of the list before it was asked for", async () => {
    const p = await newPage();
    let answerMore!: () => void;
    const held = new Promise<void>((resolve) => (answerMore = resolve));
    await p.route(
      (url) => url.pathname === "/v1/markets",
      async (route) => {
        const url = new URL(route.request().url());
        const cursor = url.searchParams.get("cursor");
        url.searchParams.delete("cursor");
        const page = (await (await route.fetch({ url: url.toString() })).json()) as { data: { event_id: string; title: string }[]; next_cursor: string | null };
        if (cursor === "more") {
          // The next page of the list as it was before the search, answered once the search has been.
          await held;
          return route.fulfill({ json: { data: [{ ...page.data[0]!, event_id: "before-the-search", title: "Listed before the search" }], next_cursor: null } });
        }
        return route.fulfill({ json: url.searchParams.has("q") ? page : { ...page, next_cursor: "more" } });
      },
    );
    await p.goto(server.url + "/markets");
    const first = await p.locator("table.markets tbody tr code").first().textContent();
    const more = p.waitForRequest((r) => new URL(r.url()).searchParams.get("cursor") === "more");
    await p.getByRole("button", { name: "Load more" }).click();
    await more;
    const searched = p.waitForResponse((r) => new URL(r.url()).searchParams.get("q") === first);
    await p.getByRole("searchbox").fill(first!);
    await searched;
    const answered = p.waitForResponse((r) => new URL(r.url()).searchParams.get("cursor") === "more");
    answerMore();
    await answered;
    await p.waitForTimeout(500);
    await expect(p.getByText("Listed before the search").count()).resolves.toBe(0);
    await expect(p.locator("table.markets tbody tr code").allTextContents()).resolves.toContain(first);
    await p.close();
  });

  it("says no more that more of the list could not be read once the list is read anew", async () => {
    const p = await newPage();
    await p.route(
      (url) => url.pathname === "/v1/markets",
      async (route) => {
        const url = new URL(route.request().url());
        // More of the list is asked for with a cursor the server refuses, as it does one it did not make.
        if (url.searchParams.get("cursor") === "more") url.searchParams.set("cursor", "stale");
        const page = await route.fetch({ url: url.toString() });
        if (!page.ok() || url.searchParams.has("q")) return route.fulfill({ response: page });
        return route.fulfill({ json: { ...((await page.json()) as object), next_cursor: "more" } });
      },
    );
    await p.goto(server.url + "/markets");
    const first = await p.locator("table.markets tbody tr code").first().textContent();
    await p.getByRole("button", { name: "Load more" }).click();
    const refused = p.getByRole("alert").getByText("Invalid querystring: cursor is not one this server returned.");
    await refused.waitFor();
    // Searched, the list is read anew: its first page is shown, and nothing wrong with it.
    const searched = p.waitForResponse((r) => new URL(r.url()).searchParams.get("q") === first);
    await p.getByRole("searchbox").fill(first!);
    const found = ((await (await searched).json()) as { data: { event_id: string }[] }).data.map((m) => m.event_id);
    await expect.poll(() => p.locator("table.markets tbody tr code").allTextContents()).toEqual(found);
    await expect(refused.count()).resolves.toBe(0);
    await p.close();
  });

  it("says the position held is not known while the account cannot be read, rather than that none is held", async () => {
    const p = await newPage();
    await p.route("**/v1/account", (route) => route.fulfill({ status: 503, json: { error: { code: "chain_unavailable", message: "The chain cannot be reached right now." } } }));
    await p.goto(server.url + eventPath + "?side=sell&outcome=YES&shares=1");
    await p.getByText("Your position is not read yet.").waitFor();
    await expect(p.getByText(/^You hold 0 /).count()).resolves.toBe(0);
    await p.close();
  });

  it("goes live again when the book's stream was refused once (a restart, a proxy's 503), not frozen on the book read then", async () => {
    const p = await newPage();
    await p.route(
      (url) => url.pathname.startsWith("/v1/stream/prices/"),
      (route) => route.fulfill({ status: 503, contentType: "text/html", body: "<h1>503 Service Unavailable</h1>" }),
      { times: 1 },
    );
    await p.goto(server.url + eventPath);
    await p.getByText("Live", { exact: true }).waitFor({ timeout: 30_000 });
    await p.close();
  });

  it("opens an event whose id more than a page of events match in the search", async () => {
    const p = await newPage();
    const eventId = decodeURIComponent(eventPath.split("/")[2]!);
    // 500 other events with the id in their titles come first; the event itself is on the next page.
    await p.route(
      (url) => url.pathname === "/v1/markets",
      async (route) => {
        const url = new URL(route.request().url());
        if (url.searchParams.get("cursor") === "next") {
          url.searchParams.delete("cursor");
          return route.fulfill({ response: await route.fetch({ url: url.toString() }) });
        }
        const { data } = (await (await route.fetch()).json()) as { data: { event_id: string; title: string }[] };
        const others = Array.from({ length: 500 }, (_, i) => ({ ...data[0]!, event_id: `${eventId}-${i}`, title: `More on ${eventId}, part ${i}` }));
        return route.fulfill({ json: { data: others, next_cursor: "next" } });
      },
    );
    await p.goto(server.url + eventPath);
    await p.getByRole("heading", { name: "Order ticket" }).waitFor();
    await expect(p.getByRole("heading", { name: "No such event" }).count()).resolves.toBe(0);
    await p.close();
  });

  it("places an order whose answer was lost once, however often it is sent again", async () => {
    const client = new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret });
    const before = (await client.orders()).data.length;
    await page.goto(server.url + eventPath);
    await page.evaluate(INSECURE);
    await page.getByLabel("Amount (USDC, fees included)").fill("3");
    await page.getByRole("radio", { name: "5.00 %" }).click();
    // The order reaches the server and is placed; its answer never reaches the page (a dropped connection, a proxy giving up).
    await page.route("**/v1/order", async (route) => (await route.fetch(), route.abort("connectionreset")), { times: 1 });
    await page.getByRole("button", { name: /^Buy YES for/ }).click();
    const result = page.getByTestId("order-result");
    await result.waitFor();
    await expect(result.textContent()).resolves.toMatch(/The order may have been placed: no answer came back\. Send it again as it is: it is placed once\./);
    // Sent again, it is refused before the server looks at it (too many requests): that says nothing of the order, still maybe placed.
    const refusal = { error: { code: "rate_limited", message: "Too many requests: try again in 1 s.", details: { retry_after_seconds: 1 } } };
    await page.route("**/v1/order", (route) => route.fulfill({ status: 429, headers: { "retry-after": "1" }, json: refusal }), { times: 1 });
    await page.getByRole("button", { name: /^Buy YES for/ }).click();
    await result.getByRole("heading", { name: "The order did not go through" }).waitFor();
    // Gone to the orders to look for it and back, the ticket filled in as it was, the amount written otherwise: still the same order.
    await result.getByRole("link", { name: "See all orders" }).click();
    await page.getByRole("heading", { name: "Orders" }).waitFor();
    await page.goBack();
    await page.getByLabel("Amount (USDC, fees included)").fill("3.00");
    await page.getByRole("radio", { name: "5.00 %" }).click();
    await page.getByRole("button", { name: /^Buy YES for/ }).click();
    await result.getByRole("heading", { name: "Order placed" }).waitFor({ timeout: 30_000 });
    expect((await client.orders()).data.length).toBe(before + 1);
    await page.getByRole("link", { name: "Account" }).click();
  });

  it("sells a position from the account page, and sees its P&L", async () => {
    const row = page.getByTestId("position-row").first();
    await row.waitFor();
    // Bought, not sold yet: a gain or loss at the mark (signed), nothing realized.
    await expect(row.getByTestId("position-unrealized").textContent()).resolves.toMatch(SIGNED);
    await expect(row.getByTestId("position-realized").textContent()).resolves.toBe("0.00 USDC");
    await expect(page.getByTestId("total-unrealized").textContent()).resolves.toMatch(SIGNED);
    const held = Number((await row.getByTestId("position-shares").textContent())!.replaceAll(",", ""));

    await row.getByRole("button", { name: /^Sell YES of / }).click();
    await page.waitForURL(/\/events\/.*side=sell/);
    await expect(page.getByRole("radio", { name: "Sell", exact: true }).getAttribute("aria-checked")).resolves.toBe("true");
    // Ranked for a seller: the level named best execution is a bid, the one that nets most after fees.
    await page.locator("table.ladder tr.lvl.bid.best").waitFor();
    expect(await page.locator("table.ladder tr.best").count()).toBe(1);
    const sharesField = page.getByLabel("Shares to sell");
    // The shares shown are the shares held, to the micro-share: the ticket opens with exactly them.
    expect(Number(await sharesField.inputValue())).toBe(held);
    await sharesField.fill(String(Math.floor(held / 2)));
    await page.getByRole("radio", { name: "5.00 %" }).click();
    await page.getByTestId("quote-proceeds").waitFor();
    expect(await page.getByTestId("quote-proceeds").textContent()).toMatch(/^[\d,.]+ USDC$/);
    await shot("09a-sell-ticket");
    await page.getByRole("button", { name: /^Sell [\d,.]+ YES shares$/ }).click();
    const result = page.getByTestId("order-result");
    await result.waitFor({ timeout: 30_000 });
    await expect(result.getByRole("heading").textContent()).resolves.toBe("Order placed");
    expect(await page.getByTestId("proceeds").textContent()).toMatch(/^[\d,.]+ USDC$/);
    // The position token the sale burned, as a buy's result names the one it minted; and in the orders.
    await result.getByText("Position token burned (SOT)").waitFor();
    const burned = (await result.getByTestId("sot").textContent())!;
    expect(burned).toMatch(/^eip155:31337\/erc1155:0x[0-9a-fA-F]{40}\/\d+$/);
    await result.getByRole("link", { name: "See all orders" }).click();
    await page.getByTestId("order-row").first().getByText("SOT burned").waitFor();
    await expect(page.getByTestId("order-row").first().locator(`code[title="${burned}"]`).count()).resolves.toBe(1);

    await page.getByRole("link", { name: "Account" }).click();
    const after = page.getByTestId("position-row").first();
    await after.waitFor();
    expect(Number((await after.getByTestId("position-shares").textContent())!.replaceAll(",", ""))).toBeCloseTo(held - Math.floor(held / 2), 6);
    // The sale realized a gain or a loss against the average cost, also in the total.
    await expect(after.getByTestId("position-realized").textContent()).resolves.toMatch(SIGNED);
    await expect(page.getByTestId("total-realized").textContent()).resolves.toMatch(SIGNED);
    await page.getByTestId("activity-row").first().waitFor();
    await shot("09b-account-pnl");
  });

  it("says when an order's answer does not come in time, and places it once when sent again", async () => {
    const client = new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret });
    const before = (await client.orders()).data.length;
    const p = await newPage();
    await p.clock.install();
    await p.goto(server.url + eventPath);
    await fillTicket(p);
    // The order reaches the server and is placed; its answer never comes (a server or a proxy that hangs).
    let reached!: () => void;
    const placed = new Promise<void>((resolve) => (reached = resolve));
    await p.route("**/v1/order", async (route) => (await route.fetch(), reached()), { times: 1 });
    await p.getByRole("button", { name: /^Buy YES for/ }).click();
    await placed;
    await p.clock.fastForward(30_000);
    const result = p.getByTestId("order-result");
    await result.getByText("The order may have been placed: no answer came back. Send it again as it is: it is placed once.").waitFor();
    await p.getByRole("button", { name: /^Buy YES for/ }).click();
    await result.getByRole("heading", { name: "Order placed" }).waitFor({ timeout: 30_000 });
    expect((await client.orders()).data.length).toBe(before + 1);
    await p.close();
    // The account page left open since the sale is read again, with this order's spending.
    await page.reload();
  });

  it("places once an order sent again after its page was left before the answer came, says so, and places the next one sent on purpose", async () => {
    const client = new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret });
    const before = (await client.orders()).data.length;
    const p = await newPage();
    const ticket = async () => {
      await fillTicket(p);
      await p.getByRole("button", { name: /^Buy YES for/ }).click();
    };
    await p.goto(server.url + eventPath);
    // Placed, its answer comes once the trader has gone to the orders page, where the order is listed.
    let left!: () => void;
    const gone = new Promise<void>((resolve) => (left = resolve));
    await p.route("**/v1/order", async (route) => {
      const answer = await route.fetch();
      await gone;
      await route.fulfill({ response: answer });
    }, { times: 1 });
    const answered = p.waitForResponse((r) => new URL(r.url()).pathname === "/v1/order");
    await ticket();
    await p.getByRole("link", { name: "Orders", exact: true }).click();
    await p.getByTestId("order-row").first().waitFor();
    left();
    await answered;
    await expect.poll(async () => (await client.orders()).data.length).toBe(before + 1);
    // Back on the ticket, the same order sent again is that order: the ticket says it was not placed again.
    await p.goBack();
    await ticket();
    const result = p.getByTestId("order-result");
    await result.getByText(/^This order was sent before from this tab, its answer not seen then: it was placed once, at .+, and not again now\. Send it again to place another\.$/).waitFor({ timeout: 30_000 });
    expect((await client.orders()).data.length).toBe(before + 1);
    // Sent once more on purpose, it is a new order.
    await p.getByRole("button", { name: /^Buy YES for/ }).click();
    await result.getByRole("heading", { name: "Order placed" }).waitFor({ timeout: 30_000 });
    await expect(result.getByText(/not again now/).count()).resolves.toBe(0);
    expect((await client.orders()).data.length).toBe(before + 2);
    await p.close();
  });

  it("says an order whose answer was lost, sent again, was refused, not that it was placed", async () => {
    const client = new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret });
    const [template] = (await client.orders()).data;
    const p = await newPage();
    await p.goto(server.url + eventPath);
    await fillTicket(p);
    await p.route("**/v1/order", (route) => route.abort("connectionreset"), { times: 1 });
    await p.getByRole("button", { name: /^Buy YES for/ }).click();
    const result = p.getByTestId("order-result");
    await result.getByRole("heading", { name: "No answer to the order" }).waitFor();
    // Sent again, the server answers the order it stored: rejected, its prices past the limit (a 4xx stays its answer).
    const error = { code: "slippage_exceeded", message: "No plan stays within the slippage allowed.", details: {} };
    const rejected = { ...template!, status: "rejected", filled_shares: 0, spent_usdc: 0, fills: [], tx_hash: null, sot_minted: null, error };
    await p.route("**/v1/order", (route) => route.fulfill({ status: 422, json: { error: { ...error, details: { order: rejected }, request_id: "r" } } }), { times: 1 });
    await p.getByRole("button", { name: /^Buy YES for/ }).click();
    await result.getByRole("heading", { name: "The order did not go through" }).waitFor();
    await result.getByText(error.message).waitFor();
    await expect(result.getByText(/placed once/).count()).resolves.toBe(0);
    await p.close();
  });

  it("says nothing of an order sent before when the one before was refused unlooked at (too many requests)", async () => {
    const client = new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret });
    const before = (await client.orders()).data.length;
    const p = await newPage();
    await p.goto(server.url + eventPath);
    await fillTicket(p);
    const refusal = { error: { code: "rate_limited", message: "Too many requests: try again in 1 s.", details: { retry_after_seconds: 1 } } };
    await p.route("**/v1/order", (route) => route.fulfill({ status: 429, headers: { "retry-after": "1" }, json: refusal }), { times: 1 });
    await p.getByRole("button", { name: /^Buy YES for/ }).click();
    const result = p.getByTestId("order-result");
    await result.getByRole("heading", { name: "The order did not go through" }).waitFor();
    // Sent again, it is placed now, for the first time: no "sent before", no "not again now".
    await p.getByRole("button", { name: /^Buy YES for/ }).click();
    await result.getByRole("heading", { name: "Order placed" }).waitFor({ timeout: 30_000 });
    await expect(result.getByText(/sent before/).count()).resolves.toBe(0);
    expect((await client.orders()).data.length).toBe(before + 1);
    await p.close();
  });

  it("places an order in a browser that refuses the page its storage", async () => {
    const client = new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret });
    const before = (await client.orders()).data.length;
    const p = await newPage();
    // Storage disabled (cookies and site data blocked): reading sessionStorage throws.
    await p.addInitScript("Object.defineProperty(window, 'sessionStorage', { get() { throw new DOMException('Access is denied for this document.', 'SecurityError'); } })");
    await p.goto(server.url + eventPath);
    await fillTicket(p);
    await p.getByRole("button", { name: /^Buy YES for/ }).click();
    await p.getByTestId("order-result").getByRole("heading", { name: "Order placed" }).waitFor({ timeout: 30_000 });
    expect((await client.orders()).data.length).toBe(before + 1);
    await p.close();
  });

  it("asks before the page is left while an order is being placed, and not once it is answered", async () => {
    const p = await newPage();
    await p.goto(server.url + eventPath);
    await fillTicket(p);
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    await p.route("**/v1/order", async (route) => {
      const placed = await route.fetch();
      await held;
      await route.fulfill({ response: placed });
    }, { times: 1 });
    await p.getByRole("button", { name: /^Buy YES for/ }).click();
    await p.getByRole("button", { name: "Placing the order…" }).waitFor();
    // Closed (or reloaded) now, the order's answer would be lost: the browser asks first, and the trader stays.
    await closeAndStay(p);
    answer();
    await p.getByTestId("order-result").getByRole("heading", { name: "Order placed" }).waitFor({ timeout: 30_000 });
    // Answered and shown, the page closes without asking.
    const warned: string[] = [];
    p.on("dialog", (d) => (warned.push(d.type()), d.dismiss()));
    const closed = p.waitForEvent("close");
    await p.close({ runBeforeUnload: true });
    await closed;
    expect(warned).toEqual([]);
  });

  it("shows the vault's balance after an order, not what a read made before it answered late", async () => {
    const client = new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret });
    const p = await newPage();
    await p.goto(server.url + eventPath);
    await fillTicket(p);
    const buy = p.getByRole("button", { name: /^Buy YES for/ });
    const result = p.getByTestId("order-result");
    await buy.click();
    await result.getByRole("heading", { name: "Order placed" }).waitFor({ timeout: 30_000 });
    // The vault as read when the next order is sent answers after the order, and after the read made once it was placed.
    let answerLate!: () => void;
    const late = new Promise<void>((resolve) => (answerLate = resolve));
    await p.route(
      "**/v1/account",
      async (route) => {
        const before = (await (await route.fetch()).json()) as { available_usdc: number };
        await late;
        await route.fulfill({ json: { ...before, available_usdc: 0.123456 } });
      },
      { times: 1 },
    );
    const readAfter = p.waitForResponse((r) => new URL(r.url()).pathname === "/v1/account");
    await buy.click();
    await result.getByRole("heading", { name: "Order placed" }).waitFor({ timeout: 30_000 });
    await readAfter;
    answerLate();
    await p.waitForResponse((r) => new URL(r.url()).pathname === "/v1/account");
    const { available_usdc } = await client.account();
    const shown = async () => Number((await p.getByText(/^Available in your vault: /).textContent())!.replace(/[^\d.]/g, ""));
    await expect.poll(shown, { timeout: 30_000 }).toBe(available_usdc);
    await p.close();
  });

  it("shows no quote of the other outcome while the one chosen is being priced", async () => {
    const p = await newPage();
    await p.goto(server.url + eventPath);
    await fillTicket(p);
    const legs = p.locator(".quote table.legs");
    await legs.waitFor();
    // The NO quote is slow to come: meanwhile the YES plan, its prices, must not stand for it.
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    await p.route(
      (url) => url.pathname === "/v1/quote" && url.searchParams.get("outcome") === "NO",
      async (route) => {
        const quote = await route.fetch();
        await held;
        await route.fulfill({ response: quote });
      },
    );
    await p.getByRole("radio", { name: "Buy NO" }).click();
    await p.locator(".quote").getByText("Pricing…").waitFor();
    await expect(legs.count()).resolves.toBe(0);
    answer();
    await legs.waitFor();
    await p.unrouteAll({ behavior: "ignoreErrors" });
    await p.close();
  });

  it("says when to ask again after too many requests, and asks for no quote before then", async () => {
    const p = await newPage();
    let asked = 0;
    const refusal = { error: { code: "rate_limited", message: "Too many requests: try again in 5 s.", details: { retry_after_seconds: 5 } } };
    await p.route(
      (url) => url.pathname === "/v1/quote",
      (route) => (asked++, route.fulfill({ status: 429, headers: { "retry-after": "5" }, json: refusal })),
    );
    await p.goto(server.url + eventPath);
    await p.getByRole("alert").getByText("Too many requests. Try again in 5 s.").waitFor();
    await p.waitForTimeout(3_000);
    expect(asked).toBe(1);
    await p.close();
  });

  it("reads an order being settled again only once a 429's Retry-After has passed", async () => {
    const p = await newPage();
    await p.clock.install();
    // Read once the list is shown: the first is refused, too many requests.
    let after: number | undefined;
    const refusal = { error: { code: "rate_limited", message: "Too many requests: try again in 30 s.", details: { retry_after_seconds: 30 } } };
    await p.route(
      (url) => url.pathname === "/v1/orders",
      async (route) => {
        if (after !== undefined && ++after === 1) return route.fulfill({ status: 429, headers: { "retry-after": "30" }, json: refusal });
        // The newest order still being settled: the page reads the list again until it is.
        const orders = (await (await route.fetch()).json()) as { data: { status: string }[] };
        orders.data[0]!.status = "routing";
        return route.fulfill({ json: orders });
      },
    );
    await p.goto(server.url + "/orders");
    await p.getByTestId("order-row").first().waitFor();
    after = 0;
    await p.clock.runFor(2_000);
    await p.getByRole("alert").getByText("Too many requests. Try again in 30 s.").waitFor();
    await p.clock.runFor(25_000);
    // Time for a request the page should not have made to reach the route.
    await p.waitForTimeout(1_000);
    expect(after).toBe(1);
    await p.clock.runFor(5_000);
    await expect.poll(() => after, { timeout: 30_000 }).toBe(2);
    await p.close();
  });

  it("says the orders are refreshing when Refresh is clicked, not at each read of an order being settled", async () => {
    const p = await newPage();
    let held: Promise<void> | undefined;
    await p.route(
      (url) => url.pathname === "/v1/orders",
      async (route) => {
        const answered = held;
        // The newest order still being settled: the page reads the list again every 2 s until it is.
        const orders = (await (await route.fetch()).json()) as { data: { status: string }[] };
        orders.data[0]!.status = "routing";
        await answered;
        return route.fulfill({ json: orders });
      },
    );
    await p.goto(server.url + "/orders");
    await p.getByTestId("order-row").first().waitFor();
    let answer!: () => void;
    held = new Promise<void>((resolve) => (answer = resolve));
    await p.waitForRequest((r) => new URL(r.url()).pathname === "/v1/orders");
    await p.waitForTimeout(500);
    // Read again on its own, the list keeps its Refresh control as it was: enabled, and not saying it refreshes.
    const refresh = p.getByRole("button", { name: /^Refresh/ });
    await expect(refresh.textContent()).resolves.toBe("Refresh");
    await expect(refresh.isEnabled()).resolves.toBe(true);
    answer();
    held = new Promise<void>((resolve) => (answer = resolve));
    await refresh.click();
    await p.getByRole("button", { name: "Refreshing…" }).waitFor();
    answer();
    await p.getByRole("button", { name: "Refresh", exact: true }).waitFor();
    await p.close();
  });

  it("leaves no order out when orders come while older ones are shown and one is being settled", async () => {
    const client = new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret });
    const [template] = (await client.orders()).data;
    // 60 orders, each of its own amount, the newest still being settled; the page reads them 50 at a time.
    const made = (amount: number, status = "filled") => ({ ...template!, order_id: `ord_${amount}`, amount_usdc: amount, status });
    let all = Array.from({ length: 60 }, (_, i) => made(60 - i, i === 0 ? "routing" : "filled"));
    const p = await newPage();
    await serveOrders(p, () => all);
    await p.goto(server.url + "/orders");
    await p.getByTestId("order-row").nth(49).waitFor();
    await p.getByRole("button", { name: "Load older orders" }).click();
    await p.getByTestId("order-row").nth(59).waitFor();
    // A bot places 3 orders; the page reads the newest again for the one being settled.
    all = [made(103), made(102), made(101), ...all];
    await p.getByText("103.00 USDC").waitFor();
    // Each order's amount, as listed: the newest orders, none left out, none twice.
    const amounts = await p.getByTestId("order-row").locator("dl.order-facts > div:first-child > dd").allTextContents();
    expect(amounts.length).toBeGreaterThanOrEqual(60);
    expect(amounts).toEqual(all.slice(0, amounts.length).map((o) => `${o.amount_usdc}.00 USDC`));
    await p.close();
  });

  it("reads the older orders asked for whose read failed at the next read of an order being settled, not that one alone", async () => {
    const client = new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret });
    const [template] = (await client.orders()).data;
    // 60 orders, the newest still being settled: the page reads the list again every 2 s.
    const made = (amount: number, status = "filled") => ({ ...template!, order_id: `ord_${amount}`, amount_usdc: amount, status });
    const all = Array.from({ length: 60 }, (_, i) => made(60 - i, i === 0 ? "routing" : "filled"));
    const p = await newPage();
    await serveOrders(p, () => all);
    // The read of "Load older orders" (the newest 100) fails once: a proxy's 503.
    await p.route(
      (url) => url.pathname === "/v1/orders" && url.searchParams.get("limit") === "100",
      (route) => route.fulfill({ status: 503, json: { error: { code: "venue_unavailable", message: "The service is busy: try again." } } }),
      { times: 1 },
    );
    await p.goto(server.url + "/orders");
    await p.getByTestId("order-row").nth(49).waitFor();
    await p.getByRole("button", { name: "Load older orders" }).click();
    await p.getByRole("alert").getByText("The service is busy: try again.").waitFor();
    // The next read for the order being settled reads what was asked for: the older orders come, the refusal goes.
    await p.getByTestId("order-row").nth(59).waitFor({ timeout: 10_000 });
    await expect(p.getByRole("alert").count()).resolves.toBe(0);
    await p.close();
  });

  it("reads again, while an order is being settled, only the orders that can change: it and the newer ones", async () => {
    const client = new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret });
    const [template] = (await client.orders()).data;
    // 50 orders, the third newest still being settled, the others settled for good.
    const made = (amount: number, status = "filled") => ({ ...template!, order_id: `ord_${amount}`, amount_usdc: amount, status });
    const all = Array.from({ length: 50 }, (_, i) => made(50 - i, i === 2 ? "routing" : "filled"));
    const p = await newPage();
    const asked: number[] = [];
    await serveOrders(p, () => all, { asked });
    await p.goto(server.url + "/orders");
    await p.getByTestId("order-row").nth(49).waitFor();
    await expect.poll(() => asked.length, { timeout: 10_000 }).toBeGreaterThan(1);
    all[2] = made(48);
    await p.getByTestId("order-row").nth(2).locator(".badge-filled").waitFor();
    // Each read after the first asked for the 3 newest orders, not the 50 shown; once settled, none is read again.
    const reads = asked.length;
    await p.waitForTimeout(3_000);
    expect(asked.length).toBe(reads);
    expect(asked).toEqual([50, ...Array.from({ length: reads - 1 }, () => 3)]);
    await expect(p.getByTestId("order-row").count()).resolves.toBe(50);
    await p.close();
  });

  it("keeps every order loaded with \"Load older orders\", past the 500 a page holds, when the list is read again", async () => {
    const client = new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret });
    const [template] = (await client.orders()).data;
    // 560 orders, each of its own amount (without fills: a short page to draw).
    const made = (amount: number, status = "filled") => ({ ...template!, order_id: `ord_${amount}`, amount_usdc: amount, status, fills: [] });
    let all = Array.from({ length: 560 }, (_, i) => made(560 - i));
    const p = await newPage();
    await serveOrders(p, () => all, { cap: 500 });
    await p.goto(server.url + "/orders");
    const rows = p.getByTestId("order-row");
    for (let shown = 50; shown < 550; shown += 50) {
      await rows.nth(shown - 1).waitFor();
      await p.getByRole("button", { name: "Load older orders" }).click();
    }
    await rows.nth(549).waitFor();
    // A bot places 3 orders, the newest still being settled: read again (Refresh, then every 2 s for that order), the list
    // keeps the 550 it showed.
    all = [made(1003, "routing"), made(1002), made(1001), ...all];
    await p.getByRole("button", { name: "Refresh" }).click();
    await p.getByText(usdc(1003)).waitFor();
    await p.waitForResponse((r) => new URL(r.url()).pathname === "/v1/orders");
    await p.waitForTimeout(500);
    const amounts = await rows.locator("dl.order-facts > div:first-child > dd").allTextContents();
    expect(amounts).toEqual(all.slice(0, 550).map((o) => usdc(o.amount_usdc)));
    await p.close();
  });

  it("gets test USDC, and withdraws to an address only with the password given again", async () => {
    await page.getByRole("link", { name: "Account" }).click();
    await page.getByTestId("available").waitFor();
    const available = async () => Number((await page.getByTestId("available").textContent())!.replace(/[^\d.]/g, ""));
    const before = await available();
    await page.getByRole("button", { name: "Get test USDC" }).click();
    await expect.poll(available, { timeout: 30_000 }).toBeCloseTo(before + 10_000, 2);
    await page.locator('[data-testid=activity-row][data-type="faucet"]').first().waitFor();

    const to = privateKeyToAddress(generatePrivateKey());
    await page.evaluate(INSECURE);
    await page.getByRole("button", { name: "Withdraw", exact: true }).click();
    await page.getByLabel("Amount (USDC)").fill("25");
    await page.getByLabel("To address").fill(to);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByLabel("Your password").fill("not the password");
    await page.getByRole("button", { name: "Confirm withdrawal" }).click();
    await page.getByRole("alert").getByText(/password is wrong/).waitFor();
    await page.getByLabel("Your password").fill(password);
    await page.getByRole("button", { name: "Confirm withdrawal" }).click();
    await page.getByTestId("withdrawal-result").waitFor({ timeout: 30_000 });
    expect(await page.getByTestId("withdrawal-tx").textContent()).toMatch(/^0x[0-9a-f]{64}$/);
    // Paid now, for the first time: the wrong password paid nothing, so this is no withdrawal "confirmed before".
    await expect(page.getByTestId("withdrawal-result").getByText(/confirmed before/).count()).resolves.toBe(0);
    await shot("09c-withdrawal");
    await page.getByRole("button", { name: "Done" }).click();
    await page.locator('[data-testid=activity-row][data-type="withdrawal"]').first().waitFor();
    await expect.poll(available, { timeout: 30_000 }).toBeCloseTo(before + 10_000 - 25, 2);
    // Money out reads as such, and money in: the withdrawal −25, the test USDC +10,000.
    const amount = (type: string) => page.locator(`[data-testid=activity-row][data-type="${type}"]`).first().locator('td[data-label="Amount"]').textContent();
    await expect(amount("withdrawal")).resolves.toBe("−25.00 USDC");
    await expect(amount("faucet")).resolves.toBe("+10,000.00 USDC");
    await shot("09b-account");

    const health = await new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret }).health();
    const chain = createPublicClient({ transport: http(health.chain.rpc_url) });
    const erc20 = parseAbi(["function balanceOf(address) view returns (uint256)"]);
    await expect
      .poll(() => chain.readContract({ address: health.chain.contracts.usdc as `0x${string}`, abi: erc20, functionName: "balanceOf", args: [to] }), { timeout: 30_000 })
      .toBe(25_000_000n);
  });

  it("withdraws once a withdrawal whose answer was lost, and pays an edited one as a withdrawal of its own", async () => {
    const to = privateKeyToAddress(generatePrivateKey());
    const withdraw = async (amount: string, address: string = to) => {
      await page.getByRole("button", { name: "Withdraw", exact: true }).click();
      await page.getByLabel("Amount (USDC)").fill(amount);
      await page.getByLabel("To address").fill(address);
      await page.getByRole("button", { name: "Continue" }).click();
    };
    const confirm = async () => {
      await page.getByLabel("Your password").fill(password);
      await page.getByRole("button", { name: "Confirm withdrawal" }).click();
    };
    const lose = () => page.route("**/v1/withdrawals", async (route) => (await route.fetch(), route.abort("connectionreset")), { times: 1 });
    const lost = page.getByRole("alert").getByText("The withdrawal may have been sent: no answer came back. Confirm it again as it is: it is paid once.");

    // Paid, its answer lost; confirmed again, after a refusal that did not look at it (too many tries), it is the same withdrawal.
    await withdraw("5");
    await lose();
    await confirm();
    await lost.waitFor();
    const refusal = { error: { code: "rate_limited", message: "Too many requests: try again in 1 s.", details: { retry_after_seconds: 1 } } };
    await page.route("**/v1/withdrawals", (route) => route.fulfill({ status: 429, headers: { "retry-after": "1" }, json: refusal }), { times: 1 });
    await confirm();
    await page.getByRole("alert").getByText(/Too many/).waitFor();
    // The dialog closed, the page reloaded, and the withdrawal asked for again as it was, written otherwise (5.0, the address
    // in lower case): still the same withdrawal.
    await page.keyboard.press("Escape");
    await page.reload();
    await withdraw("5.0", to.toLowerCase());
    await confirm();
    await page.getByTestId("withdrawal-result").getByText(/^This withdrawal was confirmed before, its answer not seen then: it was paid once/).waitFor({ timeout: 30_000 });
    await page.getByRole("button", { name: "Done" }).click();

    // Another amount after a lost answer is another withdrawal, not the lost one's id sent with another body.
    await withdraw("6");
    await lose();
    await confirm();
    await lost.waitFor();
    await page.getByRole("button", { name: "Back" }).click();
    await page.getByLabel("Amount (USDC)").fill("7");
    await page.getByRole("button", { name: "Continue" }).click();
    await confirm();
    await page.getByTestId("withdrawal-result").waitFor({ timeout: 30_000 });
    await page.getByRole("button", { name: "Done" }).click();

    const health = await new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret }).health();
    const chain = createPublicClient({ transport: http(health.chain.rpc_url) });
    const erc20 = parseAbi(["function balanceOf(address) view returns (uint256)"]);
    await expect
      .poll(() => chain.readContract({ address: health.chain.contracts.usdc as `0x${string}`, abi: erc20, functionName: "balanceOf", args: [to] }), { timeout: 30_000 })
      .toBe(18_000_000n);
  });

  it("lists the account's older movements of money on asking, after the newest 50", async () => {
    const p = await newPage();
    // An account whose activity goes on past its newest page: its first deposit is on the next one.
    const deposit = { activity_id: "0xolder:0", type: "deposit", amount_usdc: 123.45, tx_hash: `0x${"ab".repeat(32)}`, status: "credited", reference: "0xolder:0", address: null, created_at: "2026-01-02T03:04:05.000Z" };
    await p.route(
      (url) => url.pathname === "/v1/activity",
      async (route) => {
        if (new URL(route.request().url()).searchParams.get("cursor") === "older") return route.fulfill({ json: { data: [deposit], next_cursor: null } });
        const newest = (await (await route.fetch()).json()) as { next_cursor: string | null };
        return route.fulfill({ json: { ...newest, next_cursor: "older" } });
      },
    );
    await p.goto(server.url + "/account");
    await p.getByTestId("activity-row").first().waitFor();
    const rows = await p.getByTestId("activity-row").count();
    await p.getByRole("button", { name: "Load older movements" }).click();
    await p.locator('[data-testid=activity-row][data-type="deposit"]').getByText("123.45 USDC").waitFor();
    expect(await p.getByTestId("activity-row").count()).toBe(rows + 1);
    await expect(p.getByRole("button", { name: "Load older movements" }).count()).resolves.toBe(0);
    await p.close();
  });

  it("shows a resolved event's outcome and what the position in it realized", async () => {
    const client = new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret });
    const open = (await client.markets({ status: "open", limit: 50 })).data.filter((m) => `/events/${m.event_id}` !== eventPath);
    const event = open[open.length - 1]!.event_id;
    const bought = await client.order({ market_id: event, outcome: "YES", side: "buy", amount_usdc: 10, max_slippage: 0.05 });
    // A position is all it needs: the books the simulators draw may fill a part of it.
    expect(bought.filled_shares).toBeGreaterThan(0);
    await server.crossfill.store.decideEvent({ eventId: event, status: "resolved", outcome: "YES", decidedBy: "operator", venueReports: {}, decidedAt: new Date().toISOString() });
    await server.crossfill.resolutions.pass();

    // 500 movements of money newer than the redemption (a bot trading since): the redemption is on the activity's next page.
    const activity = (url: URL) => url.pathname === "/v1/activity";
    await page.route(activity, async (route) => {
      const url = new URL(route.request().url());
      if (url.searchParams.get("cursor") === "newer") {
        url.searchParams.delete("cursor");
        return route.fulfill({ response: await route.fetch({ url: url.toString() }) });
      }
      const at = new Date().toISOString();
      const newer = Array.from({ length: 500 }, (_, i) => ({ activity_id: `n${i}`, type: "faucet", amount_usdc: 1, tx_hash: null, status: "confirmed", reference: `n${i}`, address: null, created_at: at }));
      return route.fulfill({ json: { data: newer, next_cursor: "newer" } });
    });
    await page.goto(`${server.url}/events/${encodeURIComponent(event)}`);
    const resolved = page.getByTestId("resolved");
    await resolved.waitFor();
    await expect(resolved.getByRole("heading").textContent()).resolves.toBe("Resolved: YES");
    // Each share paid 1 USDC: the payout less what the shares cost, shown to the micro-USDC.
    const shown = async (testId: string, pattern: RegExp) => {
      const match = pattern.exec((await resolved.getByTestId(testId).textContent()) ?? "");
      expect(match, testId).not.toBeNull();
      return Number(match![1]!.replaceAll(",", ""));
    };
    const realized = bought.filled_shares - bought.spent_usdc;
    expect(Math.abs((await shown("resolved-position", /^Your YES position: redeemed, \+([\d,.]+) USDC realized$/)) - realized)).toBeLessThanOrEqual(1e-6);
    expect(Math.abs((await shown("resolved-paid", /^Paid into your vault: ([\d,.]+) USDC 0x/)) - bought.filled_shares)).toBeLessThanOrEqual(1e-6);
    await expect(page.getByRole("button", { name: /^Buy YES for/ }).isDisabled()).resolves.toBe(true);
    await shot("09d-resolved-event");
    // A position that realized exactly nothing is neither a gain nor a loss: not in either colour.
    const account = (url: URL) => url.pathname === "/v1/account";
    await page.route(account, async (route) => {
      const read = (await (await route.fetch()).json()) as { positions: { event_id: string; realized_pnl_usdc: number }[] };
      for (const p of read.positions) if (p.event_id === event) p.realized_pnl_usdc = 0;
      return route.fulfill({ json: read });
    });
    await page.reload();
    const even = page.getByTestId("resolved-position");
    await even.getByText("0.00 USDC", { exact: true }).waitFor();
    expect((await even.locator("strong").getAttribute("class")) ?? "").not.toMatch(/gain|loss/);
    await page.unroute(account);
    await page.unroute(activity);
  });

  it("offers no Sell on a position whose event is no longer open, whose sale the server refuses, and says what became of it", async () => {
    const client = new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret });
    const open = (await client.markets({ status: "open", limit: 50 })).data.filter((m) => `/events/${m.event_id}` !== eventPath);
    const event = open[open.length - 1]!.event_id;
    const bought = await client.order({ market_id: event, outcome: "YES", side: "buy", amount_usdc: 10, max_slippage: 0.05 });
    expect(bought.filled_shares).toBeGreaterThan(0);
    // Disputed: no longer traded, nor redeemed, so the shares stay held.
    await server.crossfill.store.decideEvent({ eventId: event, status: "disputed", outcome: null, decidedBy: "operator", venueReports: {}, decidedAt: new Date().toISOString() });
    await server.crossfill.resolutions.pass();
    await expect(client.order({ market_id: event, outcome: "YES", side: "sell", shares: bought.filled_shares, max_slippage: 0.05 })).rejects.toMatchObject({ code: "market_closed" });

    await page.goto(server.url + "/account");
    const row = page.getByTestId("position-row").filter({ has: page.getByRole("link", { name: event, exact: true }) });
    await row.getByRole("link", { name: "Disputed" }).waitFor({ timeout: 10_000 });
    await expect(row.getByRole("button", { name: /^Sell / }).count()).resolves.toBe(0);
    // An open event's position keeps its Sell.
    await expect(page.getByRole("button", { name: /^Sell YES of / }).count()).resolves.toBeGreaterThan(0);
  });

  it("revokes the key with confirmation, after which the API refuses it", async () => {
    await page.getByRole("link", { name: "Settings" }).click();
    await page.getByRole("button", { name: "Revoke key browser test bot" }).click();
    await shot("10-revoke-confirm");
    await page.getByRole("button", { name: "Revoke key", exact: true }).click();
    await page.getByTestId("key-row").getByText("Revoked").waitFor();

    const client = new CrossfillClient({ baseUrl: server.url, apiKey: key.apiKey, apiSecret: key.apiSecret });
    const refused = await client.account().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CrossfillError);
    expect(refused).toMatchObject({ status: 403, code: "key_revoked" });
  });

  it("fits a 390 px phone screen", async () => {
    // A name of 100 characters with nowhere to break it is wrapped in its card, not cut off at the screen's edge.
    const { csrf_token } = (await (await context.request.get(`${server.url}/v1/session`)).json()) as { csrf_token: string };
    const long = await context.request.post(`${server.url}/v1/keys`, { headers: { "x-csrf-token": csrf_token }, data: { name: "n".repeat(100), scopes: ["read"] } });
    expect(long.status()).toBe(201);
    const phone = await newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    for (const [name, path, ready] of [
      ["11-phone-markets", "/markets", "table.markets tbody tr"],
      ["12-phone-event", eventPath, "table.ladder tr.lvl"],
      ["13-phone-orders", "/orders", "[data-testid=order-row]"],
      ["14-phone-keys", "/settings/developer/api-keys", "[data-testid=key-row]"],
      ["15-phone-account", "/account", "[data-testid=available]"],
    ] as const) {
      await phone.goto(server.url + path);
      await phone.locator(ready).first().waitFor();
      // A string, not a function: the tests compile without the DOM's types.
      const overflow = await phone.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
      expect(overflow, `${path} scrolls sideways`).toBeLessThanOrEqual(0);
      const cut = await phone.evaluate<number>("Math.max(0, ...[...document.querySelectorAll('.table-wrap')].map((t) => t.scrollWidth - t.clientWidth))");
      expect(cut, `${path} has a table wider than the screen`).toBeLessThanOrEqual(0);
      await shot(name, phone);
    }
    await phone.close();
  });

  it("signs out, and signs back in with the keyboard alone", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/signin/);
    await page.getByLabel("Email").waitFor();
    await page.keyboard.type(email); // the email field has focus on arrival
    await page.keyboard.press("Tab");
    await page.keyboard.type(password);
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/markets|\/settings/);
    await page.getByRole("button", { name: "Sign out" }).waitFor();
  });

  it("returns after sign-in to the page that asked for it, with its query: the account page's Sell link opens the ticket in Sell mode", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/signin/);
    const asked = `${eventPath}?side=sell&outcome=NO`;
    await page.goto(server.url + asked);
    await page.waitForURL(/\/signin\?next=/);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(server.url + asked);
    await expect(page.getByRole("radio", { name: "Sell", exact: true }).getAttribute("aria-checked")).resolves.toBe("true");
    await expect(page.getByRole("radio", { name: "Sell NO" }).getAttribute("aria-checked")).resolves.toBe("true");
  });

  it("after sign-in goes to a page of this site only: a next naming another, however spelled, lands on the markets", async () => {
    // A browser reads "/\\host" and "/\t/host" as "//host": another origin, which history cannot go to.
    for (const next of ["/\\evil.example/x", "/\t/evil.example/x"]) {
      await page.goto(`${server.url}/signin?next=${encodeURIComponent(next)}`);
      await page.waitForURL(`${server.url}/markets`);
      await page.getByRole("heading", { name: "Markets" }).waitFor();
    }
  });

  it("never shows the sign-in page while the browser is still signed in: not after a sign-out the server refused", async () => {
    // Another tab signs out and in again: the browser holds a new session, whose CSRF token this page has not read.
    const other = await newPage();
    await other.goto(`${server.url}/markets`);
    await other.getByRole("button", { name: "Sign out" }).click();
    await other.getByLabel("Email").fill(email);
    await other.getByLabel("Password").fill(password);
    await other.getByRole("button", { name: "Sign in" }).click();
    await other.getByRole("button", { name: "Sign out" }).waitFor();
    await other.close();

    const signedIn = async () => (await context.request.get(`${server.url}/v1/session`)).ok();
    const reread = page.waitForResponse((r) => r.url() === `${server.url}/v1/session` && r.request().method() === "GET");
    await page.getByRole("button", { name: "Sign out" }).click();
    // Refused (csrf_failed: the token is the old session's), the page reads the session again rather than
    // show the sign-in page to a browser that is signed in; then signing out works.
    await reread;
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    expect(await signedIn()).toBe(true);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/signin/);
    expect(await signedIn()).toBe(false);
  });
});
