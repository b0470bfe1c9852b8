import { useState } from "react";
import { api, type Account, type Health } from "../api.ts";
import { pnl, pnlTone, price, shares, short, usdc } from "../format.ts";
import { Link, navigate } from "../router.tsx";
import { ActivityList } from "../components/ActivityList.tsx";
import { CopyButton, ErrorNote, Loading, useAsync } from "../components/ui.tsx";
import { WithdrawDialog } from "../components/Withdraw.tsx";

/** The dev chain's id: only there does the faucet give test USDC. */
const DEV_CHAIN_ID = 31337;

export function AccountPage() {
  const account = useAsync(() => api<Account>("GET", "/v1/account"), []);
  const health = useAsync(() => api<Health>("GET", "/v1/health"), []);
  const [withdrawing, setWithdrawing] = useState(false);
  const [dripping, setDripping] = useState<{ busy: boolean; error?: unknown }>({ busy: false });
  // Bumped whenever money moves from this page, so the activity list reads it again.
  const [moved, setMoved] = useState(0);
  const refresh = () => {
    account.reload();
    setMoved((n) => n + 1);
  };
  const drip = async () => {
    setDripping({ busy: true });
    try {
      await api("POST", "/v1/faucet");
      setDripping({ busy: false });
      refresh();
    } catch (error) {
      setDripping({ busy: false, error });
    }
  };
  if (account.data === undefined) return account.error ? <ErrorNote error={account.error} onRetry={account.reload} /> : <Loading label="Reading your vault…" />;
  const a = account.data;
  // Totals to the micro-USDC: each position's figures are exact micro amounts, summed as integers.
  const unrealized = total(a.positions.map((p) => p.unrealized_pnl_usdc));
  const realized = total(a.positions.map((p) => p.realized_pnl_usdc));
  return (
    <section>
      <div className="page-head row">
        <div>
          <h1>Account</h1>
          <p className="muted">{a.email}</p>
        </div>
        <div className="actions">
          {health.data?.chain.chain_id === DEV_CHAIN_ID && (
            <button type="button" className="btn" onClick={drip} disabled={dripping.busy}>
              {dripping.busy ? "Minting…" : "Get test USDC"}
            </button>
          )}
          <button type="button" className="btn" onClick={() => setWithdrawing(true)}>
            Withdraw
          </button>
          <button type="button" className="btn" onClick={refresh} disabled={account.loading}>
            {account.loading ? "Refreshing…" : "Refresh"}
          </button>
        </div>
      </div>
      {account.error !== undefined && <ErrorNote error={account.error} onRetry={account.reload} />}
      {dripping.error !== undefined && <ErrorNote error={dripping.error} />}
      {withdrawing && <WithdrawDialog available={a.available_usdc} onClose={() => setWithdrawing(false)} onDone={refresh} />}
      <div className="stats">
        <div className="card stat">
          <span className="muted">Available</span>
          <strong className="big mono" data-testid="available">
            {usdc(a.available_usdc)}
          </strong>
        </div>
        <div className="card stat">
          <span className="muted">Locked in open orders</span>
          <strong className="big mono">{usdc(a.locked_usdc)}</strong>
        </div>
        <div className="card stat wide">
          <span className="muted">Vault address</span>
          <span className="hash">
            <code>{a.vault_address}</code> <CopyButton text={a.vault_address} />
          </span>
        </div>
      </div>
      <h2>Positions</h2>
      {a.positions.length === 0 ? (
        <p className="empty">
          No positions yet. Each filled order mints its position token (SOT) to your address; <Link to="/markets">find a market</Link>.
        </p>
      ) : (
        <>
          <div className="stats pnl-totals">
            <div className="card stat">
              <span className="muted">Unrealized P&amp;L</span>
              <strong className={`big mono ${pnlTone(unrealized)}`} data-testid="total-unrealized">
                {pnl(unrealized)}
              </strong>
            </div>
            <div className="card stat">
              <span className="muted">Realized P&amp;L</span>
              <strong className={`big mono ${pnlTone(realized)}`} data-testid="total-realized">
                {pnl(realized)}
              </strong>
            </div>
          </div>
          <div className="table-wrap">
            <table className="table positions">
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Outcome</th>
                  <th scope="col" className="r">
                    Shares
                  </th>
                  <th scope="col" className="r">
                    Avg cost
                  </th>
                  <th scope="col" className="r">
                    Mark
                  </th>
                  <th scope="col" className="r">
                    Unrealized
                  </th>
                  <th scope="col" className="r">
                    Realized
                  </th>
                  <th scope="col">Position token (SOT)</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {a.positions.map((p) => (
                  <tr key={p.sot} data-testid="position-row">
                    <td data-label="Event">
                      <Link to={`/events/${encodeURIComponent(p.event_id)}`}>{p.event_id}</Link>
                    </td>
                    <td data-label="Outcome">{p.outcome}</td>
                    <td data-label="Shares" className="r mono" data-testid="position-shares">
                      {shares(p.shares)}
                    </td>
                    <td data-label="Avg cost" className="r mono">
                      {price(p.avg_cost)}
                    </td>
                    <td data-label="Mark" className="r mono">
                      {price(p.mark_price)}
                    </td>
                    <td data-label="Unrealized" className={`r mono ${pnlTone(p.unrealized_pnl_usdc)}`} data-testid="position-unrealized">
                      {pnl(p.unrealized_pnl_usdc)}
                    </td>
                    <td data-label="Realized" className={`r mono ${pnlTone(p.realized_pnl_usdc)}`} data-testid="position-realized">
                      {pnl(p.realized_pnl_usdc)}
                    </td>
                    <td data-label="SOT" className="hash">
                      <code title={p.sot}>{short(p.sot, 12)}</code> <CopyButton text={p.sot} />
                    </td>
                    <td data-label="">
                      {p.shares > 0 && p.event_status !== "open" && p.event_status !== null && (
                        <Link to={`/events/${encodeURIComponent(p.event_id)}`}>{NOT_OPEN[p.event_status]}</Link>
                      )}
                      {p.shares > 0 && p.event_status === "open" && (
                        <button
                          type="button"
                          className="btn btn-small"
                          aria-label={`Sell ${p.outcome} of ${p.event_id}`}
                          onClick={() => navigate(`/events/${encodeURIComponent(p.event_id)}?side=sell&outcome=${p.outcome}&shares=${p.shares}`)}
                        >
                          Sell
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      <h2>Activity</h2>
      <ActivityList version={moved} />
    </section>
  );
}

/** A position held in an event no longer open: the server refuses its sale, so what happens to it instead. */
const NOT_OPEN = { closed: "Closed", resolved: "Resolved: being redeemed", disputed: "Disputed" } as const;

/** The sum of micro-USDC amounts given as decimals, leaving out the unknown (a position without a mark); null when all are. */
function total(amounts: readonly (number | null)[]): number | null {
  const known = amounts.filter((a): a is number => a !== null);
  return known.length === 0 ? null : known.reduce((micro, a) => micro + Math.round(a * 1e6), 0) / 1e6;
}
