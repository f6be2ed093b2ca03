import type { Json } from "./model.ts";
import { COMMON_ERRORS, methodFacts } from "./reference/index.ts";

/**
 * Faults a test stages: Slack throttling a call (429 with Retry-After, or a documented refusal)
 * and Slack answering late (the call takes effect at once, the answer comes later).
 */

export interface ThrottleRule {
  /** only this Web API method (default: any) */
  readonly method?: string;
  /** only calls naming this channel (id or name as sent) */
  readonly channel?: string;
  /** how many matching calls get a 429 (or the error below) */
  readonly times: number;
  readonly retryAfterSec: number;
  /**
   * Answer with this Slack error instead (HTTP 200, `ok: false`), as Slack does when it refuses a
   * call: e.g. `channel_is_limited_access` from `conversations.join`. Only an error Slack's
   * reference lists for the method (or, without `method`, one any method may answer).
   */
  readonly error?: string;
}

/**
 * Slack answering late: by default the call takes effect at once and its answer comes `ms` later
 * (the answer lost on the way back); with `takesEffect: "late"` the call reaches Slack `ms` later
 * and takes effect then, answered at once after (a request slow on the way in: until then, a read
 * of the channel does not show it).
 */
export interface SlowRule {
  /** only this Web API method (default: any) */
  readonly method?: string;
  /** only calls naming this channel (id or name as sent) */
  readonly channel?: string;
  /** how many matching calls are answered late */
  readonly times: number;
  readonly ms: number;
  /**
   * Answer this error although the call took effect: only one Slack's common-errors table says
   * may come after "some aspect of the operation succeeded" (`internal_error`, `fatal_error`).
   */
  readonly error?: "internal_error" | "fatal_error";
  /** When the call takes effect: at once (default), or late, as its answer comes. */
  readonly takesEffect?: "at_once" | "late";
}

export class FaultRules {
  private throttles: { rule: ThrottleRule; left: number }[] = [];
  private slows: { rule: SlowRule; left: number; met: () => void }[] = [];

  /** resolves a channel reference (id, name, #name) to its id */
  constructor(private readonly channelId: (ref: string) => string | undefined) {}

  throttle(rule: ThrottleRule): void {
    if (!(rule.times > 0) || !(rule.retryAfterSec >= 0)) {
      throw new Error("throttle needs times > 0 and retryAfterSec >= 0");
    }
    if (rule.error !== undefined) {
      // Never more lenient than Slack: a refusal the reference does not document for the
      // method (or, for a rule on any method, for every method) cannot be staged.
      const documented =
        rule.method === undefined
          ? COMMON_ERRORS.has(rule.error)
          : methodFacts(rule.method)?.errors.has(rule.error);
      if (!documented) {
        throw new Error(
          `throttle: Slack's reference does not list ${rule.error} for ${rule.method ?? "every method"}`,
        );
      }
    }
    this.throttles.push({ rule, left: rule.times });
  }

  clearThrottles(): void {
    this.throttles = [];
  }

  /**
   * Answers the next `times` matching calls late. Resolves when the first of them arrives, before
   * it is held or answered: a test then knows the call is on its way (with `takesEffect: "late"`,
   * arrived and not yet landed).
   */
  slow(rule: SlowRule): Promise<void> {
    if (!(rule.times > 0) || !(rule.ms >= 0)) throw new Error("slow needs times > 0 and ms >= 0");
    if (
      rule.error !== undefined &&
      rule.error !== "internal_error" &&
      rule.error !== "fatal_error"
    ) {
      throw new Error(
        "slow's error is internal_error or fatal_error (a call that may have happened)",
      );
    }
    if (rule.error !== undefined && rule.takesEffect === "late") {
      throw new Error("slow: an error that says the call may have happened is answered at once");
    }
    let met!: () => void;
    const arrived = new Promise<void>((resolve) => {
      met = resolve;
    });
    this.slows.push({ rule, left: rule.times, met });
    return arrived;
  }

  /** The throttle rule this call meets, spent once: its Retry-After, or the error it answers. */
  throttled(method: string, args: Json): number | { error: string } | undefined {
    for (const t of this.throttles) {
      if (t.left <= 0 || !this.matches(t.rule, method, args)) continue;
      t.left--;
      this.throttles = this.throttles.filter((x) => x.left > 0);
      return t.rule.error === undefined ? t.rule.retryAfterSec : { error: t.rule.error };
    }
    return undefined;
  }

  /** The slow rule this call meets, spent once; undefined for most calls. */
  lateBy(method: string, args: Json): SlowRule | undefined {
    for (const t of this.slows) {
      if (t.left <= 0 || !this.matches(t.rule, method, args)) continue;
      t.left--;
      t.met();
      this.slows = this.slows.filter((x) => x.left > 0);
      return t.rule;
    }
    return undefined;
  }

  /** Whether a rule names this call (its method and channel, if it says). */
  private matches(rule: { method?: string; channel?: string }, method: string, args: Json) {
    if (rule.method !== undefined && rule.method !== method) return false;
    if (rule.channel === undefined) return true;
    const channel = typeof args.channel === "string" ? args.channel : undefined;
    if (channel === undefined) return false;
    const resolved = this.channelId(channel);
    const want = this.channelId(rule.channel) ?? rule.channel;
    return channel === rule.channel || resolved === want;
  }
}
