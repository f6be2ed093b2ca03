import type { LiveSubscription } from "../domain/subscription.ts";
import type { ChannelPosting } from "./live-record.ts";
import type { EventLive } from "./state.ts";

/**
 * The words the live engine's deciding and doing share: the kinds of post, what a channel needs
 * next, and the model the planner (planner.ts) and the call's rule (posts/call-plan.ts) read.
 * Types only, below both, so that neither imports the files that post (posts/*.ts,
 * post-once.ts) to name them.
 */

export type PostKind = "card" | "counter" | "digest" | "reminder" | "report" | "call";

/** What a channel of an event needs next: a post, or nothing before `until`. */
export type Action = { kind: PostKind } | { kind: "wait"; until: number };

/** What the planner reads of an event: its subscription, live figures and channels' posting. */
export interface LiveModel {
  readonly sub: LiveSubscription | undefined;
  readonly live: EventLive;
  readonly channels: Readonly<Record<string, ChannelPosting>>;
}
