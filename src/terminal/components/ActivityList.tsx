import { api, query, type Activity, type Page } from "../api.ts";
import { movement, when } from "../format.ts";
import { CopyButton, ErrorNote, Loading, StatusBadge, useAsync, useOlderPages } from "./ui.tsx";

const KINDS: Record<string, string> = {
  deposit: "Deposit",
  faucet: "Test USDC",
  lock: "Order: funds locked",
  settle: "Order: spent",
  release: "Order: funds released",
  withdrawal: "Withdrawal",
  sell: "Sale",
  redemption: "Redemption",
};

/** GET /v1/activity: every movement of the account's money, newest first, each with its transaction. */
export function ActivityList({ version }: { version: number }) {
  const list = useAsync(() => api<Page<Activity>>("GET", `/v1/activity${query({ limit: 50 })}`), [version]);
  const pages = useOlderPages(list.data, (cursor) => api<Page<Activity>>("GET", `/v1/activity${query({ limit: 50, cursor })}`));
  if (list.data === undefined) return list.error ? <ErrorNote error={list.error} onRetry={list.reload} /> : <Loading label="Loading your activity…" />;
  if (list.data.data.length === 0) return <p className="empty">No money has moved yet.</p>;
  return (
    <>
      <div className="table-wrap">
        <table className="table activity">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">What</th>
              <th scope="col" className="r">
                Amount
              </th>
              <th scope="col">Status</th>
              <th scope="col">Transaction</th>
            </tr>
          </thead>
          <tbody>
            {pages.rows.map((a) => (
              <tr key={a.activity_id} data-testid="activity-row" data-type={a.type}>
                <td data-label="When">{when(a.created_at)}</td>
                <td data-label="What">{KINDS[a.type] ?? a.type}</td>
                <td data-label="Amount" className="r mono">
                  {movement(a.type, a.amount_usdc, a.status)}
                </td>
                <td data-label="Status">
                  <StatusBadge status={a.status} />
                </td>
                <td data-label="Transaction" className="hash">
                  {a.tx_hash ? (
                    <>
                      <code title={a.tx_hash}>{a.tx_hash.slice(0, 10)}…</code> <CopyButton text={a.tx_hash} />
                    </>
                  ) : (
                    "—"
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {pages.error !== undefined && <ErrorNote error={pages.error} onRetry={pages.more} />}
      {pages.next && (
        <button type="button" className="btn" onClick={pages.more} disabled={pages.loading}>
          {pages.loading ? "Loading…" : "Load older movements"}
        </button>
      )}
    </>
  );
}
