import { randomUUID } from "node:crypto";
import type { Command } from "commander";
import { CrossfillClient, CrossfillError, MAX_TIMEOUT_MS } from "../sdk/client.ts";
import type { Activity, Withdrawal } from "../sdk/types.ts";
import { printable } from "../domain/text.ts";

/** How long a command waits for the server's answer: CROSSFILL_TIMEOUT_MS, 30 s unless set (Node's own bound is 5 minutes). */
function timeoutMs(fail: (message: string) => never): number {
  const set = process.env.CROSSFILL_TIMEOUT_MS;
  // empty as unset, as CROSSFILL_URL
  if (!set) return 30_000;
  if (!/^\d+$/.test(set) || Number(set) < 1 || Number(set) > MAX_TIMEOUT_MS) {
    fail(`CROSSFILL_TIMEOUT_MS must be the milliseconds to wait for the server, an integer from 1 to ${MAX_TIMEOUT_MS} (got ${JSON.stringify(set)})`);
  }
  return Number(set);
}

/**
 * The running server, as a client of its API: CROSSFILL_URL (default http://127.0.0.1:$PORT, 8080), with the key
 * in CROSSFILL_API_KEY and, for fund-moving commands, its secret in CROSSFILL_API_SECRET; answering within CROSSFILL_TIMEOUT_MS.
 */
export function apiClient(fail: (message: string) => never): CrossfillClient {
  const apiKey = process.env.CROSSFILL_API_KEY;
  if (!apiKey) fail("set CROSSFILL_API_KEY (and CROSSFILL_API_SECRET to move funds): make a key with `crossfill keys create`");
  const baseUrl = process.env.CROSSFILL_URL || `http://127.0.0.1:${process.env.PORT || 8080}`;
  const url = URL.canParse(baseUrl) ? new URL(baseUrl) : undefined;
  // Without its scheme ("localhost:8080") the address is another URL scheme's, which fetch refuses as if no server answered.
  if (!url || !/^https?:\/\/\S+$/i.test(baseUrl)) fail(`CROSSFILL_URL must be the server's http:// or https:// address, like http://127.0.0.1:8080 (got ${JSON.stringify(baseUrl)})`);
  // fetch refuses such a URL with an error that quotes it, password included
  if (url.username || url.password) fail("CROSSFILL_URL must not carry a user name or password (the API takes its key in CROSSFILL_API_KEY); it is not printed here");
  // the route is put after it: behind a query or fragment, it would be no path
  if (url.search || url.hash || /[?#]/.test(baseUrl)) fail(`CROSSFILL_URL must be the server's address without a query or fragment, like http://127.0.0.1:8080 (got ${JSON.stringify(baseUrl)})`);
  return new CrossfillClient({ baseUrl, apiKey, timeoutMs: timeoutMs(fail), ...(process.env.CROSSFILL_API_SECRET ? { apiSecret: process.env.CROSSFILL_API_SECRET } : {}) });
}

/** Node's codes for a TLS failure: OpenSSL's (ERR_SSL_*), Node's own (ERR_TLS_*), and X.509 verification's (DEPTH_ZERO_SELF_SIGNED_CERT, CERT_HAS_EXPIRED, UNABLE_TO_VERIFY_LEAF_SIGNATURE...). */
const TLS_FAILURE = /^ERR_(?:SSL|TLS)_|CERT|CRL|^UNABLE_TO_|^(?:HOSTNAME_MISMATCH|INVALID_CA|INVALID_PURPOSE|PATH_LENGTH_EXCEEDED)$/;

/** A connection lost after the request went out (reset, closed, no answer in time): what it asked may have been done. */
const SENT = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

/** The command's option or argument that sets each field of the API's body, by the field's name. */
export type FieldNames = Record<string, string>;

/**
 * An invalid_request's sentence names the body's fields: the command's user set them by its options and arguments.
 * What it quotes (a value as sent, in JSON's quotes) stays as it is, whatever it spells.
 */
function inCommandTerms(e: CrossfillError, names: FieldNames): string {
  const fields = Object.keys(names);
  if (e.code !== "invalid_request" || typeof e.details?.fields !== "object" || fields.length === 0) return e.message;
  return e.message.replace(new RegExp(`"(?:[^"\\\\]|\\\\.)*"|\\b(?:${fields.join("|")})\\b`, "g"), (match) => names[match] ?? match);
}

/** A count option (book --depth, activity --limit): digits alone, from 1 to `max`; anything else fails, naming the option. */
export function count(raw: string, option: string, max: number, fail: (message: string) => never): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > max) fail(`${option} must be an integer from 1 to ${max} (got ${JSON.stringify(raw)})`);
  return n;
}

/**
 * A refusal by the API, as its code and sentence (a field named as `names` sets it); a TLS handshake that failed as
 * its reason; a connection that failed (the server is not running) as that, with `maybeDone` when it was lost after
 * the request went out; anything else (a request refused here, before it was sent) as what refused it.
 */
export async function answer<T>(call: Promise<T>, fail: (message: string) => never, maybeDone = "", names: FieldNames = {}): Promise<T> {
  try {
    return await call;
  } catch (e) {
    // on one line, its control characters escaped: a message that is not the API's is the text of whatever answered (a proxy's error page)
    if (e instanceof CrossfillError) {
      // a failure on the server's side is looked into by its request id, which support asks for
      const quote = e.status >= 500 && e.requestId ? ` (request_id ${e.requestId})` : "";
      // and may have done what it was asked before failing (a proxy's 502 or 504 included), unless it answered the
      // order's or withdrawal's final status (all_venues_failed: failed, the funds released)
      const done = e.status >= 500 && e.details?.status === undefined && maybeDone !== "" ? `. ${maybeDone}` : "";
      fail(`${printable(`${e.code}: ${inCommandTerms(e, names).replace(/\s+/g, " ").trim()}${quote}`)}${done}`);
    }
    // no answer within CROSSFILL_TIMEOUT_MS (the SDK's timeoutMs): the request may have gone out and been acted on
    if ((e as Error).name === "TimeoutError") {
      fail(`the server did not answer within ${timeoutMs(fail) / 1000} s (CROSSFILL_TIMEOUT_MS sets how long to wait)${maybeDone !== "" ? `. ${maybeDone}` : ""}`);
    }
    // fetch's failure to connect (refused, no such host, reset) carries the system's error, with its code
    const cause = (e as Error).cause as { code?: unknown; message?: string; reason?: string } | undefined;
    // a connection made, refused by TLS: OpenSSL's reason, or a certificate that does not verify
    if (typeof cause?.code === "string" && TLS_FAILURE.test(cause.code)) {
      fail(`the TLS handshake with the server failed (${cause.reason ?? cause.message}, ${cause.code}): is CROSSFILL_URL's scheme the server's, and its certificate trusted here (NODE_EXTRA_CA_CERTS)?`);
    }
    // a connection lost once the request was sent: the server may have acted on it
    const sent = typeof cause?.code === "string" && SENT.has(cause.code) && maybeDone !== "" ? `. ${maybeDone}` : "";
    if (typeof cause?.code === "string") fail(`the server did not answer (${cause.message}); is it running? (CROSSFILL_URL)${sent}`);
    fail(`the request could not be sent (${(e as Error).message}${cause?.message ? `: ${cause.message}` : ""})`);
  }
}

function describeWithdrawal(w: Withdrawal): string {
  const tx = w.tx_hash ? ` in ${w.tx_hash}` : "";
  return `Withdrawal ${w.withdrawal_id} ${w.status}: ${w.amount_usdc} USDC to ${w.to_address}${tx}`;
}

const WITHDRAW_FIELDS: FieldNames = { amount_usdc: "<amount>", to_address: "<to>", client_withdrawal_id: "--client-id" };

/** `crossfill withdraw` and `crossfill activity`: money out of the vault, and every movement of it, through the API. */
export function registerFundsCommands(program: Command, fail: (message: string) => never): void {
  program
    .command("withdraw")
    .description("Pay available USDC out of your vault to an address (the key needs the withdraw scope)")
    .argument("<amount>", "USDC, at most 6 decimals")
    .argument("<to>", "a 0x address, checksummed or all lower case")
    .option("--client-id <id>", "idempotency key: the same withdrawal sent again is paid once (default: a new one, printed if the answer is lost)")
    .option("--json", "print JSON for scripts")
    .action(async (amount: string, to: string, o: { clientId?: string; json?: boolean }) => {
      const client = apiClient(fail);
      if (!process.env.CROSSFILL_API_SECRET) fail("set CROSSFILL_API_SECRET: a withdrawal is a signed request");
      // always named: a withdrawal whose answer is lost is then sent again by it, and paid once
      const clientId = o.clientId ?? `cli-${randomUUID()}`;
      const again = `The withdrawal may have been paid: send it again with --client-id ${clientId} to get it, paid once`;
      const w = await answer(client.withdraw({ amount_usdc: amount, to_address: to, client_withdrawal_id: clientId }), fail, again, WITHDRAW_FIELDS);
      console.log(o.json ? JSON.stringify(w) : describeWithdrawal(w));
    });

  program
    .command("activity")
    .description("Every movement of your money, newest first: deposits, the faucet's drip, buys' locks, settles and releases, sells' proceeds, withdrawals, redemptions of resolved events")
    .option("--limit <n>", "how many, newest first (at most 500)", "50")
    .option("--cursor <cursor>", "the next page: the next_cursor of the page before")
    .option("--json", "print the page as JSON for scripts: data, and next_cursor (null on the last page)")
    .action(async (o: { limit: string; cursor?: string; json?: boolean }) => {
      const limit = count(o.limit, "--limit", 500, fail);
      const page = await answer(apiClient(fail).activity({ limit, ...(o.cursor !== undefined && { cursor: o.cursor }) }), fail);
      if (o.json) {
        console.log(JSON.stringify(page));
        return;
      }
      if (page.data.length === 0) console.log("No movements yet.");
      for (const a of page.data) console.log(activityLine(a));
      if (page.next_cursor !== null) console.log(`More: crossfill activity --limit ${limit} --cursor ${page.next_cursor}`);
    });
}

function activityLine(a: Activity): string {
  return `${a.created_at}  ${a.type.padEnd(10)} ${String(a.amount_usdc).padStart(14)} USDC  ${a.status.padEnd(16)} ${a.reference}${a.tx_hash ? `  tx ${a.tx_hash}` : ""}`;
}
