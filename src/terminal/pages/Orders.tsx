import { useEffect, useRef } from "react";
import { api, ApiError, query, type Order, type Page } from "../api.ts";
import { price, shares, short, usdc, when } from "../format.ts";
import { Link } from "../router.tsx";
import { CopyButton, ErrorNote, LegsTable, Loading, StatusBadge, useAsync, useOlderPages } from "../components/ui.tsx";

export function OrdersPage() {
  // A read of the newest orders takes as many as are shown (50 to 500): read again (an order settling, Refresh), it leaves
  // no gap above the older pages, nor repeats what they hold, however many orders came since.
  const shown = useRef(50);
  const first = useAsync(() => api<Page<Order>>("GET", `/v1/orders${query({ limit: Math.min(500, Math.max(50, shown.current)) })}`), []);
  const pages = useOlderPages(first.data, (cursor) => api<Page<Order>>("GET", `/v1/orders${query({ limit: 50, cursor })}`));
  const orders = pages.rows;
  shown.current = orders.length;
  const unsettled = orders.some((o) => !SETTLED.has(o.status));

  // An order whose venue answer is still being reconciled settles on its own; show it when it does (after a 429, once its
  // Retry-After has passed).
  useEffect(() => {
    if (!unsettled || first.loading) return;
    const t = setTimeout(first.reload, first.error instanceof ApiError && first.error.retryAfterSeconds !== undefined ? first.error.retryAfterSeconds * 1000 : 2000);
    return () => clearTimeout(t);
  }, [unsettled, first.loading, first.error, first.reload]);

  if (first.data === undefined) return first.error ? <ErrorNote error={first.error} onRetry={first.reload} /> : <Loading label="Loading your orders…" />;

  return (
    <section>
      <div className="page-head row">
        <div>
          <h1>Orders</h1>
          <p className="muted">Newest first: each order's status, the legs it was routed to, and its transactions on chain.</p>
        </div>
        <button type="button" className="btn" onClick={first.reload} disabled={first.loading}>
          {first.loading ? "Refreshing…" : "Refresh"}
        </button>
      </div>
      {first.error !== undefined && <ErrorNote error={first.error} onRetry={first.reload} />}
      {orders.length === 0 ? (
        <p className="empty">
          No orders yet. Pick an event in <Link to="/markets">Markets</Link> and use its order ticket.
        </p>
      ) : (
        <ol className="orders">
          {orders.map((o) => (
            <li key={o.order_id} className="card order" data-testid="order-row">
              <div className="order-head">
                <StatusBadge status={o.status} />
                <strong>
                  {o.side === "sell" ? "Sell" : "Buy"} {o.outcome} · <Link to={`/events/${encodeURIComponent(o.market_id)}`}>{o.market_id}</Link>
                </strong>
                <span className="muted">{when(o.created_at)}</span>
              </div>
              <dl className="order-facts">
                <div>
                  <dt>{o.side === "sell" ? "Shares" : "Amount"}</dt>
                  <dd className="mono">{o.side === "sell" ? shares(o.shares) : usdc(o.amount_usdc)}</dd>
                </div>
                <div>
                  <dt>Filled</dt>
                  <dd className="mono">
                    {shares(o.filled_shares)} @ {price(o.executed_price)}
                  </dd>
                </div>
                <div>
                  <dt>{o.side === "sell" ? "Proceeds" : "Spent"}</dt>
                  <dd className="mono">{usdc(o.side === "sell" ? o.proceeds_usdc : o.spent_usdc)}</dd>
                </div>
                <div>
                  <dt>Fees</dt>
                  <dd className="mono">{usdc(o.fees_usdc)}</dd>
                </div>
                <div>
                  <dt>Strategy</dt>
                  <dd>{o.strategy === "optimize_speed" ? "Fastest venue" : "Best price"}</dd>
                </div>
              </dl>
              {o.fills.length > 0 && (
                <LegsTable caption="Fills" priceLabel="Price" rows={o.fills.map((f, i) => ({ key: `${f.venue}-${i}`, venue: f.venue, shares: f.shares, price: f.price, fee_usdc: f.fee_usdc }))} />
              )}
              {o.error && <p className="note note-error">{o.error.message}</p>}
              <div className="txs">
                <Tx label="Lock" hash={o.lock_tx_hash} />
                <Tx label="Settlement" hash={o.tx_hash} />
                <Tx label="Release" hash={o.release_tx_hash} />
                {o.sot_minted && (
                  <span className="tx">
                    <span className="muted">SOT</span> <code title={o.sot_minted}>{short(o.sot_minted, 10)}</code> <CopyButton text={o.sot_minted} />
                  </span>
                )}
              </div>
            </li>
          ))}
        </ol>
      )}
      {pages.error !== undefined && <ErrorNote error={pages.error} onRetry={pages.more} />}
      {pages.next && (
        <button type="button" className="btn" onClick={pages.more} disabled={pages.loading}>
          {pages.loading ? "Loading…" : "Load older orders"}
        </button>
      )}
    </section>
  );
}

const SETTLED = new Set(["filled", "partially_filled", "rejected", "failed"]);

function Tx({ label, hash }: { label: string; hash: string | null }) {
  if (!hash) return null;
  return (
    <span className="tx">
      <span className="muted">{label} tx</span> <code title={hash}>{short(hash)}</code> <CopyButton text={hash} />
    </span>
  );
}
