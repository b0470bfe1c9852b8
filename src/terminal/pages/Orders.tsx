import { useEffect, useRef, useState } from "react";
import { api, ApiError, query, type Order, type Page } from "../api.ts";
import { price, shares, short, usdc, when } from "../format.ts";
import { Link } from "../router.tsx";
import { CopyButton, ErrorNote, LegsTable, Loading, StatusBadge, useAsync } from "../components/ui.tsx";

export function OrdersPage() {
  // The newest orders, as many as are wanted (50, and 50 more at each "Load older orders"), read whole at each read asked
  // for (Refresh, "Load older orders"): orders placed meanwhile leave none of those shown out, nor show one twice, however
  // many are shown. While an order is being settled, only what can change is read again: the orders down to the oldest
  // one being settled, the newest first (so that orders placed meanwhile show too); the older ones are final.
  const [wanted, setWanted] = useState(50);
  const settling = useRef(false);
  const list = useAsync<Page<Order>>((shown) => {
    // Older orders asked for and not shown (their read failed) are read with the rest: the click is not dropped.
    const partly = settling.current && shown !== undefined && !(shown.next_cursor !== null && wanted > shown.data.length);
    settling.current = false;
    return partly ? readSettling(shown) : newest(wanted);
  }, [wanted]);
  const orders = list.data?.data ?? [];
  const unsettled = orders.some((o) => !SETTLED.has(o.status));
  // Older orders asked for and not shown yet: their read is running, or failed.
  const older = list.data !== undefined && list.data.next_cursor !== null && wanted > orders.length;
  const more = () => {
    setWanted(orders.length + 50);
    list.reload();
  };
  // Refresh says it refreshes while the read it asked for runs; the list's own reads (an order settling) go unsaid.
  const [refreshing, setRefreshing] = useState(false);
  const refresh = () => {
    setRefreshing(true);
    list.reload();
  };
  useEffect(() => {
    if (!list.loading) setRefreshing(false);
  }, [list.loading]);

  // An order whose venue answer is still being reconciled settles on its own; show it when it does (after a 429, once its
  // Retry-After has passed).
  useEffect(() => {
    if (!unsettled || list.loading) return;
    const t = setTimeout(() => {
      settling.current = true;
      list.reload();
    }, list.error instanceof ApiError && list.error.retryAfterSeconds !== undefined ? list.error.retryAfterSeconds * 1000 : 2000);
    return () => clearTimeout(t);
  }, [unsettled, list.loading, list.error, list.reload]);

  if (list.data === undefined) return list.error ? <ErrorNote error={list.error} onRetry={list.reload} /> : <Loading label="Loading your orders…" />;

  return (
    <section>
      <div className="page-head row">
        <div>
          <h1>Orders</h1>
          <p className="muted">Newest first: each order's status, the legs it was routed to, and its transactions on chain.</p>
        </div>
        <button type="button" className="btn" onClick={refresh} disabled={refreshing}>
          {refreshing ? "Refreshing…" : "Refresh"}
        </button>
      </div>
      {list.error !== undefined && !older && <ErrorNote error={list.error} onRetry={list.reload} />}
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
                <Sot order={o} />
              </div>
            </li>
          ))}
        </ol>
      )}
      {list.error !== undefined && older && <ErrorNote error={list.error} onRetry={more} />}
      {list.data.next_cursor !== null && (
        <button type="button" className="btn" onClick={more} disabled={older && list.loading}>
          {older && list.loading ? "Loading…" : "Load older orders"}
        </button>
      )}
    </section>
  );
}

/** The newest `count` orders, read 500 at a time (the most a page holds), and the cursor of the next older ones. */
async function newest(count: number): Promise<Page<Order>> {
  const data: Order[] = [];
  let cursor: string | null = null;
  do {
    const page: Page<Order> = await api<Page<Order>>("GET", `/v1/orders${query({ limit: Math.min(500, count - data.length), cursor })}`);
    data.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor !== null && data.length < count);
  return { data, next_cursor: cursor };
}

/**
 * The orders shown read again down to the oldest of them still being settled, 500 at most a request, as many as are newer
 * than it (and it) a request: the newest first, so that orders placed meanwhile come first; those older than it, settled,
 * as they are shown.
 */
async function readSettling(shown: Page<Order>): Promise<Page<Order>> {
  let oldest = shown.data.length - 1;
  while (SETTLED.has(shown.data[oldest]!.status)) oldest--;
  const id = shown.data[oldest]!.order_id;
  const data: Order[] = [];
  let cursor: string | null = null;
  let at = -1;
  do {
    const page: Page<Order> = await api<Page<Order>>("GET", `/v1/orders${query({ limit: Math.min(500, oldest + 1), cursor })}`);
    data.push(...page.data);
    cursor = page.next_cursor;
    at = data.findIndex((o) => o.order_id === id);
  } while (cursor !== null && at < 0);
  return at < 0 ? { data, next_cursor: null } : { data: [...data.slice(0, at + 1), ...shown.data.slice(oldest + 1)], next_cursor: shown.next_cursor };
}

const SETTLED = new Set(["filled", "partially_filled", "rejected", "failed"]);

/** The position token a buy minted, or a sell burned. */
function Sot({ order }: { order: Order }) {
  const sot = order.sot_minted ?? order.sot_burned;
  if (!sot) return null;
  return (
    <span className="tx">
      <span className="muted">{order.side === "sell" ? "SOT burned" : "SOT"}</span> <code title={sot}>{short(sot, 10)}</code> <CopyButton text={sot} />
    </span>
  );
}

function Tx({ label, hash }: { label: string; hash: string | null }) {
  if (!hash) return null;
  return (
    <span className="tx">
      <span className="muted">{label} tx</span> <code title={hash}>{short(hash)}</code> <CopyButton text={hash} />
    </span>
  );
}
