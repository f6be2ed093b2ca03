import { codeBuild } from "../build-id.ts";
import { QUIET_END_MS } from "../domain/instance-end.ts";

/** The live engine's timings (engine.ts); tests shorten them. */

export interface LiveEngineOptions {
  /**
   * How often the outbox is read when nobody nudges. Default 200 ms; each read that finds
   * nothing doubles the wait, up to `maxPollMs`, and anything found (or a nudge) brings it back.
   */
  pollMs?: number;
  /**
   * The longest wait between reads of an empty outbox. Default 2,000 ms. Other instances'
   * messages and a restart's leftovers are found by polling, which an idle fleet should not
   * repeat five times a second.
   */
  maxPollMs?: number;
  /** An owned event with nothing to do is let go after this long. Default 10 s. */
  idleReleaseMs?: number;
  /**
   * Shortest time between two outbox turns. Default 100 ms. Not after a turn that stopped at
   * `batch` with items left: the next begins at once.
   */
  minTurnMs?: number;
  /** Slack calls per channel: one per this. Default 1000 ms. */
  paceMs?: number;
  /** Thread digests per channel at most one per this. Default 3000 ms. */
  digestEveryMs?: number;
  /** Owner lease (shared stores). Default 10 s. */
  leaseMs?: number;
  /** Outbox items read per event and turn (in whole records: up to 63 more). Default 1000. */
  batch?: number;
  /**
   * How often the oldest outbox items are looked at for one whose event has no marker (its
   * marker's write failed after the item's committed). Default 60 s.
   */
  sweepMs?: number;
  /**
   * How long a report upload whose answer was lost may take to appear in the thread (Slack
   * shares uploads asynchronously) before it is taken as not made and posted again. Default 30 s.
   */
  shareSettleMs?: number;
  /**
   * How long after an occurrence's scheduled end (and its last message) a quiet instance counts
   * as ended (domain/instance-end.ts). Default 15 minutes.
   */
  quietMs?: number;
  /**
   * How far two instances' clocks may differ. Default 5 s. An item the model threw on is tried
   * again only by a process started this much after it was set aside (refusals.ts).
   */
  driftMs?: number;
  /**
   * What code this process runs (default: build-id.ts's hash of it). An item the model threw on
   * is tried again by an instance of other code, started before or after (refusals.ts).
   */
  build?: string;
  /**
   * How long a Slack call of the engine may take before its answer counts as lost (the post is
   * then looked for before it goes out again). Default SLACK_CALL_TIMEOUT_MS, 30 s. The clients
   * of the engine's own thread (worker-main.ts), or inline the app's bulk clients (app.ts).
   */
  slackCallTimeoutMs?: number;
}

/** The options with every default filled in. */
export interface EngineOptions {
  pollMs: number;
  maxPollMs: number;
  minTurnMs: number;
  idleReleaseMs: number;
  paceMs: number;
  digestEveryMs: number;
  leaseMs: number;
  batch: number;
  sweepMs: number;
  shareSettleMs: number;
  quietMs: number;
  driftMs: number;
  build: string;
}

export function engineOptions(options: LiveEngineOptions): EngineOptions {
  return {
    pollMs: options.pollMs ?? 200,
    maxPollMs: Math.max(options.maxPollMs ?? 2_000, options.pollMs ?? 200),
    minTurnMs: options.minTurnMs ?? 100,
    idleReleaseMs: options.idleReleaseMs ?? 10_000,
    paceMs: options.paceMs ?? 1_000,
    digestEveryMs: options.digestEveryMs ?? 3_000,
    leaseMs: options.leaseMs ?? 10_000,
    batch: options.batch ?? 1_000,
    sweepMs: options.sweepMs ?? 60_000,
    shareSettleMs: options.shareSettleMs ?? 30_000,
    quietMs: options.quietMs ?? QUIET_END_MS,
    driftMs: options.driftMs ?? 5_000,
    build: options.build ?? codeBuild(),
  };
}
