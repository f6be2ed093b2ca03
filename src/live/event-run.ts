import type { WebClient } from "@slack/web-api";
import { EventBusyError, withEventLock } from "../domain/event-lock.ts";
import { emailsOf } from "../domain/people.ts";
import {
  asLiveSub,
  eventOf,
  isRefresh,
  type LiveSubscription,
  mutedOf,
  noiseOf,
} from "../domain/subscription.ts";
import type { EventRecord, OutboxItem } from "../store/index.ts";
import { type WebhookMessage, webhookMessageSchema } from "../upstream/events/schemas.ts";
import { frozenFigures, type RenderedCard, renderCard, renderMutedCard } from "./card.ts";
import { addNotice, counterText, emptyPending, isEmpty } from "./digest.ts";
import type { LiveEngine } from "./engine.ts";
import { type Action, Lane } from "./lane.ts";
import type { ChannelPosting, LiveRecord, StoredChunks } from "./live-record.ts";
import { LiveWriter } from "./live-writer.ts";
import type { PostKind } from "./publisher.ts";
import type { ScanProgress } from "./recover.ts";
import { unblock } from "./refused-notice.ts";
import { forgetPosted, nextReminderStep, reminderTopUp, wantedReminders } from "./reminders.ts";
import { checkScheduledEnd, reportDue, reportSettledAt } from "./report-post.ts";
import type { EventLive, StaffEmails } from "./state.ts";

/**
 * One event owned by this process: its live figures (applied from the outbox in order), each
 * channel's posting state, and a lane per channel. Everything it writes goes into one value per
 * event (`live:{team}:{eventId}`), rewritten per batch, not per message.
 */
export class EventRun {
  readonly live: EventLive;
  readonly channels: Record<string, ChannelPosting>;
  readonly lanes = new Map<string, Lane>();
  sub: { id: string; sub: LiveSubscription } | undefined;
  subReadAt = 0;
  leaseUntil: number;
  inflight = 0;
  dropped = false;
  /** Per channel: since when its lookup has failed for passing reasons (publisher's lookup). */
  readonly lookupFailingSince = new Map<string, number>();
  /** Where a throttled lookup stopped, per channel and kind, so it resumes there. */
  readonly lookupProgress = new Map<string, ScanProgress>();
  /** Shutting down: lanes finish their current call (and record it), then stop. */
  stopping = false;
  idleSince: number | undefined;
  /** Writes the state; its garbage goes out with the turn's outbox deletes. */
  readonly writer: LiveWriter;
  private chain: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;
  private showEmails: { value: boolean; at: number } | undefined;
  private staff: { emails: StaffEmails; event: unknown } | undefined;

  constructor(
    readonly engine: LiveEngine,
    readonly team: string,
    readonly eventId: string,
    record: LiveRecord | undefined,
    live: EventLive,
    leaseUntil: number,
    stored: StoredChunks,
  ) {
    this.live = live;
    const { lives, sessions } = engine;
    this.writer = new LiveWriter(
      { lives, sessions, store: engine.deps.store },
      team,
      eventId,
      record,
      stored,
    );
    this.channels = { ...(record?.channels ?? {}) } as Record<string, ChannelPosting>;
    this.leaseUntil = leaseUntil;
  }

  get id(): string {
    return `${this.team}:${this.eventId}`;
  }

  mayCall(): boolean {
    if (this.dropped || this.stopping) return false;
    return Date.now() < this.leaseUntil - this.engine.options.leaseMs / 4;
  }

  channel(ch: string): ChannelPosting {
    const c = this.channels[ch];
    if (c) return c;
    const fresh: ChannelPosting = { pending: emptyPending(), seq: 0 };
    this.channels[ch] = fresh;
    return fresh;
  }

  private staffEmails(sub: LiveSubscription): StaffEmails | undefined {
    if (this.staff && this.staff.event === sub.event) return this.staff.emails;
    const event = eventOf(sub);
    if (!event) return undefined;
    const emails = {
      panelists: new Set(emailsOf(event.panelists)),
      moderators: new Set(emailsOf(event.moderators)),
    };
    this.staff = { emails, event: sub.event };
    return emails;
  }

  /** Every write carries the whole state as it is when the write starts; callers await one that started after their change. */
  save(): Promise<void> {
    if (this.queued) return this.queued;
    const p = this.chain.then(async () => {
      this.queued = undefined;
      // Fenced: a run whose lease is no longer surely its own writes nothing (the new owner's
      // state would be overwritten by older state), however long its event loop stalled.
      if (!(await this.engine.stillOwns(this))) return;
      await this.writer.write(this.live, this.channels);
    });
    this.queued = p;
    this.chain = p.catch(() => undefined);
    return p;
  }

  /** Resolves when every save begun so far has finished (or failed). */
  saved(): Promise<void> {
    return this.chain;
  }

  async readSub(subscriptionId: string | undefined): Promise<void> {
    const deps = this.engine.deps;
    const id = subscriptionId ?? this.sub?.id;
    if (!id) return;
    const sub = await deps.store.subscriptions.get(id);
    this.subReadAt = Date.now();
    if (sub && sub.team === this.team && sub.eventId === this.eventId) {
      this.sub = { id, sub: asLiveSub(sub) };
    } else if (this.sub?.id === id) {
      this.sub = undefined;
    }
  }

  /** Applies a batch in order; the caller removes the items once this has resolved. */
  async ingest(items: Array<{ id: string; item: OutboxItem }>): Promise<void> {
    const ids = [...new Set(items.map((i) => i.item.subscriptionId))];
    // The newest subscription id of the batch is the one that counts for channels.
    for (const id of ids) await this.readSub(id);
    let stateChanged = false;
    for (const { item } of items) {
      const muted = mutedOf(item.message);
      if (muted) {
        // Its card says so once, with the figures of this moment, and is then left alone.
        const c = this.channel(muted.channel);
        if (c.cardTs) c.muted = { event: muted.event, figures: frozenFigures(this.live) };
      }
      const sub = this.sub?.id === item.subscriptionId ? this.sub.sub : undefined;
      if (!sub || sub.cancelled || sub.gone) continue;
      if (isRefresh(item.message)) {
        for (const ch of sub.channels) unblock(this.channel(ch));
        continue;
      }
      const parsed = webhookMessageSchema.safeParse(item.message);
      if (!parsed.success) continue;
      const msg: WebhookMessage = parsed.data;
      const before = this.live.current();
      const beforeState = before?.state;
      const beforeEnded = before?.endedAt;
      const result = this.live.apply(msg, this.staffEmails(sub));
      const now = this.live.current();
      if (msg.type === "EVENT_STATE" && now?.state !== beforeState) stateChanged = true;
      // Ended by this message (a later NOT_STARTED, or a new instance): the record says so too.
      if (before && beforeEnded === undefined && before.endedAt !== undefined) stateChanged = true;
      if (now !== before) stateChanged = true;
      if (result.notices.length === 0) continue;
      for (const ch of sub.channels) {
        const noise = noiseOf(sub, ch);
        if (noise !== "digest" && noise !== "every") continue;
        const c = this.channel(ch);
        if (c.blocked || c.threadBlocked) continue;
        for (const n of result.notices) addNotice(c.pending, n);
      }
    }
    await this.save();
    if (stateChanged) void this.mirrorFigures();
    this.wakeAll();
  }

  /**
   * The channels this run posts to: the subscription's, and any that still hold reminders
   * (muted, or the subscription gone) until they are deleted.
   */
  channelsToServe(): string[] {
    const out = new Set(this.sub?.sub.channels ?? []);
    for (const [ch, c] of Object.entries(this.channels)) {
      if (c.reminders?.length || c.reminderPosting || this.mutedCard(ch)) out.add(ch);
    }
    return [...out];
  }

  /** The card a muted channel still needs to show (not yet posted as muted), if any. */
  mutedCard(ch: string): RenderedCard | undefined {
    const c = this.channels[ch];
    if (!c?.muted || !c.cardTs || c.blocked || this.sub?.sub.channels.includes(ch))
      return undefined;
    const card = renderMutedCard(c.muted);
    return card && card.hash !== c.cardHash ? card : undefined;
  }

  /** Reminders Slack holds that nobody wants any more, or wanted ones not yet scheduled. */
  reminderDue(ch: string): boolean {
    const c = this.channel(ch);
    if (c.blocked) return false;
    this.adoptLegacyReminders(ch, c);
    if (c.reminderPosting) return true;
    const now = Date.now();
    forgetPosted(c, now);
    return nextReminderStep(c, wantedReminders(this.sub?.sub, ch, now), now) !== undefined;
  }

  /** An earlier version kept the scheduled ids on the subscription: take them over once. */
  private adoptLegacyReminders(ch: string, c: ChannelPosting): void {
    const legacy = this.sub?.sub.reminders?.[ch]?.scheduled;
    if (c.reminders || !legacy?.length) return;
    c.reminders = legacy.map((r) => ({ id: r.id, postAt: r.postAt, key: `legacy:${r.id}` }));
  }

  hasWork(): boolean {
    return this.channelsToServe().some((ch) => this.nextAction(ch, undefined) !== undefined);
  }

  wakeAll(): void {
    for (const ch of this.channelsToServe()) {
      let lane = this.lanes.get(ch);
      if (!lane) {
        lane = new Lane(this, ch);
        this.lanes.set(ch, lane);
      }
      lane.wake();
    }
  }

  /** True when nothing is running, waiting or due. */
  idle(): boolean {
    for (const lane of this.lanes.values()) if (lane.running || lane.waiting) return false;
    if (this.inflight > 0) return false;
    return !this.hasWork();
  }

  nextAction(ch: string, lastKind: PostKind | undefined): Action | undefined {
    const sub = this.sub?.sub;
    const c = this.channel(ch);
    if (c.blocked) return undefined;
    const reminder: Action | undefined = this.reminderDue(ch) ? { kind: "reminder" } : undefined;
    if (!sub?.channels.includes(ch)) return this.mutedCard(ch) ? { kind: "card" } : reminder;
    // Notified again after a mute: the card is live again.
    if (c.muted) delete c.muted;
    // Before the card: an instance the quiet rule ends now is shown ended in this very post.
    const endCheck = checkScheduledEnd(this, Date.now());
    const card = renderCard(sub, this.live, ch);
    const cardDue = card !== undefined && (!c.cardTs || c.cardHash !== card.hash);
    if (!c.cardTs) return cardDue ? { kind: "card" } : reminder;
    if (sub.cancelled || sub.gone) return cardDue ? { kind: "card" } : reminder;
    // A report share whose answer was lost is looked for once it has settled; posts go on meanwhile.
    const settled = c.reportPosting ? reportSettledAt(this, c.reportPosting) : 0;
    const report: Action | undefined = c.threadBlocked
      ? undefined
      : settled > Date.now()
        ? { kind: "wait", until: settled }
        : c.reportPosting || reportDue(this, ch) !== undefined
          ? { kind: "report" }
          : endCheck !== undefined
            ? { kind: "wait", until: endCheck }
            : undefined;
    const noise = noiseOf(sub, ch);
    let thread: Action | undefined;
    if (c.threadBlocked) thread = undefined;
    else if (noise === "counter") {
      const inst = this.live.current();
      if (inst && inst.joins > 0 && c.counterHash !== this.counterText()) {
        thread = { kind: "counter" };
      }
    } else if ((noise === "digest" || noise === "every") && !isEmpty(c.pending)) {
      const every = noise === "every" ? 0 : this.engine.options.digestEveryMs;
      const due = (c.lastThreadAt ?? 0) + every;
      thread = Date.now() >= due ? { kind: "digest" } : { kind: "wait", until: due };
    }
    // Alternate so that a card changing every second cannot starve the thread, nor the reverse;
    // reminders (hours ahead) go when neither has anything to say.
    if (cardDue && (lastKind !== "card" || !thread || thread.kind === "wait")) {
      return { kind: "card" };
    }
    if (thread && thread.kind !== "wait") return thread;
    if (cardDue) return { kind: "card" };
    if (report?.kind === "report") return report;
    // A long series: its later reminders come within Slack's horizon as days pass.
    return reminder ?? earliest(earliest(thread, report), reminderTopUp(sub, ch, Date.now()));
  }

  counterText(): string {
    const inst = this.live.current();
    return counterText({
      joins: inst?.joins ?? 0,
      leaves: inst?.leaves ?? 0,
      present: inst?.present ?? 0,
    });
  }

  async client(): Promise<WebClient> {
    return this.engine.deps.bulkClient(this.team);
  }

  async emailsShown(): Promise<boolean> {
    const now = Date.now();
    if (this.showEmails && now - this.showEmails.at < 5_000) return this.showEmails.value;
    const s = await this.engine.deps.store.settings.getOrDefault(this.team);
    this.showEmails = { value: s.privacy.showAttendeeEmails, at: now };
    return this.showEmails.value;
  }

  /**
   * Read-modify-write of the shared event record, only under the event's lock (domain/event-lock)
   * so it cannot undo a notify or mute; when the lock stays busy it is skipped: what it records is
   * informational and the next change records it again.
   */
  private async updateRecord(
    what: string,
    change: (rec: EventRecord) => EventRecord | undefined,
  ): Promise<void> {
    const deps = this.engine.deps;
    if (this.dropped) return;
    try {
      // A notify holds the lock for a moment; wait for it rather than skip the first card.
      await withEventLock(
        deps,
        this.team,
        this.eventId,
        async () => {
          const rec = await deps.store.events.get(this.team, this.eventId);
          const next = rec ? change(rec) : undefined;
          if (next) await deps.store.events.put(next);
        },
        { waitMs: 5_000 },
      );
    } catch (err) {
      if (err instanceof EventBusyError) return;
      deps.logger.warn({ err }, `live: ${what} not recorded on the event`);
    }
  }

  /** The shared event record keeps the card per channel (DESIGN.md data table). */
  async mirrorCard(ch: string, ts: string): Promise<void> {
    await this.updateRecord("card", (rec) =>
      rec.cards[ch]?.ts === ts
        ? undefined
        : { ...rec, cards: { ...rec.cards, [ch]: { ts, threadTs: ts } } },
    );
  }

  /**
   * State per instance and figures on the shared event record, on state changes and ends only:
   * the instances this run knows, each with when it ended (instance-end.ts), if it has.
   */
  private async mirrorFigures(): Promise<void> {
    const mirrored: Record<string, EventRecord["instances"][string]> = {};
    const at = Date.now();
    for (const id of this.live.order) {
      const inst = this.live.instances.get(id);
      if (!inst?.state) continue;
      mirrored[id] = {
        state: inst.state,
        present: inst.present,
        peak: inst.peak,
        unique: inst.unique,
        // The current instance is the newest: readers that sort by it find it first.
        updatedAt: id === this.live.current()?.id ? at : Math.min(at - 1, inst.lastAt),
        ...(inst.endedAt !== undefined ? { endedAt: inst.endedAt } : {}),
      };
    }
    if (Object.keys(mirrored).length === 0) return;
    await this.updateRecord("figures", (rec) => ({
      ...rec,
      instances: { ...rec.instances, ...mirrored },
    }));
  }

  /** The quiet rule ended the current instance: kept, and the shared record says so. */
  ended(): void {
    void this.save().catch(() => undefined);
    void this.mirrorFigures();
  }

  stop(): void {
    this.dropped = true;
    for (const lane of this.lanes.values()) lane.stop();
  }
}

/** The sooner of two waits (either may be absent). */
function earliest(a: Action | undefined, b: Action | undefined): Action | undefined {
  if (a?.kind !== "wait") return b ?? a;
  if (b?.kind !== "wait") return a;
  return a.until <= b.until ? a : b;
}
