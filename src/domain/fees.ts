import { ceilDiv, notional, ONE, shareOut, type Micro, type Ppm, type PriceMicro, type ShareMicro } from "./money.ts";
import type { Level } from "./types.ts";

/**
 * A venue's published taker-fee formula, as data, so the pure router can price plans.
 * - kalshi: ceil_to_cent(rate * C * P * (1 - P)) per order; rate 0.07 is the general schedule. (Kalshi's
 *   fee rounding page rounds per fill instead, the fee to $0.000001 and the debit to the cent, rebating
 *   whole cents per order: `worstFee` bounds both.) `wholeCents`: the market's prices are whole cents and
 *   its contracts whole, so every fill's notional is whole cents (the adapter reads it from the market).
 * - polymarket: C * feeRate * (P * (1 - P))^exponent per order, floored to 5 decimals; the rate is per market, often 0.
 *   Exponent 0 (a market whose `fd` names no exponent, as clob-client-v2 reads it) charges C * feeRate whatever the price.
 * - limitless: a buy pays rate × C of the C contracts it bought, withheld in contracts (`withheldShares`): it
 *   delivers C − rate × C for the notional of C; a sell pays rate × C × P in USDC, rounded up to the micro-USDC.
 * - opinion: the notional times rate * P * (1 - P) per order (a rate of 0.08 charges 2% at P = 0.5),
 *   rounded up to the micro-USDC, and never less than `minFee` on a market with a rate (the venue's
 *   minimum fee per order, docs/venues/opinion.md); the router sizes Opinion legs so that the curve
 *   alone reaches it (`minimumFee`).
 * Rates are in parts per million so that every fee is computed in integers.
 */
export type FeeModel =
  | { kind: "kalshi"; ratePpm: bigint; wholeCents?: true }
  | { kind: "polymarket"; ratePpm: bigint; exponent: 0 | 1 | 2 }
  | { kind: "limitless"; ratePpm: bigint }
  | { kind: "opinion"; ratePpm: bigint; minFee: Micro };

const CENT = 10_000n;
/**
 * The lowest price a Polymarket fill can take: prices are on the market's tick, which the venue may
 * change (`tick_size_change`, finer near 0 and 1), and the finest tick clob-client-v2 1.1.0 knows
 * (`TickSize`) is 0.0001.
 */
export const POLYMARKET_LOWEST_PRICE = 100n;
/** Kalshi rounds each fill's trade fee up to $0.0001. */
const KALSHI_FILL_FEE_STEP = 100n;

/**
 * A Limitless fee rate: whole basis points (the rate signed into each order as `feeRateBps`) below
 * 100 %, so that a buy of whole 0.01-share lots always has contracts left after its fee and its fee
 * in contracts is a whole number of micro-shares.
 */
export function limitlessFee(ratePpm: Ppm): FeeModel {
  if (ratePpm < 0n || ratePpm % 100n !== 0n) throw new RangeError(`a Limitless fee rate must be whole basis points (got ${ratePpm} ppm)`);
  if (ratePpm >= ONE) throw new RangeError(`a Limitless fee rate must be below 100 % (got ${ratePpm / 100n} bps)`);
  return { kind: "limitless", ratePpm };
}

/** Whether a taker order of this side pays its fee in the contracts it buys (Limitless buys) rather than in USDC. */
export function feeInShares(model: FeeModel, side: "buy" | "sell"): boolean {
  return model.kind === "limitless" && side === "buy" && model.ratePpm > 0n;
}

/** The micro-shares a buy of `gross` micro-shares leaves to the venue as its fee in contracts: rate × gross, rounded up (assumed). */
export function withheldShares(model: FeeModel, gross: ShareMicro): ShareMicro {
  return ceilDiv(model.ratePpm * gross, ONE);
}

/** The shares a buy of `gross` micro-shares delivers: all of them, unless it pays its fee in contracts. */
export function deliveredShares(model: FeeModel, gross: ShareMicro): ShareMicro {
  return feeInShares(model, "buy") ? gross - withheldShares(model, gross) : gross;
}

/**
 * The gross size of a buy that pays its fee in contracts and delivers `delivered` micro-shares, in
 * whole lots; undefined when no whole number of lots delivers exactly that. On a rate of whole basis
 * points a lot of 0.01 share delivers a whole lot less `bps` micro-shares, so k lots deliver k times that.
 */
export function grossForDelivered(model: FeeModel, lot: ShareMicro, delivered: ShareMicro): ShareMicro | undefined {
  const perLot = lot - withheldShares(model, lot);
  if (perLot <= 0n || delivered % perLot !== 0n) return undefined;
  const gross = (delivered / perLot) * lot;
  return gross - withheldShares(model, gross) === delivered ? gross : undefined;
}

/** A fill net of the contracts withheld from it: `shares` delivered at `price`, `fee` the USDC value of the contracts withheld. */
export interface NetFill extends Level {
  fee: Micro;
}

/**
 * The fills of a buy that paid `withheld` micro-shares of its gross fills as its fee: each fill keeps
 * its price and delivers its shares less its part of `withheld` (the parts add up to it: fill i
 * carries ⌈withheld × shares up to i / gross⌉ less the parts before it), and its fee is what the
 * venue took for it less the notional of what it delivered. So for every fill
 * notional(price, shares) + fee = notional(price, gross shares): exactly the USDC taken.
 */
export function netOfWithheld(fills: readonly Level[], withheld: ShareMicro): NetFill[] {
  const gross = fills.reduce((s, f) => s + f.shares, 0n);
  if (withheld < 0n || withheld > gross) throw new RangeError(`${withheld} micro-shares withheld of ${gross} bought`);
  const parts = shareOut(withheld, fills.map((f) => f.shares));
  return fills.map((f, i) => {
    const shares = f.shares - parts[i]!;
    return { price: f.price, shares, fee: notional(f.price, f.shares) - notional(f.price, shares) };
  });
}

/** The least fee a venue charges one order that fills anything, on a market with a fee rate: Opinion's floor, 0 elsewhere. */
export function minimumFee(model: FeeModel): Micro {
  return model.kind === "opinion" && model.ratePpm > 0n ? model.minFee : 0n;
}

/** The fee in micro-USDC for one taker order that fills `levels` (price, shares in micro units), paid in USDC. */
export function orderFee(model: FeeModel, levels: readonly Level[]): Micro {
  if (levels.length === 0) return 0n;
  const fee = curveFee(model, levels);
  const least = minimumFee(model);
  return fee < least ? least : fee;
}

/** The fee by the venue's formula alone, before any minimum fee per order: what each level's fee-adjusted price counts. */
export function curveFee(model: FeeModel, levels: readonly Level[]): Micro {
  if (levels.length === 0) return 0n;
  switch (model.kind) {
    case "kalshi": {
      // sum(rate * C * P * (1-P)) in units of 10^-24 USDC: ratePpm(1e-6) * shares(1e-6) * P(1e-6) * (1-P)(1e-6)
      let raw = 0n;
      for (const l of levels) raw += model.ratePpm * l.shares * l.price * (ONE - l.price);
      const micro = ceilDiv(raw, ONE * ONE * ONE);
      return ceilDiv(micro, CENT) * CENT;
    }
    case "polymarket": {
      // C * rate * (P(1-P))^e, floored to 5 decimals as the venue charges it.
      const micro = polymarketRaw(model, levels) / (ONE * ONE * ONE * ONE * ONE);
      return (micro / 10n) * 10n;
    }
    case "limitless": {
      let raw = 0n;
      for (const l of levels) raw += model.ratePpm * l.price * l.shares; // 1e-18
      return ceilDiv(raw, ONE * ONE);
    }
    case "opinion": {
      let raw = 0n;
      for (const l of levels) raw += model.ratePpm * l.shares * l.price * l.price * (ONE - l.price); // 1e-30
      return ceilDiv(raw, ONE * ONE * ONE * ONE);
    }
  }
}

/** Polymarket's fee before its rounding, in units of 10^-36 USDC. */
function polymarketRaw(model: FeeModel & { kind: "polymarket" }, levels: readonly Level[]): bigint {
  let raw = 0n;
  for (const l of levels) raw += model.ratePpm * l.shares * polymarketCurve(model, l.price);
  return raw;
}

/** (P(1 − P))^exponent of Polymarket's fee curve at `price`, in units of 10^-24. */
export function polymarketCurve(model: FeeModel & { kind: "polymarket" }, price: PriceMicro): bigint {
  const pq = price * (ONE - price);
  switch (model.exponent) {
    case 0:
      return ONE * ONE * ONE * ONE;
    case 1:
      return pq * ONE * ONE;
    case 2:
      return pq * pq;
  }
}

/** Describes a fee model for the API (`fee_model` of a market's venue record). */
export function describeFeeModel(model: FeeModel): Record<string, unknown> {
  const rate = Number(model.ratePpm) / 1e6;
  switch (model.kind) {
    case "kalshi":
      return { type: "kalshi", formula: "ceil_to_cent(rate * C * P * (1 - P))", rate };
    case "polymarket":
      return { type: "polymarket", formula: "C * fee_rate * (P * (1 - P))^exponent", fee_rate: rate, exponent: model.exponent };
    case "limitless":
      return { type: "limitless", formula: "buy: rate * C contracts withheld of C bought; sell: rate * C * P", rate };
    case "opinion":
      return { type: "opinion", formula: "max(C * P * rate * P * (1 - P), min_fee)", rate, min_fee: Number(minimumFee(model)) / 1e6 };
  }
}

/**
 * Price per share of taking the whole level, fees included, rounded up to the micro-USDC. A buy that
 * pays its fee in contracts pays the price for each contract bought and keeps 1 − rate of them: the
 * price per share delivered is price / (1 − rate), exact on its lots. The fee is the formula's
 * (`curveFee`): a leg the router plans pays at least the minimum fee by the formula alone, so a
 * level's shares cost this much wherever a leg takes them.
 */
export function feeAdjustedPrice(model: FeeModel, level: Level): bigint {
  if (feeInShares(model, "buy")) return ceilDiv(level.price * ONE, ONE - model.ratePpm);
  return level.price + ceilDiv(curveFee(model, [level]) * ONE, level.shares);
}

/**
 * What a share at `price` adds to the cost of one order that takes it, fee included: the price plus its
 * fee before the venue's rounding per order (and before any minimum fee), rounded up to the micro-USDC;
 * for a buy that pays its fee in contracts, price / (1 − rate), as feeAdjustedPrice. A level costs this
 * a share inside an order that takes more than it; taken alone, its fee's rounding can add up to a cent
 * (Kalshi's, per order) over its shares. The router judges levels by it, and prices orders by orderFee
 * (docs/decisions.md, "The router judges a level by what its shares add to an order").
 */
export function marginalAsk(model: FeeModel, price: PriceMicro): PriceMicro {
  if (feeInShares(model, "buy")) return ceilDiv(price * ONE, ONE - model.ratePpm);
  return price + feePerShare(model, price);
}

/** What selling a share at `price` adds to the proceeds of one order that sells it: the price less its fee before the venue's rounding per order, rounded down, as marginalAsk. */
export function marginalBid(model: FeeModel, price: PriceMicro): PriceMicro {
  return price - feePerShare(model, price);
}

/** A share's fee at `price` by the venue's formula, before its rounding per order and any minimum fee, rounded up to the micro-USDC. */
function feePerShare(model: FeeModel, price: PriceMicro): Micro {
  switch (model.kind) {
    case "kalshi":
      return ceilDiv(model.ratePpm * price * (ONE - price), ONE * ONE);
    case "polymarket":
      return ceilDiv(model.ratePpm * polymarketCurve(model, price), ONE * ONE * ONE * ONE);
    case "limitless":
      return ceilDiv(model.ratePpm * price, ONE);
    case "opinion":
      return ceilDiv(model.ratePpm * price * price * (ONE - price), ONE * ONE * ONE);
  }
}

/**
 * What a seller nets per share selling into the whole bid level, fees deducted, rounded down to the
 * micro-USDC. Every venue here charges its taker fee on sells by the same formula as on buys (the
 * sell's price and shares in place of the buy's), taken from the USDC the sale pays: Polymarket
 * and Opinion charge takers whatever the side, Kalshi's sell of YES is a buy of NO at 1 − P and
 * P(1 − P) is symmetric, Limitless signs the same feeRateBps into sells (docs/router.md, "Sells").
 */
export function sellFeeAdjustedPrice(model: FeeModel, level: Level): bigint {
  return level.price - ceilDiv(curveFee(model, [level]) * ONE, level.shares);
}

/**
 * The most one taker buy for `shares` at no worse than `limit` can cost, fees included. A buy that
 * pays its fee in contracts costs the notional of its gross size, at most all of it at the limit. Else
 * the notional at the limit plus `worstFee`. On the venues' grids (prices on ticks, sizes in lots)
 * each fill's notional is a whole micro-USDC, so splitting the order over several fills adds no
 * rounding. A minimum fee per order (Opinion) is in it: an order that fills fewer shares, or at better
 * prices, pays the minimum on a smaller notional.
 */
export function worstOrderCost(model: FeeModel, limit: PriceMicro, shares: ShareMicro): Micro {
  if (feeInShares(model, "buy")) return notional(limit, shares);
  return notional(limit, shares) + worstFee(model, limit, shares);
}

/**
 * What above the notional at the limit one taker buy for `shares` at no worse than `limit` can pay.
 * Unrounded, a share's price plus its fee grows with the price under every model here (the fee's slope
 * is below 1), so fills at better prices save more notional than they add fee: what is left is the
 * fee's rounding, which can go the other way. Kalshi (docs/venues/kalshi.md, "fee rounding") rounds each
 * fill's fee up (to $0.000001 on its page of 2026; $0.0001 before) and the buyer's debit up to the cent,
 * rebating the rounding past a cent per order: a buy filled in k fills costs less than the notional + the
 * unrounded fee X at the limit + k × $0.0001 + one cent (a fill per whole contract at most); charged as
 * one fee per order rounded up to the cent, as the simulator does, it costs less than the notional + X +
 * one cent. The page caps each rebate at its fill's own fee, so on sub-cent fills the rounding is kept:
 * a fill of c contracts at q debits at most c × (q + a contract's fee at q) rounded up to the cent, which grows
 * with q, so every contract filled alone at the limit bounds that (two contracts at 0.001 debit 0.02,
 * docs/venues/kalshi.md, "Fee rounding re-checked"); the worst case is the larger of the two bounds. On a deci-cent market one contract at 0.828 costs 0.838 filled at its limit, and 0.847 at
 * 0.827 (its fee a cent more). On a market of whole-cent fills (`wholeCents`) neither rounding can go the
 * other way: the debit is the notional plus the fees rounded up to the cent once, and a fill d cents
 * better saves d cents a contract while its fee grows by at most rate × d cents (+ $0.000001), so the
 * bound is the fee at the limit, each contract's rounded up to $0.000001, rounded up to the cent: the
 * order filled at its limit.
 * A Polymarket buy is a market order that spends its whole maker amount M = limit × shares (the venue
 * refuses a FAK/FOK buy whose maker amount is not whole cents, and fills it at better asks for more
 * shares than it names; docs/venues/polymarket.md, "Market orders"), so its fee is that of spending M:
 * m pUSD spent at q buys m / q shares, whose fee is r × m / q (exponent 0), r × m × (1 − q) (exponent 1)
 * or r × m × q(1 − q)² (exponent 2). Over the prices q ≤ limit a fill can take, the first grows without
 * bound as q falls, so only the lowest price a fill can take bounds it: the finest tick the venue has,
 * 0.0001 (`POLYMARKET_LOWEST_PRICE`), not the market's tick, which the venue may make finer between
 * the plan and the match; so r × m / 0.0001 = r × m × 10^4, a lock so large that such a market is
 * seldom worth a buy, but what the venue can take. The second is below r × m; the third at most r × m × limit(1 − limit)²
 * while limit ≤ 1/3 (where q(1 − q)² grows) and r × m × 4/27 (its peak, at q = 1/3) above. Summed
 * over the fills, the bound at M, rounded up, is never below the fee, floored to 10 micro-USDC as the
 * venue charges it. The fee of the planned shares filled at the limit, r × shares, r × M × (1 − limit)
 * or r × M × limit(1 − limit)², is within it (for exponent 0 since the limit is on a tick, at least 0.0001).
 */
export function worstFee(model: FeeModel, limit: PriceMicro, shares: ShareMicro): Micro {
  switch (model.kind) {
    case "kalshi": {
      if (model.wholeCents) return ceilDiv(shares * ceilDiv(model.ratePpm * limit * (ONE - limit), ONE * ONE), ONE * CENT) * CENT;
      const unrounded = ceilDiv(model.ratePpm * shares * limit * (ONE - limit), ONE * ONE * ONE);
      const rebated = unrounded + ceilDiv(shares, ONE) * KALSHI_FILL_FEE_STEP + CENT - 1n;
      const alone = ceilDiv(shares, ONE) * (ceilDiv(limit + ceilDiv(model.ratePpm * limit * (ONE - limit), ONE * ONE), CENT) * CENT) - notional(limit, shares);
      return rebated > alone ? rebated : alone;
    }
    case "polymarket": {
      const spent = notional(limit, shares);
      if (model.exponent === 0) return ceilDiv(model.ratePpm * spent, POLYMARKET_LOWEST_PRICE);
      if (model.exponent === 1) return ceilDiv(model.ratePpm * spent, ONE);
      if (3n * limit <= ONE) return ceilDiv(model.ratePpm * spent * limit * (ONE - limit) * (ONE - limit), ONE * ONE * ONE * ONE);
      return ceilDiv(model.ratePpm * spent * 4n, 27n * ONE);
    }
    case "limitless":
    case "opinion":
      return orderFee(model, [{ price: limit, shares }]);
  }
}
