import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import { slackErrorName } from "../slack-errors.ts";
import type { Action, PostKind } from "./live-model.ts";
import { type Outcome, outcomeOf } from "./outcome.ts";
import type { ChannelPacer } from "./pacer.ts";

/** What a lane is handed by its event's runner (event-run.ts): never the runner itself. */
export interface LanePort {
  readonly team: string;
  /** Dropped or shutting down: the lane finishes its current call, then stops. */
  stopped(): boolean;
  mayCall(): boolean;
  /** What the channel needs next (the runner takes the time-driven step first). */
  plan(channel: string, lastKind: PostKind | undefined): Action | undefined;
  /** Posts one of `kind` through the exactly-once protocol (publisher.ts). */
  post(channel: string, kind: PostKind): Promise<void>;
  /** Slack refuses the channel (or its thread) for good: it stops until notified again. */
  refused(channel: string, error: string, part: "card" | "thread"): Promise<void>;
  readonly pacer: ChannelPacer;
  readonly logger: Logger;
  readonly metrics: Pick<Metrics, "slackCalls">;
}

/**
 * One event's posting to one channel: takes the channel's turn from the shared pacer, asks the
 * run what is due (a card, a counter, a digest), and publishes it. The bulk client never retries:
 * a 429 holds the channel (for every event posting there) for Retry-After and the same work is
 * tried again, folded with whatever arrived meanwhile; a refusal stops the channel until it is
 * notified again, unless it is one that passes (a limit or trouble on Slack's side answered as
 * an error: isPassingRefusal), which is tried again after a growing pause; anything else is
 * tried again after a pause.
 */
export class Lane {
  /** Not before this (a failure's pause). */
  nextAt = 0;
  /** Refusals that pass (isPassingRefusal) in a row: each doubles the pause before the next try. */
  private passing = 0;
  running = false;
  lastKind: PostKind | undefined;
  /** Resolves when the lane's current loop (a Slack call and its record) has finished. */
  done: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private sleeper: { timer: NodeJS.Timeout; resolve: () => void } | undefined;

  constructor(
    private readonly run: LanePort,
    readonly channel: string,
    /**
     * A call to this channel still under way from a run this one replaced (under-way.ts): the
     * lane's first loop starts once it has settled, so a lookup for what that call posted finds
     * it, and not before the pause that run's lane took after it (a lost answer's, a refusal's).
     * Bounded by the Slack client's own timeout.
     */
    private after?: Promise<number>,
  ) {}

  /**
   * Resolves, once the current loop has finished, to when the channel may be called again: the
   * pause a failure left (nextAt), 0 when none. What a run replacing this one waits for.
   */
  settled(): Promise<number> {
    return this.done.then(() => this.nextAt);
  }

  wake(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.running || this.run.stopped()) return;
    this.running = true;
    const after = this.after;
    this.after = undefined;
    this.done = (
      after
        ? after.then((notBefore) => {
            this.nextAt = Math.max(this.nextAt, notBefore);
            return this.loop();
          })
        : this.loop()
    )
      .catch((err: unknown) => this.run.logger.error({ err }, "live: lane failed"))
      .finally(() => {
        this.running = false;
      });
  }

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

  /** The next post due, or undefined after arranging a later wake (or when nothing is due). */
  private due(): PostKind | undefined {
    const action: Action | undefined = this.run.plan(this.channel, this.lastKind);
    if (!action) return undefined;
    if (action.kind === "wait") {
      this.wakeAt(action.until);
      return undefined;
    }
    return action.kind;
  }

  private async loop(): Promise<void> {
    const run = this.run;
    const { logger, metrics, pacer } = run;
    const deps = { logger, metrics };
    while (!run.stopped()) {
      const wait = this.nextAt - Date.now();
      if (wait > 0) {
        await this.sleep(wait);
        continue;
      }
      if (!this.due()) return;
      // Near the end of the lease the engine renews it first; it wakes the lane again after.
      if (!run.mayCall()) return;
      const turn = await pacer.acquire(
        run.team,
        this.channel,
        () => run.stopped() || !run.mayCall(),
      );
      if (!turn) return;
      // The wait may have been long: what is due now is what goes out.
      const kind = this.due();
      if (!kind) return;
      try {
        await run.post(this.channel, kind);
        this.lastKind = kind;
        this.passing = 0;
        deps.metrics.slackCalls.inc({ method: `bulk.${kind}`, outcome: "ok" });
      } catch (err) {
        const outcome = outcomeOf(err, kind, this.passing);
        if (outcome.kind === "not-owner") return;
        // A failed turn is a turn: the card and the thread still alternate, so a thread whose
        // lookup keeps failing does not keep the card from being updated.
        this.lastKind = kind;
        await this.carryOut(outcome, kind, err);
      }
    }
  }

  /** Does what outcome.ts decided a failed post means. */
  private async carryOut(outcome: Outcome, kind: PostKind, err: unknown): Promise<void> {
    const run = this.run;
    const { logger, metrics, pacer } = run;
    const channel = this.channel;
    switch (outcome.kind) {
      case "not-owner":
        return;
      case "block":
        // Slack said no for a reason retrying will not change (or the app is uninstalled): the
        // channel's posts, or its thread's, stop until someone notifies it again.
        await run.refused(channel, outcome.error, outcome.part);
        return;
      case "lookup-wait":
        this.nextAt = Date.now() + outcome.afterMs;
        logger.info(
          { channel, retryAfterMs: outcome.afterMs },
          outcome.why === "settling"
            ? "live: what a lost answer may have posted can still land; this event looks again later"
            : "live: a lookup before posting was throttled; this event waits, the channel does not",
        );
        return;
      case "retry-after":
        this.nextAt = Date.now() + outcome.afterMs;
        await pacer
          .hold(run.team, channel, outcome.afterMs)
          .catch((e: unknown) => logger.warn({ err: e }, "live: could not share Retry-After"));
        metrics.slackCalls.inc({ method: "bulk", outcome: "ratelimited" });
        logger.info(
          { channel, retryAfterMs: outcome.afterMs },
          "live: Slack asked to slow down; retrying after Retry-After",
        );
        return;
      case "back-off":
        // The same work again later, waiting longer each time it repeats: the channel is not
        // given up on, and a long outage is not asked every second.
        this.passing++;
        this.nextAt = Date.now() + outcome.afterMs;
        if (outcome.why === "passing") {
          metrics.slackCalls.inc({ method: "bulk", outcome: "error" });
          logger.warn(
            { channel, error: slackErrorName(err), retryAfterMs: outcome.afterMs },
            "live: Slack could not take the call for now; trying again later",
          );
        } else {
          logger.warn(
            { err, channel, action: kind, retryAfterMs: outcome.afterMs },
            "live: Slack call failed; will retry",
          );
        }
        return;
    }
  }
}
