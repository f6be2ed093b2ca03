import type { Event } from "../upstream/events/schemas.ts";
import { dailyOccurrences } from "./time.ts";
import { knownZone } from "./zones.ts";

/**
 * Whether an event instance has ended, decided here and nowhere else: the live engine records
 * it (src/live/state.ts for the two message rules, report-post.ts for the quiet one) and every
 * surface that shows a state (card, unfurl, App Home, `/onair list` and `show`, the playground)
 * reads the answer through `instanceEndedAt`, so none of them can say "Live now" after the
 * report went out.
 *
 * An instance ends at the first of:
 * - a later EVENT_STATE NOT_STARTED for an instance that had begun;
 * - a message for a new instanceId of the same event (the previous instance ended then);
 * - its occurrence's scheduled end passed and nothing arrived for it for the quiet period after
 *   the later of that end and its last message.
 */

/** With no message for this long after the scheduled end, the instance counts as ended. */
export const QUIET_END_MS = 15 * 60_000;

/** What the decision needs to know of an instance. */
export interface InstanceTimes {
  state: string | undefined;
  unique: number;
  /** Recorded by the engine when one of the rules ended it. */
  endedAt: number | undefined;
  /** The last message applied to it (arrival, epoch ms). */
  lastAt: number;
}

/** Heard of at all (a state or an attendee): only such an instance can end. */
export function hasBegun(t: Pick<InstanceTimes, "state" | "unique">): boolean {
  return t.state !== undefined || t.unique > 0;
}

/** When the quiet rule ends a begun instance not ended yet (whether or not that is past). */
export function quietEndDue(
  t: InstanceTimes,
  scheduledEnd: number | undefined,
  quietMs = QUIET_END_MS,
): number | undefined {
  if (t.endedAt !== undefined || scheduledEnd === undefined || !hasBegun(t)) return undefined;
  return Math.max(scheduledEnd, t.lastAt) + quietMs;
}

/** When the instance ended, or undefined while it has not: the answer every surface shows. */
export function instanceEndedAt(
  t: InstanceTimes,
  scheduledEnd: number | undefined,
  now: number,
  quietMs = QUIET_END_MS,
): number | undefined {
  if (t.endedAt !== undefined) return t.endedAt;
  const due = quietEndDue(t, scheduledEnd, quietMs);
  if (due === undefined || now < due || scheduledEnd === undefined) return undefined;
  return Math.max(scheduledEnd, t.lastAt);
}

const DAY = 86_400_000;

type Schedule = Pick<Event, "start" | "end" | "timezone" | "recurrencePattern">;

/** Every occurrence's start (one for a one-off event; a daily series in its own zone). */
export function occurrenceStarts(e: Schedule, limit = 1000): number[] {
  const p = e.recurrencePattern;
  return p && p.recurrenceType === "DAILY" && p.recurrenceCount > 1 && knownZone(e.timezone)
    ? dailyOccurrences(e.start, e.timezone, Math.max(1, p.frequency), p.recurrenceCount, limit)
    : [e.start];
}

/**
 * The scheduled end of the occurrence an instance belongs to: the one whose start is nearest to
 * when the instance was first heard of (preparation may begin before the start, the broadcast
 * may begin late). A one-off event has one.
 */
export function occurrenceEnd(e: Schedule, heardAt: number): number {
  const length = e.end - e.start;
  const every = Math.max(1, e.recurrencePattern?.frequency ?? 1) * DAY;
  // Only the occurrences up to just past heardAt are computed (a zone moves a day by an hour).
  const upTo = Math.max(0, Math.floor((heardAt - e.start) / every)) + 2;
  let best = e.start;
  for (const s of occurrenceStarts(e, upTo)) {
    if (Math.abs(s - heardAt) < Math.abs(best - heardAt)) best = s;
    if (s > heardAt) break;
  }
  return best + length;
}

/**
 * When the event next happens: the start of the first occurrence not yet over (a daily series
 * counts its occurrences in the event's own zone), or undefined when all are over.
 */
export function nextStart(e: Schedule, now: number): number | undefined {
  const length = e.end - e.start;
  return occurrenceStarts(e).find((s) => s + length >= now);
}
