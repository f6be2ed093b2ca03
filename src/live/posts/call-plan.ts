import { eventOf, type LiveSubscription } from "../../domain/subscription.ts";
import type { InstanceLive } from "../instance.ts";
import type { Action, LiveModel } from "../live-model.ts";
import type { CallPosting } from "../live-record.ts";

/**
 * What the event's Slack call needs next, decided purely (the planner asks, changing nothing);
 * call.ts does it. Apart so that the planner, which decides, never imports the file that calls
 * Slack.
 */

/** When the participants are looked at again: a join or a leave since the last sync. */
export function signature(inst: InstanceLive): string {
  return `${inst.joins}:${inst.leaves}`;
}

export function joinUrlOf(sub: LiveSubscription): string | undefined {
  return eventOf(sub)?.attendeeUrl || undefined;
}

export function titleOf(sub: LiveSubscription): string {
  return eventOf(sub)?.title ?? "Live event";
}

/** The channel that holds the current instance's call, or would start it. */
export function callChannel(model: LiveModel): string | undefined {
  const sub = model.sub;
  if (!sub) return undefined;
  const inst = model.live.current();
  // Where the instance's call is, even a channel muted since (one call per instance).
  for (const [ch, c] of Object.entries(model.channels)) {
    if (inst && c.call?.instanceId === inst.id) return ch;
  }
  return sub.channels.find((ch) => {
    const c = model.channels[ch];
    return c?.cardTs !== undefined && !c.blocked && !c.threadBlocked;
  });
}

/** A call this channel started that is still open in Slack. */
export function open(call: CallPosting | undefined): call is CallPosting & { id: string } {
  return call?.id !== undefined && !call.ended && call.skipped === undefined;
}

/**
 * The call's instance has ended (instance-end.ts), the event was cancelled or is gone, or the
 * channel holding the call was muted (its thread no longer follows the event).
 */
export function over(
  sub: LiveSubscription | undefined,
  inst: InstanceLive | undefined,
  call: CallPosting,
  ch: string,
): boolean {
  const ended = !inst || inst.id !== call.instanceId || inst.endedAt !== undefined;
  const left = !sub?.channels.includes(ch);
  return ended || left || sub?.cancelled === true || sub?.gone === true;
}

/** What the call needs next in channel `ch` (pure: the planner asks). */
export function callAction(
  model: LiveModel,
  ch: string,
  now: number,
  syncEveryMs: number,
): Action | undefined {
  const sub = model.sub;
  const c = model.channels[ch];
  if (!c || c.blocked) return undefined;
  const call = c.call;
  if (call?.adding !== undefined) return c.cardTs ? { kind: "call" } : undefined;
  const inst = model.live.current();
  if (open(call) && over(sub, inst, call, ch)) return { kind: "call" };
  if (
    !sub ||
    !c.cardTs ||
    c.threadBlocked ||
    !inst ||
    over(sub, inst, { instanceId: inst.id }, ch)
  ) {
    return undefined;
  }
  if (call?.instanceId === inst.id) {
    if (call.skipped !== undefined || call.ended) return undefined;
    // Not added yet (Slack asked to wait), or added with its block still to post.
    if (!call.id || !call.blockTs) return { kind: "call" };
    if (call.title !== titleOf(sub) || call.joinUrl !== joinUrlOf(sub)) return { kind: "call" };
    if (call.synced === signature(inst)) return undefined;
    const due = (call.syncedAt ?? 0) + syncEveryMs;
    return now >= due ? { kind: "call" } : { kind: "wait", until: due };
  }
  if (inst.state !== "IN_EVENT" || callChannel(model) !== ch) return undefined;
  if (!sub.createdBy || !joinUrlOf(sub)) return undefined;
  return { kind: "call" };
}
