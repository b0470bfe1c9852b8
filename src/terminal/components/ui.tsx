import { useCallback, useEffect, useLayoutEffect, useRef, useState, type MouseEvent, type ReactNode } from "react";
import { ApiError, type Page } from "../api.ts";
import { num, price, shares, STATUS_WORDS, venueColour, venueName } from "../format.ts";

export function ErrorNote({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const message = error instanceof ApiError || error instanceof Error ? error.message : "Something went wrong.";
  return (
    <div className="note note-error" role="alert">
      <span>{message}</span>
      {onRetry && (
        <button type="button" className="btn btn-small" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <div className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

export function VenueChip({ venue }: { venue: string }) {
  return (
    <span className="chip" style={{ borderColor: venueColour(venue), color: venueColour(venue) }}>
      <span className="dot" style={{ background: venueColour(venue) }} aria-hidden="true" />
      {venueName(venue)}
    </span>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${status}`}>{STATUS_WORDS[status] ?? status}</span>;
}

export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [done, setDone] = useState<"copied" | "failed">();
  const copy = async (e: MouseEvent<HTMLButtonElement>) => {
    const button = e.currentTarget;
    let copied = true;
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Clipboard access needs a secure context; over plain http the old selection-based copy still works, from
      // inside an open modal dialog when the button is in one: the rest of the page is inert, nothing there is selected.
      const area = document.createElement("textarea");
      area.value = text;
      (button.closest("dialog") ?? document.body).append(area);
      area.select();
      copied = document.execCommand("copy");
      area.remove();
      button.focus();
    }
    setDone(copied ? "copied" : "failed");
    // A failure stays said until the next try: the text is to be copied by hand.
    if (copied) setTimeout(() => setDone((d) => (d === "copied" ? undefined : d)), 1500);
  };
  return (
    <button type="button" className="btn btn-small" onClick={copy} aria-label={`${label}: ${done === "copied" ? "copied" : done === "failed" ? "not copied, select the text and copy it" : "copy to clipboard"}`}>
      {done === "copied" ? "Copied" : done === "failed" ? "Not copied" : label}
    </button>
  );
}

/**
 * A modal dialog on the native <dialog>: focus is trapped and Escape closes it, for free. Closed, it gives focus back
 * to what had it when it opened (the button that opened it), which the dialog's removal from the page would not.
 * Layout effects, so that a dialog closed as another opens (the new key's form, then its secret) hands focus on
 * before the next one takes note of it.
 */
export function Modal({ title, onClose, children }: { title: string; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  useLayoutEffect(() => {
    const dialog = ref.current!;
    const opener = document.activeElement;
    dialog.showModal();
    return () => {
      dialog.close();
      if (opener instanceof HTMLElement) opener.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      className="modal"
      aria-labelledby="modal-title"
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <h2 id="modal-title">{title}</h2>
      {children}
    </dialog>
  );
}

/**
 * Whether the component is still on the page: an answer that comes after it was left (another page, the dialog closed)
 * is shown to no one, so what it names is still to be asked for by its client id (`forgetClientId` waits for one shown).
 */
export function useOnScreen(): { readonly current: boolean } {
  const onScreen = useRef(true);
  useEffect(() => {
    onScreen.current = true;
    return () => {
      onScreen.current = false;
    };
  }, []);
  return onScreen;
}

/**
 * While `sending` (an order, a withdrawal, a key), leaving the page (closing the tab, reloading, another address) would lose
 * the answer, which says what was done (a key's secret, shown once): the browser asks first.
 */
export function useAskBeforeLeaving(sending: boolean): void {
  useEffect(() => {
    if (!sending) return;
    const ask = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      // What browsers before the standard's preventDefault() go by.
      e.returnValue = "";
    };
    addEventListener("beforeunload", ask);
    return () => removeEventListener("beforeunload", ask);
  }, [sending]);
}

export interface Async<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change (and on reload), given the data it holds, and keeps that while a reload runs. */
export function useAsync<T>(load: (held: T | undefined) => Promise<T>, deps: readonly unknown[]): Async<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: undefined, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load(state.data).then(
      (data) => live && setState({ data, error: undefined, loading: false }),
      (error: unknown) => live && setState((s) => ({ data: s.data, error, loading: false })),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export interface OlderPages<T> {
  /** The newest page's items, then those of the older pages read after it. */
  rows: T[];
  /** The cursor of the next older page, null at the end. */
  next: string | null;
  error: unknown;
  loading: boolean;
  more: () => void;
}

/**
 * The older pages of a list, read on asking (`read(cursor)`), after `newest`, the read of the newest page they followed;
 * another read of the newest replaces them, and the error of one that failed after the read before it.
 */
export function useOlderPages<T>(newest: Page<T> | undefined, read: (cursor: string | null) => Promise<Page<T>>): OlderPages<T> {
  const [older, setOlder] = useState<{ after: Page<T>; rows: T[]; next: string | null }>();
  const [failed, setFailed] = useState<{ after: Page<T>; error: unknown }>();
  const [loading, setLoading] = useState(false);
  const shown = newest !== undefined && older !== undefined && older.after === newest ? older : undefined;
  const rows = [...(newest?.data ?? []), ...(shown?.rows ?? [])];
  const next = shown === undefined ? (newest?.next_cursor ?? null) : shown.next;
  const error = failed !== undefined && failed.after === newest ? failed.error : undefined;
  const more = async () => {
    if (newest === undefined) return;
    const after = newest;
    setLoading(true);
    setFailed(undefined);
    try {
      const page = await read(next);
      setOlder((o) => ({ after, rows: [...(o !== undefined && o.after === after ? o.rows : []), ...page.data], next: page.next_cursor }));
    } catch (err) {
      setFailed({ after, error: err });
    } finally {
      setLoading(false);
    }
  };
  return { rows, next, error, loading, more };
}

/** A table of an order's parts by venue: the legs of a quote or the fills of an order. */
export function LegsTable({ caption, priceLabel, rows }: { caption?: string; priceLabel: string; rows: { key: string; venue: string; shares: number; price: number; fee_usdc: number }[] }) {
  return (
    <table className="legs">
      {caption && <caption className="sr-only">{caption}</caption>}
      <thead>
        <tr>
          <th scope="col">Venue</th>
          <th scope="col" className="r">
            Shares
          </th>
          <th scope="col" className="r">
            {priceLabel}
          </th>
          <th scope="col" className="r">
            Fee
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key}>
            <td>
              <VenueChip venue={r.venue} />
            </td>
            <td className="r mono">{shares(r.shares)}</td>
            <td className="r mono">{price(r.price)}</td>
            <td className="r mono">{num(r.fee_usdc)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
