import { useEffect, useRef, useState } from "react";
import type { PriceRecord } from "../api.ts";
import { price, shares, venueColour, venueName } from "../format.ts";

type Entry = [number, number, string];
const H = 220;
const PAD = { l: 52, r: 24, t: 12, b: 24 };
const compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

interface Band {
  venue: string;
  points: string;
}

/**
 * Stacked cumulative depth of each side, one band per venue: at a price, the height of a venue's band
 * is the shares that venue offers up to that price. Levels are `best first`, so cumulating in list
 * order walks away from the spread on both sides.
 */
function bands(levels: Entry[], venues: string[], x: (p: number) => number, y: (s: number) => number, edge: number): Band[] {
  const prices = [...new Set(levels.map((l) => l[0]))];
  const cum = venues.map(() => prices.map(() => 0));
  venues.forEach((v, vi) => {
    let running = 0;
    prices.forEach((p, k) => {
      for (const l of levels) if (l[2] === v && l[0] === p) running += l[1];
      cum[vi]![k] = running;
    });
  });
  const out: Band[] = [];
  const base = prices.map(() => 0);
  venues.forEach((v, vi) => {
    const top = base.map((b, k) => b + cum[vi]![k]!);
    const upper: string[] = [];
    const lower: string[] = [];
    prices.forEach((p, k) => {
      const next = k + 1 < prices.length ? x(prices[k + 1]!) : edge;
      upper.push(`${x(p)},${y(top[k]!)}`, `${next},${y(top[k]!)}`);
      lower.unshift(`${next},${y(base[k]!)}`, `${x(p)},${y(base[k]!)}`);
    });
    if (upper.length > 0) out.push({ venue: v, points: [...upper, ...lower].join(" ") });
    top.forEach((t, k) => (base[k] = t));
  });
  return out;
}

/** Drawn at the width it is shown at, so that its labels keep their size on a phone as on a desktop. */
function useWidth(fallback: number) {
  const ref = useRef<HTMLElement>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const observer = new ResizeObserver(([entry]) => entry && setWidth(Math.max(240, Math.floor(entry.contentRect.width))));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width] as const;
}

export function DepthChart({ record }: { record: PriceRecord }) {
  const [ref, width] = useWidth(640);
  const empty = record.orderbook.bids.length + record.orderbook.asks.length === 0;
  return (
    <figure className="depth" ref={ref}>
      {empty ? <p className="empty">No venue has a book for this outcome right now.</p> : <Chart record={record} W={width} />}
    </figure>
  );
}

function Chart({ record, W }: { record: PriceRecord; W: number }) {
  const bids = record.orderbook.bids as Entry[];
  const asks = record.orderbook.asks as Entry[];
  const venues = [...new Set([...bids, ...asks].map((l) => l[2]))].sort();

  const lo = Math.min(...bids.map((l) => l[0]), ...asks.map((l) => l[0]));
  const hi = Math.max(...bids.map((l) => l[0]), ...asks.map((l) => l[0]));
  const span = Math.max(hi - lo, 0.01);
  const x = (p: number) => PAD.l + ((p - lo) / span) * (W - PAD.l - PAD.r);
  const depthOf = (ls: Entry[]) => ls.reduce((s, l) => s + l[1], 0);
  const maxDepth = Math.max(1, depthOf(bids), depthOf(asks));
  const y = (s: number) => H - PAD.b - (s / maxDepth) * (H - PAD.t - PAD.b);

  const bidBands = bands(bids, venues, x, y, PAD.l);
  const askBands = bands(asks, venues, x, y, W - PAD.r);
  const ticks = (W < 420 ? [0, 0.5, 1] : [0, 0.25, 0.5, 0.75, 1]).map((f) => lo + f * span);
  const label = `Depth chart: ${shares(depthOf(bids))} shares bid and ${shares(depthOf(asks))} shares offered between ${price(lo)} and ${price(hi)}, across ${venues.map(venueName).join(", ")}.`;

  return (
    <>
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-label={label}>
        {[0.5, 1].map((f) => (
          <g key={f}>
            <line x1={PAD.l} x2={W - PAD.r} y1={y(maxDepth * f)} y2={y(maxDepth * f)} className="grid" />
            <text x={PAD.l - 6} y={y(maxDepth * f) + 4} className="axis" textAnchor="end">
              {compact.format(maxDepth * f)}
            </text>
          </g>
        ))}
        {bidBands.map((b) => (
          <polygon key={`b-${b.venue}`} points={b.points} fill={venueColour(b.venue)} fillOpacity={0.35} stroke={venueColour(b.venue)} strokeWidth={1} />
        ))}
        {askBands.map((b) => (
          <polygon key={`a-${b.venue}`} points={b.points} fill={venueColour(b.venue)} fillOpacity={0.6} stroke={venueColour(b.venue)} strokeWidth={1} />
        ))}
        <line x1={PAD.l} x2={W - PAD.r} y1={H - PAD.b} y2={H - PAD.b} className="axis-line" />
        {ticks.map((t) => (
          <text key={t} x={x(t)} y={H - 6} className="axis" textAnchor="middle">
            {price(t)}
          </text>
        ))}
      </svg>
      <figcaption className="legend">
        {venues.map((v) => (
          <span key={v} className="legend-item">
            <span className="swatch" style={{ background: venueColour(v) }} aria-hidden="true" />
            {venueName(v)}
          </span>
        ))}
        <span className="muted legend-note">bids lighter (left), asks darker (right)</span>
      </figcaption>
    </>
  );
}
