import { formatMicro, notional } from "../domain/money.ts";
import { isTerminal } from "../domain/order-status.ts";
import { proceedsOfFills } from "../orders/service.ts";
import type { AccountRecord, FillRecord, OrderRecord, PositionRecord, RedemptionRecord } from "../store/store.ts";
import type { Hex32, Ledger } from "../vault/vault.ts";
import type { VenueFill } from "../venues/venue.ts";
import { checkFundsInvariants, type FundsAuditInput } from "./funds-invariants.ts";

/**
 * What the audit reads: the store's orders, fills, accounts, withdrawals and deposits, the chain's ledger (and its
 * transfers into deposit addresses), and each venue's own trades.
 */
export interface AuditInput extends FundsAuditInput {
  orders: readonly OrderRecord[];
  fills: readonly FillRecord[];
  accounts: readonly AccountRecord[];
  /** The redemptions the store planned for resolved events. */
  redemptions: readonly RedemptionRecord[];
  /** What each account's position in a resolved event holds on chain (its SOT balance), and whether its outcome won. */
  resolvedHoldings: readonly ResolvedHolding[];
  /** Every account's position books (Store.positions). */
  positions: readonly PositionRecord[];
  ledger: Ledger;
  /** The on-chain id of an order (keccak256 of its id). */
  chainId(orderId: string): Hex32;
  /** What the store keeps of the operator's inventory on each venue (Store.venueInventory), by market (`marketKey`) and venue. */
  venueInventory: ReadonlyMap<string, ReadonlyMap<string, bigint>>;
  /** Each venue's trades, by venue id; undefined when the venues' history cannot be read (their simulators ran inside a stopped server). */
  venueTrades: ReadonlyMap<string, readonly VenueFill[]> | undefined;
  /** How many of an invariant's violations to name in its examples (5 unless set). */
  examples?: number;
}

export interface ResolvedHolding extends Pick<PositionRecord, "accountId" | "eventId" | "outcome"> {
  winning: boolean;
  shares: bigint;
}

export interface InvariantResult {
  name: string;
  description: string;
  /** Null when the invariant could not be checked (see `skipped`). */
  violations: number | null;
  /** A few of the violations, in words. */
  examples: string[];
  skipped?: string;
}

const EXAMPLES = 5;

/**
 * Checks the invariants of the order path (issue "Trust with money"), extended to shares (sells' escrows,
 * burns, redemptions) and to money in and out (withdrawals, deposits), against the store, the chain and the
 * venues. Each invariant is checked on its own and counts its violations; none stops the others.
 */
export function checkInvariants(input: AuditInput): InvariantResult[] {
  const { orders, ledger } = input;
  const byChainId = new Map(orders.map((o) => [input.chainId(o.id).toLowerCase(), o]));
  const fillsOf = groupBy(input.fills, (f) => f.orderId);
  const endingsOf = groupBy(ledger.endings, (e) => e.orderId.toLowerCase());
  const locksOf = groupBy(ledger.locks, (l) => l.orderId.toLowerCase());
  const escrowsOf = groupBy(ledger.escrows, (e) => e.orderId.toLowerCase());
  const escrowEndingsOf = groupBy(ledger.escrowEndings, (e) => e.orderId.toLowerCase());
  /**
   * The fills the order is to be charged or paid for: none for a failed order whose lock or escrow went back whole
   * without the server, expired by its client past its deadline or never on chain (a reorganisation removed it):
   * what its child orders filled is the operator's (docs/decisions.md, "An order whose venue never answers ends at
   * its lock's or escrow's deadline"). They stay the venue's trades and the venue inventory's.
   */
  const clientsFills = (o: OrderRecord): FillRecord[] => {
    const id = input.chainId(o.id).toLowerCase();
    const [holds, endings] = o.side === "sell" ? [escrowsOf.get(id), escrowEndingsOf.get(id)] : [locksOf.get(id), endingsOf.get(id)];
    const carried = o.status === "failed" && (holds === undefined || endings?.some((e) => e.kind === "released" && e.expired) === true);
    return carried ? [] : (fillsOf.get(o.id) ?? []);
  };
  const results: InvariantResult[] = [];
  const check = (name: string, description: string, run: (bad: (what: string) => void) => void) => {
    const examples: string[] = [];
    let violations = 0;
    run((what) => {
      violations++;
      if (examples.length < (input.examples ?? EXAMPLES)) examples.push(what);
    });
    results.push({ name, description, violations, examples });
  };
  const skip = (name: string, description: string, skipped: string) => results.push({ name, description, violations: null, examples: [], skipped });

  check("orders_terminal", "every order reached a terminal state", (bad) => {
    for (const o of orders) if (!isTerminal(o.status)) bad(`${o.id} is ${o.status}`);
  });

  check("locks_ended_once", "each lock was settled or released exactly once, and only for an order of the store", (bad) => {
    for (const [chainId, locks] of locksOf) {
      const order = byChainId.get(chainId);
      const endings = endingsOf.get(chainId) ?? [];
      if (!order) bad(`lock ${chainId} belongs to no order`);
      if (locks.length !== 1) bad(`${order?.id ?? chainId} was locked ${locks.length} times`);
      if (endings.length !== 1) bad(`${order?.id ?? chainId} was ended ${endings.length} times`);
    }
    for (const chainId of endingsOf.keys()) if (!locksOf.has(chainId)) bad(`${chainId} was ended but never locked`);
  });

  check("nothing_locked", "nothing is locked in the vault when the service is quiet", (bad) => {
    for (const b of ledger.balances) if (b.locked !== 0n) bad(`${b.client} has ${formatMicro(b.locked)} USDC locked`);
  });

  // Test USDC has a grant from its deployment, drips or none: a chain with neither has real USDC, minted by others.
  const supply = "the USDC supply equals what the faucet minted and the treasury was granted";
  if (ledger.usdcGranted === 0n && ledger.drips.length === 0) {
    skip("usdc_supply", supply, "the chain's USDC is real USDC, whose supply others mint");
  } else {
    check("usdc_supply", supply, (bad) => {
      const minted = sum(ledger.drips, (d) => d.amount) + ledger.usdcGranted;
      if (ledger.usdcTotalSupply !== minted) bad(`supply ${formatMicro(ledger.usdcTotalSupply)} against ${formatMicro(minted)} minted by the faucet and the grant`);
    });
  }

  check("vault_balances", "each account's vault balance equals its deposits, credited deposits, sells' proceeds and redemptions less its charges and withdrawals", (bad) => {
    const deposits = sumBy([...ledger.deposits, ...ledger.depositCredits], (d) => d.client, (d) => d.amount);
    const withdrawals = sumBy([...ledger.withdrawals, ...ledger.withdrawnTo], (w) => w.client, (w) => w.amount);
    const charges = sumBy(
      ledger.endings.flatMap((e) => (e.kind === "settled" ? [e] : [])),
      (e) => e.client,
      (e) => e.spent,
    );
    const proceeds = sumBy(
      ledger.escrowEndings.flatMap((e) => (e.kind === "settled" ? [e] : [])),
      (e) => e.client,
      (e) => e.proceeds,
    );
    const payouts = sumBy(ledger.redemptions, (r) => r.client, (r) => r.payout);
    for (const b of ledger.balances) {
      const key = b.client.toLowerCase();
      const credits = (deposits.get(key) ?? 0n) + (proceeds.get(key) ?? 0n) + (payouts.get(key) ?? 0n);
      const expected = credits - (charges.get(key) ?? 0n) - (withdrawals.get(key) ?? 0n);
      if (b.available + b.locked !== expected) bad(`${b.client} holds ${formatMicro(b.available + b.locked)} USDC, expected ${formatMicro(expected)}`);
    }
  });

  check("escrows_ended_once", "each sell's escrow was of an order of the store, made once and ended at most once", (bad) => {
    for (const [chainId, escrows] of escrowsOf) {
      const order = byChainId.get(chainId);
      const endings = escrowEndingsOf.get(chainId) ?? [];
      if (!order) bad(`escrow ${chainId} belongs to no order`);
      if (escrows.length !== 1) bad(`${order?.id ?? chainId} was escrowed ${escrows.length} times`);
      if (endings.length > 1) bad(`${order?.id ?? chainId}'s escrow was ended ${endings.length} times`);
    }
    for (const chainId of escrowEndingsOf.keys()) if (!escrowsOf.has(chainId)) bad(`${chainId}'s escrow was ended but never made`);
  });

  check("escrows_of_finished_orders_ended", "every share escrowed for a finished order was burned or returned", (bad) => {
    for (const [chainId, escrows] of escrowsOf) {
      const order = byChainId.get(chainId);
      if (!order || !isTerminal(order.status) || escrowEndingsOf.has(chainId)) continue;
      bad(`${order.id} is ${order.status} with ${formatMicro(sum(escrows, (e) => e.shares))} shares still escrowed`);
    }
  });

  check("sot_supply", "each SOT's supply is what was minted less what was burned: shares bought less sold and redeemed", (bad) => {
    const minted = sumBy(ledger.sotMints, (m) => String(m.tokenId), (m) => m.amount);
    const burned = sumBy(ledger.sotBurns, (b) => String(b.tokenId), (b) => b.amount);
    const bought = sumBy(
      ledger.endings.flatMap((e) => (e.kind === "settled" ? [e] : [])),
      (e) => String(e.tokenId),
      (e) => e.shares,
    );
    const sold = sumBy(
      ledger.escrowEndings.flatMap((e) => (e.kind === "settled" ? [e] : [])),
      (e) => String(e.tokenId),
      (e) => e.sold,
    );
    const redeemed = sumBy(ledger.redemptions, (r) => String(r.tokenId), (r) => r.shares);
    const supply = new Map(ledger.sotSupply.map((s) => [String(s.tokenId), s.supply]));
    const tokens = new Set([...minted.keys(), ...burned.keys(), ...bought.keys(), ...supply.keys()]);
    for (const token of tokens) {
      const fromEvents = (minted.get(token) ?? 0n) - (burned.get(token) ?? 0n);
      const fromVault = (bought.get(token) ?? 0n) - (sold.get(token) ?? 0n) - (redeemed.get(token) ?? 0n);
      const held = supply.get(token) ?? 0n;
      if (held !== fromEvents || held !== fromVault) {
        bad(`token ${token}: supply ${formatMicro(held)}, minted less burned ${formatMicro(fromEvents)}, bought less sold and redeemed ${formatMicro(fromVault)}`);
      }
    }
  });

  check("one_burn_per_sale", "SOT burned only by a sell's settlement or a redemption, exactly its shares", (bad) => {
    // Per (transaction, token id): the burns are exactly one per sale with shares sold and one per redemption.
    const key = (tx: string, tokenId: bigint) => `${tx.toLowerCase()}/${tokenId}`;
    const sales = new Map<string, bigint[]>();
    const add = (k: string, shares: bigint) => sales.set(k, [...(sales.get(k) ?? []), shares]);
    for (const e of ledger.escrowEndings) if (e.kind === "settled" && e.sold > 0n) add(key(e.txHash, e.tokenId), e.sold);
    for (const r of ledger.redemptions) add(key(r.txHash, r.tokenId), r.shares);
    const burns = groupBy(ledger.sotBurns, (b) => key(b.txHash, b.tokenId));
    for (const [k, list] of burns) if (!sales.has(k)) bad(`SOT burned outside a sale or redemption: ${list.length} burn(s) in ${k}`);
    for (const [k, shares] of sales) {
      const expected = shares.map((s) => formatMicro(s)).sort().join(",");
      const got = (burns.get(k) ?? []).map((b) => formatMicro(b.amount)).sort().join(",");
      if (got !== expected) bad(`sales and redemptions in ${k} burned [${got}] for shares [${expected}]`);
    }
  });

  check("redeemed_once", "each redemption key was redeemed at most once", (bad) => {
    for (const [k, list] of groupBy(ledger.redemptions, (r) => r.key.toLowerCase())) if (list.length > 1) bad(`${k} was redeemed ${list.length} times`);
  });

  check("redemptions_made", "every redemption planned for a resolved event was made on chain, as planned and in the transaction the store names", (bad) => {
    // The first redemption of each key is the one that paid: a second is redeemed_once's to report.
    const onChain = new Map([...ledger.redemptions].reverse().map((r) => [r.key.toLowerCase(), r]));
    for (const r of input.redemptions) {
      const made = onChain.get(r.key.toLowerCase());
      if (r.status === "pending") bad(`${r.key} (${r.eventId}, ${r.accountId}) is still pending`);
      else if (!made) bad(`${r.key} (${r.eventId}, ${r.accountId}) is recorded redeemed but the chain never redeemed it`);
      else if (made.shares !== r.shares || made.payout !== r.payout || made.txHash.toLowerCase() !== r.txHash?.toLowerCase()) {
        bad(`${r.key} was redeemed on chain for ${formatMicro(made.shares)} shares paying ${formatMicro(made.payout)} in ${made.txHash}, recorded as ${formatMicro(r.shares)} paying ${formatMicro(r.payout)} in ${r.txHash}`);
      }
    }
  });

  check("positions_redeemed", "every share held in a resolved event is in a redemption still pending: none was left out of the redemptions", (bad) => {
    const pending = sumBy(
      input.redemptions.filter((r) => r.status === "pending"),
      positionKey,
      (r) => r.shares,
    );
    for (const h of input.resolvedHoldings) {
      const stranded = h.shares - (pending.get(positionKey(h).toLowerCase()) ?? 0n);
      if (stranded > 0n) bad(`${positionKey(h).replaceAll("\n", " ")} holds ${formatMicro(stranded)} ${h.winning ? "winning" : "losing"} shares of the resolved event that no redemption takes`);
    }
  });

  check("charge_equals_fills", "each finished buy was charged exactly what its fills cost, on chain and in the store", (bad) => {
    for (const o of orders) {
      if (!isTerminal(o.status) || o.side === "sell") continue;
      const fills = clientsFills(o);
      const cost = fills.reduce((s, f) => s + notional(f.price, f.shares) + f.fee, 0n);
      const settled = (endingsOf.get(input.chainId(o.id).toLowerCase()) ?? []).find((e) => e.kind === "settled");
      const charged = settled?.kind === "settled" ? settled.spent : 0n;
      if (charged !== cost) bad(`${o.id} (${o.status}) was charged ${formatMicro(charged)} on chain for fills costing ${formatMicro(cost)}`);
      if (o.spent !== cost) bad(`${o.id} records ${formatMicro(o.spent)} spent for fills costing ${formatMicro(cost)}`);
    }
  });

  check("proceeds_equal_fills", "each finished sell burned exactly the shares its fills sold and credited exactly their net, on chain and in the store", (bad) => {
    const saleOf = new Map(ledger.escrowEndings.flatMap((e) => (e.kind === "settled" ? [[e.orderId.toLowerCase(), e] as const] : [])));
    for (const o of orders) {
      if (!isTerminal(o.status) || o.side !== "sell") continue;
      const fills = clientsFills(o);
      const sold = sum(fills, (f) => f.shares);
      const net = proceedsOfFills(fills);
      const settled = saleOf.get(input.chainId(o.id).toLowerCase());
      const [burned, credited] = settled ? [settled.sold, settled.proceeds] : [0n, 0n];
      if (burned !== sold) bad(`${o.id} (${o.status}) burned ${formatMicro(burned)} shares on chain for fills selling ${formatMicro(sold)}`);
      if (credited !== net) bad(`${o.id} (${o.status}) was credited ${formatMicro(credited)} on chain for fills netting ${formatMicro(net)}`);
      if (o.proceeds !== net || o.filledShares !== sold) bad(`${o.id} records ${formatMicro(o.filledShares)} shares sold for ${formatMicro(o.proceeds)}, its fills ${formatMicro(sold)} for ${formatMicro(net)}`);
    }
  });

  const trades = input.venueTrades;
  if (trades === undefined) {
    skip(
      "fills_match_venues",
      "the stored fills are exactly the venues' trades",
      "the venues are simulators that ran inside the server, and their history ended with it; run them apart (crossfill sim) to compare",
    );
  } else {
    check("fills_match_venues", "the stored fills are exactly the venues' trades", (bad) => {
      // a fill is one side of a trade: both sides of a venue's self-trade are stored, under their own venue order ids
      const stored = new Map(input.fills.map((f) => [`${f.venue}/${f.tradeId}/${f.venueOrderId}`, f]));
      const seen = new Set<string>();
      for (const [venue, list] of trades) {
        for (const t of list) {
          const key = `${venue}/${t.tradeId}/${t.venueOrderId}`;
          seen.add(key);
          const f = stored.get(key);
          if (!f) bad(`${venue} trade ${t.tradeId} (${formatMicro(t.shares)} shares at ${formatMicro(t.price)}) is not a stored fill`);
          else if (f.shares !== t.shares || f.price !== t.price) bad(`${venue} trade ${t.tradeId} differs from its stored fill`);
        }
      }
      for (const [key, f] of stored) if (trades.has(f.venue) && !seen.has(key)) bad(`stored fill ${key} of ${f.orderId} is not a trade of its venue`);
    });
  }

  check("one_mint_per_fill", "one SOT mint per filled order, with its shares", (bad) => {
    // A transaction may settle several orders (Vault.batch), even of one client and token id: within each
    // (transaction, client, token id), the mints are exactly one per settlement with shares, of those shares.
    const key = (tx: string, client: string, tokenId: bigint) => `${tx.toLowerCase()}/${client.toLowerCase()}/${tokenId}`;
    const settledShares = new Map<string, bigint[]>();
    for (const e of ledger.endings) {
      if (e.kind !== "settled") continue;
      const order = byChainId.get(e.orderId.toLowerCase());
      if (order && isTerminal(order.status) && order.filledShares !== e.shares) bad(`${order.id} records ${formatMicro(order.filledShares)} shares, its settlement minted ${formatMicro(e.shares)}`);
      if (e.shares === 0n) continue;
      const k = key(e.txHash, e.client, e.tokenId);
      settledShares.set(k, [...(settledShares.get(k) ?? []), e.shares]);
    }
    const minted = groupBy(ledger.sotMints, (m) => key(m.txHash, m.to, m.tokenId));
    for (const [k, mints] of minted) if (!settledShares.has(k)) bad(`SOT minted outside a settlement: ${mints.length} mint(s) in ${k}`);
    for (const [k, shares] of settledShares) {
      const expected = shares.map((s) => formatMicro(s)).sort().join(",");
      const got = (minted.get(k) ?? []).map((m) => formatMicro(m.amount)).sort().join(",");
      if (got !== expected) bad(`settlements in ${k} minted [${got}] for shares [${expected}]`);
    }
  });

  check("one_order_per_client_id", "one order per client_order_id of an account", (bad) => {
    const byKey = groupBy(
      orders.filter((o) => o.clientOrderId !== null),
      (o) => `${o.accountId}/${o.clientOrderId}`,
    );
    for (const [key, list] of byKey) if (list.length > 1) bad(`${key} names ${list.length} orders`);
  });

  check("settled_tx_hash", "every settled order carries the hash of the successful transaction that settled it", (bad) => {
    for (const o of orders) {
      if (o.status !== "filled" && o.status !== "partially_filled") continue;
      const chainId = input.chainId(o.id).toLowerCase();
      const endings = o.side === "sell" ? ledger.escrowEndings.filter((e) => e.orderId.toLowerCase() === chainId) : (endingsOf.get(chainId) ?? []);
      const settled = endings.find((e) => e.kind === "settled");
      if (o.settleTx === null) bad(`${o.id} is ${o.status} without a tx_hash`);
      else if (!settled || settled.txHash.toLowerCase() !== o.settleTx.toLowerCase()) bad(`${o.id}'s tx_hash ${o.settleTx} is not the transaction that settled it`);
    }
  });

  check("venue_inventory", "the inventory the store keeps on each venue of each market is what its fills sum to: buys' fills less finished sells' fills less open sells' child orders", (bad) => {
    const expected = new Map<string, Map<string, bigint>>();
    const add = (o: OrderRecord, venue: string, shares: bigint) => {
      const market = expected.get(marketKey(o)) ?? new Map<string, bigint>();
      market.set(venue, (market.get(venue) ?? 0n) + shares);
      expected.set(marketKey(o), market);
    };
    for (const o of orders) {
      const open = o.side === "sell" && !isTerminal(o.status);
      if (open) for (const leg of o.legs) add(o, leg.venue, -leg.shares);
      else for (const f of fillsOf.get(o.id) ?? []) add(o, f.venue, o.side === "buy" ? f.shares : -f.shares);
    }
    for (const key of new Set([...expected.keys(), ...input.venueInventory.keys()])) {
      const want = expected.get(key) ?? new Map<string, bigint>();
      const got = input.venueInventory.get(key) ?? new Map<string, bigint>();
      for (const venue of new Set([...want.keys(), ...got.keys()])) {
        const w = want.get(venue) ?? 0n;
        const g = got.get(venue) ?? 0n;
        if (w !== g) bad(`${key.replace("\n", " ")} on ${venue}: the store keeps ${formatMicro(g)} shares, the fills sum to ${formatMicro(w)}`);
      }
    }
  });

  check("position_books", "each position's book holds what its finished orders and redemptions come to: shares bought less sold and redeemed, realized P&L less cost what sells and redemptions paid less what buys cost", (bad) => {
    const expected = new Map<string, { shares: bigint; net: bigint; exits: bigint }>();
    const add = (p: Pick<PositionRecord, "accountId" | "eventId" | "outcome">, shares: bigint, net: bigint, exit: boolean) => {
      const key = positionKey(p);
      const e = expected.get(key) ?? { shares: 0n, net: 0n, exits: 0n };
      expected.set(key, { shares: e.shares + shares, net: e.net + net, exits: e.exits + (exit ? 1n : 0n) });
    };
    for (const o of orders) {
      if ((o.status !== "filled" && o.status !== "partially_filled") || o.filledShares === 0n || o.sotTokenId === null) continue;
      // Its settlement a reorganisation removed and its lock or escrow went back whole, or is gone too: the store folded its book again without it.
      if (o.settleTx === null && (o.releaseTx !== null || (o.locked === 0n && o.escrowed === 0n))) continue;
      if (o.side === "sell") add(o, -o.filledShares, o.proceeds, true);
      else add(o, o.filledShares, -o.spent, false);
    }
    for (const r of input.redemptions) if (r.status === "redeemed") add(r, -r.shares, r.payout, true);
    const books = new Map(input.positions.map((p) => [positionKey(p), p]));
    for (const key of new Set([...expected.keys(), ...books.keys()])) {
      const want = expected.get(key) ?? { shares: 0n, net: 0n, exits: 0n };
      const p = books.get(key);
      const got = p === undefined ? { shares: 0n, net: 0n, exits: 0n } : { shares: p.book.shares, net: p.book.realized - p.book.cost, exits: p.exits };
      const name = key.replaceAll("\n", " ");
      if (got.shares !== want.shares) bad(`${name}: the book holds ${formatMicro(got.shares)} shares, the orders and redemptions leave ${formatMicro(want.shares)}`);
      if (got.net !== want.net) bad(`${name}: realized less cost is ${formatMicro(got.net)} USDC in the book, ${formatMicro(want.net)} from the orders and redemptions`);
      if (got.exits !== want.exits) bad(`${name}: the book took in ${got.exits} sells and redemptions, the store has ${want.exits}`);
    }
  });

  check("accounts_known", "every vault client is an account of the store", (bad) => {
    const known = new Set(input.accounts.map((a) => a.address.toLowerCase()));
    for (const b of ledger.balances) if (!known.has(b.client.toLowerCase())) bad(`${b.client} holds a vault balance but is no account`);
  });

  checkFundsInvariants(input, { check, skip });

  return results;
}

/** A market's key in AuditInput.venueInventory: its event and outcome. */
export function marketKey(o: Pick<OrderRecord, "eventId" | "outcome">): string {
  return `${o.eventId}\n${o.outcome}`;
}

/** A position's key: its account, event and outcome. */
function positionKey(p: Pick<PositionRecord, "accountId" | "eventId" | "outcome">): string {
  return `${p.accountId}\n${p.eventId}\n${p.outcome}`;
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

function sum<T>(items: readonly T[], value: (t: T) => bigint): bigint {
  return items.reduce((s, t) => s + value(t), 0n);
}

function sumBy<T>(items: readonly T[], key: (t: T) => string, value: (t: T) => bigint): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const t of items) out.set(key(t).toLowerCase(), (out.get(key(t).toLowerCase()) ?? 0n) + value(t));
  return out;
}
