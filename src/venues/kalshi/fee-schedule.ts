import type { FeeModel } from "../../domain/fees.ts";
import { kalshiMarketFeeModel, seriesOf, type KalshiEventFee, type KalshiMarket, type KalshiSeriesFee } from "./wire.ts";

/** A fee and the time (ms since the epoch) from which it holds: when it was read, or when a scheduled change takes effect. */
export interface Dated<F> {
  at: number;
  fee: F;
}

/** A change Kalshi has scheduled: `at` is undefined where its `scheduled_ts` cannot be read, so it may apply at any time. */
export interface Scheduled<F> {
  at: number | undefined;
  fee: F;
}

/**
 * Kalshi's fees over time: each series' and event's fee as read, and the changes Kalshi has scheduled
 * (`GET /series/fee_changes`, `GET /events/fee_changes`: `scheduled_ts`). A change applies from its time on,
 * if that is after the read it follows (a read later than a change already shows it, whether or not the
 * venue still lists the change). A change whose time cannot be read leaves its series' or event's markets
 * without a fee the adapter can model until a read no longer lists it.
 */
export class KalshiFeeSchedule {
  private readonly series = new Map<string, Dated<KalshiSeriesFee>>();
  private readonly events = new Map<string, Dated<KalshiEventFee>>();
  private seriesChanges = new Map<string, Scheduled<KalshiSeriesFee>[]>();
  private eventChanges = new Map<string, Scheduled<KalshiEventFee>[]>();

  hasSeries(series: string): boolean {
    return this.series.has(series);
  }

  hasEvent(event: string): boolean {
    return this.events.has(event);
  }

  readSeries(series: string, fee: Dated<KalshiSeriesFee>): void {
    this.series.set(series, fee);
  }

  readEvent(event: string, fee: Dated<KalshiEventFee>): void {
    this.events.set(event, fee);
  }

  /** Every change scheduled now, by series and by event, in place of those known before. */
  schedule(series: Map<string, Scheduled<KalshiSeriesFee>[]>, events: Map<string, Scheduled<KalshiEventFee>[]>): void {
    const byTime = <F>(m: Map<string, Scheduled<F>[]>) => new Map([...m].map(([k, list]) => [k, [...list].sort((a, b) => (a.at ?? 0) - (b.at ?? 0))]));
    this.seriesChanges = byTime(series);
    this.eventChanges = byTime(events);
  }

  /** The fee a market is charged at time t. Throws for a fee the adapter cannot model (kalshiMarketFeeModel), or one a change of unknown time may have brought. */
  at(m: Pick<KalshiMarket, "ticker" | "event_ticker">, t: number): FeeModel {
    const s = seriesOf(m.ticker);
    return kalshiMarketFeeModel(this.latest(this.series.get(s)!, this.seriesChanges.get(s), t), this.latest(this.events.get(m.event_ticker)!, this.eventChanges.get(m.event_ticker), t));
  }

  /** Whether a change is scheduled after the read of the market's series or event: only then can its fee differ from the one read. */
  changes(m: Pick<KalshiMarket, "ticker" | "event_ticker">): boolean {
    const s = seriesOf(m.ticker);
    return this.pending(this.series.get(s), this.seriesChanges.get(s)).length > 0 || this.pending(this.events.get(m.event_ticker), this.eventChanges.get(m.event_ticker)).length > 0;
  }

  /**
   * The highest fee a market is charged at some time in [from, to]: the one in effect at `from` and each one a
   * change brings in before `to`. Throws if any of them cannot be modelled.
   */
  highest(m: Pick<KalshiMarket, "ticker" | "event_ticker">, from: number, to: number): FeeModel {
    const s = seriesOf(m.ticker);
    const times = [...this.pending(this.series.get(s), this.seriesChanges.get(s)), ...this.pending(this.events.get(m.event_ticker), this.eventChanges.get(m.event_ticker))]
      .map((c) => c.at)
      .filter((at): at is number => at !== undefined && at > from && at <= to);
    return [from, ...times].map((t) => this.at(m, t)).reduce((a, b) => (b.ratePpm > a.ratePpm ? b : a));
  }

  private pending<F>(read: Dated<F> | undefined, changes: Scheduled<F>[] | undefined): Scheduled<F>[] {
    return read && changes ? changes.filter((c) => c.at === undefined || c.at > read.at) : [];
  }

  private latest<F>(read: Dated<F>, changes: Scheduled<F>[] | undefined, t: number): F {
    let fee = read.fee;
    for (const c of this.pending(read, changes)) {
      if (c.at === undefined) throw new Error("Kalshi lists a fee change whose scheduled_ts is not a time");
      if (c.at <= t) fee = c.fee;
    }
    return fee;
  }
}
