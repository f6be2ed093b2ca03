import {
  isPassingRefusal,
  isPlatformError,
  isRateLimited,
  NoInstallationError,
  retryAfterMs,
  slackErrorName,
} from "../slack-errors.ts";
import { backoffMs } from "./backoff.ts";
import type { PostKind } from "./live-model.ts";
import { LookupThrottled, NotOwner } from "./post-errors.ts";
import { refusedPart } from "./refused-notice.ts";

/**
 * What a failed post means, decided here and nowhere else (lane.ts carries it out): no longer
 * the owner; Slack said when to come back (Retry-After, shared by every event posting to the
 * channel); a lookup waits; Slack's passing trouble or no answer at all (back off); or a refusal
 * that holds until the channel is notified again (the channel's posts, or its thread's).
 */
export type Outcome =
  | { kind: "not-owner" }
  | { kind: "retry-after"; afterMs: number }
  | { kind: "lookup-wait"; afterMs: number; why: "throttled" | "settling" }
  | { kind: "back-off"; afterMs: number; why: "passing" | "no-answer" }
  | { kind: "block"; error: string; part: "card" | "thread" };

/** A refusal that passes (a limit, trouble on Slack's side): 1 s doubling to a minute. */
export const PASSING_BACKOFF = { firstMs: 1_000, maxMs: 60_000 } as const;
/** No answer (a timeout, a 5xx, the network) or our own trouble: 2 s doubling to 10 s. */
export const NO_ANSWER_BACKOFF = { firstMs: 2_000, maxMs: 10_000 } as const;

/** `failures`: failures in a row before this one on the lane (each doubles the back-off). */
export function outcomeOf(err: unknown, kind: PostKind, failures: number): Outcome {
  if (err instanceof NotOwner) return { kind: "not-owner" };
  // Uninstalled: nothing can be posted or deleted there any more.
  if (err instanceof NoInstallationError) {
    return { kind: "block", error: "not_installed", part: "card" };
  }
  if (err instanceof LookupThrottled) {
    return { kind: "lookup-wait", afterMs: err.retryAfterMs, why: err.why };
  }
  if (isRateLimited(err)) return { kind: "retry-after", afterMs: retryAfterMs(err) ?? 1_000 };
  if (isPassingRefusal(err)) {
    return { kind: "back-off", afterMs: backoffMs(PASSING_BACKOFF, failures), why: "passing" };
  }
  if (isPlatformError(err)) {
    const error = slackErrorName(err) ?? "refused";
    return { kind: "block", error, part: refusedPart(kind, error) };
  }
  return { kind: "back-off", afterMs: backoffMs(NO_ANSWER_BACKOFF, failures), why: "no-answer" };
}
