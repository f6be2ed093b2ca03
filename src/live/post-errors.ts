/** Why a post of the live engine did not go out now (publisher.ts); the lane (lane.ts) decides what next. */

/**
 * The event's lease ran out (or is about to) while a post was being prepared: the post is left
 * to whoever owns the event next, which finds the in-flight mark and looks first.
 */
export class NotOwner extends Error {
  constructor() {
    super("live: this process no longer owns the event");
  }
}

/**
 * Slack throttled a lookup (conversations.history/replies: one request a minute for apps outside
 * the Marketplace). Only this lane waits, for Retry-After, then resumes the scan where it
 * stopped; the post waits with it, since posting before knowing could post twice. Other events
 * posting to the channel are not held: the limit is the method's, not the channel's.
 */
export class LookupThrottled extends Error {
  constructor(
    readonly retryAfterMs: number,
    /** why the lookup waits, for the log: Slack throttled it, or what it looks for may still land */
    readonly why: "throttled" | "settling" = "throttled",
  ) {
    super(`live: a lookup waits (${why}); looking again after ${retryAfterMs} ms`);
  }
}
