import { methodFacts, TIER_PER_MINUTE } from "./reference/index.ts";

/**
 * Slack's rate limits, per method per workspace per app (one emulator is one workspace and one
 * app), as token buckets whose capacity is the per-minute allowance (Slack tolerates bursts and
 * evaluates over the minute): tier 1 1/min, tier 2 20/min, tier 3 50/min, tier 4 100/min. A
 * refused call gets HTTP 429 with `Retry-After`, the whole seconds until the bucket holds a
 * call again. chat.postMessage (tier "special") is limited per channel instead: about one a
 * second with short bursts. Apps distributed outside the Marketplace and created after
 * 2025-05-29 get conversations.history / replies at 1 a minute and 15 messages a page: a switch.
 * Sources: ../shared/slack-reference/README.md (Slack's rate-limits page and its 2025-05-29
 * changelog).
 */

export interface RateLimit {
  /** sustained calls per second per channel (Slack: about 1 for chat.postMessage) */
  readonly perChannelPerSec: number;
  /** calls allowed at once before the pace applies */
  readonly burst: number;
  /** methods counted; default chat.postMessage only (Slack's special per-channel rate) */
  readonly methods?: readonly string[];
}

export interface RateLimits {
  /** per-method tier buckets; default true */
  readonly tiers?: boolean;
  /** the per-channel message rate; default one a second, bursts of 3; false: off */
  readonly perChannel?: RateLimit | false;
  /** conversations.history / replies at 1 a minute and 15 a page; default false */
  readonly nonMarketplace?: boolean;
  /**
   * One emulator standing in for several workspaces (a benchmark's many teams on one bot
   * token): the workspace a call's channel belongs to. Slack keeps tier buckets per workspace
   * and app, so each workspace named here gets its own; a call with no channel, or a channel
   * this does not place, counts against the emulator's own.
   */
  readonly workspaceOf?: (channel: string) => string | undefined;
}

/** Slack documents "short bursts" without a number; three is this emulator's reading. */
export const DEFAULT_PER_CHANNEL: RateLimit = { perChannelPerSec: 1, burst: 3 };
export const NON_MARKETPLACE_PAGE = 15;
const NON_MARKETPLACE_METHODS = new Set(["conversations.history", "conversations.replies"]);

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  private tiers: boolean;
  private perChannel: RateLimit | false;
  private nonMarketplace: boolean;
  private workspaceOf: ((channel: string) => string | undefined) | undefined;
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly now: () => number,
    config: RateLimits | false = {},
  ) {
    const c = config === false ? { tiers: false, perChannel: false as const } : config;
    this.tiers = c.tiers ?? true;
    this.perChannel = c.perChannel ?? DEFAULT_PER_CHANNEL;
    this.nonMarketplace = c.nonMarketplace ?? false;
    this.workspaceOf = config === false ? undefined : config.workspaceOf;
  }

  get config(): Required<Omit<RateLimits, "workspaceOf">> {
    return { tiers: this.tiers, perChannel: this.perChannel, nonMarketplace: this.nonMarketplace };
  }

  /** Replaces the parts given; the buckets start full again. */
  set(config: RateLimits | false): void {
    if (config === false) {
      this.tiers = false;
      this.perChannel = false;
      this.nonMarketplace = false;
      this.workspaceOf = undefined;
    } else {
      if (config.workspaceOf !== undefined) this.workspaceOf = config.workspaceOf;
      if (config.tiers !== undefined) this.tiers = config.tiers;
      if (config.perChannel !== undefined) this.perChannel = config.perChannel;
      if (config.nonMarketplace !== undefined) this.nonMarketplace = config.nonMarketplace;
    }
    this.buckets.clear();
  }

  /** The history / replies page cap in force, if any. */
  historyPageMax(method: string): number | undefined {
    return this.nonMarketplace && NON_MARKETPLACE_METHODS.has(method)
      ? NON_MARKETPLACE_PAGE
      : undefined;
  }

  /**
   * Takes one call from the buckets that apply; returns the Retry-After seconds when one of
   * them is empty (nothing is taken then). `channel` is the resolved channel id, if any.
   */
  take(method: string, channel: string | undefined): number | undefined {
    const apply: { key: string; capacity: number; perSec: number }[] = [];
    const ws = channel === undefined ? undefined : this.workspaceOf?.(channel);
    const methodKey = ws === undefined ? `method:${method}` : `method:${method}:${ws}`;
    if (this.nonMarketplace && NON_MARKETPLACE_METHODS.has(method)) {
      apply.push({ key: methodKey, capacity: 1, perSec: 1 / 60 });
    } else if (this.tiers) {
      const tier = methodFacts(method)?.tier;
      if (tier !== undefined && tier !== "t5") {
        const perMin = TIER_PER_MINUTE[tier];
        apply.push({ key: methodKey, capacity: perMin, perSec: perMin / 60 });
      }
    }
    const pc = this.perChannel;
    if (pc && channel !== undefined && (pc.methods ?? ["chat.postMessage"]).includes(method)) {
      apply.push({ key: `channel:${channel}`, capacity: pc.burst, perSec: pc.perChannelPerSec });
    }
    const t = this.now();
    let wait = 0;
    const filled = apply.map((a) => {
      const b = this.buckets.get(a.key) ?? { tokens: a.capacity, at: t };
      b.tokens = Math.min(a.capacity, b.tokens + (Math.max(0, t - b.at) / 1000) * a.perSec);
      b.at = t;
      this.buckets.set(a.key, b);
      if (b.tokens < 1) wait = Math.max(wait, Math.max(1, Math.ceil((1 - b.tokens) / a.perSec)));
      return b;
    });
    if (wait > 0) return wait;
    for (const b of filled) b.tokens -= 1;
    return undefined;
  }
}
