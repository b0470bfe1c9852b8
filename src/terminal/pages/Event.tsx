import { useState } from "react";
import { api, query, type Account, type Activity, type Market, type Page } from "../api.ts";
import { pnl, pnlTone, price, shares, short, usdc, when } from "../format.ts";
import { Link } from "../router.tsx";
import { DepthChart } from "../components/DepthChart.tsx";
import { Ladder } from "../components/Ladder.tsx";
import { OrderTicket } from "../components/OrderTicket.tsx";
import { ErrorNote, Loading, useAsync, VenueChip } from "../components/ui.tsx";
import { usePriceStream } from "../components/usePriceStream.ts";

export function EventPage({ eventId }: { eventId: string }) {
  // The account page's Sell button opens the ticket as ?side=sell&outcome=…&shares=….
  const [opening] = useState(() => new URLSearchParams(location.search));
  const [outcome, setOutcome] = useState<"YES" | "NO">(opening.get("outcome") === "NO" ? "NO" : "YES");
  const [side, setSide] = useState<"buy" | "sell">(opening.get("side") === "sell" ? "sell" : "buy");
  const market = useAsync(() => findMarket(eventId), [eventId]);
  // The book is ranked for the ticket's side: a seller's best execution is the bid that nets most after fees.
  const stream = usePriceStream(eventId, outcome, 30, side);

  if (market.data === undefined) return market.error ? <ErrorNote error={market.error} onRetry={market.reload} /> : <Loading label="Loading the event…" />;
  if (market.data === null) {
    return (
      <section className="narrow">
        <h1>No such event</h1>
        <p>
          There is no event <code>{eventId}</code>. <Link to="/markets">Back to the markets</Link>.
        </p>
      </section>
    );
  }
  const m = market.data;
  const record = stream.kind === "live" ? stream.record : stream.kind === "reconnecting" ? stream.record : undefined;

  return (
    <section>
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/markets">Markets</Link> <span aria-hidden="true">/</span> <span>{m.event_id}</span>
      </nav>
      <div className="page-head">
        <h1>{m.title}</h1>
        <p className="muted">{m.description}</p>
        <div className="meta">
          <span className={`status status-${m.status}`}>{m.status}</span>
          <span>Closes {when(m.close_time)}</span>
          <span className="chips">
            {m.venues.map((v) => (
              <VenueChip key={v.venue} venue={v.venue} />
            ))}
          </span>
        </div>
      </div>
      {m.status === "resolved" && <Resolved market={m} />}
      <div className="event-grid">
        <div className="card book-card">
          <div className="card-head">
            <h2>
              Merged book · {outcome}
            </h2>
            <span className={`live ${stream.kind}`} role="status">
              {stream.kind === "live" ? "Live" : stream.kind === "failed" ? "Stopped" : stream.kind === "connecting" ? "Connecting…" : "Reconnecting…"}
            </span>
          </div>
          {stream.kind === "failed" && <ErrorNote error={stream.error} />}
          {record ? (
            <>
              <div className="quick">
                <div>
                  <span className="muted">Best bid</span> <strong className="mono bid">{price(record.spread.best_bid)}</strong>
                </div>
                <div>
                  <span className="muted">Best ask</span> <strong className="mono ask">{price(record.spread.best_ask)}</strong>
                </div>
                {record.stale_venues.length > 0 && <div className="warn">Left out, no fresh book: {record.stale_venues.join(", ")}</div>}
              </div>
              <Ladder record={record} side={side} />
            </>
          ) : (
            stream.kind !== "failed" && <Loading label="Connecting to the live book…" />
          )}
        </div>
        <div className="ticket-col">
          <OrderTicket
            eventId={m.event_id}
            outcome={outcome}
            onOutcome={setOutcome}
            side={side}
            onSide={setSide}
            open={m.status === "open"}
            initialShares={opening.get("shares") ?? undefined}
          />
        </div>
        <div className="card depth-card">
          <h2>Depth by venue</h2>
          {record ? <DepthChart record={record} /> : <Loading label="Waiting for the book…" />}
        </div>
      </div>
    </section>
  );
}

/**
 * The event of the id, or null: the catalog's search covers event ids, so the exact id finds its one event among any
 * partial matches, read page by page until it is found (more than a page may match: every event whose title has the id).
 */
async function findMarket(eventId: string): Promise<Market | null> {
  let cursor: string | null = null;
  do {
    const page: Page<Market> = await api<Page<Market>>("GET", `/v1/markets${query({ q: eventId, limit: 500, cursor })}`);
    const found = page.data.find((m) => m.event_id === eventId);
    if (found !== undefined) return found;
    cursor = page.next_cursor;
  } while (cursor !== null);
  return null;
}

/** A resolved event: the outcome, and what the account's positions in it were paid at redemption. */
function Resolved({ market }: { market: Market }) {
  const account = useAsync(() => api<Account>("GET", "/v1/account"), [market.event_id]);
  const activity = useAsync(() => redemptions(market.event_id), [market.event_id]);
  const redeemed = activity.data ?? [];
  const paid = redeemed.reduce((micro, a) => micro + Math.round(a.amount_usdc * 1e6), 0) / 1e6;
  const mine = account.data?.positions.filter((p) => p.event_id === market.event_id) ?? [];
  return (
    <section className="card resolved" data-testid="resolved" aria-labelledby="resolved-title">
      <h2 id="resolved-title">
        Resolved: <span className={market.resolution === "NO" ? "ask" : "bid"}>{market.resolution}</span>
      </h2>
      {account.error !== undefined && <ErrorNote error={account.error} onRetry={account.reload} />}
      {mine.length === 0 ? (
        <p className="muted">{account.data === undefined ? "Reading your positions…" : "You held no position in this event."}</p>
      ) : (
        <ul className="paid">
          {mine.map((p) => (
            <li key={p.outcome} data-testid="resolved-position">
              Your {p.outcome} position:{" "}
              {p.shares > 0 ? (
                <>
                  {shares(p.shares)} shares being redeemed at {price(p.mark_price)} each
                </>
              ) : (
                <>
                  redeemed, <strong className={pnlTone(p.realized_pnl_usdc)}>{pnl(p.realized_pnl_usdc)}</strong> realized
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      {redeemed.length > 0 && (
        <p data-testid="resolved-paid">
          Paid into your vault: <strong className="mono">{usdc(paid)}</strong>{" "}
          {[...new Set(redeemed.map((a) => a.tx_hash!))].map((tx) => (
            <code key={tx} title={tx}>
              {short(tx)}
            </code>
          ))}
        </p>
      )}
    </section>
  );
}

/**
 * What was paid: the account's redemptions of the event (one a token held, 0 for losing shares), from its activity, read
 * to its end: any number of movements since (a bot trading on) may be newer than them.
 */
async function redemptions(eventId: string): Promise<Activity[]> {
  const found: Activity[] = [];
  let cursor: string | null = null;
  do {
    const page: Page<Activity> = await api<Page<Activity>>("GET", `/v1/activity${query({ limit: 500, cursor })}`);
    found.push(...page.data.filter((a) => a.type === "redemption" && a.reference === eventId && a.tx_hash !== null));
    cursor = page.next_cursor;
  } while (cursor !== null);
  return found;
}
