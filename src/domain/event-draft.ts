import type { NoiseLevel } from "../store/index.ts";
import type {
  Event,
  EventInput,
  EventPatch,
  RecurrencePattern,
} from "../upstream/events/schemas.ts";
import { emailsOf, type PersonOut } from "./people.ts";
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
    if (v.count === undefined) {
      errors.count = `Say how many times the event happens (1 to ${COUNT_MAX}).`;
    } else if (!Number.isInteger(v.count) || v.count < 1 || v.count > COUNT_MAX) {
      errors.count = `Use a whole number from 1 to ${COUNT_MAX}.`;
    }
    const f = v.frequency ?? 1;
    if (!Number.isInteger(f) || f < 1 || f > FREQUENCY_MAX) {
      errors.frequency = `Use a whole number of days from 1 to ${FREQUENCY_MAX}.`;
    }
  }
  return errors;
}

export function recurrenceOf(v: EventDraft): RecurrencePattern | undefined {
  if (v.recurrence !== "DAILY" || v.count === undefined) return undefined;
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
  if (!a) return !b || b.recurrenceCount <= 1;
  if (!b) return false;
  return (
    a.recurrenceType === b.recurrenceType &&
    a.recurrenceCount === b.recurrenceCount &&
    a.frequency === b.frequency &&
    b.endDate === null
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
  const daily =
    e.recurrencePattern?.recurrenceType === "DAILY" && e.recurrencePattern.recurrenceCount > 1;
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
