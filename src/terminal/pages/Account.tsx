import { api, type Account } from "../api.ts";
import { shares, short, usdc } from "../format.ts";
import { Link } from "../router.tsx";
import { CopyButton, ErrorNote, Loading, useAsync } from "../components/ui.tsx";

export function AccountPage() {
  const account = useAsync(() => api<Account>("GET", "/v1/account"), []);
  if (account.data === undefined) return account.error ? <ErrorNote error={account.error} onRetry={account.reload} /> : <Loading label="Reading your vault…" />;
  const a = account.data;
  return (
    <section>
      <div className="page-head row">
        <div>
          <h1>Account</h1>
          <p className="muted">{a.email}</p>
        </div>
        <button type="button" className="btn" onClick={account.reload} disabled={account.loading}>
          {account.loading ? "Refreshing…" : "Refresh"}
        </button>
      </div>
      {account.error !== undefined && <ErrorNote error={account.error} onRetry={account.reload} />}
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
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Outcome</th>
                <th scope="col" className="r">
                  Shares
                </th>
                <th scope="col">Position token (SOT)</th>
              </tr>
            </thead>
            <tbody>
              {a.positions.map((p) => (
                <tr key={p.sot}>
                  <td data-label="Event">
                    <Link to={`/events/${encodeURIComponent(p.event_id)}`}>{p.event_id}</Link>
                  </td>
                  <td data-label="Outcome">{p.outcome}</td>
                  <td data-label="Shares" className="r mono">
                    {shares(p.shares)}
                  </td>
                  <td data-label="SOT" className="hash">
                    <code title={p.sot}>{short(p.sot, 12)}</code> <CopyButton text={p.sot} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
