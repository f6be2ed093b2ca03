import { ErrorCode } from "@slack/web-api";
import { describe, expect, it } from "vitest";
import { backoffMs } from "../../../src/live/backoff.ts";
import { NO_ANSWER_BACKOFF, outcomeOf, PASSING_BACKOFF } from "../../../src/live/outcome.ts";
import { LookupThrottled, NotOwner } from "../../../src/live/post-errors.ts";
import { NoInstallationError } from "../../../src/slack-errors.ts";

/** What each Slack answer to a post means, decided in one place (src/live/outcome.ts). */

function refused(error: string) {
  return Object.assign(new Error(`An API error occurred: ${error}`), {
    code: ErrorCode.PlatformError,
    data: { ok: false, error },
  });
}

const limited = Object.assign(new Error("A rate limit was exceeded"), {
  code: ErrorCode.RateLimitedError,
  retryAfter: 7,
});

describe("the outcome of a failed post", () => {
  it("says when this process no longer owns the event", () => {
    expect(outcomeOf(new NotOwner(), "card", 0)).toEqual({ kind: "not-owner" });
  });

  it("holds the channel for Slack's Retry-After", () => {
    expect(outcomeOf(limited, "digest", 3)).toEqual({ kind: "retry-after", afterMs: 7_000 });
  });

  it("lets a lookup wait without holding the channel", () => {
    expect(outcomeOf(new LookupThrottled(60_000), "card", 0)).toEqual({
      kind: "lookup-wait",
      afterMs: 60_000,
      why: "throttled",
    });
    expect(outcomeOf(new LookupThrottled(5_000, "settling"), "report", 0)).toMatchObject({
      why: "settling",
    });
  });

  it("blocks the channel for a refusal retrying will not change, or the thread for a thread's", () => {
    expect(outcomeOf(refused("channel_not_found"), "card", 0)).toEqual({
      kind: "block",
      error: "channel_not_found",
      part: "card",
    });
    expect(outcomeOf(refused("restricted_action_thread_locked"), "digest", 0)).toEqual({
      kind: "block",
      error: "restricted_action_thread_locked",
      part: "thread",
    });
    // The card itself refused that way: the whole channel stops.
    expect(outcomeOf(refused("restricted_action_thread_locked"), "card", 0)).toMatchObject({
      part: "card",
    });
    expect(outcomeOf(refused("posting_to_channel_denied"), "report", 0)).toMatchObject({
      part: "thread",
    });
    expect(outcomeOf(new NoInstallationError("T1"), "reminder", 0)).toEqual({
      kind: "block",
      error: "not_installed",
      part: "card",
    });
  });

  it("backs off with the app's one policy, longer each time it repeats", () => {
    const passing = [0, 1, 2, 6, 9].map((n) => outcomeOf(refused("internal_error"), "card", n));
    expect(passing.map((o) => (o.kind === "back-off" ? o.afterMs : -1))).toEqual([
      1_000, 2_000, 4_000, 60_000, 60_000,
    ]);
    const lost = [0, 1, 2, 3].map((n) => outcomeOf(new Error("socket hang up"), "digest", n));
    expect(lost.map((o) => (o.kind === "back-off" ? `${o.why} ${o.afterMs}` : o.kind))).toEqual([
      "no-answer 2000",
      "no-answer 4000",
      "no-answer 8000",
      "no-answer 10000",
    ]);
    expect(backoffMs(PASSING_BACKOFF, 0)).toBe(1_000);
    expect(backoffMs(NO_ANSWER_BACKOFF, 100)).toBe(10_000);
  });
});
