import { useState } from "react";
import { api, query, type Activity, type Page } from "../api.ts";
import { usdc, when } from "../format.ts";
import { CopyButton, ErrorNote, Loading, StatusBadge, useAsync } from "./ui.tsx";

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
  // The older pages read on asking, after the read of the newest they followed; another read of the newest replaces them.
  const [older, setOlder] = useState<{ after: Page<Activity>; data: Activity[]; next: string | null }>();
  const [moreError, setMoreError] = useState<unknown>();
  const [loadingMore, setLoadingMore] = useState(false);
  if (list.data === undefined) return list.error ? <ErrorNote error={list.error} onRetry={list.reload} /> : <Loading label="Loading your activity…" />;
  if (list.data.data.length === 0) return <p className="empty">No money has moved yet.</p>;
  const after = list.data;
  const shown = older !== undefined && older.after === after ? older : undefined;
  const rows = [...after.data, ...(shown?.data ?? [])];
  const next = shown === undefined ? after.next_cursor : shown.next;
  const more = async () => {
    setLoadingMore(true);
    setMoreError(undefined);
    try {
      const page = await api<Page<Activity>>("GET", `/v1/activity${query({ limit: 50, cursor: next })}`);
      setOlder((o) => ({ after, data: [...(o !== undefined && o.after === after ? o.data : []), ...page.data], next: page.next_cursor }));
    } catch (err) {
      setMoreError(err);
    } finally {
      setLoadingMore(false);
    }
  };
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
            {rows.map((a) => (
              <tr key={a.activity_id} data-testid="activity-row" data-type={a.type}>
                <td data-label="When">{when(a.created_at)}</td>
                <td data-label="What">{KINDS[a.type] ?? a.type}</td>
                <td data-label="Amount" className="r mono">
                  {usdc(a.amount_usdc)}
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
      {moreError !== undefined && <ErrorNote error={moreError} onRetry={more} />}
      {next && (
        <button type="button" className="btn" onClick={more} disabled={loadingMore}>
          {loadingMore ? "Loading…" : "Load older movements"}
        </button>
      )}
    </>
  );
}
