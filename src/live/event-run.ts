import type { WebClient } from "@slack/web-api";
import type { Deps } from "../deps.ts";
import { emailsOf } from "../domain/people.ts";
import { asLiveSub, eventOf, type LiveSubscription, noiseOf } from "../domain/subscription.ts";
import type { Metrics } from "../metrics.ts";
import type { Repository } from "../store/index.ts";
import { frozenFigures, type RenderedCard } from "./card.ts";
import { addNotice, emptyPending } from "./digest.ts";
import type { EngineOptions } from "./engine-options.ts";
import { Lane, type LanePort } from "./lane.ts";
import type { Action, LiveModel, PostKind } from "./live-model.ts";
import type { ChannelPosting, LiveRecord, StoredChunks } from "./live-record.ts";
import { LiveWriter } from "./live-writer.ts";
import type { OutboxEntry } from "./outbox-entry.ts";
import type { ChannelPacer } from "./pacer.ts";
import {
  applyTransition,
  channelsToServe,
  counterOf,
  hasWork,
  mutedCard,
  next,
  type PlanSettings,
  transitions,
} from "./planner.ts";
import type { LookupMemory, PostPort } from "./post-once.ts";
import { type Publishing, publish } from "./publisher.ts";
import { type MirrorPort, mirrorCard } from "./record-mirror.ts";
import { ItemError } from "./refusals.ts";
import { blockPosts, type RefusalPort, unblock } from "./refused-notice.ts";
import type { EventLive, StaffEmails } from "./state.ts";
import { type Calls, untilOver } from "./under-way.ts";

/** What a run needs of the engine that holds it (engine.ts): never a way back to the engine. */
export interface RunHost {
  readonly deps: Pick<Deps, "store" | "logger" | "bulkClient"> & {
    readonly metrics: Pick<Metrics, "slackCalls">;
  };
  readonly options: EngineOptions;
  readonly lives: Repository<LiveRecord>;
  readonly sessions: Repository<string>;
  readonly pacer: ChannelPacer;
  /** Whether the run may still write (its lease, extended when short): engine.ts. */
  stillOwns(run: EventRun): Promise<boolean>;
}

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
  /** What lookups after a lost answer remember between turns (post-once.ts). */
  readonly lookups: LookupMemory = { progress: new Map(), failingSince: new Map() };
  /** What posts are handed (post-once.ts): save, may-call, lookups, a logger; never the run. */
  readonly port: PostPort;
  /** Shutting down: lanes finish their current call (and record it), then stop. */
  stopping = false;
  idleSince: number | undefined;
  /** Writes the state; its garbage goes out with the turn's outbox deletes. */
  readonly writer: LiveWriter;
  private chain: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;
  private showEmails: { value: boolean; at: number } | undefined;
  private staff: { emails: StaffEmails; event: unknown } | undefined;
  /** Per channel, a call of a run this one replaced, until it is over (Lane's `after`). */
  private readonly after: Map<string, Promise<number>>;

  constructor(
    private readonly host: RunHost,
    readonly team: string,
    readonly eventId: string,
    record: LiveRecord | undefined,
    live: EventLive,
    leaseUntil: number,
    stored: StoredChunks,
    /** Per channel, a Slack call still under way from a run this one replaces (under-way.ts). */
    after?: Calls,
  ) {
    this.live = live;
    this.after = untilOver(after);
    const { lives, sessions } = host;
    this.writer = new LiveWriter(
      { lives, sessions, store: host.deps.store },
      team,
      eventId,
      record,
      stored,
    );
    this.channels = { ...(record?.channels ?? {}) } as Record<string, ChannelPosting>;
    this.leaseUntil = leaseUntil;
    this.port = {
      eventId,
      save: () => this.save(),
      mayCall: () => this.mayCall(),
      lookups: this.lookups,
      logger: host.deps.logger,
    };
  }

  /** What a lane is handed (lane.ts): may-call, the plan, a post, a refusal; never the run. */
  private lanePort(): LanePort {
    return {
      team: this.team,
      stopped: () => this.dropped || this.stopping,
      mayCall: () => this.mayCall(),
      plan: (ch, lastKind) => {
        const now = Date.now();
        // What time made due (an instance's scheduled end) is a step of its own, taken first.
        this.advance(now);
        return this.nextAction(ch, lastKind, now);
      },
      post: async (ch, kind) => {
        this.inflight++;
        try {
          await publish(this.publishing, ch, kind);
        } finally {
          this.inflight--;
        }
      },
      refused: (ch, error, part) => blockPosts(this.refusals, ch, error, part),
      pacer: this.host.pacer,
      logger: this.host.deps.logger,
      metrics: this.host.deps.metrics,
    };
  }

  /** What a post reads and calls (publisher.ts). */
  private get publishing(): Publishing {
    return {
      port: this.port,
      team: this.team,
      model: this.model,
      channel: (ch) => this.channel(ch),
      client: () => this.client(),
      emailsShown: () => this.emailsShown(),
      mirrorCard: (ch, ts) => this.mirrorCard(ch, ts),
      shareSettleMs: this.host.options.shareSettleMs,
    };
  }

  /** What a refusal's bookkeeping needs (refused-notice.ts). */
  private get refusals(): RefusalPort {
    return {
      team: this.team,
      eventId: this.eventId,
      sub: this.sub?.sub,
      channel: (ch) => this.channel(ch),
      save: () => this.save(),
      client: () => this.client(),
      store: this.host.deps.store,
      logger: this.host.deps.logger,
    };
  }

  get id(): string {
    return `${this.team}:${this.eventId}`;
  }

  mayCall(): boolean {
    if (this.dropped || this.stopping) return false;
    return Date.now() < this.leaseUntil - this.host.options.leaseMs / 4;
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
      if (!(await this.host.stillOwns(this))) return;
      // Dropped while the lease was being extended (a model that threw meanwhile): not written.
      if (this.dropped) return;
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
    const deps = this.host.deps;
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

  /**
   * Applies a batch in order, leaving out the items `skip` names; the caller removes the items
   * once this has resolved. The model throwing on an item stops the run at once (its model is
   * half-changed) and throws an ItemError naming the item, before any save (refusals.ts).
   */
  async ingest(items: readonly OutboxEntry[], skip?: { has(id: string): boolean }): Promise<void> {
    const ids = [...new Set(items.map((i) => i.subscriptionId))];
    // The newest subscription id of the batch is the one that counts for channels.
    for (const id of ids) await this.readSub(id);
    // Nothing below touches the store: whatever throws, threw on `at`.
    let at: OutboxEntry | undefined;
    try {
      for (const item of items) {
        if (skip?.has(item.id)) continue;
        at = item;
        this.take(item);
      }
    } catch (err) {
      // Stopped before anything else runs (a lane, a save): the half-changed model is never
      // planned from or written (save checks again once its lease check is back).
      this.stop();
      throw at ? new ItemError(at, err) : err;
    }
    await this.save();
    this.wakeAll();
  }

  /** One item applied to the model, its notices queued for the channels' digests. */
  private take(item: OutboxEntry): void {
    if (item.kind === "refresh" && item.muted) {
      // Its card says so once, with the figures of this moment, and is then left alone.
      const c = this.channel(item.muted.channel);
      if (c.cardTs) c.muted = { event: item.muted.event, figures: frozenFigures(this.live) };
    }
    const sub = this.sub?.id === item.subscriptionId ? this.sub.sub : undefined;
    if (!sub || sub.cancelled || sub.gone) return;
    if (item.kind === "refresh") {
      for (const ch of sub.channels) unblock(this.channel(ch));
      return;
    }
    if (item.kind !== "webhook") return;
    const result = this.live.apply(item.message, this.staffEmails(sub));
    if (result.notices.length === 0) return;
    for (const ch of sub.channels) {
      const noise = noiseOf(sub, ch);
      if (noise !== "digest" && noise !== "every") continue;
      const c = this.channel(ch);
      if (c.blocked || c.threadBlocked) continue;
      for (const n of result.notices) addNotice(c.pending, n);
    }
  }

  /** What the planner reads (planner.ts): the model this run owns. */
  private get model(): LiveModel {
    return { sub: this.sub?.sub, live: this.live, channels: this.channels };
  }

  private get settings(): PlanSettings {
    const { digestEveryMs, quietMs, shareSettleMs } = this.host.options;
    return { digestEveryMs, quietMs, shareSettleMs };
  }

  /**
   * The time-driven step (planner.ts transitions): an instance ending at its scheduled end, a
   * channel notified again after a mute, reminders taken over or posted by Slack. Taken by the
   * lanes before they plan and by housekeeping before it asks whether the run is idle.
   */
  advance(now = Date.now()): void {
    let ended = false;
    for (const t of transitions(this.model, now, this.settings)) {
      applyTransition(this.model, t, (ch) => this.channel(ch));
      if (t.kind === "end-instance") ended = true;
    }
    if (ended) this.ended();
  }

  /** The channels this run posts to (planner.ts). */
  channelsToServe(): string[] {
    return channelsToServe(this.model);
  }

  /** The card a muted channel still needs to show (not yet posted as muted), if any. */
  mutedCard(ch: string): RenderedCard | undefined {
    return mutedCard(this.model, ch);
  }

  hasWork(now = Date.now()): boolean {
    return hasWork(this.model, now, this.settings);
  }

  wakeAll(): void {
    for (const ch of this.channelsToServe()) {
      let lane = this.lanes.get(ch);
      if (!lane) {
        lane = new Lane(this.lanePort(), ch, this.after.get(ch));
        this.lanes.set(ch, lane);
      }
      lane.wake();
    }
  }

  /**
   * Per channel, what a run replacing this one waits for before calling Slack there: a lane's
   * loop under way (its call, and its record; a lane waiting on its `after` is running), or a
   * call this run was itself told to wait for that has not settled yet, or whose pause is not
   * over (its lane not started), or a lane's pause not over. Each resolves to when the channel
   * may be called again (Lane.settled).
   */
  callsUnderWay(): Map<string, Promise<number>> {
    const out = new Map(this.after);
    const now = Date.now();
    for (const [ch, lane] of this.lanes) {
      if (lane.running) out.set(ch, lane.settled());
      // Stopped in its pause (a lost answer's): the ingest that threw stopped it, which wakes
      // the sleep, so it may have left its loop before this is asked. The pause still holds.
      else if (lane.nextAt > now) out.set(ch, Promise.resolve(lane.nextAt));
    }
    return out;
  }

  /** True when nothing is running, waiting or due (a question: it changes nothing). */
  idle(now = Date.now()): boolean {
    for (const lane of this.lanes.values()) if (lane.running || lane.waiting) return false;
    if (this.inflight > 0) return false;
    return !this.hasWork(now);
  }

  /** What channel `ch` needs next (planner.ts next); `advance` first for what time made due. */
  nextAction(ch: string, lastKind: PostKind | undefined, now = Date.now()): Action | undefined {
    return next(this.model, ch, now, this.settings, lastKind);
  }

  counterText(): string {
    return counterOf(this.live);
  }

  async client(): Promise<WebClient> {
    return this.host.deps.bulkClient(this.team);
  }

  async emailsShown(): Promise<boolean> {
    const now = Date.now();
    if (this.showEmails && now - this.showEmails.at < 5_000) return this.showEmails.value;
    const s = await this.host.deps.store.settings.getOrDefault(this.team);
    this.showEmails = { value: s.privacy.showAttendeeEmails, at: now };
    return this.showEmails.value;
  }

  /** The shared event record keeps the card per channel (README: The store; store/records.ts). */
  mirrorCard(ch: string, ts: string): Promise<void> {
    return mirrorCard(this.mirror, ch, ts);
  }

  private get mirror(): MirrorPort {
    return { deps: this.host.deps, team: this.team, eventId: this.eventId, dropped: this.dropped };
  }

  /**
   * The quiet rule ended the current instance: kept. Readers learn it from the live record
   * (LivePort.figures), not from the event record.
   */
  ended(): void {
    void this.save().catch(() => undefined);
  }

  stop(): void {
    this.dropped = true;
    for (const lane of this.lanes.values()) lane.stop();
  }
}
