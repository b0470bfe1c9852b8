import { useEffect, useState, type FormEvent } from "react";
import { api, ApiError, clientIdFor, forgetClientId, noAnswer, query, type Account, type Order, type Quote } from "../api.ts";
import { decimal, percent, price, shares, usdc, when } from "../format.ts";
import { Link } from "../router.tsx";
import { CopyButton, ErrorNote, LegsTable, StatusBadge, useAskBeforeLeaving, useOnScreen } from "./ui.tsx";

const SLIPPAGES = [0.005, 0.01, 0.02, 0.05];
const AMOUNT = /^\d{1,9}(\.\d{1,6})?$/;

export type Side = "buy" | "sell";

type QuoteState = { kind: "idle" } | { kind: "loading"; last?: Quote } | { kind: "ok"; quote: Quote } | { kind: "refused"; error: unknown };

/**
 * Buys spend an amount of USDC, fees included; sells sell a number of shares of the position held.
 * `initial` opens the ticket on a side, with the shares to sell (the account page's Sell button).
 */
export function OrderTicket({
  eventId,
  outcome,
  onOutcome,
  side,
  onSide,
  open,
  initialShares,
}: {
  eventId: string;
  outcome: "YES" | "NO";
  onOutcome: (o: "YES" | "NO") => void;
  side: Side;
  onSide: (s: Side) => void;
  open: boolean;
  initialShares?: string;
}) {
  const [amount, setAmount] = useState("25");
  const [sellShares, setSellShares] = useState(initialShares ?? "");
  const [slippage, setSlippage] = useState(0.01);
  const [strategy, setStrategy] = useState<"optimize_price" | "optimize_speed">("optimize_price");
  const [tif, setTif] = useState<"FOK" | "IOC">("FOK");
  const [quote, setQuote] = useState<QuoteState>({ kind: "idle" });
  const [submitting, setSubmitting] = useState(false);
  const [result, setResult] = useState<{ order?: Order; error?: unknown; unanswered?: boolean; again?: boolean }>();
  const [account, setAccount] = useState<Account>();
  const onScreen = useOnScreen();
  useAskBeforeLeaving(submitting);
  const sell = side === "sell";
  const quantity = sell ? sellShares : amount;
  const valid = AMOUNT.test(quantity) && Number(quantity) > 0;
  // Not known until the account is read (nor when its read failed): no position to show, not one of 0 shares.
  const held = account === undefined ? undefined : (account.positions.find((p) => p.event_id === eventId && p.outcome === outcome)?.shares ?? 0);

  // Read again at each order; a read the next one superseded is not shown, however late it answers (it may predate the order).
  useEffect(() => {
    let live = true;
    api<Account>("GET", "/v1/account").then(
      (a) => live && setAccount(a),
      () => live && setAccount(undefined),
    );
    return () => {
      live = false;
    };
  }, [result]);

  // The quote follows the inputs (after a short pause) and the moving books (2 s after each answer; a 429's Retry-After
  // after one that was too many).
  useEffect(() => {
    if (!valid || !open) {
      setQuote({ kind: "idle" });
      return;
    }
    let live = true;
    let timer: ReturnType<typeof setTimeout>;
    const run = () => {
      setQuote((q) => {
        const last = q.kind === "ok" ? q.quote : q.kind === "loading" ? q.last : undefined;
        // The plan of another outcome or side is none of this one's: not shown while this one is priced.
        return { kind: "loading", last: last?.outcome === outcome && last.side === side ? last : undefined };
      });
      const size = sell ? { side, shares: sellShares } : { amount_usdc: amount };
      api<Quote>("GET", `/v1/quote${query({ market_id: eventId, outcome, ...size, max_slippage: String(slippage), strategy, time_in_force: tif })}`).then(
        (q) => {
          if (!live) return;
          setQuote({ kind: "ok", quote: q });
          timer = setTimeout(run, 2000);
        },
        (error: unknown) => {
          if (!live) return;
          setQuote({ kind: "refused", error });
          timer = setTimeout(run, error instanceof ApiError && error.retryAfterSeconds !== undefined ? error.retryAfterSeconds * 1000 : 2000);
        },
      );
    };
    timer = setTimeout(run, 300);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [eventId, outcome, side, sell, amount, sellShares, slippage, strategy, tif, valid, open]);

  const chooseSide = (s: Side) => {
    onSide(s);
    setResult(undefined);
    // Selling starts from the whole position; the shares can be changed before sending.
    if (s === "sell" && sellShares === "" && held !== undefined && held > 0) setSellShares(String(held));
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!valid) return;
    setSubmitting(true);
    setResult(undefined);
    const request = {
      market_id: eventId,
      outcome,
      ...(sell ? { side: "sell", shares: decimal(sellShares) } : { side: "buy", amount_usdc: decimal(amount) }),
      max_slippage: String(slippage),
      strategy,
      time_in_force: tif,
    };
    const named = `POST /v1/order ${JSON.stringify(request)}`;
    const { clientId: clientOrderId, again } = clientIdFor(named);
    try {
      const order = await api<Order>("POST", "/v1/order", { ...request, client_order_id: clientOrderId });
      if (onScreen.current) forgetClientId(named);
      setResult({ order, again });
    } catch (error) {
      const order = error instanceof ApiError ? (error.details?.order as Order | undefined) : undefined;
      const lost = order === undefined && noAnswer(error);
      // Another refusal (too many requests, a field refused) placed nothing: the id is kept only if a send before may have.
      if ((order !== undefined || !(lost || again)) && onScreen.current) forgetClientId(named);
      setResult(
        lost
          ? { error: new Error("The order may have been placed: no answer came back. Send it again as it is: it is placed once."), unanswered: true }
          : { order, error, again },
      );
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
        <legend>Side</legend>
        <div className="segmented wide" role="radiogroup" aria-label="Side">
          {(["buy", "sell"] as const).map((s) => (
            <button key={s} type="button" role="radio" aria-checked={side === s} className={`seg ${side === s ? "on" : ""}`} onClick={() => chooseSide(s)}>
              {s === "buy" ? "Buy" : "Sell"}
            </button>
          ))}
        </div>
      </fieldset>
      <fieldset className="field">
        <legend>Outcome</legend>
        <div className="segmented wide" role="radiogroup" aria-label="Outcome">
          {(["YES", "NO"] as const).map((o) => (
            <button key={o} type="button" role="radio" aria-checked={outcome === o} className={`seg ${outcome === o ? "on" : ""} ${o.toLowerCase()}`} onClick={() => onOutcome(o)}>
              {sell ? "Sell" : "Buy"} {o}
            </button>
          ))}
        </div>
      </fieldset>
      {sell ? (
        <label className="field">
          Shares to sell
          <input inputMode="decimal" name="shares" value={sellShares} onChange={(e) => setSellShares(e.target.value.trim())} aria-invalid={!valid} aria-describedby="shares-help" />
          <small id="shares-help" className={valid ? "muted" : "field-error"}>
            {!valid ? "Enter a number of shares above 0 with at most 6 decimals." : held === undefined ? "Your position is not read yet." : `You hold ${shares(held)} ${outcome} shares`}
          </small>
        </label>
      ) : (
        <label className="field">
          Amount (USDC, fees included)
          <input inputMode="decimal" name="amount" value={amount} onChange={(e) => setAmount(e.target.value.trim())} aria-invalid={!valid} aria-describedby="amount-help" />
          <small id="amount-help" className={valid ? "muted" : "field-error"}>
            {valid ? (account !== undefined ? `Available in your vault: ${usdc(account.available_usdc)}` : " ") : "Enter an amount above 0 with at most 6 decimals."}
          </small>
        </label>
      )}
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
            <LegsTable priceLabel="Avg price" rows={shown.legs.map((l) => ({ key: l.venue, venue: l.venue, shares: l.shares, price: l.average_price, fee_usdc: l.fee_usdc }))} />
            <dl className="totals">
              <dt>Shares</dt>
              <dd className="mono">{shares(shown.shares)}</dd>
              <dt>Average price</dt>
              <dd className="mono">{price(shown.average_price)}</dd>
              <dt>{shown.side === "sell" ? "After fees, per share" : "With fees, per share"}</dt>
              <dd className="mono">{price(shown.fee_adjusted_price)}</dd>
              <dt>Fees</dt>
              <dd className="mono">{usdc(shown.fees_usdc)}</dd>
              {shown.side === "sell" ? (
                <>
                  <dt>You receive</dt>
                  <dd className="mono" data-testid="quote-proceeds">
                    {usdc(shown.proceeds_usdc)}
                  </dd>
                  <dt>Price floor</dt>
                </>
              ) : (
                <>
                  <dt>Total cost</dt>
                  <dd className="mono">{usdc(shown.cost_usdc)}</dd>
                  <dt>Price limit</dt>
                </>
              )}
              <dd className="mono">{price(shown.limit_price)}</dd>
            </dl>
          </>
        ) : (
          <p className="muted">{!open ? "No quote: the market is not open." : valid ? "Pricing…" : sell ? "Enter the shares to see the plan." : "Enter an amount to see the plan."}</p>
        )}
      </section>

      <button type="submit" className={`btn btn-primary btn-block ${outcome === "NO" ? "btn-no" : ""}`} disabled={!valid || submitting || !open}>
        {submitting ? "Placing the order…" : sell ? `Sell ${valid ? shares(Number(sellShares)) : "…"} ${outcome} shares` : `Buy ${outcome} for ${valid ? usdc(Number(amount)) : "…"}`}
      </button>
      <p className="fine">
        The order is planned again on the books of the moment it is sent; {sell ? "nothing is sold below the price floor." : "nothing above the price limit is bought."}
      </p>

      {result && <OrderResult order={result.order} error={result.error} unanswered={result.unanswered === true} again={result.again === true} />}
    </form>
  );
}

function OrderResult({ order, error, unanswered, again }: { order?: Order; error?: unknown; unanswered: boolean; again: boolean }) {
  // The position token a buy minted, or a sell burned.
  const sot = order?.sot_minted ?? order?.sot_burned;
  return (
    <section className={`result ${error ? "result-bad" : "result-good"}`} aria-live="assertive" data-testid="order-result">
      <h3>{unanswered ? "No answer to the order" : error ? "The order did not go through" : "Order placed"}</h3>
      {error !== undefined && <ErrorNote error={error} />}
      {order && again && error === undefined && (
        <p className="note">
          This order was sent before from this tab, its answer not seen then: it was placed once, at {when(order.created_at)}, and not again now. Send it again to place another.
        </p>
      )}
      {order && (
        <dl className="totals">
          <dt>Status</dt>
          <dd>
            <StatusBadge status={order.status} />
          </dd>
          <dt>Order</dt>
          <dd className="mono">{order.order_id}</dd>
          <dt>{order.side === "sell" ? "Sold" : "Filled"}</dt>
          <dd className="mono">
            {shares(order.filled_shares)} shares at {price(order.executed_price)}
          </dd>
          {order.side === "sell" ? (
            <>
              <dt>Received, after fees</dt>
              <dd className="mono" data-testid="proceeds">
                {usdc(order.proceeds_usdc)}
              </dd>
            </>
          ) : (
            <>
              <dt>Spent</dt>
              <dd className="mono">{usdc(order.spent_usdc)}</dd>
            </>
          )}
          {order.tx_hash && (
            <>
              <dt>Settlement tx</dt>
              <dd className="hash">
                <code data-testid="tx-hash">{order.tx_hash}</code> <CopyButton text={order.tx_hash} />
              </dd>
            </>
          )}
          {sot && (
            <>
              <dt>{order.side === "sell" ? "Position token burned (SOT)" : "Position token (SOT)"}</dt>
              <dd className="hash">
                <code data-testid="sot">{sot}</code> <CopyButton text={sot} />
              </dd>
            </>
          )}
        </dl>
      )}
      <Link to="/orders">See all orders</Link>
    </section>
  );
}
