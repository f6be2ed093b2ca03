import type { WebClient } from "@slack/web-api";
import type { Deps } from "../deps.ts";
import { emailsOf } from "../slack/organizer/people.ts";
import type { EventRecord, OutboxItem, Repository } from "../store/index.ts";
import { type WebhookMessage, webhookMessageSchema } from "../upstream/events/schemas.ts";
import { renderCard } from "./card.ts";
import {
  addNotice,
  counterText,
  digestText,
  emptyPending,
  isEmpty,
  type Pending,
  subtract,
} from "./digest.ts";
import { EventBusyError, withEventLock } from "./lock.ts";
import {
  activeRepo,
  asLiveSub,
  type ChannelPosting,
  eventOf,
  type LiveRecord,
  type LiveSubscription,
  liveRepo,
  noiseOf,
} from "./records.ts";
import {
  cardMetadata,
  counterMetadata,
  digestMetadata,
  findCard,
  findCounter,
  findDigest,
} from "./recover.ts";
import { EventLive, type StaffEmails } from "./state.ts";

/**
 * The outbox drainer and poster.
 *
 * - The webhook route stores each message (outbox) and answers; nothing else on the hot path.
 * - Each event has one owner at a time (a claimOnce lease on Redis and Postgres, where several
 *   processes share the store; SQLite and memory stores belong to one process). The owner applies
 *   the event's outbox items in order to its in-memory figures, writes the event's live record
 *   (one value per batch, not per message), and only then removes the items. A crash before the
 *   removal replays them, and replaying is harmless (state.ts).
 * - Per channel, a lane makes at most one Slack call per `paceMs` with the bulk client, which
 *   never retries: a 429 sets the lane's next slot to Retry-After and the same work is tried
 *   again, folded with whatever arrived meanwhile. Card updates are coalesced (posted only when
 *   the content changed), attendee notices folded into the next digest. Interactive calls use
 *   Bolt's own client and never wait here.
 * - An event with unposted work carries a `live-active` marker; at start (and every few
 *   seconds) markers whose owner is gone are picked up, so nothing acknowledged is lost.
 */

export interface LiveWorkerOptions {
  /**
   * How often the outbox is read when nobody nudges. Default 200 ms; each read that finds
   * nothing doubles the wait, up to `maxPollMs`, and anything found (or a nudge) brings it back.
   */
  pollMs?: number;
  /**
   * The longest wait between reads of an empty outbox. Default 2,000 ms. Other instances'
   * messages and a restart's leftovers are found by polling; on Redis each read is a SCAN of the
   * keyspace, which an idle fleet should not repeat five times a second.
   */
  maxPollMs?: number;
  /** An owned event with nothing to do is let go after this long. Default 10 s. */
  idleReleaseMs?: number;
  /** Shortest time between two outbox turns. Default 100 ms. */
  minTurnMs?: number;
  /** Slack calls per channel: one per this. Default 1000 ms. */
  paceMs?: number;
  /** Thread digests per channel at most one per this. Default 3000 ms. */
  digestEveryMs?: number;
  /** Owner lease (shared stores). Default 10 s. */
  leaseMs?: number;
  /** Outbox items read per turn. Default 1000. */
  batch?: number;
}

interface Options {
  pollMs: number;
  maxPollMs: number;
  minTurnMs: number;
  idleReleaseMs: number;
  paceMs: number;
  digestEveryMs: number;
  leaseMs: number;
  batch: number;
}

type Action =
  | { kind: "card" }
  | { kind: "counter" }
  | { kind: "digest" }
  | { kind: "wait"; until: number };

interface SlackLikeError {
  code?: string;
  retryAfter?: number;
  data?: { error?: string };
}

function slackError(err: unknown): SlackLikeError {
  return err && typeof err === "object" ? (err as SlackLikeError) : {};
}

/**
 * Awaits a post; when Slack answered with a refusal (an error or a 429) the post surely did not
 * go out, so its in-flight mark is dropped: no lookup is needed before the next try. A lost
 * answer (network, timeout) keeps the mark.
 */
async function unlessRefused<T>(call: Promise<T>, notPosted: () => void): Promise<T> {
  try {
    return await call;
  } catch (err) {
    const code = slackError(err).code;
    if (code === "slack_webapi_rate_limited_error" || code === "slack_webapi_platform_error") {
      notPosted();
    }
    throw err;
  }
}

/** How often a lookup may fail for a passing reason before the post goes out anyway. */
const LOOKUP_TRIES = 3;

/**
 * The event's lease ran out (or is about to) while a post was being prepared: the post is left
 * to whoever owns the event next, which finds the in-flight mark and looks first.
 */
class NotOwner extends Error {
  constructor() {
    super("live: this process no longer owns the event");
  }
}

const REFRESH = "refresh";

export function isRefresh(message: unknown): boolean {
  return (
    typeof message === "object" &&
    message !== null &&
    (message as { kind?: unknown }).kind === REFRESH
  );
}

export function refreshMessage(): { kind: string } {
  return { kind: REFRESH };
}

class Lane {
  nextAt = 0;
  running = false;
  lastKind: Action["kind"] | undefined;
  private timer: NodeJS.Timeout | undefined;
  private sleeper: { timer: NodeJS.Timeout; resolve: () => void } | undefined;

  constructor(
    private readonly run: EventRun,
    readonly channel: string,
  ) {}

  wake(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.running || this.run.dropped) return;
    this.running = true;
    this.done = this.loop()
      .catch((err: unknown) => this.run.worker.deps.logger.error({ err }, "live: lane failed"))
      .finally(() => {
        this.running = false;
      });
  }

  /** Resolves when the lane's current loop (a Slack call and its record) has finished. */
  done: Promise<void> = Promise.resolve();

  /** Wakes later (a digest not yet due); a wake before then replaces it. */
  wakeAt(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.wake();
      },
      Math.max(0, at - Date.now()),
    );
    this.timer.unref();
  }

  get waiting(): boolean {
    return this.timer !== undefined;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.sleeper) {
      clearTimeout(this.sleeper.timer);
      this.sleeper.resolve();
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.sleeper = undefined;
        resolve();
      }, ms);
      timer.unref();
      this.sleeper = { timer, resolve };
    });
  }

  private async loop(): Promise<void> {
    const run = this.run;
    while (!run.dropped && !run.stopping) {
      const wait = this.nextAt - Date.now();
      if (wait > 0) {
        await this.sleep(wait);
        continue;
      }
      const action = run.nextAction(this.channel, this.lastKind);
      if (!action) return;
      if (action.kind === "wait") {
        this.wakeAt(action.until);
        return;
      }
      // Near the end of the lease the tick renews it first; it wakes the lane again after.
      if (!run.mayCall()) return;
      run.inflight++;
      try {
        await run.perform(this.channel, action.kind);
        this.lastKind = action.kind;
        this.nextAt = Date.now() + run.worker.options.paceMs;
        run.worker.deps.metrics.slackCalls.inc({ method: `bulk.${action.kind}`, outcome: "ok" });
      } catch (err) {
        if (err instanceof NotOwner) return;
        const e = slackError(err);
        if (e.code === "slack_webapi_rate_limited_error") {
          const after = Math.max(1, Number(e.retryAfter) || 1) * 1000;
          this.nextAt = Date.now() + after;
          run.worker.deps.metrics.slackCalls.inc({ method: "bulk", outcome: "ratelimited" });
          run.worker.deps.logger.info(
            { channel: this.channel, retryAfterMs: after },
            "live: Slack asked to slow down; retrying after Retry-After",
          );
        } else if (e.code === "slack_webapi_platform_error" && e.data?.error) {
          // Slack said no for a reason retrying will not change: stop posting to this channel
          // until someone notifies it again.
          await run.block(this.channel, e.data.error);
        } else {
          this.nextAt = Date.now() + 2_000;
          run.worker.deps.logger.warn(
            { err, channel: this.channel, action: action.kind },
            "live: Slack call failed; will retry",
          );
        }
      } finally {
        run.inflight--;
      }
    }
  }
}

/** One owned event: its figures, its channels' posting state, its lanes. */
export class EventRun {
  readonly live: EventLive;
  readonly channels: Record<string, ChannelPosting>;
  readonly lanes = new Map<string, Lane>();
  sub: { id: string; sub: LiveSubscription } | undefined;
  subReadAt = 0;
  leaseUntil: number;
  inflight = 0;
  dropped = false;
  /** Failed lookups per channel since the last one that settled (see lookup). */
  private readonly lookupTries = new Map<string, number>();
  /** Shutting down: lanes finish their current call (and record it), then stop. */
  stopping = false;
  idleSince: number | undefined;
  private chain: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;
  private showEmails: { value: boolean; at: number } | undefined;
  private staff: { emails: StaffEmails; event: unknown } | undefined;

  constructor(
    readonly worker: LiveWorker,
    readonly team: string,
    readonly eventId: string,
    record: LiveRecord | undefined,
    leaseUntil: number,
  ) {
    this.live = EventLive.from(record?.instances);
    this.channels = { ...(record?.channels ?? {}) } as Record<string, ChannelPosting>;
    this.leaseUntil = leaseUntil;
  }

  get id(): string {
    return `${this.team}:${this.eventId}`;
  }

  mayCall(): boolean {
    if (this.dropped || this.stopping) return false;
    return Date.now() < this.leaseUntil - this.worker.options.leaseMs / 4;
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
      if (this.dropped) return;
      const record: LiveRecord = {
        team: this.team,
        eventId: this.eventId,
        instances: this.live.toJSON(),
        channels: this.channels,
        updatedAt: Date.now(),
      };
      await this.worker.lives.put(this.id, record);
    });
    this.queued = p;
    this.chain = p.catch(() => undefined);
    return p;
  }

  async readSub(subscriptionId: string | undefined): Promise<void> {
    const deps = this.worker.deps;
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
      const sub = this.sub?.id === item.subscriptionId ? this.sub.sub : undefined;
      if (!sub || sub.cancelled) continue;
      if (isRefresh(item.message)) {
        for (const ch of sub.channels) delete this.channel(ch).blocked;
        continue;
      }
      const parsed = webhookMessageSchema.safeParse(item.message);
      if (!parsed.success) continue;
      const msg: WebhookMessage = parsed.data;
      const before = this.live.current()?.state;
      const result = this.live.apply(msg, this.staffEmails(sub));
      if (msg.type === "EVENT_STATE" && this.live.current()?.state !== before) stateChanged = true;
      if (result.notices.length === 0) continue;
      for (const ch of sub.channels) {
        const noise = noiseOf(sub, ch);
        if (noise !== "digest" && noise !== "every") continue;
        const c = this.channel(ch);
        if (c.blocked) continue;
        for (const n of result.notices) addNotice(c.pending, n);
      }
    }
    await this.save();
    if (stateChanged) void this.mirrorFigures();
    this.wakeAll();
  }

  wakeAll(): void {
    const sub = this.sub?.sub;
    if (!sub) return;
    for (const ch of sub.channels) {
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
    const sub = this.sub?.sub;
    if (!sub) return true;
    for (const ch of sub.channels) if (this.nextAction(ch, undefined)) return false;
    return true;
  }

  nextAction(ch: string, lastKind: Action["kind"] | undefined): Action | undefined {
    const sub = this.sub?.sub;
    if (!sub?.channels.includes(ch)) return undefined;
    const c = this.channel(ch);
    if (c.blocked) return undefined;
    const card = renderCard(sub, this.live, ch);
    const cardDue = card !== undefined && (!c.cardTs || c.cardHash !== card.hash);
    if (!c.cardTs) return cardDue ? { kind: "card" } : undefined;
    if (sub.cancelled) return cardDue ? { kind: "card" } : undefined;
    const noise = noiseOf(sub, ch);
    let thread: Action | undefined;
    if (noise === "counter") {
      const inst = this.live.current();
      if (inst && inst.joins > 0 && c.counterHash !== this.counterText()) {
        thread = { kind: "counter" };
      }
    } else if ((noise === "digest" || noise === "every") && !isEmpty(c.pending)) {
      const every = noise === "every" ? 0 : this.worker.options.digestEveryMs;
      const due = (c.lastThreadAt ?? 0) + every;
      thread = Date.now() >= due ? { kind: "digest" } : { kind: "wait", until: due };
    }
    // Alternate so that a card changing every second cannot starve the thread, nor the reverse.
    if (cardDue && (lastKind !== "card" || !thread || thread.kind === "wait")) {
      return { kind: "card" };
    }
    return thread ?? (cardDue ? { kind: "card" } : undefined);
  }

  private counterText(): string {
    const inst = this.live.current();
    return counterText({
      joins: inst?.joins ?? 0,
      leaves: inst?.leaves ?? 0,
      present: inst?.present ?? 0,
    });
  }

  private async client(): Promise<WebClient> {
    return this.worker.deps.bulkClient(this.team);
  }

  private async emailsShown(): Promise<boolean> {
    const now = Date.now();
    if (this.showEmails && now - this.showEmails.at < 5_000) return this.showEmails.value;
    const s = await this.worker.deps.store.settings.getOrDefault(this.team);
    this.showEmails = { value: s.privacy.showAttendeeEmails, at: now };
    return this.showEmails.value;
  }

  async perform(ch: string, kind: "card" | "counter" | "digest"): Promise<void> {
    const sub = this.sub?.sub;
    if (!sub) return;
    const c = this.channel(ch);
    const client = await this.client();
    if (kind === "card") {
      const card = renderCard(sub, this.live, ch);
      if (!card) return;
      if (!c.cardTs) {
        const since = c.cardPosting;
        const found =
          since === undefined
            ? undefined
            : await this.lookup(ch, "card", () => findCard(client, ch, this.eventId, since));
        if (found) {
          // The previous post went out; its answer was lost (crash, timeout): adopt it.
          c.cardTs = found.ts;
          if (found.hash) c.cardHash = found.hash;
          else delete c.cardHash;
        } else {
          c.cardPosting = Date.now();
          await this.markSaved();
          const res = await unlessRefused(
            client.chat.postMessage({
              channel: ch,
              text: card.text,
              blocks: card.blocks,
              unfurl_links: false,
              metadata: cardMetadata(this.eventId, card.hash),
            }),
            () => delete c.cardPosting,
          );
          if (!res.ts) throw new Error("chat.postMessage answered without a ts");
          c.cardTs = res.ts;
          c.cardHash = card.hash;
        }
        delete c.cardPosting;
        await this.save();
        void this.mirrorCard(ch, c.cardTs);
        return;
      }
      try {
        await client.chat.update({
          channel: ch,
          ts: c.cardTs,
          text: card.text,
          blocks: card.blocks,
        });
      } catch (err) {
        const code = slackError(err).data?.error;
        if (code === "message_not_found" || code === "cant_update_message") {
          // Someone deleted the card: post a new one rather than keep failing.
          delete c.cardTs;
          delete c.counterTs;
          delete c.counterPosting;
          await this.save();
          return;
        }
        throw err;
      }
      c.cardHash = card.hash;
      await this.save();
      return;
    }
    if (!c.cardTs) return;
    const cardTs = c.cardTs;
    if (kind === "counter") {
      const text = this.counterText();
      if (c.counterTs) {
        await client.chat.update({ channel: ch, ts: c.counterTs, text });
        c.counterHash = text;
        await this.save();
        return;
      }
      const since = c.counterPosting;
      const found =
        since === undefined
          ? undefined
          : await this.lookup(ch, "counter", () =>
              findCounter(client, ch, cardTs, this.eventId, since),
            );
      if (found) {
        // Posted before the answer was lost: adopt it; the next turn brings its text up to date.
        c.counterTs = found;
        delete c.counterHash;
      } else {
        c.counterPosting = Date.now();
        await this.markSaved();
        const res = await unlessRefused(
          client.chat.postMessage({
            channel: ch,
            thread_ts: cardTs,
            text,
            metadata: counterMetadata(this.eventId),
          }),
          () => delete c.counterPosting,
        );
        if (res.ts) c.counterTs = res.ts;
        c.counterHash = text;
      }
      delete c.counterPosting;
      await this.save();
      return;
    }
    const inflight = c.digestPosting;
    if (inflight) {
      const found = await this.lookup(ch, "digest", () =>
        findDigest(client, ch, cardTs, this.eventId, inflight.seq, inflight.at),
      );
      if (found) {
        // Posted before the answer was lost: take out what it took, post nothing.
        this.digested(c, inflight.taken);
        await this.save();
        return;
      }
    }
    // Not posted (or not found): the notices it would have taken are still pending; the same
    // seq goes out with everything pending now.
    const taken: Pending = structuredClone(c.pending);
    const text = digestText(
      noiseOf(sub, ch),
      taken,
      { present: this.live.current()?.present ?? 0 },
      await this.emailsShown(),
    );
    const seq = inflight?.seq ?? c.seq + 1;
    c.seq = seq;
    c.digestPosting = { seq, taken, at: Date.now() };
    await this.markSaved();
    await unlessRefused(
      client.chat.postMessage({
        channel: ch,
        thread_ts: cardTs,
        text,
        metadata: digestMetadata(this.eventId, seq, taken),
      }),
      () => delete c.digestPosting,
    );
    this.digested(c, taken);
    await this.save();
  }

  private digested(c: ChannelPosting, taken: Pending): void {
    c.pending = subtract(c.pending, taken);
    delete c.digestPosting;
    c.lastThreadAt = Date.now();
  }

  /**
   * Stores an in-flight mark before its post. A run whose lease lapsed stores nothing (save()
   * leaves the record to the new owner), so it must not post either.
   */
  private async markSaved(): Promise<void> {
    await this.save();
    if (!this.mayCall()) throw new NotOwner();
  }

  /**
   * Looks in Slack for a post whose outcome was not recorded. Slack refusing (a missing scope,
   * the bot not in the channel) is logged and read as "not there": a duplicate is better than a
   * channel that never gets its posts. A passing failure (429, 5xx, a lost answer) is thrown so
   * the lane asks again later, LOOKUP_TRIES times at most.
   */
  private async lookup<T>(
    ch: string,
    what: "card" | "counter" | "digest",
    find: () => Promise<T | undefined>,
  ): Promise<T | undefined> {
    let found: T | undefined;
    try {
      found = await find();
    } catch (err) {
      const e = slackError(err);
      const refused = e.code === "slack_webapi_platform_error";
      const tries = (this.lookupTries.get(ch) ?? 0) + 1;
      this.lookupTries.set(ch, tries);
      // Slow down, a lost answer, a 5xx: ask again later (the lane waits), a few times at most,
      // so a channel never stalls behind a lookup that keeps failing.
      if (!refused && tries < LOOKUP_TRIES) throw err;
      this.worker.deps.logger.warn(
        {
          channel: ch,
          eventId: this.eventId,
          what,
          code: e.code,
          tries,
          error: e.data?.error ?? (err instanceof Error ? err.message : String(err)),
        },
        "live: could not look in Slack for a post that may have gone out; posting it again",
      );
    }
    this.lookupTries.delete(ch);
    // The lookup may have taken a while: post only while this process still owns the event.
    if (!this.mayCall()) throw new NotOwner();
    return found;
  }

  /**
   * Read-modify-write of the shared event record, only under the event's lifecycle lock (see
   * lifecycle.ts) so it cannot undo a notify or mute; when the lock stays busy it is skipped:
   * what it records is informational and the next change records it again.
   */
  private async updateRecord(
    what: string,
    change: (rec: EventRecord) => EventRecord | undefined,
  ): Promise<void> {
    const deps = this.worker.deps;
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
  private async mirrorCard(ch: string, ts: string): Promise<void> {
    await this.updateRecord("card", (rec) =>
      rec.cards[ch]?.ts === ts
        ? undefined
        : { ...rec, cards: { ...rec.cards, [ch]: { ts, threadTs: ts } } },
    );
  }

  /** State per instance and figures on the shared event record, on state changes only. */
  private async mirrorFigures(): Promise<void> {
    const inst = this.live.current();
    const state = inst?.state;
    if (!inst || !state) return;
    await this.updateRecord("figures", (rec) => ({
      ...rec,
      instances: {
        ...rec.instances,
        [inst.id]: {
          state,
          present: inst.present,
          peak: inst.peak,
          unique: inst.unique,
          updatedAt: Date.now(),
        },
      },
    }));
  }

  async block(ch: string, error: string): Promise<void> {
    const c = this.channel(ch);
    c.blocked = error;
    c.pending = emptyPending();
    delete c.digestPosting;
    delete c.counterPosting;
    this.worker.deps.logger.warn(
      { channel: ch, error, eventId: this.eventId },
      "live: Slack refuses posts to this channel; its notices stop until it is notified again",
    );
    await this.save();
  }

  stop(): void {
    this.dropped = true;
    for (const lane of this.lanes.values()) lane.stop();
  }
}

export class LiveWorker {
  readonly options: Options;
  readonly lives: Repository<LiveRecord>;
  private readonly active: Repository<{ since: number }>;
  readonly runs = new Map<string, EventRun>();
  private readonly leases: boolean;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private lastMarkerScan = 0;
  private lastTurn = 0;
  private dueAt = 0;
  /** Outbox reads in a row that found nothing (see pollMs). */
  private emptyReads = 0;
  private readonly marked = new Set<string>();

  constructor(
    readonly deps: Deps,
    options: LiveWorkerOptions = {},
  ) {
    this.options = {
      pollMs: options.pollMs ?? 200,
      maxPollMs: Math.max(options.maxPollMs ?? 2_000, options.pollMs ?? 200),
      minTurnMs: options.minTurnMs ?? 100,
      idleReleaseMs: options.idleReleaseMs ?? 10_000,
      paceMs: options.paceMs ?? 1_000,
      digestEveryMs: options.digestEveryMs ?? 3_000,
      leaseMs: options.leaseMs ?? 10_000,
      batch: options.batch ?? 1_000,
    };
    this.lives = deps.store.repository(liveRepo);
    this.active = deps.store.repository(activeRepo);
    // SQLite and memory stores serve one process; Redis and Postgres may serve several.
    this.leases = deps.store.kind === "redis" || deps.store.kind === "postgres";
  }

  start(): void {
    this.schedule(0);
  }

  /**
   * Something was stored: look soon rather than at the next poll. Turns are at least
   * `minTurnMs` apart, so a burst is taken in batches: each turn rewrites the event's record
   * once, whatever the number of messages in it.
   */
  nudge(): void {
    if (this.stopped) return;
    this.emptyReads = 0;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.schedule(Math.max(0, this.lastTurn + this.options.minTurnMs - Date.now()));
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    const due = Date.now() + ms;
    // Thousands of nudges a second: keep an earlier timer rather than re-arm one per message.
    if (this.timer && this.dueAt <= due) return;
    if (this.timer) clearTimeout(this.timer);
    this.dueAt = due;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.lastTurn = Date.now();
      this.ticking = this.tick()
        .catch((err: unknown) => this.deps.logger.error({ err }, "live: outbox turn failed"))
        .finally(() => {
          this.ticking = undefined;
          const soon = this.again;
          this.again = false;
          this.schedule(soon ? this.options.minTurnMs : this.pollDelay());
        });
    }, ms);
    this.timer.unref();
  }

  private pollDelay(): number {
    const { pollMs, maxPollMs } = this.options;
    return Math.min(maxPollMs, pollMs * 2 ** Math.min(this.emptyReads, 16));
  }

  /** Resolves when the current turn (if any) has finished; for tests and shutdown. */
  async settled(): Promise<void> {
    await this.ticking;
  }

  private leaseKey(team: string, eventId: string): string {
    return `live-lease:${team}:${eventId}`;
  }

  private async acquire(team: string, eventId: string): Promise<EventRun | undefined> {
    const key = `${team}:${eventId}`;
    const existing = this.runs.get(key);
    if (existing) return existing;
    let until = Number.POSITIVE_INFINITY;
    if (this.leases) {
      const ok = await this.deps.store.claimOnce(
        this.leaseKey(team, eventId),
        this.options.leaseMs,
      );
      if (!ok) return undefined;
      until = Date.now() + this.options.leaseMs;
    }
    const record = await this.lives.get(key);
    const run = new EventRun(this, team, eventId, record, until);
    this.runs.set(key, run);
    return run;
  }

  private async release(run: EventRun): Promise<void> {
    run.stop();
    this.runs.delete(run.id);
    if (this.marked.delete(run.id)) await this.active.delete(run.id);
    if (this.leases) await this.deps.store.delete(this.leaseKey(run.team, run.eventId));
  }

  private async mark(run: EventRun): Promise<void> {
    if (this.marked.has(run.id)) return;
    await this.active.put(run.id, { since: Date.now() });
    this.marked.add(run.id);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const rows = await this.deps.store.outbox.list(this.options.batch);
    this.deps.metrics.queueDepth.set({ queue: "outbox" }, rows.length);
    this.emptyReads = rows.length === 0 ? this.emptyReads + 1 : 0;
    const groups = new Map<string, Array<{ id: string; item: OutboxItem }>>();
    for (const row of rows) {
      const eventId =
        row.item.eventId ??
        ((row.item.message as { eventId?: unknown } | undefined)?.eventId as string | undefined);
      if (!eventId) {
        await this.deps.store.outbox.remove(row.id);
        continue;
      }
      const key = `${row.item.team}:${eventId}`;
      let g = groups.get(key);
      if (!g) {
        g = [];
        groups.set(key, g);
      }
      g.push(row);
    }
    for (const [key, items] of groups) {
      const first = items[0];
      if (!first) continue;
      const eventId = key.slice(first.item.team.length + 1);
      const run = await this.acquire(first.item.team, eventId);
      if (!run) continue;
      await this.mark(run);
      await run.ingest(items);
      await this.deps.store.deleteMany(items.map((i) => `outbox:${i.id}`));
    }
    if (rows.length >= this.options.batch) this.again = true;
    await this.markers();
    await this.housekeep();
  }

  /** Events left with unposted work by a process that is gone (or by this one before a restart). */
  private async markers(): Promise<void> {
    const now = Date.now();
    if (now - this.lastMarkerScan < 2_000) return;
    this.lastMarkerScan = now;
    for (const id of await this.active.ids()) {
      if (this.runs.has(id)) continue;
      const i = id.indexOf(":");
      if (i <= 0) continue;
      const run = await this.acquire(id.slice(0, i), id.slice(i + 1));
      if (!run) continue;
      this.marked.add(run.id);
      await run.readSub(run.sub?.id ?? (await this.subscriptionOf(run)));
      run.wakeAll();
    }
  }

  private async subscriptionOf(run: EventRun): Promise<string | undefined> {
    const rec = await this.deps.store.events.get(run.team, run.eventId);
    return rec?.subscriptions[rec.subscriptions.length - 1];
  }

  /** Lease renewal, release when idle, and noticing a subscription that went away (mute, uninstall). */
  private async housekeep(): Promise<void> {
    const now = Date.now();
    for (const run of [...this.runs.values()]) {
      if (now - run.subReadAt > 2_000) {
        await run.readSub(undefined);
        if (!run.sub) {
          await this.release(run);
          continue;
        }
      }
      if (run.idle()) {
        // Kept a while: between bursts, reloading 10,000 sessions per message would cost more.
        run.idleSince ??= now;
        if (now - run.idleSince >= this.options.idleReleaseMs) {
          await run.save();
          await this.release(run);
          continue;
        }
      } else run.idleSince = undefined;
      if (!this.leases) continue;
      if (now >= run.leaseUntil) {
        // Lapsed (a stalled event loop): someone else may own it now, and deleting the lease
        // key would take theirs. Let go; whoever owns it reads what was saved.
        run.stop();
        this.runs.delete(run.id);
        continue;
      }
      if (run.leaseUntil - now > this.options.leaseMs / 2 || run.inflight > 0) continue;
      await run.save();
      const key = this.leaseKey(run.team, run.eventId);
      await this.deps.store.delete(key);
      if (await this.deps.store.claimOnce(key, this.options.leaseMs)) {
        run.leaseUntil = Date.now() + this.options.leaseMs;
        run.wakeAll();
      } else {
        // Another process took it over between the two steps; it reads what was just saved.
        run.stop();
        this.runs.delete(run.id);
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
    const lanes: Promise<void>[] = [];
    for (const run of this.runs.values()) {
      run.stopping = true;
      for (const lane of run.lanes.values()) {
        lane.stop();
        lanes.push(lane.done);
      }
    }
    // A call already sent should have its effect recorded before the store closes, or the
    // next start would post it again; bounded, so a hung call cannot hold shutdown.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(lanes),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 3_000);
      }),
    ]);
    clearTimeout(timer);
    for (const run of this.runs.values()) run.stop();
    this.runs.clear();
  }
}
