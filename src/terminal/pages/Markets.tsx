import { useEffect, useState } from "react";
import { api, query, type Market, type Page } from "../api.ts";
import { num, price, when } from "../format.ts";
import { Link, navigate } from "../router.tsx";
import { ErrorNote, Loading, useAsync, useOlderPages, VenueChip } from "../components/ui.tsx";

const STATUSES = [
  { value: "open", label: "Open" },
  { value: "closed", label: "Closed" },
  { value: "resolved", label: "Resolved" },
  { value: "", label: "All" },
];

export function MarketsPage() {
  const params = new URLSearchParams(location.search);
  const [text, setText] = useState(params.get("q") ?? "");
  const [q, setQ] = useState(text);
  const [status, setStatus] = useState(params.get("status") ?? "open");

  // Typing settles for a moment before the search runs, so each keystroke is not a request.
  useEffect(() => {
    const t = setTimeout(() => setQ(text.trim()), 250);
    return () => clearTimeout(t);
  }, [text]);

  useEffect(() => {
    history.replaceState(null, "", `/markets${query({ q, status: status === "open" ? undefined : status || "all" })}`);
  }, [q, status]);

  const read = (cursor: string | null) => api<Page<Market>>("GET", `/v1/markets${query({ q, status: status === "all" ? undefined : status, limit: 50, cursor })}`);
  const first = useAsync(() => read(null), [q, status]);
  // More of the list read for a search or status left since is not shown under the new one.
  const pages = useOlderPages(first.data, read);
  const rows = first.data === undefined ? undefined : pages.rows;

  return (
    <section>
      <div className="page-head">
        <h1>Markets</h1>
        <p className="muted">Every event once, with the venues that list it and the best prices across them.</p>
      </div>
      <div className="toolbar" role="search">
        <label className="grow">
          <span className="sr-only">Search markets</span>
          <input type="search" placeholder="Search events…" value={text} onChange={(e) => setText(e.target.value)} />
        </label>
        <div className="segmented" role="radiogroup" aria-label="Status">
          {STATUSES.map((s) => {
            const value = s.value || "all";
            return (
              <button key={value} type="button" role="radio" aria-checked={status === value} className={status === value ? "seg on" : "seg"} onClick={() => setStatus(value)}>
                {s.label}
              </button>
            );
          })}
        </div>
      </div>
      {first.error !== undefined && <ErrorNote error={first.error} onRetry={first.reload} />}
      {rows === undefined ? (
        first.loading && <Loading label="Loading markets…" />
      ) : rows.length === 0 ? (
        <p className="empty">No market matches{q ? ` “${q}”` : ""}.</p>
      ) : (
        <div className="table-wrap">
          <table className="table markets">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Venues</th>
                <th scope="col" className="r">
                  Best bid
                </th>
                <th scope="col" className="r">
                  Best ask
                </th>
                <th scope="col" className="r">
                  Volume (USDC)
                </th>
                <th scope="col">Closes</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((m) => (
                <tr key={m.event_id} className="clickable" onClick={() => navigate(`/events/${encodeURIComponent(m.event_id)}`)}>
                  <td data-label="Event">
                    <Link to={`/events/${encodeURIComponent(m.event_id)}`} className="title" onClick={(e) => e.stopPropagation()}>
                      {m.title}
                    </Link>
                    <div className="sub">
                      <span className={`status status-${m.status}`}>{m.status}</span> <code>{m.event_id}</code>
                    </div>
                  </td>
                  <td data-label="Venues">
                    <div className="chips">
                      {m.venues.map((v) => (
                        <VenueChip key={v.venue} venue={v.venue} />
                      ))}
                    </div>
                  </td>
                  <td data-label="Best bid" className="r mono bid">
                    {price(m.best_bid)}
                  </td>
                  <td data-label="Best ask" className="r mono ask">
                    {price(m.best_ask)}
                  </td>
                  <td data-label="Volume" className="r mono">
                    {num(m.volume_usdc)}
                  </td>
                  <td data-label="Closes">{when(m.close_time)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {pages.error !== undefined && <ErrorNote error={pages.error} onRetry={pages.more} />}
      {pages.next && (
        <button type="button" className="btn" onClick={pages.more} disabled={pages.loading}>
          {pages.loading ? "Loading…" : "Load more"}
        </button>
      )}
    </section>
  );
}
