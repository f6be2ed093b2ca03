import { createHash } from "node:crypto";
import type { WebClient } from "@slack/web-api";
import { occurrenceStarts } from "../domain/instance-end.ts";
import { REMINDER_HORIZON_MS, REMINDER_MIN_LEAD_MS, reminderText } from "../domain/reminders.ts";
import { eventOf, type LiveSubscription } from "../domain/subscription.ts";
import { slackErrorName } from "../slack-errors.ts";
import type { ChannelPosting, ScheduledReminder } from "./live-record.ts";

/**
 * Slack's scheduled reminders kept in step with what the subscription asks, one call per turn of
 * the channel's lane (so they share its pace, and its Retry-After), the way cards and digests
 * are posted. Wanted: for each occurrence and each minutes-before of the channel, a reminder at
 * its start − minutes, if that is between a minute from now and Slack's 120-day horizon. Held but not wanted (the event
 * moved, was cancelled, the channel muted): deleted. A reminder whose time has come is Slack's
 * to post and is simply forgotten.
 */

export interface WantedReminder {
  key: string;
  /** Epoch seconds. */
  postAt: number;
  text: string;
}

/** Not worth deleting: Slack posts it within this long anyway. */
const DUE_SOON_MS = 30_000;

/** Every reminder a channel's minutes ask for, one per occurrence and minutes, by post time. */
function allReminders(sub: LiveSubscription, channel: string): WantedReminder[] {
  const mins = [...new Set(sub.reminders?.[channel]?.mins ?? [])].sort((a, b) => b - a);
  const minsKey = mins.join(",");
  const cached = sub.event && typeof sub.event === "object" ? candidates.get(sub.event) : undefined;
  const hit = cached?.get(minsKey);
  if (hit) return hit;
  const event = eventOf(sub);
  if (!event) return [];
  const out: WantedReminder[] = [];
  // A daily series gets them before every occurrence (Slack holds them up to its horizon; the
  // rest are topped up as days pass, see reminderTopUp).
  for (const start of occurrenceStarts(event)) {
    for (const min of mins) {
      const postAt = Math.floor((start - min * 60_000) / 1000);
      const text = reminderText(event, min, start);
      const key = createHash("sha256")
        .update(`${postAt}\0${text}`)
        .digest("base64url")
        .slice(0, 22);
      out.push({ key, postAt, text });
    }
  }
  out.sort((a, b) => a.postAt - b.postAt);
  if (sub.event && typeof sub.event === "object") {
    const perMins = cached ?? new Map<string, WantedReminder[]>();
    perMins.set(minsKey, out);
    candidates.set(sub.event, perMins);
  }
  return out;
}

/** Per event snapshot (a subscription's copy, replaced on edit) and minutes: its reminders. */
const candidates = new WeakMap<object, Map<string, WantedReminder[]>>();

export function wantedReminders(
  sub: LiveSubscription | undefined,
  channel: string,
  now: number,
): WantedReminder[] {
  if (!sub || sub.cancelled || sub.gone || !sub.channels.includes(channel)) return [];
  return allReminders(sub, channel).filter((r) => {
    const at = r.postAt * 1000;
    return at >= now + REMINDER_MIN_LEAD_MS && at <= now + REMINDER_HORIZON_MS;
  });
}

/** Longest a lane sleeps before looking at the horizon again (timers hold about 24 days). */
const TOP_UP_MAX_WAIT_MS = 24 * 3600_000;

/**
 * When the next reminder beyond Slack's horizon comes within it (a long series' later days), so
 * the channel's lane wakes then to schedule it; undefined when none is left beyond it.
 */
export function reminderTopUp(
  sub: LiveSubscription | undefined,
  channel: string,
  now: number,
): { kind: "wait"; until: number } | undefined {
  if (!sub || sub.cancelled || sub.gone || !sub.channels.includes(channel)) return undefined;
  const beyond = allReminders(sub, channel).find(
    (r) => r.postAt * 1000 > now + REMINDER_HORIZON_MS,
  );
  if (!beyond) return undefined;
  const until = Math.min(beyond.postAt * 1000 - REMINDER_HORIZON_MS, now + TOP_UP_MAX_WAIT_MS);
  return { kind: "wait", until };
}

export type ReminderStep =
  | { op: "delete"; reminder: ScheduledReminder }
  | { op: "schedule"; wanted: WantedReminder };

/** The next call that brings the channel closer to what is wanted, if any. */
export function nextReminderStep(
  c: ChannelPosting,
  wanted: readonly WantedReminder[],
  now: number,
): ReminderStep | undefined {
  const held = (c.reminders ?? []).filter((r) => r.postAt * 1000 > now);
  const keys = new Set(wanted.map((w) => w.key));
  const extra = held.find((r) => !keys.has(r.key) && r.postAt * 1000 > now + DUE_SOON_MS);
  if (extra) return { op: "delete", reminder: extra };
  const heldKeys = new Set(held.map((r) => r.key));
  const missing = wanted.find((w) => !heldKeys.has(w.key));
  return missing ? { op: "schedule", wanted: missing } : undefined;
}

/** Drops what Slack has posted by now from the channel's list. */
export function forgetPosted(c: ChannelPosting, now: number): void {
  if (!c.reminders) return;
  c.reminders = c.reminders.filter((r) => r.postAt * 1000 > now);
  if (c.reminders.length === 0) delete c.reminders;
}

/**
 * A message text without the links Slack adds on storing it: Slack wraps every bare URL
 * ("IN: Foo bar http://test.com OUT: Foo bar <http://test.com>", its formatting reference), and
 * a bare domain as `<http://domain|domain>`, an e-mail address as `<mailto:a|a>`, so a title
 * holding one comes back changed. Links the app wrote carry a label (`<url|label>`) and stay.
 */
export function withoutSlackLinks(text: string): string {
  return text
    .replace(/<(?:http:\/\/|mailto:)([^<>|]+)\|\1>/g, "$1")
    .replace(/<([a-z][a-z0-9+.-]*:\/\/[^<>|]*)>/gi, "$1");
}

/**
 * Slack's scheduled message matching a reminder whose id was not recorded (the answer was lost,
 * or the process died right after the call): same time, same text (as Slack stores it).
 */
export async function findScheduled(
  client: WebClient,
  channel: string,
  wanted: { postAt: number; text: string },
): Promise<string | undefined> {
  const res = await client.chat.scheduledMessages.list({
    channel,
    oldest: String(wanted.postAt - 1),
    latest: String(wanted.postAt + 1),
    limit: 100,
  });
  return res.scheduled_messages?.find(
    (m) =>
      m.post_at === wanted.postAt &&
      m.text !== undefined &&
      withoutSlackLinks(m.text) === withoutSlackLinks(wanted.text) &&
      m.id,
  )?.id;
}

/** Deletes one; gone already (posted, or deleted by hand) counts as done. */
export async function deleteScheduled(
  client: WebClient,
  channel: string,
  id: string,
): Promise<void> {
  try {
    await client.chat.deleteScheduledMessage({ channel, scheduled_message_id: id });
  } catch (err) {
    if (slackErrorName(err) === "invalid_scheduled_message_id") return;
    throw err;
  }
}
