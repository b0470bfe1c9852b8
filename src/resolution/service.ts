import { toHex } from "viem";
import { keccak256 } from "../evm/keccak.ts";
import { OPEN_STATUSES } from "../domain/order-status.ts";
import { OUTCOMES, type Clock, type Outcome } from "../domain/types.ts";
import type { MarketCatalog } from "../markets/catalog.ts";
import type { Checkpoint, Log } from "../orders/service.ts";
import type { EventResolutionRecord, RedemptionRecord, Store } from "../store/store.ts";
import { REDEEM_MAX_ITEMS, type Address, type Hex32, type Vault } from "../vault/vault.ts";
import type { VenueResolution } from "../venues/venue.ts";
import { decide } from "./decide.ts";
import { SerialPasses } from "../serial-passes.ts";

export interface ResolutionDeps {
  store: Store;
  vault: Vault;
  catalog: MarketCatalog;
  /** The venues this deployment runs (VENUES): a listing on another is not asked. */
  venues: ReadonlySet<string>;
  /** The venue's report on one of its markets; throws when the venue cannot be asked. */
  ask(venue: string, venueMarketId: string): Promise<VenueResolution>;
  tokenId(eventId: string, outcome: Outcome): bigint;
  /** How long after asking the venues about an undecided event they are asked again (RESOLUTION_POLL_MS). */
  pollMs: number;
  /** Blocks a redemption's transaction must be under before it is recorded redeemed (0 or none: at once); DEPOSIT_CONFIRMATIONS. */
  confirmations?: number;
  clock: Clock;
  log: Log;
  checkpoint?: (step: Checkpoint, id: string) => void;
}

/**
 * The key of a holder's `n`th redemption of one token (from 0), each redeemed at most once: the shares a
 * holder still has once its earlier ones were redeemed (an order that finished late) go under the next.
 */
export function redemptionKey(eventId: string, outcome: Outcome, address: string, n: number): Hex32 {
  return keccak256(toHex(`redeem:${eventId}:${outcome}:${address.toLowerCase()}${n === 0 ? "" : `:${n}`}`));
}

/**
 * The end of an event: learns from the venues that it resolved (or that they disagree), records the
 * decision, and redeems every position in it exactly once — each winning share pays 1 USDC into the
 * holder's vault balance, each losing share is burned for nothing. Run at start-up and then at every
 * tick (the venues are asked about an undecided event once per `pollMs`, so a catalog of many events
 * stays within their read limits; stored decisions and redemptions are acted on at every pass); each step is persisted before the next, and the chain is asked by key before anything is sent
 * again, so a crash at any point is finished by the next pass without paying twice.
 */
export class ResolutionService {
  private readonly passes = new SerialPasses(() => this.run());
  /** Events whose every holder this process has seen redeemed: not read again until an order on one finishes. */
  private readonly done = new Set<string>();
  /** Events an order of this process finished on since the last pass began: each pass takes them out of `done`. */
  private readonly finishedOn = new Set<string>();
  /** When this process last asked the venues about each undecided event, in the order of those asks (oldest first). */
  private readonly asked = new Map<string, number>();
  /** Undecided events crossfill traded on a venue this deployment does not run: an operator decides them, the venues are not asked again. */
  private readonly leftToOperator = new Set<string>();

  constructor(private readonly d: ResolutionDeps) {}

  /** Resolves once no pass runs or waits to: what shutdown awaits. */
  idle(): Promise<void> {
    return this.passes.idle();
  }

  /** One pass that begins after this call (SerialPasses). */
  pass(): Promise<void> {
    return this.passes.pass();
  }

  /**
   * An order on the event finished in this process (or its recovery did), so its holder's shares may have moved:
   * this process plans the resolved event again at its next pass (an order taken by an instance that had not yet
   * applied the decision finishes after it). Told during a pass, it counts for the next one, so a plan that read
   * the holders before the order finished does not leave the event done.
   */
  orderFinished(eventId: string): void {
    this.finishedOn.add(eventId);
  }

  private async run(): Promise<void> {
    for (const eventId of this.finishedOn) this.done.delete(eventId);
    this.finishedOn.clear();
    const decided = new Map((await this.d.store.eventResolutions()).map((r) => [r.eventId, r]));
    for (const r of decided.values()) this.apply(r);
    const now = this.d.clock.now();
    // A venue that failed to answer is not asked again in this pass: an ask of a venue that is down waits out its
    // timeout and retries, seconds, and would hold up the pass (the redemptions after it, and start-up) once for
    // every event it lists. The events it holds up are asked at the next pass.
    const failed = new Set<string>();
    // The events never asked first, then the longest since asked (`asked` keeps the order of the asks), so an event
    // its venue cannot answer for (a market it no longer lists) does not hold up the venue's other events every pass.
    const rank = new Map([...this.asked.keys()].map((eventId, i) => [eventId, i]));
    const events = [...this.d.catalog.events()].sort((a, b) => (rank.get(a.eventId) ?? -1) - (rank.get(b.eventId) ?? -1));
    for (const event of events) {
      if (decided.has(event.eventId) || event.status === "resolved" || this.leftToOperator.has(event.eventId)) continue;
      if (now < (this.asked.get(event.eventId) ?? -Infinity) + this.d.pollMs) continue;
      if (event.listings.some((l) => failed.has(l.venue))) continue;
      this.asked.delete(event.eventId);
      this.asked.set(event.eventId, now);
      await this.learn(event.eventId, event.listings, failed).catch((err: unknown) => this.d.log.warn({ err, event_id: event.eventId }, "reading the event's resolution failed; will retry"));
    }
    const toPlan = (await this.d.store.eventResolutions()).filter((x) => x.status === "resolved" && !this.done.has(x.eventId));
    if (toPlan.length > 0) {
      const open = new Set((await this.d.store.ordersInStatus(OPEN_STATUSES)).map((o) => o.eventId));
      for (const r of toPlan) {
        await this.plan(r, open.has(r.eventId)).catch((err: unknown) => this.d.log.warn({ err, event_id: r.eventId }, "planning the event's redemptions failed; will retry"));
      }
    }
    await this.redeemPending();
  }

  private apply(r: EventResolutionRecord): void {
    this.d.catalog.decided(r.eventId, r.status, r.outcome);
  }

  /**
   * Asks every listing venue this deployment runs; stores the decision once all have paid out. A venue it does not
   * run is left out, unless an order on the event sent a child order there: crossfill may hold shares there that
   * the venues it runs cannot tell of, and the event is left to an operator. A venue whose ask fails is added to `failed`.
   */
  private async learn(eventId: string, listings: readonly { venue: string; venueMarketId: string }[], failed: Set<string>): Promise<void> {
    const reports = new Map<string, VenueResolution>();
    const notRun = listings.filter((l) => !this.d.venues.has(l.venue)).map((l) => l.venue);
    for (const l of listings) {
      if (notRun.includes(l.venue)) continue;
      try {
        reports.set(l.venue, await this.d.ask(l.venue, l.venueMarketId));
      } catch (err) {
        failed.add(l.venue);
        throw err;
      }
    }
    const decision = decide(reports);
    if (!decision) return;
    if (notRun.length > 0) {
      const traded = new Set(await this.d.store.childOrderVenues(eventId));
      const held = notRun.filter((v) => traded.has(v));
      if (held.length > 0) {
        this.leftToOperator.add(eventId);
        this.d.log.warn(
          { event_id: eventId, venues: decision.venueReports, not_run: held },
          `the venues this deployment runs have paid out the event, but crossfill traded it on ${held.join(", ")}, which it does not run (VENUES): it waits for an operator to decide it with \`crossfill events resolve ${eventId} YES|NO\``,
        );
        return;
      }
    }
    const record = await this.d.store.decideEvent({
      eventId,
      status: decision.status,
      outcome: decision.status === "resolved" ? decision.outcome : null,
      decidedBy: "venues",
      venueReports: decision.venueReports,
      decidedAt: new Date(this.d.clock.now()).toISOString(),
    });
    this.apply(record);
    const log = record.status === "resolved" ? this.d.log.info.bind(this.d.log) : this.d.log.warn.bind(this.d.log);
    log({ event_id: eventId, status: record.status, outcome: record.outcome, venues: record.venueReports, not_run: notRun }, record.status === "resolved" ? "event resolved" : "the venues disagree on the event's outcome; an operator decides it");
  }

  /**
   * Stores a redemption for every position still held in a resolved event and not already waiting in a pending
   * one, whatever order of its holder is open on it: the balance read is the holder's own shares, which a buy only
   * adds to and a sell's escrow has already left (the Vault holds them); a sell whose escrow is not yet taken races
   * the redemption on chain, the Vault giving each share to whichever lands first and refusing the other. Balances are
   * read from the chain; the event is done once none is left and no order on it is `open` (what an open order mints or
   * returns is planned once it ends).
   */
  private async plan(r: EventResolutionRecord, open: boolean): Promise<void> {
    const now = new Date(this.d.clock.now()).toISOString();
    const holdings = (await this.d.store.holders(r.eventId))
      .flatMap((holder) => OUTCOMES.map((outcome) => ({ holder, outcome, tokenId: this.d.tokenId(r.eventId, outcome) })));
    // The redemptions before the balances: one another instance's redemption landing between the two reads then
    // shows as still pending (no new one is planned) rather than as redeemed with the shares it burned still held.
    const made = await this.d.store.redemptions({ eventId: r.eventId });
    const balances = await this.d.vault.sotBalances(holdings.map((h) => ({ account: h.holder.address as Address, tokenId: h.tokenId })));
    if (balances.every((b) => b === 0n)) {
      if (!open) this.done.add(r.eventId);
      return;
    }
    const rows: RedemptionRecord[] = holdings.flatMap(({ holder, outcome, tokenId }, i) => {
      const shares = balances[i]!;
      const earlier = made.filter((m) => m.outcome === outcome && m.address.toLowerCase() === holder.address.toLowerCase());
      if (shares === 0n || earlier.some((m) => m.status === "pending")) return [];
      return [
        {
          key: redemptionKey(r.eventId, outcome, holder.address, earlier.length),
          eventId: r.eventId,
          accountId: holder.accountId,
          address: holder.address,
          outcome,
          tokenId: tokenId.toString(),
          shares,
          payout: outcome === r.outcome ? shares : 0n,
          status: "pending" as const,
          txHash: null,
          createdAt: now,
          updatedAt: now,
        },
      ];
    });
    if (rows.length === 0) return;
    await this.d.store.insertRedemptions(rows);
    this.d.checkpoint?.("redeem.stored", r.eventId);
  }

  /**
   * Sends the pending redemptions, a transaction per REDEEM_MAX_ITEMS, after asking the chain which keys
   * it already redeemed (a transaction of an earlier pass whose answer was lost) and setting each of the
   * others to the shares its holder holds now (a redemption the Vault refused for more shares than held,
   * or one planned before a sell's escrow took some). A key is marked redeemed only from the chain's own
   * record of it, under `confirmations` blocks.
   */
  private async redeemPending(): Promise<void> {
    const pending = await this.d.store.redemptions({ status: "pending" });
    for (let i = 0; i < pending.length; i += REDEEM_MAX_ITEMS) {
      const chunk = pending.slice(i, i + REDEEM_MAX_ITEMS);
      try {
        const left = await this.replan(await this.recordLanded(chunk));
        if (left.length === 0) continue;
        this.d.checkpoint?.("redeem.sent", left[0]!.eventId);
        const tx = await this.d.vault.redeem(
          left.map((r) => ({ key: r.key as Hex32, account: r.address as Address, tokenId: BigInt(r.tokenId), shares: r.shares, payout: r.payout })),
        );
        this.d.checkpoint?.("redeem.landed", left[0]!.eventId);
        const refused = await this.recordLanded(left);
        for (const r of refused) this.d.log.warn({ key: r.key, account_id: r.accountId, event_id: r.eventId, tx_hash: tx.txHash }, "the Vault refused a redemption; it is sent again at the next pass, for the shares held then");
        this.d.log.info({ tx_hash: tx.txHash, redeemed: left.length - refused.length }, "positions redeemed");
      } catch (err) {
        this.d.log.warn({ err }, "redeeming positions failed; the chain is asked again at the next pass");
      }
    }
  }

  /**
   * Marks the keys the chain shows redeemed under `confirmations` blocks, as the chain made them; answers those it has
   * not redeemed. One redeemed in a shallower block is neither: a reorganisation may yet remove it, the holder's shares
   * back and nothing paid, so it stays pending, is not sent, and is read again at the next pass.
   */
  private async recordLanded(rs: readonly RedemptionRecord[]): Promise<RedemptionRecord[]> {
    const left: RedemptionRecord[] = [];
    const at = new Date(this.d.clock.now()).toISOString();
    const deep = this.d.confirmations ? (await this.d.vault.blockNumber()) - BigInt(this.d.confirmations) : undefined;
    for (const r of rs) {
      const landed = await this.d.vault.redemption(r.key as Hex32);
      if (!landed) left.push(r);
      else if (deep === undefined || landed.blockNumber <= deep) await this.d.store.markRedeemed(r.key, landed, at);
    }
    return left;
  }

  /**
   * Sets redemptions the chain has not made to the shares their holders hold now; answers those with shares. One
   * whose holder holds none now is left as it is and not sent: its shares are in a sell's escrow, or burned by
   * another instance's redemption of it that landed after the chain was asked (the next pass records it).
   */
  private async replan(rs: readonly RedemptionRecord[]): Promise<RedemptionRecord[]> {
    if (rs.length === 0) return [];
    const balances = await this.d.vault.sotBalances(rs.map((r) => ({ account: r.address as Address, tokenId: BigInt(r.tokenId) })));
    const at = new Date(this.d.clock.now()).toISOString();
    const held: RedemptionRecord[] = [];
    for (const [i, r] of rs.entries()) {
      const shares = balances[i]!;
      if (shares === 0n) continue;
      const payout = r.payout === 0n ? 0n : shares;
      if (shares !== r.shares) await this.d.store.replanRedemption(r.key, shares, payout, at);
      held.push({ ...r, shares, payout });
    }
    return held;
  }
}
