import { useEffect, useState } from "react";
import { api, type PriceRecord } from "../api.ts";

export type StreamState = { kind: "connecting" } | { kind: "live"; record: PriceRecord } | { kind: "reconnecting"; record?: PriceRecord } | { kind: "failed"; error: unknown };

/** The event's merged book from GET /v1/stream/prices/{id}, kept live; EventSource reconnects by itself. */
export function usePriceStream(eventId: string, outcome: string, depth: number, side: "buy" | "sell"): StreamState {
  const [state, setState] = useState<StreamState>({ kind: "connecting" });
  useEffect(() => {
    setState({ kind: "connecting" });
    const path = `/v1/stream/prices/${encodeURIComponent(eventId)}?outcome=${outcome}&depth=${depth}&side=${side}`;
    let live = true;
    let source: EventSource;
    let again: ReturnType<typeof setTimeout> | undefined;
    let last: PriceRecord | undefined;
    const open = () => {
      source = new EventSource(path, { withCredentials: true });
      source.addEventListener("price", (e) => {
        last = JSON.parse((e as MessageEvent<string>).data) as PriceRecord;
        setState({ kind: "live", record: last });
      });
      source.onerror = () => {
        if (source.readyState !== EventSource.CLOSED) {
          setState({ kind: "reconnecting", record: last });
          return;
        }
        // A refused stream (no session, unknown event) closes for good without saying why; the same
        // read as a plain request brings back the reason in words. Read, the refusal was a passing one (a
        // restart's, a proxy's 503): the stream is opened again, as the server's `retry: 2000` asks.
        api<PriceRecord>("GET", `/v1/prices/${encodeURIComponent(eventId)}?outcome=${outcome}&depth=${depth}&side=${side}`).then(
          (record) => {
            if (!live) return;
            setState({ kind: "reconnecting", record });
            again = setTimeout(open, 2000);
          },
          (error: unknown) => live && setState({ kind: "failed", error }),
        );
      };
    };
    open();
    return () => {
      live = false;
      clearTimeout(again);
      source.close();
    };
  }, [eventId, outcome, depth, side]);
  return state;
}
