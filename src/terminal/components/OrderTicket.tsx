import { useEffect, useState, type FormEvent } from "react";
import { api, ApiError, query, type Account, type Order, type Quote } from "../api.ts";
import { percent, price, shares, usdc } from "../format.ts";
import { Link } from "../router.tsx";
import { CopyButton, ErrorNote, StatusBadge, VenueChip } from "./ui.tsx";

const SLIPPAGES = [0.005, 0.01, 0.02, 0.05];
const AMOUNT = /^\d{1,9}(\.\d{1,6})?$/;

type QuoteState = { kind: "idle" } | { kind: "loading"; last?: Quote } | { kind: "ok"; quote: Quote } | { kind: "refused"; error: unknown };

export function OrderTicket({ eventId, outcome, onOutcome, open }: { eventId: string; outcome: "YES" | "NO"; onOutcome: (o: "YES" | "NO") => void; open: boolean }) {
  const [amount, setAmount] = useState("25");
  const [slippage, setSlippage] = useState(0.01);
  const [strategy, setStrategy] = useState<"optimize_price" | "optimize_speed">("optimize_price");
  const [tif, setTif] = useState<"FOK" | "IOC">("FOK");
  const [quote, setQuote] = useState<QuoteState>({ kind: "idle" });
  const [submitting, setSubmitting] = useState(false);
  const [result, setResult] = useState<{ order?: Order; error?: unknown }>();
  const [available, setAvailable] = useState<number>();
  const valid = AMOUNT.test(amount) && Number(amount) > 0;

  useEffect(() => {
    api<Account>("GET", "/v1/account").then((a) => setAvailable(a.available_usdc), () => setAvailable(undefined));
  }, [result]);

  // The quote follows the inputs (after a short pause) and the moving books (every 2 s).
  useEffect(() => {
    if (!valid || !open) {
      setQuote({ kind: "idle" });
      return;
    }
    let live = true;
    const run = () => {
      setQuote((q) => ({ kind: "loading", last: q.kind === "ok" ? q.quote : q.kind === "loading" ? q.last : undefined }));
      api<Quote>("GET", `/v1/quote${query({ market_id: eventId, outcome, amount_usdc: amount, max_slippage: String(slippage), strategy, time_in_force: tif })}`).then(
        (q) => live && setQuote({ kind: "ok", quote: q }),
        (error: unknown) => live && setQuote({ kind: "refused", error }),
      );
    };
    const first = setTimeout(run, 300);
    const every = setInterval(run, 2000);
    return () => {
      live = false;
      clearTimeout(first);
      clearInterval(every);
    };
  }, [eventId, outcome, amount, slippage, strategy, tif, valid, open]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!valid) return;
    setSubmitting(true);
    setResult(undefined);
    try {
      const order = await api<Order>("POST", "/v1/order", {
        market_id: eventId,
        outcome,
        side: "buy",
        amount_usdc: amount,
        max_slippage: String(slippage),
        strategy,
        time_in_force: tif,
        // A fresh id per click: should the answer be lost, resending the same request cannot buy twice.
        client_order_id: crypto.randomUUID(),
      });
      setResult({ order });
    } catch (error) {
      const order = error instanceof ApiError ? (error.details?.order as Order | undefined) : undefined;
      setResult({ order, error });
    } finally {
      setSubmitting(false);
    }
  };

  const shown = quote.kind === "ok" ? quote.quote : quote.kind === "loading" ? quote.last : undefined;

  return (
    <form className="ticket card" onSubmit={submit} aria-labelledby="ticket-title">
      <h2 id="ticket-title">Order ticket</h2>
      {!open && <p className="note">This market is not open for trading.</p>}
      <fieldset className="field">
        <legend>Outcome</legend>
        <div className="segmented wide" role="radiogroup" aria-label="Outcome">
          {(["YES", "NO"] as const).map((o) => (
            <button key={o} type="button" role="radio" aria-checked={outcome === o} className={`seg ${outcome === o ? "on" : ""} ${o.toLowerCase()}`} onClick={() => onOutcome(o)}>
              Buy {o}
            </button>
          ))}
        </div>
      </fieldset>
      <label className="field">
        Amount (USDC, fees included)
        <input inputMode="decimal" name="amount" value={amount} onChange={(e) => setAmount(e.target.value.trim())} aria-invalid={!valid} aria-describedby="amount-help" />
        <small id="amount-help" className={valid ? "muted" : "field-error"}>
          {valid ? (available !== undefined ? `Available in your vault: ${usdc(available)}` : " ") : "Enter an amount above 0 with at most 6 decimals."}
        </small>
      </label>
      <fieldset className="field">
        <legend>Max slippage</legend>
        <div className="segmented" role="radiogroup" aria-label="Max slippage">
          {SLIPPAGES.map((s) => (
            <button key={s} type="button" role="radio" aria-checked={slippage === s} className={slippage === s ? "seg on" : "seg"} onClick={() => setSlippage(s)}>
              {percent(s)}
            </button>
          ))}
        </div>
      </fieldset>
      <div className="field-row">
        <label className="field">
          Strategy
          <select value={strategy} onChange={(e) => setStrategy(e.target.value as typeof strategy)}>
            <option value="optimize_price">Best price</option>
            <option value="optimize_speed">Fastest venue</option>
          </select>
        </label>
        <label className="field">
          Fill
          <select value={tif} onChange={(e) => setTif(e.target.value as typeof tif)}>
            <option value="FOK">All or nothing</option>
            <option value="IOC">Fill what fits</option>
          </select>
        </label>
      </div>

      <section className="quote" aria-live="polite" aria-busy={quote.kind === "loading"}>
        <h3>
          Live quote {quote.kind === "loading" && <span className="spinner small" aria-label="updating" />}
        </h3>
        {quote.kind === "refused" ? (
          <ErrorNote error={quote.error} />
        ) : shown ? (
          <>
            <table className="legs">
              <thead>
                <tr>
                  <th scope="col">Venue</th>
                  <th scope="col" className="r">
                    Shares
                  </th>
                  <th scope="col" className="r">
                    Avg price
                  </th>
                  <th scope="col" className="r">
                    Fee
                  </th>
                </tr>
              </thead>
              <tbody>
                {shown.legs.map((l) => (
                  <tr key={l.venue}>
                    <td>
                      <VenueChip venue={l.venue} />
                    </td>
                    <td className="r mono">{shares(l.shares)}</td>
                    <td className="r mono">{price(l.average_price)}</td>
                    <td className="r mono">{l.fee_usdc.toFixed(2)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <dl className="totals">
              <dt>Shares</dt>
              <dd className="mono">{shares(shown.shares)}</dd>
              <dt>Average price</dt>
              <dd className="mono">{price(shown.average_price)}</dd>
              <dt>With fees, per share</dt>
              <dd className="mono">{price(shown.fee_adjusted_price)}</dd>
              <dt>Fees</dt>
              <dd className="mono">{usdc(shown.fees_usdc)}</dd>
              <dt>Total cost</dt>
              <dd className="mono">{usdc(shown.cost_usdc)}</dd>
              <dt>Price limit</dt>
              <dd className="mono">{price(shown.limit_price)}</dd>
            </dl>
          </>
        ) : (
          <p className="muted">{valid ? "Pricing…" : "Enter an amount to see the plan."}</p>
        )}
      </section>

      <button type="submit" className={`btn btn-primary btn-block ${outcome === "NO" ? "btn-no" : ""}`} disabled={!valid || submitting || !open}>
        {submitting ? "Placing the order…" : `Buy ${outcome} for ${valid ? usdc(Number(amount)) : "…"}`}
      </button>
      <p className="fine">The order is planned again on the books of the moment it is sent; nothing above the price limit is bought.</p>

      {result && <OrderResult order={result.order} error={result.error} />}
    </form>
  );
}

function OrderResult({ order, error }: { order?: Order; error?: unknown }) {
  return (
    <section className={`result ${error ? "result-bad" : "result-good"}`} aria-live="assertive" data-testid="order-result">
      <h3>{error ? "The order did not go through" : "Order placed"}</h3>
      {error !== undefined && <ErrorNote error={error} />}
      {order && (
        <dl className="totals">
          <dt>Status</dt>
          <dd>
            <StatusBadge status={order.status} />
          </dd>
          <dt>Order</dt>
          <dd className="mono">{order.order_id}</dd>
          <dt>Filled</dt>
          <dd className="mono">
            {shares(order.filled_shares)} shares at {price(order.executed_price)}
          </dd>
          <dt>Spent</dt>
          <dd className="mono">{usdc(order.spent_usdc)}</dd>
          {order.tx_hash && (
            <>
              <dt>Settlement tx</dt>
              <dd className="hash">
                <code data-testid="tx-hash">{order.tx_hash}</code> <CopyButton text={order.tx_hash} />
              </dd>
            </>
          )}
          {order.sot_minted && (
            <>
              <dt>Position token (SOT)</dt>
              <dd className="hash">
                <code data-testid="sot">{order.sot_minted}</code> <CopyButton text={order.sot_minted} />
              </dd>
            </>
          )}
        </dl>
      )}
      <Link to="/orders">See all orders</Link>
    </section>
  );
}
