/** Each venue keeps one colour everywhere: ladder, depth chart, legs, fills. */
const KNOWN: Record<string, string> = {
  "polymarket-sim": "#6c8cff",
  polymarket: "#6c8cff",
  "kalshi-sim": "#2fc59b",
  kalshi: "#2fc59b",
  "limitless-sim": "#f0a540",
  limitless: "#f0a540",
  "opinion-sim": "#e45d86",
  opinion: "#e45d86",
};
const SPARE = ["#e06cc8", "#5ccfe6", "#d4d45a", "#b48cff", "#ff7a6b"];

export function venueColour(venue: string): string {
  const known = KNOWN[venue];
  if (known) return known;
  let h = 0;
  for (const ch of venue) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return SPARE[h % SPARE.length]!;
}

/** "polymarket-sim" → "Polymarket (sim)". */
export function venueName(venue: string): string {
  const sim = venue.endsWith("-sim");
  const base = sim ? venue.slice(0, -4) : venue;
  return base.charAt(0).toUpperCase() + base.slice(1) + (sim ? " (sim)" : "");
}

// Amounts and shares are micro units: written to the sixth decimal, so that no balance, position or amount
// typed is shown rounded (a balance of 9.999999 as 10.00, a position of 42.815 shares as 42.82).
const usdFmt = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 6 });
const sharesFmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 6 });

export function usdc(n: number | null | undefined): string {
  return n === null || n === undefined ? "—" : `${usdFmt.format(n)} USDC`;
}

/** A profit or loss: signed, "+1.25 USDC" / "−0.40 USDC". */
export function pnl(n: number | null | undefined): string {
  if (n === null || n === undefined) return "—";
  const text = usdFmt.format(Math.abs(n));
  return `${n > 0 ? "+" : n < 0 ? "−" : ""}${text} USDC`;
}

/** Movements of GET /v1/activity that bring money into the account, and those that take it out. */
const MONEY_IN = new Set(["deposit", "faucet", "sell", "redemption"]);
const MONEY_OUT = new Set(["withdrawal", "settle"]);

/**
 * A movement of the account's money, signed by what it does to the account's money: "+100.00 USDC" in (a deposit, test
 * USDC, a sale, a redemption), "−25.00 USDC" out (a withdrawal, what a buy spent). A lock and its release move money
 * between available and locked, still the account's, and a withdrawal the chain refused or a deposit dropped moved
 * nothing: these are unsigned.
 */
export function movement(type: string, amount: number, status: string): string {
  const movedNothing = (type === "withdrawal" && status === "failed") || (type === "deposit" && status === "dropped");
  if (movedNothing) return usdc(amount);
  return MONEY_IN.has(type) ? pnl(amount) : MONEY_OUT.has(type) ? pnl(-amount) : usdc(amount);
}

/** A P&L's colour: a gain's, a loss's, or none for exactly 0 and for none known. */
export function pnlTone(n: number | null): string {
  return n === null || n === 0 ? "" : n > 0 ? "gain" : "loss";
}

/**
 * An amount or a number of shares as typed (digits, and a point with at most 6 after it), written one way: 25, 25.0 and
 * 025.00 are all "25", as the server reads them, so that one amount typed two ways is one request, under one client id.
 */
export function decimal(typed: string): string {
  const [whole = "", fraction = ""] = typed.split(".");
  const digits = fraction.replace(/0+$/, "");
  return `${whole.replace(/^0+(?=\d)/, "")}${digits === "" ? "" : `.${digits}`}`;
}

export function num(n: number | null | undefined): string {
  return n === null || n === undefined ? "—" : usdFmt.format(n);
}

export function shares(n: number | null | undefined): string {
  return n === null || n === undefined ? "—" : sharesFmt.format(n);
}

// Prices are USDC per share below 1: three decimals, and as many more as the price has, to the micro-USDC: a venue's
// tick as fine as 0.0001 (Polymarket's finest), and what the API works out to the micro-USDC a share (an average price,
// a price with its fees: 0.891958 shown as 0.8920 is more than a buy pays a share, and two venues' prices read alike).
const priceFmt = new Intl.NumberFormat("en-US", { minimumFractionDigits: 3, maximumFractionDigits: 6 });

export function price(n: number | null | undefined): string {
  return n === null || n === undefined ? "—" : priceFmt.format(n);
}

export function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(2)} %`;
}

export function when(iso: string | null | undefined): string {
  if (!iso) return "never";
  const d = new Date(iso);
  return d.toLocaleString("en-GB", { year: "numeric", month: "short", day: "2-digit", hour: "2-digit", minute: "2-digit" });
}

/** 0x1234…abcd: enough to recognise a hash, with the full value in a title. */
export function short(hash: string | null | undefined, keep = 6): string {
  if (!hash) return "—";
  return hash.length <= keep * 2 + 3 ? hash : `${hash.slice(0, keep + 2)}…${hash.slice(-keep)}`;
}

export const STATUS_WORDS: Record<string, string> = {
  pending: "Pending",
  locked: "Funds locked",
  routing: "Routing",
  filled: "Filled",
  partially_filled: "Partially filled",
  rejected: "Rejected",
  failed: "Failed",
  sent: "Sent",
  confirmed: "Confirmed",
  credited: "Credited",
  crediting: "Crediting",
  redeemed: "Redeemed",
};
