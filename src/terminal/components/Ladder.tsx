import type { PriceRecord } from "../api.ts";
import { price, shares, venueColour, venueName } from "../format.ts";

type Entry = [number, number, string];

/**
 * The merged book as one ladder: asks above (best ask nearest the spread), bids below, each level
 * tagged and tinted with its venue, bars scaled to the largest level shown. The level the router
 * would take first for the record's `side` is highlighted: the best fee-adjusted ask for a buyer, the
 * bid that nets most after fees for a seller (the record then orders its bids by that).
 */
export function Ladder({ record, side, rows = 12 }: { record: PriceRecord; side: "buy" | "sell"; rows?: number }) {
  const asks = record.orderbook.asks.slice(0, rows) as Entry[];
  const bids = record.orderbook.bids.slice(0, rows) as Entry[];
  const biggest = Math.max(1, ...asks.map((l) => l[1]), ...bids.map((l) => l[1]));
  const best = record.best_execution;
  const isBest = (l: Entry) => best !== null && l[2] === best.venue && Math.abs(l[0] - best.price) < 1e-9;

  const taken = side === "buy" ? "ask" : "bid";
  const row = (book: "ask" | "bid") => (l: Entry, i: number) => {
    const highlight = book === taken && isBest(l);
    return (
      <tr key={`${book}-${i}-${l[2]}-${l[0]}`} className={`lvl ${book}${highlight ? " best" : ""}`}>
        <td className={`mono ${book}`}>{price(l[0])}</td>
        <td className="mono r">{shares(l[1])}</td>
        <td className="venue-cell">
          <span className="bar" style={{ width: `${(l[1] / biggest) * 100}%`, background: venueColour(l[2]) }} aria-hidden="true" />
          <span className="venue-label" style={{ color: venueColour(l[2]) }}>
            {venueName(l[2])}
          </span>
          {highlight && <span className="best-tag">best execution</span>}
        </td>
      </tr>
    );
  };

  return (
    <table className="ladder" aria-label={`Merged ${record.outcome} order book`}>
      <thead>
        <tr>
          <th scope="col">Price</th>
          <th scope="col" className="r">
            Shares
          </th>
          <th scope="col">Venue</th>
        </tr>
      </thead>
      <tbody>
        {asks.length === 0 && (
          <tr>
            <td colSpan={3} className="muted">
              No asks
            </td>
          </tr>
        )}
        {[...asks].reverse().map((l, i) => row("ask")(l, asks.length - 1 - i))}
        <tr className="spread-row">
          <td colSpan={3}>
            Spread {price(record.spread.spread)}
            {best && (
              <>
                {" · "}best fee-adjusted {taken} {price(best.fee_adjusted_price)} on{" "}
                <span style={{ color: venueColour(best.venue) }}>{venueName(best.venue)}</span>
              </>
            )}
          </td>
        </tr>
        {bids.map(row("bid"))}
        {bids.length === 0 && (
          <tr>
            <td colSpan={3} className="muted">
              No bids
            </td>
          </tr>
        )}
      </tbody>
    </table>
  );
}
