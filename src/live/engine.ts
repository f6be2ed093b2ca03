/**
 * Why this file is long: it is the one owner of the process's engine state (the events it holds,
 * the outbox work marks it has seen and drained, rechecks, the legacy drain, its leases), and its
 * turn reads and changes all of it; split across files that state would have several owners again.
 * What to post is decided purely elsewhere (planner.ts, outcome.ts) and each event's model is
 * owned by its run (event-run.ts).
 */
import type { AttendanceFigures, Deps } from "../deps.ts";
import type { Metrics } from "../metrics.ts";
import {
  isStoreDown,
  type OutboxRow,
  type OutboxWorkMark,
  type Repository,
  type StoreError,
} from "../store/index.ts";
import { backoffMs } from "./backoff.ts";
import { type EngineOptions, engineOptions, type LiveEngineOptions } from "./engine-options.ts";
import { EventRun } from "./event-run.ts";
import { HeldCursor } from "./held-cursor.ts";
import { EventLeases } from "./leases.ts";
import {
  activeRepo,
  type LiveRecord,
  liveRepo,
  loadEventLive,
  sessionsRepo,
} from "./live-record.ts";
import { entryOf, type OutboxEntry } from "./outbox-entry.ts";
import { announceLine, ChannelPacer } from "./pacer.ts";
import { applyRefusing, MAX_REFUSED, type RefusalPort, Refusals } from "./refusals.ts";
import { endedAtOf, eventSnapshotOf } from "./report-post.ts";
import { type Held, type HeldEvent, heldRepo, readableHeld, setAside } from "./set-aside.ts";
import { CallsUnderWay } from "./under-way.ts";

/**
 * The live engine: drains the outbox into live cards and digest threads.
 *
 * - The webhook route stores each message (outbox) and answers; nothing else on the hot path.
 * - Each event has one owner at a time (a lease on Redis and Postgres, where several processes
 *   share the store, leases.ts; SQLite and memory stores belong to one process). The owner
 *   extends it whatever its lanes are doing, so a slow Slack call never lets it lapse, and gives
 *   it back when it stops. The owner applies the event's outbox items in order, saves the result
 *   once per batch (live-writer.ts), and only then removes the items. A crash before the removal
 *   replays them onto the last whole save, and replaying is harmless (state.ts).
 * - Per event and channel a lane posts with the bulk client, which never retries. Every lane
 *   takes its turn from one pacer per workspace and channel (pacer.ts), shared by every event
 *   posting there and, on a shared store, by every instance: about one Slack call a second per
 *   channel, and a 429's Retry-After holds the channel for all of them. Card updates are
 *   coalesced (posted only when the content changed), attendee notices folded into the next
 *   digest. Interactive calls use Bolt's own client and never wait here.
 * - An event with unposted work carries a `live-active` marker; at start (and every few
 *   seconds) markers whose owner is gone are picked up, so nothing acknowledged is lost.
 */

export type { LiveEngineOptions };

/** How often to look for items of earlier versions once none is left. */
const LEGACY_RECHECK_MS = 60_000;
/** Not tried again sooner: its owner drains it, and gives it back (or lets it lapse) when done. */
const HELD_ELSEWHERE_MS = 1_000;
/** A marker naming an item not found after this long names a write that failed. */
const STALE_MARK_MS = 30_000;
/** What a marker written again over an unreadable one names when its event has no record left. */
const UNREADABLE_MARK = "unreadable-marker";
/** Reads of one sweep at most (one per event with records): a fleet's worth of live events. */
const SWEEP_MAX_READS = 20_000;
/** An event whose step failed on its own account (`failing`). */
interface EventFailure {
  failures: number;
  until: number;
  /** The last error logged, so that a different one is logged even within the back-off. */
  said: string;
}
/** An event whose turn failed on its own account is tried again after this, doubling. */
const EVENT_RETRY = { firstMs: 1_000, maxMs: 60_000 } as const;
/** A stopped run's Slack calls under way are waited for this long at most. */
const LANES_SETTLE_MS = 3_000;

/**
 * Per key, whether all its promises settled within `ms`, none to a pause still running (all keys
 * waited for together, `ms` at most in all).
 */
async function settledPerEvent(
  byKey: ReadonlyMap<string, readonly Promise<unknown>[]>,
  ms: number,
): Promise<Map<string, boolean>> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const out = new Map<string, boolean>();
  await Promise.all(
    [...byKey].map(async ([key, all]) => {
      // Over: settled, and any pause it resolved to (a lost answer's: Lane.settled) past too.
      const over = Promise.allSettled(all).then((rs) =>
        rs.every((r) => r.status !== "fulfilled" || !(Number(r.value) > Date.now())),
      );
      out.set(key, await Promise.race([over, deadline]));
    }),
  );
  clearTimeout(timer);
  return out;
}
/** Past the bound of any store write (STORE_OP_TIMEOUT_MS) and the clocks' drift between instances. */
const RECHECK_MS = 5_000;

/**
 * What the engine uses: the store, its own Slack clients, a logger, two metrics, the clock. In a
 * worker thread (worker.ts) these are the thread's own; inline they are the app's.
 */
export type EngineDeps = Pick<Deps, "store" | "logger" | "bulkClient" | "now" | "onClose"> & {
  readonly metrics: Pick<Metrics, "slackCalls" | "queueDepth">;
  /**
   * Called as each outbox read begins: from here on, anything newly stored needs a nudge to be
   * seen soon (see NudgeGate.reading).
   */
  readonly reading?: () => void;
};

export class LiveEngine {
  readonly options: EngineOptions;
  readonly lives: Repository<LiveRecord>;
  /** The sessions of each instance, in chunks beside the live record. */
  readonly sessions: Repository<string>;
  private readonly active: Repository<{ since: number }>;
  /** Items this version cannot read, set aside for one that can (set-aside.ts). */
  private readonly held: Repository<Held>;
  readonly runs = new Map<string, EventRun>();
  /** Undefined on a store only this process uses. */
  private readonly leases: EventLeases | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  /** The last turn stopped at a bound with items left: the next one starts at once. */
  private backlog = false;
  private stopped = false;
  private lastMarkerScan = 0;
  private lastTurn = 0;
  private dueAt = 0;
  /** Outbox reads in a row that found nothing (see pollMs). */
  private emptyReads = 0;
  private readonly marked = new Set<string>();
  /** Whether the last look found items of earlier versions, and when that was. */
  private legacyLeft = true;
  private legacyCheckedAt = 0;
  private sweptAt = Date.now();
  /** Events another instance holds: not tried again before then. */
  private readonly heldElsewhere = new Map<string, number>();
  /**
   * Events whose last step failed on their own account (eventFailed), by kind of step: their
   * items (`drain`), taking them up and looking after them (`tend`: markers, housekeeping), or
   * applying items another version set aside (`held`).
   * A step of that kind is not tried for the event before `until`; each kind backs off alone, so
   * a failing housekeeping step never holds back an event's items.
   */
  private readonly failing = {
    drain: new Map<string, EventFailure>(),
    tend: new Map<string, EventFailure>(),
    held: new Map<string, EventFailure>(),
  };
  /** What this process knows of items the model threw on (refusals.ts). */
  private readonly refusals: Refusals;
  /** Where the next sweep for held items reads on, and when it moves (held-cursor.ts). */
  private readonly heldCursor = new HeldCursor();
  private readonly refusal: RefusalPort<EventRun> = {
    reload: (run) => this.reload(run),
    abandon: (run) => this.abandon(run),
  };
  /** Per event with a marker, the records of its last listing drained here. */
  private readonly drained = new Map<string, Set<string>>();
  /** Events whose marker this instance cleared, looked at once more then (recheckCleared). */
  private readonly recheck = new Map<string, { team: string; eventId: string; at: number }>();
  /** Slack calls dropped runs left under way, for each event's next run here (under-way.ts). */
  private readonly underWay = new CallsUnderWay();
  /** Every lane of every event takes its channel's turn here. */
  readonly pacer: ChannelPacer;

  constructor(
    readonly deps: EngineDeps,
    options: LiveEngineOptions = {},
  ) {
    this.options = engineOptions(options);
    this.lives = deps.store.repository(liveRepo);
    this.sessions = deps.store.repository(sessionsRepo);
    this.active = deps.store.repository(activeRepo);
    this.held = deps.store.repository(heldRepo);
    this.refusals = new Refusals(this.held, deps.logger, this.options.driftMs, this.options.build);
    // SQLite and memory stores serve one process; Redis and Postgres may serve several.
    this.leases =
      deps.store.kind === "redis" || deps.store.kind === "postgres"
        ? new EventLeases(deps.store, deps.logger, this.options.leaseMs)
        : undefined;
    this.pacer = new ChannelPacer(deps.store, { paceMs: this.options.paceMs });
  }

  /** A line for the channel, at the channel's pace (pacer.ts); given up after a few 429s. */
  announce(team: string, channel: string, text: string): Promise<void> {
    const { deps, pacer } = this;
    return announceLine({ ...deps, pacer, stopped: () => this.stopped }, team, channel, text);
  }

  async figures(team: string, eventId: string): Promise<AttendanceFigures | undefined> {
    const id = `${team}:${eventId}`;
    const live = this.runs.get(id)?.live ?? (await this.loadLive(team, eventId)).live;
    const inst = live.current();
    if (!inst) return undefined;
    const endedAt =
      inst.endedAt ?? endedAtOf(this, inst, await eventSnapshotOf(this, team, eventId));
    return {
      instanceId: inst.id,
      state: inst.state,
      peak: inst.peak,
      unique: inst.unique,
      present: inst.present,
      averageMinutes: live.averageMinutes(inst, endedAt ?? Date.now()),
      ...(endedAt !== undefined ? { endedAt } : {}),
    };
  }

  start(): void {
    this.schedule(0);
  }

  /**
   * Something was stored: look soon rather than at the next poll. Turns are at least
   * `minTurnMs` apart, so a burst is taken in batches: each turn rewrites the event's record
   * once, whatever the number of messages in it. A turn that stopped at `batch` with items left
   * is followed at once: its batch was full already.
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
        .then(
          () => this.backlog,
          (err: unknown) => {
            this.deps.logger.error({ err }, "live: outbox turn failed");
            // Never at once after a failure, whatever the turn had found: `minTurnMs` when a
            // nudge came meanwhile, else the poll.
            return false;
          },
        )
        .then((backlog) => {
          this.ticking = undefined;
          const soon = this.again;
          this.again = false;
          this.backlog = false;
          // Items left at a bound: the next turn at once (the batch is already full; waiting
          // would only let the card fall behind). New items during the turn: `minTurnMs`, to
          // gather them. Neither: the poll.
          this.schedule(backlog ? 0 : soon ? this.options.minTurnMs : this.pollDelay());
        });
    }, ms);
    this.timer.unref();
  }

  private pollDelay(): number {
    const { pollMs, maxPollMs } = this.options;
    return backoffMs({ firstMs: pollMs, maxMs: maxPollMs }, this.emptyReads);
  }

  /** Resolves when the current turn (if any) has finished; for tests and shutdown. */
  async settled(): Promise<void> {
    await this.ticking;
  }

  private async acquire(team: string, eventId: string): Promise<EventRun | undefined> {
    const key = `${team}:${eventId}`;
    const existing = this.runs.get(key);
    if (existing) return existing;
    const until = this.leases ? await this.leases.take(team, eventId) : Number.POSITIVE_INFINITY;
    if (until === undefined) return undefined;
    let loaded: Awaited<ReturnType<LiveEngine["loadLive"]>>;
    try {
      loaded = await this.loadLive(team, eventId);
    } catch (err) {
      // Not held with nothing to show for it: another instance (a newer version) may read it,
      // unless a dropped run's call is still under way here (setDown).
      if (!this.underWay.has(key)) await this.leases?.giveBack(team, eventId).catch(() => false);
      throw err;
    }
    const { record, live, stored } = loaded;
    const run = new EventRun(
      this,
      team,
      eventId,
      record,
      live,
      until,
      stored,
      this.underWay.take(key),
    );
    this.runs.set(key, run);
    return run;
  }

  /** The event's live record and its figures, sessions read from their chunks. */
  loadLive(team: string, eventId: string): ReturnType<typeof loadEventLive> {
    return loadEventLive(this.lives, this.sessions, team, eventId);
  }

  private async release(run: EventRun): Promise<void> {
    run.stop();
    this.runs.delete(run.id);
    // Let go with nothing to do, or with its subscription gone while a lane was still calling
    // (tidy): that call is handed on as any dropped run's, and the lease kept while it is.
    const calling = this.setDown(run);
    // A lane's save still under way lands first: the next owner must find what it names.
    await run.saved();
    await run.writer.deleteWith([], (k) => this.deps.store.deleteMany(k), true).catch(() => 0);
    if (this.marked.delete(run.id)) await this.active.delete(run.id);
    this.failing.tend.delete(run.id);
    if (!calling) await this.leases?.giveBack(run.team, run.eventId);
  }

  private async mark(run: EventRun): Promise<void> {
    if (this.marked.has(run.id)) return;
    await this.active.put(run.id, { since: Date.now() });
    this.marked.add(run.id);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    this.deps.reading?.();
    const outbox = this.deps.store.outbox;
    const now = Date.now();
    let found = 0;
    // Items of earlier versions (keyed by sequence alone), until none is left; looked at again
    // now and then, for an instance of an earlier version still running beside this one.
    if (this.legacyLeft || now - this.legacyCheckedAt >= LEGACY_RECHECK_MS) {
      this.legacyCheckedAt = now;
      await this.turnStep(
        "items of earlier versions",
        async () => {
          const rows = await outbox.listLegacy(this.options.batch);
          this.legacyLeft = rows.length > 0;
          found += rows.length;
          const removed = await this.drainLegacy(rows);
          // At once only when this turn removed some: items of events other instances hold stay
          // where they are, and would be read again and again.
          if (rows.length >= this.options.batch) {
            if (removed > 0) this.backlog = true;
            else this.again = true;
          }
        },
        // Looked at again in a minute after a failure of its own (an unreadable item); the store
        // failing fails the turn, and the next one looks again.
        () => {
          this.legacyLeft = false;
        },
      );
    }
    // Then only the events that have work, and of those only the ones this instance owns or
    // can take: another's event is never read here, only skipped.
    const unreadable: Array<{ id: string; err: StoreError }> = [];
    const work = await outbox.work((id, err) => unreadable.push({ id, err }));
    for (const u of unreadable) await this.markAgain(u.id, u.err, now);
    if (now - this.sweptAt >= this.options.sweepMs) {
      this.sweptAt = now;
      await this.turnStep("the sweep for unmarked items", () => this.sweep(work));
      await this.turnStep("the sweep for items set aside", () => this.replayHeld(now));
    }
    for (const mark of work) {
      const key = `${mark.team}:${mark.eventId}`;
      if (this.failingUntil("drain", key) > now) continue;
      const held = this.runs.has(key);
      await this.forEvent("drain", key, mark.eventId, now, held, async () => {
        found += await this.drainEvent(mark, now);
        this.failing.drain.delete(key);
      });
    }
    await this.recheckCleared(now);
    this.deps.metrics.queueDepth.set({ queue: "outbox" }, found);
    this.emptyReads = found === 0 && work.length === 0 ? this.emptyReads + 1 : 0;
    await this.markers();
    await this.housekeep();
  }

  /**
   * One event's turn: taken (or skipped while another instance holds it), its next page of
   * items applied and removed, its marker cleared once it names nothing left. Returns the
   * items read.
   */
  private async drainEvent(mark: OutboxWorkMark, now: number): Promise<number> {
    const outbox = this.deps.store.outbox;
    const key = `${mark.team}:${mark.eventId}`;
    const held = this.runs.has(key);
    if (!held && (this.heldElsewhere.get(key) ?? 0) > now) return 0;
    const run = await this.acquire(mark.team, mark.eventId);
    if (!run) {
      // Bounded: a fleet's worth of events, forgotten all at once past that.
      if (this.heldElsewhere.size >= 100_000) this.heldElsewhere.clear();
      this.heldElsewhere.set(key, now + HELD_ELSEWHERE_MS);
      return 0;
    }
    this.heldElsewhere.delete(key);
    const { rows, more } = await outbox.eventPage(mark.team, mark.eventId, this.options.batch);
    // The run the items were applied by: another, read again, when one was refused.
    let ran = run;
    if (rows.length > 0) {
      ran = await this.drain(
        run,
        rows.map((r) => entryOf(r)),
      );
    } else if (!held) {
      // Taken up for a marker whose items are gone (a process died between draining them and
      // clearing it): nothing to ingest, so it is resumed here, as markers() would, or its
      // channels would wait for the marker to go stale.
      await this.resume(run);
    }
    if (ran.dropped) return rows.length;
    // Cleared once the record it names has been drained, in this turn or the event's previous
    // one (the marker read may be newer than the listing before it; a marker can land a
    // group before its record), or when it names a record that never came (a write that
    // failed). Remembered for a full listing too, whose last record the marker may name.
    const seen =
      rows.some((r) => r.record === mark.last) || this.drained.get(key)?.has(mark.last) === true;
    if (rows.length > 0) this.drained.set(key, new Set(rows.map((r) => r.record)));
    // Records left after this listing (at `batch` items, or at the records a listing reads,
    // which small records reach first): read on at once, and the marker stays, however old.
    if (more) {
      this.backlog = true;
      return rows.length;
    }
    if ((seen || now - mark.at > STALE_MARK_MS) && (await outbox.settle(mark))) {
      this.drained.delete(key);
      this.recheck.set(key, { team: mark.team, eventId: mark.eventId, at: now + RECHECK_MS });
    }
    return rows.length;
  }

  /**
   * `step` for one event. The store itself failing fails the turn (every event would fail alike);
   * any other failure is the event's own (a record it cannot read, an item it cannot apply):
   * eventFailed, and the caller goes on with the next event. A run the step took up (`held`
   * false) is let go again without a trace (its markers stay, its lease is given back unless a
   * call of it is under way: setDown), so the next try starts from what is stored, as a run
   * taken up then would.
   */
  private async forEvent(
    kind: keyof LiveEngine["failing"],
    key: string,
    eventId: string,
    now: number,
    held: boolean,
    step: () => Promise<void>,
  ): Promise<void> {
    try {
      await step();
    } catch (err) {
      if (isStoreDown(err)) throw err;
      this.eventFailed(kind, key, eventId, err, now);
      const run = this.runs.get(key);
      if (!held && run) await this.abandon(run);
    }
  }

  /**
   * A run dropped as it is, its markers kept and its lease given back (forEvent), unless a Slack
   * call of it is still under way (setDown).
   */
  private async abandon(run: EventRun): Promise<void> {
    run.stop();
    this.runs.delete(run.id);
    this.marked.delete(run.id);
    const calling = this.setDown(run);
    // A save under way lands before the event is read again (a dropped run starts none).
    await run.saved();
    if (!calling) await this.leases?.giveBack(run.team, run.eventId).catch(() => false);
  }

  /**
   * What a dropped run's lanes still have under way, kept for the event's next run here
   * (under-way.ts); true when anything is. Its lease is then not given back but left to run out
   * (at most leaseMs): this engine takes the event again at once (the lease is its own), its new
   * lanes waiting for those calls, while another instance takes it only once the lease has run
   * out, by when the calls have most likely landed where its lookup finds them (each is bounded
   * by the client's timeout, longer than a lease: a call slower than the lease can still be
   * missed there). Not waited for here: the turn is serial, and every other event's would wait.
   */
  private setDown(run: EventRun): boolean {
    return this.underWay.leave(run.id, run.callsUnderWay());
  }

  /**
   * A run stopped by its model throwing halfway (refusals.ts), read again from the event's last
   * save (whole), under the same lease: no other instance takes the event between. Undefined when
   * the lease has lapsed meanwhile (the items stay for whoever owns it now).
   */
  private async reload(run: EventRun): Promise<EventRun | undefined> {
    run.stop();
    this.runs.delete(run.id);
    // A Slack call under way is not recorded (the run is dropped), so the new run looks for it in
    // the channel before posting again, and must find it there: its lane in that channel starts
    // once the call has settled (Lane's `after`; the client's timeout bounds it). Not waited for
    // here: the turn is serial, and every other event's would wait on it. A save already writing
    // lands first (one begun since writes nothing).
    const after = run.callsUnderWay();
    await run.saved();
    await run.writer.deleteWith([], (k) => this.deps.store.deleteMany(k), true).catch(() => 0);
    if (this.leases && run.leaseUntil <= Date.now()) {
      this.marked.delete(run.id);
      this.underWay.leave(run.id, after);
      return undefined;
    }
    let loaded: Awaited<ReturnType<LiveEngine["loadLive"]>>;
    try {
      loaded = await this.loadLive(run.team, run.eventId);
    } catch (err) {
      this.marked.delete(run.id);
      if (!this.underWay.leave(run.id, after)) {
        await this.leases?.giveBack(run.team, run.eventId).catch(() => false);
      }
      throw err;
    }
    const { record, live, stored } = loaded;
    const again = new EventRun(
      this,
      run.team,
      run.eventId,
      record,
      live,
      run.leaseUntil,
      stored,
      after,
    );
    this.runs.set(again.id, again);
    return again;
  }

  /**
   * A step of the turn that is not one event's: as forEvent, logged and left for a later turn
   * (`failed` then runs).
   */
  private async turnStep(
    what: string,
    step: () => Promise<void>,
    failed?: () => void,
  ): Promise<void> {
    try {
      await step();
    } catch (err) {
      if (isStoreDown(err)) throw err;
      this.deps.logger.error({ err }, `live: ${what} failed; the events' turns go on`);
      failed?.();
    }
  }

  private failingUntil(kind: keyof LiveEngine["failing"], key: string): number {
    return this.failing[kind].get(key)?.until ?? 0;
  }

  /**
   * An event whose step failed on its own account: its items stay where they are (a newer
   * version, or a mended store, may read them), and the kind of step is tried again for it after
   * a back-off that doubles up to a minute. Logged once per back-off, and whenever the error
   * differs from the one last logged.
   */
  private eventFailed(
    kind: keyof LiveEngine["failing"],
    key: string,
    eventId: string,
    err: unknown,
    now: number,
  ): void {
    const failing = this.failing[kind];
    const last = failing.get(key);
    const said = err instanceof Error ? err.message : String(err);
    if (last && last.until > now) {
      if (last.said !== said) {
        last.said = said;
        this.deps.logger.error({ err, event: eventId, step: kind }, "live: an event's step failed");
      }
      return;
    }
    const failures = last?.failures ?? 0;
    const retryMs = backoffMs(EVENT_RETRY, failures);
    if (failing.size >= 100_000) failing.clear();
    failing.set(key, { failures: failures + 1, until: now + retryMs, said });
    this.deps.logger.error(
      { err, event: eventId, step: kind, failures: failures + 1, retryMs },
      kind === "drain"
        ? "live: an event's turn failed; its items stay, the other events go on, and it is tried again later"
        : "live: looking after an event failed; the other events go on, and it is tried again later",
    );
  }

  /**
   * Once, a while after an event's marker was cleared: an item committed after that (a group
   * in flight on another connection) would otherwise wait for the event's next message.
   */
  private async recheckCleared(now: number): Promise<void> {
    for (const [key, r] of this.recheck) {
      if (r.at > now) continue;
      this.recheck.delete(key);
      await this.forEvent("drain", key, r.eventId, now, true, async () => {
        const rows = await this.deps.store.outbox.listEvent(r.team, r.eventId, 1);
        const first = rows[0];
        if (first) await this.deps.store.outbox.markWork(r.team, r.eventId, first.record);
      });
    }
  }

  /**
   * Now and then, every event with records in the outbox (one short read each, however many
   * records other events hold before it): one with no marker (its marker went out with a later
   * group that failed, after its record's own group had committed) is marked.
   */
  private async sweep(work: readonly OutboxWorkMark[]): Promise<void> {
    const marked = new Set(work.map((w) => `${w.team}:${w.eventId}`));
    for (const f of await this.deps.store.outbox.eventsWithRecords(SWEEP_MAX_READS)) {
      if (marked.has(`${f.team}:${f.eventId}`)) continue;
      this.deps.logger.warn({ event: f.eventId }, "live: outbox items with no marker; marked");
      await this.deps.store.outbox.markWork(f.team, f.eventId, f.record);
    }
  }

  /**
   * Items an engine of another version set aside (set-aside.ts) that this one reads: applied to
   * their event, by its run here (taken up if need be, and let go when idle as any other), then
   * removed. An event another instance holds is left to that instance's sweep. Each event's
   * failure is its own (`held` back-off): its items stay, and its other work goes on.
   */
  private async replayHeld(now: number): Promise<void> {
    const from = this.heldCursor.from;
    const { events, unread, next } = await readableHeld(this.held, from);
    try {
      for (const e of events) {
        const { team, eventId } = e;
        const key = `${team}:${eventId}`;
        if (this.failingUntil("held", key) > now) continue;
        const { entries: tried, untry } = this.refusals.pick(e);
        if (tried.length === 0) continue;
        await this.forEvent("held", key, eventId, now, this.runs.has(key), async () => {
          try {
            if (!(await this.replayEvent(e, tried, unread))) untry();
          } catch (err) {
            // The breaker: items with no why (set aside unread) stay this process's to try again.
            untry(!isStoreDown(err));
            throw err;
          }
        });
      }
    } catch (err) {
      // Cut short by the store (forEvent lets only that through): the next sweep reads this
      // page again, or past it the second time in a row (held-cursor.ts).
      this.heldCursor.cutShort(from, next);
      throw err;
    }
    this.heldCursor.handled(next);
  }

  /**
   * replayHeld for one event: applied, removed; refused again, kept (with why, from now on).
   * False when not tried (another instance holds the event).
   */
  private async replayEvent(
    { team, eventId, refused: before }: HeldEvent,
    tried: readonly OutboxEntry[],
    unread: number,
  ): Promise<boolean> {
    const taken = await this.acquire(team, eventId);
    if (!taken) return false;
    await this.mark(taken);
    const budget = () => Promise.resolve(MAX_REFUSED);
    const { run, refused } = await applyRefusing(this.refusal, taken, tried, budget);
    if (run.dropped) return false;
    if (refused.size > 0) {
      this.refusals.said(eventId, tried, refused, "kept set aside");
      // Written again with why and this code where Refusals says (refusals.ts, rewrite).
      const fresh = this.refusals.rewrite(before, refused);
      if (fresh.size > 0)
        await setAside(this.held, tried, { refused: fresh, build: this.refusals.build });
    }
    await run.writer.deleteWith(
      tried.filter((e) => !refused.has(e.id)).map((e) => e.key),
      (k) => this.deps.store.deleteMany(k),
    );
    this.failing.held.delete(`${team}:${eventId}`);
    if (tried.length === refused.size) return true;
    this.deps.logger.info(
      { event: eventId, applied: tried.length - refused.size, unread },
      "live: applied outbox items set aside earlier (by another version, or refused by the model)",
    );
    return true;
  }

  /**
   * A work marker that cannot be read (left out of the listing, so that the other events' turns
   * go on) is written again, naming the event's first record, or, with none left, a record that
   * never comes, already stale, which the event's next turn clears. A writer's newer marker
   * replaces it as any marker is replaced, and a turn clears only the marker it read. Not by
   * compare-and-set (a value that is not JSON cannot be compared): written over a writer's marker
   * that landed since the listing, it names an older record, and the newer one is found by the
   * look 5 s after the marker is cleared (recheckCleared), or by the sweep.
   */
  private async markAgain(id: string, err: StoreError, now: number): Promise<void> {
    const i = id.indexOf(":");
    if (i <= 0 || this.failingUntil("drain", id) > now) return;
    const team = id.slice(0, i);
    const eventId = id.slice(i + 1);
    await this.forEvent("drain", id, eventId, now, this.runs.has(id), async () => {
      const first = (await this.deps.store.outbox.listEvent(team, eventId, 1))[0];
      // With none left, already stale: the event's next turn finds nothing and clears it, rather
      // than every instance taking the event up at every turn for STALE_MARK_MS.
      await (first
        ? this.deps.store.outbox.markWork(team, eventId, first.record)
        : this.deps.store.outbox.markWork(team, eventId, UNREADABLE_MARK, now - STALE_MARK_MS - 1));
      this.deps.logger.warn(
        { err, event: eventId },
        "live: an outbox marker could not be read; written again, its event's items go on",
      );
    });
  }

  /**
   * Items of earlier versions: grouped per event here, as they were read. Returns how many of
   * `rows` it removed (none of an event another instance holds).
   */
  private async drainLegacy(rows: OutboxRow[]): Promise<number> {
    const groups = new Map<string, OutboxEntry[]>();
    let removed = 0;
    for (const row of rows) {
      const entry = entryOf(row);
      if (!entry.eventId) {
        if (await this.deps.store.outbox.remove(row.id)) removed++;
        continue;
      }
      const key = `${entry.team}:${entry.eventId}`;
      let g = groups.get(key);
      if (!g) {
        g = [];
        groups.set(key, g);
      }
      g.push(entry);
    }
    const now = Date.now();
    for (const [key, items] of groups) {
      const first = items[0];
      if (!first || this.failingUntil("drain", key) > now) continue;
      const eventId = key.slice(first.team.length + 1);
      await this.forEvent("drain", key, eventId, now, this.runs.has(key), async () => {
        const run = await this.acquire(first.team, eventId);
        if (!run) return;
        if (!(await this.drain(run, items)).dropped) removed += items.length;
      });
    }
    return removed;
  }

  /**
   * Applies an event's items, saves, and only then removes them. Returns the run that applied
   * them: another one, read again from the last save, when the model threw on an item
   * (refusals.ts); dropped when the items stay for another owner.
   */
  private async drain(taken: EventRun, items: OutboxEntry[]): Promise<EventRun> {
    await this.mark(taken);
    const budget = () => this.refusals.left(taken.team, taken.eventId, items);
    const { run, refused } = await applyRefusing(this.refusal, taken, items, budget);
    // Not saved (the lease was lost at the save): the items stay for whoever owns it now.
    if (run.dropped) return run;
    // Kept before their records go, not lost with them.
    const aside = await setAside(this.held, items, { refused, build: this.refusals.build });
    const unkept = aside.dropped.filter((d) => refused.has(d.id));
    if (unkept.length > 0) {
      // An earlier version's item whose ids make no key: its items stay, as they did before.
      throw new Error(
        `an outbox item the live model threw on could not be set aside (${unkept[0]?.reason}); the event's items stay`,
      );
    }
    this.refusals.said(run.eventId, items, refused, "set aside");
    if (aside.unread > 0) {
      this.deps.logger.warn(
        { event: run.eventId, items: aside.unread },
        "live: outbox items whose message this version does not read were set aside; an engine of a version that reads them applies them at its sweep",
      );
    }
    for (const d of aside.dropped) {
      this.deps.logger.error(
        { event: run.eventId, item: d.id, reason: d.reason },
        "live: an outbox item this version does not read could not be set aside, and was dropped",
      );
    }
    // A batch's items are applied together (listed whole), so its record goes once they are.
    const keys = [...new Set(items.map((i) => i.key))];
    await run.writer.deleteWith(keys, (k) => this.deps.store.deleteMany(k));
    return run;
  }

  /** Events left with unposted work by a process that is gone (or by this one before a restart). */
  private async markers(): Promise<void> {
    const now = Date.now();
    if (now - this.lastMarkerScan < 2_000) return;
    this.lastMarkerScan = now;
    for (const id of await this.active.ids()) {
      const held = this.runs.get(id);
      if (held) {
        // Its live-active marker is stored: letting it go (release) deletes it.
        this.marked.add(held.id);
        continue;
      }
      const i = id.indexOf(":");
      if (i <= 0 || this.failingUntil("tend", id) > now) continue;
      await this.forEvent("tend", id, id.slice(i + 1), now, false, async () => {
        const run = await this.acquire(id.slice(0, i), id.slice(i + 1));
        if (!run) return;
        this.marked.add(run.id);
        await this.resume(run);
      });
    }
  }

  /** A run taken up with nothing to ingest: its subscription read, its channels woken. */
  private async resume(run: EventRun): Promise<void> {
    await run.readSub(run.sub?.id ?? (await this.subscriptionOf(run)));
    run.wakeAll();
  }

  private async subscriptionOf(run: EventRun): Promise<string | undefined> {
    const rec = await this.deps.store.events.get(run.team, run.eventId);
    return rec?.subscriptions[rec.subscriptions.length - 1];
  }

  /** Lease renewal, release when idle, and noticing a subscription that went away (mute, uninstall). */
  private async housekeep(): Promise<void> {
    const now = Date.now();
    for (const run of [...this.runs.values()]) {
      let released = false;
      // Its lease is looked after below even when this fails on the event's own account.
      await this.forEvent("tend", run.id, run.eventId, now, true, async () => {
        released = await this.tidy(run, now);
        this.failing.tend.delete(run.id);
      });
      if (released || run.dropped || !this.leases) continue;
      if (now >= run.leaseUntil) {
        // Lapsed (a stalled event loop): someone else may own it now. Let go; whoever owns it
        // reads what was saved.
        this.lostLease(run, "lapsed");
        continue;
      }
      if (run.leaseUntil - now > this.options.leaseMs / 2) continue;
      // Extended while its lanes post: a call never needs the lease to be let go first.
      const until = await this.leases.extend(run.team, run.eventId);
      if (until !== undefined) {
        run.leaseUntil = until;
        run.wakeAll();
      } else {
        // Lapsed, and perhaps taken over: the new owner reads what was saved.
        this.lostLease(run, "not extended");
      }
    }
  }

  /** An event's time-driven changes, and letting it go when gone or idle; true if let go. */
  private async tidy(run: EventRun, now: number): Promise<boolean> {
    // Replaced chunk versions past their grace, on a quiet event too (a failure keeps them).
    await run.writer.deleteWith([], (k) => this.deps.store.deleteMany(k)).catch(() => 0);
    // Time-driven changes first, as a step of their own: "idle?" below only asks.
    run.advance(now);
    if (now - run.subReadAt > 2_000) {
      await run.readSub(undefined);
      // Gone (muted everywhere, uninstalled): let go once its reminders are deleted too.
      if (!run.sub && !run.hasWork(now)) {
        await this.release(run);
        return true;
      }
    }
    if (run.idle(now)) {
      // Kept a while: between bursts, reloading 10,000 sessions per message would cost more.
      run.idleSince ??= now;
      if (now - run.idleSince >= this.options.idleReleaseMs) {
        await run.save();
        await this.release(run);
        return true;
      }
    } else run.idleSince = undefined;
    return false;
  }

  /**
   * Before a save: whether the run may write. Never once dropped; on a shared store it must hold
   * its lease with at least half of it left when the write is issued (extended here by
   * compare-and-set when less is left), so a write lands long before another instance could own
   * the event, even after a stall past the whole lease, which housekeeping notices only later.
   */
  async stillOwns(run: EventRun): Promise<boolean> {
    if (run.dropped) return false;
    if (!this.leases) return true;
    if (run.leaseUntil - Date.now() > this.options.leaseMs / 2) return true;
    const until = await this.leases.extend(run.team, run.eventId);
    if (until !== undefined) {
      run.leaseUntil = until;
      return true;
    }
    // Dropped meanwhile (by housekeeping) or now: either way it is let go once.
    if (!run.dropped) this.lostLease(run, "not ours at a save");
    return false;
  }

  private lostLease(run: EventRun, why: string): void {
    this.deps.logger.warn(
      { event: run.eventId, why },
      "live: lost an event's lease; letting it go (whoever owns it now reads what was saved)",
    );
    run.stop();
    this.runs.delete(run.id);
    this.setDown(run);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
    // Per event: its lanes' calls, those it inherited that no lane has started on, and those of
    // dropped runs kept for it (setDown).
    const calls = this.underWay.byEventCalls();
    for (const run of this.runs.values()) {
      run.stopping = true;
      for (const lane of run.lanes.values()) lane.stop();
      // A running lane's loop (Lane.settled), and what it inherited or paused for.
      calls.set(run.id, [...(calls.get(run.id) ?? []), ...run.callsUnderWay().values()]);
    }
    // A call already sent should have its effect recorded before the store closes, or the
    // next start would post it again; bounded, so a hung call cannot hold shutdown.
    const calm = await settledPerEvent(calls, LANES_SETTLE_MS);
    const runs = [...this.runs.values()];
    for (const run of runs) run.stop();
    this.runs.clear();
    // Given back, so that another instance takes the events over at once rather than when the
    // leases run out (a rolling restart would otherwise pause every card for up to a lease).
    // Each run saved what it had; its live-active marker stays, so whoever takes it over posts
    // what is left. Not an event with a call still under way: another instance would look for
    // what it posts before it lands; its lease runs out instead. An event only a dropped run's
    // calls kept (its lease kept for them) is given back once they have settled.
    const leases = this.leases;
    if (!leases) return;
    const events = new Map<string, { team: string; eventId: string; saved?: Promise<void> }>();
    for (const [key] of calls) {
      const i = key.indexOf(":");
      if (i > 0) events.set(key, { team: key.slice(0, i), eventId: key.slice(i + 1) });
    }
    for (const run of runs)
      events.set(run.id, { team: run.team, eventId: run.eventId, saved: run.saved() });
    await Promise.all(
      [...events].map(async ([key, { team, eventId, saved }]) => {
        try {
          await saved;
          if (calm.get(key) === false) {
            this.deps.logger.info(
              { event: eventId },
              "live: a Slack call is still under way; the event's lease runs out rather than given back",
            );
            return;
          }
          if (await leases.giveBack(team, eventId)) {
            this.deps.logger.info({ event: eventId }, "live: gave an event back");
          }
        } catch (err) {
          this.deps.logger.warn({ err, event: eventId }, "live: lease not given back");
        }
      }),
    );
  }
}

/**
 * Starts the engine for this app instance: it drains at once whatever an earlier run acknowledged
 * and did not post, then keeps up. Stopped on app close.
 */
export function startLiveEngine(deps: EngineDeps, options: LiveEngineOptions = {}): LiveEngine {
  const engine = new LiveEngine(deps, options);
  deps.onClose(() => engine.stop());
  engine.start();
  return engine;
}
