import { instanceEndedAt, occurrenceEnd, quietEndDue } from "../domain/instance-end.ts";
import { noiseOf } from "../domain/subscription.ts";
import { type Event, eventSchema } from "../upstream/events/schemas.ts";
import { type RenderedCard, renderCard, renderMutedCard } from "./card.ts";
import { counterText, emptyPending, isEmpty } from "./digest.ts";
import type { Action, LiveModel, PostKind } from "./live-model.ts";
import type { ChannelPosting, ScheduledReminder } from "./live-record.ts";
import { callAction, open as callOpen } from "./posts/call-plan.ts";
import { nextReminderStep, reminderTopUp, wantedReminders } from "./reminders.ts";
import type { EventLive, InstanceLive } from "./state.ts";

/**
 * Decide purely, then act (STYLE.md 13): what a channel of an event needs next, read from the
 * event's live model and the time, changing nothing. The time-driven changes (an instance ending
 * at its scheduled end, a channel notified again after a mute, reminders Slack has posted or an
 * earlier version kept) are `transitions`, which the event's owner (event-run.ts) applies as a
 * step of its own before it asks; asking "idle?" or "what next?" never ends an instance.
 */

export interface PlanSettings {
  /** Between two digests of a "digest" channel. */
  digestEveryMs: number;
  /** The quiet period of the scheduled-end rule (domain/instance-end.ts). */
  quietMs: number;
  /** After a report share whose answer was lost: when it has surely landed, if made at all. */
  shareSettleMs: number;
}

/** A change that is due because time passed, for the owner to apply (applyTransition). */
export type Transition =
  | { kind: "end-instance"; instanceId: string; at: number }
  | { kind: "unmute"; channel: string }
  | { kind: "adopt-legacy-reminders"; channel: string; reminders: ScheduledReminder[] }
  | { kind: "forget-posted-reminders"; channel: string; keep: ScheduledReminder[] };

const NO_POSTING: ChannelPosting = Object.freeze({ pending: emptyPending(), seq: 0 });

function posting(model: LiveModel, ch: string): ChannelPosting {
  return model.channels[ch] ?? NO_POSTING;
}

/** Per instance: its occurrence's scheduled end, for one event snapshot (the planner is hot). */
const ends = new WeakMap<InstanceLive, { event: unknown; end: number | undefined }>();

/** The scheduled end of the occurrence `inst` belongs to, by the subscription's event snapshot. */
export function scheduledEndOf(event: unknown, inst: InstanceLive): number | undefined {
  const hit = ends.get(inst);
  if (hit && hit.event === event) return hit.end;
  const parsed = typeof event === "object" && event ? eventSchema.safeParse(event) : undefined;
  // First heard of: its first state change, else (attendees only) its last message.
  const heardAt = inst.marks[0]?.[1] ?? inst.lastAt;
  const end = parsed?.success ? occurrenceEnd(parsed.data as Event, heardAt) : undefined;
  ends.set(inst, { event, end });
  return end;
}

/** When the quiet rule ends the current instance (past or not), or undefined when it will not. */
function quietEndOf(model: LiveModel, settings: PlanSettings): number | undefined {
  const inst = model.live.current();
  const sub = model.sub;
  if (!inst || !sub || sub.cancelled) return undefined;
  return quietEndDue(inst, scheduledEndOf(sub.event, inst), settings.quietMs);
}

/** The time-driven changes due at `now`, in the order they are to be applied. */
export function transitions(model: LiveModel, now: number, settings: PlanSettings): Transition[] {
  const out: Transition[] = [];
  const inst = model.live.current();
  const due = quietEndOf(model, settings);
  if (inst && model.sub && due !== undefined && now >= due) {
    const end = scheduledEndOf(model.sub.event, inst);
    const at = instanceEndedAt(inst, end, now, settings.quietMs);
    if (at !== undefined) out.push({ kind: "end-instance", instanceId: inst.id, at });
  }
  const subscribed = model.sub?.channels ?? [];
  for (const ch of new Set([...subscribed, ...Object.keys(model.channels)])) {
    const c = posting(model, ch);
    if (c.blocked) continue;
    // An earlier version kept the scheduled ids on the subscription: taken over once (those
    // Slack has not posted yet; the rest it has).
    const legacy = model.sub?.reminders?.[ch]?.scheduled;
    const adopt = c.reminders ? [] : (legacy ?? []).filter((r) => r.postAt * 1000 > now);
    if (adopt.length > 0) {
      const reminders = adopt.map((r) => ({ id: r.id, postAt: r.postAt, key: `legacy:${r.id}` }));
      out.push({ kind: "adopt-legacy-reminders", channel: ch, reminders });
    }
    // Slack has posted these by now; one being scheduled keeps the list as it is meanwhile.
    const held = c.reminders;
    if (held && !c.reminderPosting && held.some((r) => r.postAt * 1000 <= now)) {
      const keep = held.filter((r) => r.postAt * 1000 > now);
      out.push({ kind: "forget-posted-reminders", channel: ch, keep });
    }
    if (c.muted && subscribed.includes(ch)) out.push({ kind: "unmute", channel: ch });
  }
  return out;
}

/**
 * Applies one transition to the model: only the event's owner calls this (event-run.ts).
 * `channel` gives the owner's posting state of a channel, made when missing.
 */
export function applyTransition(
  model: LiveModel,
  t: Transition,
  channel: (ch: string) => ChannelPosting,
): void {
  switch (t.kind) {
    case "end-instance": {
      const inst = model.live.instances.get(t.instanceId);
      if (!inst || inst.endedAt !== undefined) return;
      inst.endedAt = t.at;
      inst.marks.push(["ENDED", t.at]);
      return;
    }
    case "unmute":
      delete channel(t.channel).muted;
      return;
    case "adopt-legacy-reminders": {
      const c = channel(t.channel);
      if (!c.reminders) c.reminders = t.reminders.map((r) => ({ ...r }));
      return;
    }
    case "forget-posted-reminders": {
      const c = channel(t.channel);
      if (t.keep.length === 0) delete c.reminders;
      else c.reminders = t.keep;
      return;
    }
  }
}

/** The card a muted channel still needs to show (not yet posted as muted), if any. */
export function mutedCard(model: LiveModel, ch: string): RenderedCard | undefined {
  const c = model.channels[ch];
  if (!c?.muted || !c.cardTs || c.blocked || model.sub?.channels.includes(ch)) return undefined;
  const card = renderMutedCard(c.muted);
  return card && card.hash !== c.cardHash ? card : undefined;
}

/**
 * The channels the event posts to: the subscription's, and any that still hold reminders
 * (muted, or the subscription gone) until they are deleted.
 */
export function channelsToServe(model: LiveModel): string[] {
  const out = new Set(model.sub?.channels ?? []);
  for (const [ch, c] of Object.entries(model.channels)) {
    if (c.reminders?.length || c.reminderPosting || mutedCard(model, ch) || callOpen(c.call)) {
      out.add(ch);
    }
  }
  return [...out];
}

/** Reminders Slack holds that nobody wants any more, or wanted ones not yet scheduled. */
function reminderDue(model: LiveModel, ch: string, now: number): boolean {
  const c = posting(model, ch);
  if (c.blocked) return false;
  if (c.reminderPosting) return true;
  return nextReminderStep(c, wantedReminders(model.sub, ch, now), now) !== undefined;
}

/** The ended instance whose report this channel still owes, if any. */
export function reportDue(model: LiveModel, ch: string): string | undefined {
  const c = posting(model, ch);
  if (!c.cardTs) return undefined;
  for (const id of model.live.order) {
    const inst = model.live.instances.get(id);
    if (!inst || inst.endedAt === undefined) continue;
    if (inst.unique === 0 && inst.state === undefined) continue;
    if (c.reported?.includes(id)) continue;
    return id;
  }
  return undefined;
}

/** The running count the thread shows for the current instance. */
export function counterOf(live: EventLive): string {
  const inst = live.current();
  return counterText({
    joins: inst?.joins ?? 0,
    leaves: inst?.leaves ?? 0,
    present: inst?.present ?? 0,
  });
}

/**
 * The next post for channel `ch`, or when to look again, or nothing. `lastKind`: the channel's
 * previous post, so the card and the thread take turns. Reads the model as it is: the owner
 * applies `transitions` first.
 */
export function next(
  model: LiveModel,
  ch: string,
  now: number,
  settings: PlanSettings,
  lastKind?: PostKind,
): Action | undefined {
  const sub = model.sub;
  const c = posting(model, ch);
  if (c.blocked) return undefined;
  const reminder: Action | undefined = reminderDue(model, ch, now)
    ? { kind: "reminder" }
    : undefined;
  if (!sub?.channels.includes(ch)) {
    // Muted with its call open: the call is ended (posts/call.ts).
    const end = callAction(model, ch, now, settings.digestEveryMs);
    return mutedCard(model, ch) ? { kind: "card" } : (reminder ?? end);
  }
  const endAt = quietEndOf(model, settings);
  const card = renderCard(sub, model.live, ch);
  const cardDue = card !== undefined && (!c.cardTs || c.cardHash !== card.hash);
  if (!c.cardTs) return cardDue ? { kind: "card" } : reminder;
  // The instance's Slack call (posts/call.ts): once the card is up to date, like the report.
  const call = callAction(model, ch, now, settings.digestEveryMs);
  const callNow = call?.kind === "call";
  if (sub.cancelled || sub.gone) return cardDue ? { kind: "card" } : (reminder ?? call);
  // A report share whose answer was lost is looked for once it has settled; posts go on meanwhile.
  const settled = c.reportPosting ? c.reportPosting.at + settings.shareSettleMs : 0;
  const report: Action | undefined = c.threadBlocked
    ? undefined
    : settled > now
      ? { kind: "wait", until: settled }
      : c.reportPosting || reportDue(model, ch) !== undefined
        ? { kind: "report" }
        : endAt !== undefined
          ? { kind: "wait", until: endAt }
          : undefined;
  const noise = noiseOf(sub, ch);
  let thread: Action | undefined;
  if (c.threadBlocked) thread = undefined;
  else if (noise === "counter") {
    const inst = model.live.current();
    if (inst && inst.joins > 0 && c.counterHash !== counterOf(model.live)) {
      thread = { kind: "counter" };
    }
  } else if ((noise === "digest" || noise === "every") && !isEmpty(c.pending)) {
    const every = noise === "every" ? 0 : settings.digestEveryMs;
    const due = (c.lastThreadAt ?? 0) + every;
    thread = now >= due ? { kind: "digest" } : { kind: "wait", until: due };
  }
  // Alternate so that a card changing every second cannot starve the thread, nor the reverse;
  // reminders (hours ahead) go when neither has anything to say.
  if (cardDue && (lastKind !== "card" || !thread || thread.kind === "wait")) {
    return { kind: "card" };
  }
  if (thread && thread.kind !== "wait") return thread;
  if (cardDue) return { kind: "card" };
  if (callNow) return call;
  if (report?.kind === "report") return report;
  // A long series: its later reminders come within Slack's horizon as days pass.
  return (
    reminder ?? earliest(earliest(earliest(thread, report), call), reminderTopUp(sub, ch, now))
  );
}

/** Whether any channel of the event has something to post or to wait for. */
export function hasWork(model: LiveModel, now: number, settings: PlanSettings): boolean {
  return channelsToServe(model).some((ch) => next(model, ch, now, settings) !== undefined);
}

/** The sooner of two waits (either may be absent). */
function earliest(a: Action | undefined, b: Action | undefined): Action | undefined {
  if (a?.kind !== "wait") return b ?? a;
  if (b?.kind !== "wait") return a;
  return a.until <= b.until ? a : b;
}
