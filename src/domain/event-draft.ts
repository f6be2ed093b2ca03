import type { NoiseLevel } from "../store/index.ts";
import type {
  Event,
  EventInput,
  EventPatch,
  RecurrencePattern,
} from "../upstream/events/schemas.ts";
import { emailsOf, type PersonOut } from "./people.ts";
import { dailyOccurrences, isValidZone, wallTime } from "./time.ts";
import { knownZone } from "./zones.ts";

/**
 * An event as an organizer drafts it (the schedule and edit forms), its rules, and how a draft
 * becomes the events service's create body or an edit's patch of only what changed.
 */

/** The service's boolean switches (the spec's `enable*`, `restricted`, `requireEmail`). */
export const FLAG_NAMES = [
  "restricted",
  "requireEmail",
  "enableChat",
  "enableQnA",
  "enableQnAAnonymous",
  "enableAttendeeRoster",
  "enableAutoRecord",
  "enablePSTN",
  "enableWaterMark",
  "enableIntroOutro",
  "customIntroOutro",
] as const;
export type FlagName = (typeof FLAG_NAMES)[number];

export const REMINDER_CHOICES = [1440, 60, 30, 10, 5] as const;
export const DEFAULT_REMINDERS = [60, 10] as const;

export const TITLE_MAX = 200;
export const COUNT_MAX = 365;
export const FREQUENCY_MAX = 30;
/** A picker with more people than this is left out of the form (edited on the service instead). */
export const PEOPLE_PICKER_MAX = 50;

/** What a draft holds; every field optional so half-filled states can be rebuilt. */
export interface EventDraft {
  title?: string;
  description?: string;
  /** Epoch ms. */
  start?: number;
  end?: number;
  timezone?: string;
  recurrence?: "NONE" | "DAILY";
  count?: number;
  /** A daily series's last day (YYYY-MM-DD in the event's zone): instead of a count. */
  until?: string;
  frequency?: number;
  flags?: Partial<Record<FlagName, boolean>>;
  /** Slack user ids. */
  panelists?: string[];
  moderators?: string[];
  panelistMessage?: string;
  moderatorMessage?: string;
  attendeeMessage?: string;
  channel?: string;
  /** How much attendee activity the channel's thread carries. */
  noise?: NoiseLevel;
  /** Minutes before the start. */
  reminders?: number[];
}

/** People lists an edit may send (only those the form showed). */
export interface EventPatchPeople {
  panelists?: PersonOut[];
  moderators?: PersonOut[];
}

/** Field → one plain sentence saying what to do. */
export type DraftErrors = Partial<Record<keyof EventDraft, string>>;

export interface ValidateOptions {
  now: number;
  /** On edit, the start as it was: an unchanged start may lie in the past (a running series). */
  originalStart?: number;
}

/** Inline errors by block id: one plain sentence each, saying what to do. */
export function validateDraft(v: EventDraft, opts: ValidateOptions): DraftErrors {
  const errors: DraftErrors = {};
  const title = v.title ?? "";
  if (title === "") errors.title = "Give the event a title.";
  else if (Array.from(title).length > TITLE_MAX) {
    errors.title = `Keep the title to ${TITLE_MAX} characters; it has ${Array.from(title).length}. Put the rest in the description.`;
  }
  if (v.start === undefined) errors.start = "Pick when the event starts.";
  else if (v.start < opts.now && v.start !== opts.originalStart) {
    errors.start = "That start is in the past. Pick a time from now on.";
  }
  if (v.end === undefined) errors.end = "Pick when the event ends.";
  else if (v.start !== undefined && v.end <= v.start) {
    errors.end = "The end must come after the start. Pick a later end.";
  }
  if (v.timezone !== undefined && !knownZone(v.timezone)) {
    errors.timezone = "I don't know that time zone. Pick one from the list.";
  }
  if (v.recurrence === "DAILY") {
    const f = v.frequency ?? 1;
    const goodFrequency = Number.isInteger(f) && f >= 1 && f <= FREQUENCY_MAX;
    if (!goodFrequency) {
      errors.frequency = `Use a whole number of days from 1 to ${FREQUENCY_MAX}.`;
    }
    if (v.count !== undefined && v.until !== undefined) {
      errors.until =
        "A series ends either after a number of times or on a date: clear one of the two.";
    } else if (v.until !== undefined) {
      const n = v.start === undefined ? undefined : untilCount(v);
      if (n === undefined && v.start !== undefined) {
        errors.until = "Pick a date from the list.";
      } else if (n !== undefined && n < 1) {
        errors.until = "The series can't end before its first day. Pick a later date.";
      } else if (n !== undefined && n > COUNT_MAX && goodFrequency) {
        errors.until = `That makes ${n} occurrences; a series holds at most ${COUNT_MAX}. Pick an earlier date.`;
      }
    } else if (v.count === undefined) {
      errors.count = `Say how many times the event happens (1 to ${COUNT_MAX}), or pick the date it runs until below.`;
    } else if (!Number.isInteger(v.count) || v.count < 1 || v.count > COUNT_MAX) {
      errors.count = `Use a whole number from 1 to ${COUNT_MAX}.`;
    }
  }
  return errors;
}

const DAY_MS = 86_400_000;

/** The draft's zone when it is one (validateDraft says so when it is not). */
function zoneOf(v: EventDraft): string {
  return v.timezone && isValidZone(v.timezone) ? v.timezone : "UTC";
}

function dateParts(date: string): [number, number, number] | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const probe = new Date(Date.UTC(y, mo - 1, d));
  if (probe.getUTCMonth() !== mo - 1 || probe.getUTCDate() !== d) return undefined;
  return [y, mo, d];
}

/**
 * How many occurrences a series ending on `until` holds: those whose day (in the event's zone)
 * is on or before it. Undefined when the draft lacks a start or the date is not one.
 */
export function untilCount(v: EventDraft): number | undefined {
  if (v.start === undefined || v.until === undefined) return undefined;
  const last = dateParts(v.until);
  if (!last) return undefined;
  const w = wallTime(v.start, zoneOf(v));
  const days = Math.round(
    (Date.UTC(last[0], last[1] - 1, last[2]) - Date.UTC(w.year, w.month - 1, w.day)) / DAY_MS,
  );
  if (days < 0) return 0;
  const f = v.frequency && v.frequency > 0 ? v.frequency : 1;
  return Math.floor(days / f) + 1;
}

/**
 * The service's endDate for a series ending on `until`: the end of its last occurrence (its
 * start's local time on that day, in the event's zone, plus the event's length), so the series
 * ends when its last occurrence does, whichever way the service reads the date.
 */
export function untilEndDate(v: EventDraft): number | undefined {
  const n = untilCount(v);
  if (n === undefined || n < 1 || v.start === undefined) return undefined;
  const zone = zoneOf(v);
  const starts = dailyOccurrences(v.start, zone, v.frequency ?? 1, n, n);
  const lastStart = starts.at(-1) ?? v.start;
  return lastStart + Math.max(0, (v.end ?? v.start) - v.start);
}

export function recurrenceOf(v: EventDraft): RecurrencePattern | undefined {
  if (v.recurrence !== "DAILY") return undefined;
  if (v.until !== undefined) {
    const endDate = untilEndDate(v);
    if (endDate === undefined) return undefined;
    return {
      recurrenceType: "DAILY",
      endDate,
      recurrenceCount: 0,
      frequency: v.frequency ?? 1,
      daysOfWeekMask: 0,
      dayOfMonth: 0,
      weekOfMonth: "NONE",
    };
  }
  if (v.count === undefined) return undefined;
  return {
    recurrenceType: "DAILY",
    endDate: null,
    recurrenceCount: v.count,
    frequency: v.frequency ?? 1,
    daysOfWeekMask: 0,
    dayOfMonth: 0,
    weekOfMonth: "NONE",
  };
}

/**
 * The create body: every field the form shows, set explicitly (the service's defaults are not
 * shown, so nothing is left to them).
 */
export function toEventInput(
  v: EventDraft,
  people: { panelists: PersonOut[]; moderators: PersonOut[] },
  fallbackZone: string,
): EventInput {
  const flags = Object.fromEntries(FLAG_NAMES.map((f) => [f, v.flags?.[f] ?? false])) as Record<
    FlagName,
    boolean
  >;
  const recurrence = recurrenceOf(v);
  return {
    title: v.title ?? "",
    description: v.description ?? "",
    start: v.start ?? 0,
    end: v.end ?? 0,
    timezone: v.timezone ?? fallbackZone,
    ...flags,
    ...(recurrence ? { recurrencePattern: recurrence } : {}),
    panelists: people.panelists,
    moderators: people.moderators,
    attendees: [],
    panelistMessage: v.panelistMessage ?? "",
    moderatorMessage: v.moderatorMessage ?? "",
    attendeeMessage: v.attendeeMessage ?? "",
  };
}

function sameEmails(a: readonly PersonOut[], b: readonly unknown[]): boolean {
  const x = a.map((p) => p.email.toLowerCase()).sort();
  const y = emailsOf(b).sort();
  return x.length === y.length && x.every((e, i) => e === y[i]);
}

function sameRecurrence(a: RecurrencePattern | undefined, b: RecurrencePattern | null | undefined) {
  if (!a) return !b || (b.endDate === null && b.recurrenceCount <= 1);
  if (!b) return false;
  return (
    a.recurrenceType === b.recurrenceType &&
    a.frequency === b.frequency &&
    (a.endDate === null
      ? b.endDate === null && a.recurrenceCount === b.recurrenceCount
      : b.endDate === a.endDate)
  );
}

/**
 * The edit body: only what differs from the event as the service has it now. People fields the
 * form did not show (too many to edit) are never sent.
 */
export function diffEvent(before: Event, v: EventDraft, people: EventPatchPeople): EventPatch {
  const patch: EventPatch = {};
  const strings = [
    "title",
    "description",
    "timezone",
    "panelistMessage",
    "moderatorMessage",
    "attendeeMessage",
  ] as const;
  for (const k of strings) {
    const next = v[k];
    if (next !== undefined && next !== before[k]) patch[k] = next;
  }
  if (v.start !== undefined && v.start !== before.start) patch.start = v.start;
  if (v.end !== undefined && v.end !== before.end) patch.end = v.end;
  if (v.flags) {
    for (const f of FLAG_NAMES) {
      const next = v.flags[f];
      if (next !== undefined && next !== before[f]) patch[f] = next;
    }
  }
  if (v.recurrence !== undefined) {
    const next = recurrenceOf(v);
    if (!sameRecurrence(next, before.recurrencePattern)) {
      // "Does not repeat" after a series: the spec shows no way to clear a pattern other than
      // a single occurrence, so the series is cut to one.
      patch.recurrencePattern = next ?? {
        recurrenceType: "DAILY",
        endDate: null,
        recurrenceCount: 1,
        frequency: 1,
        daysOfWeekMask: 0,
        dayOfMonth: 0,
        weekOfMonth: "NONE",
      };
    }
  }
  if (people.panelists && !sameEmails(people.panelists, before.panelists)) {
    patch.panelists = people.panelists;
  }
  if (people.moderators && !sameEmails(people.moderators, before.moderators)) {
    patch.moderators = people.moderators;
  }
  return patch;
}

/** The form's values from the event as the service has it (people still as e-mails). */
export function valuesFromEvent(e: Event): EventDraft {
  const p = e.recurrencePattern;
  const byDate = p?.recurrenceType === "DAILY" && p.endDate !== null;
  const daily = p?.recurrenceType === "DAILY" && (p.recurrenceCount > 1 || byDate);
  if (byDate && p && p.endDate !== null) {
    // The last occurrence's day: endDate is its end (see untilEndDate), less the event's length.
    const zone = isValidZone(e.timezone) ? e.timezone : "UTC";
    const w = wallTime(p.endDate - Math.max(0, e.end - e.start), zone);
    const pad = (n: number) => String(n).padStart(2, "0");
    return {
      ...valuesFromEvent({ ...e, recurrencePattern: null }),
      recurrence: "DAILY",
      until: `${w.year}-${pad(w.month)}-${pad(w.day)}`,
      frequency: p.frequency,
    };
  }
  return {
    title: e.title,
    description: e.description,
    start: e.start,
    end: e.end,
    timezone: e.timezone,
    recurrence: daily ? "DAILY" : "NONE",
    ...(daily && e.recurrencePattern
      ? { count: e.recurrencePattern.recurrenceCount, frequency: e.recurrencePattern.frequency }
      : {}),
    flags: Object.fromEntries(FLAG_NAMES.map((f) => [f, e[f]])),
    panelistMessage: e.panelistMessage,
    moderatorMessage: e.moderatorMessage,
    attendeeMessage: e.attendeeMessage,
  };
}
