import { NOISE_LEVELS, type NoiseLevel } from "../../store/index.ts";
import type {
  Event,
  EventInput,
  EventPatch,
  RecurrencePattern,
} from "../../upstream/events/schemas.ts";
import {
  COUNT_MAX,
  type EventFormValues,
  FLAG_GROUPS,
  FLAG_NAMES,
  type FlagName,
  FREQUENCY_MAX,
  REMINDER_CHOICES,
  TITLE_MAX,
} from "../blocks/event-form.ts";
import { EVENT_FIELDS } from "./ids.ts";
import { emailsOf, type PersonOut } from "./people.ts";
import { knownZone } from "./zones.ts";

/** One element's entry in a view's state, as Slack sends it. */
export interface StateValue {
  type?: string;
  value?: string | null;
  selected_date_time?: number | null;
  selected_option?: { value: string } | null;
  selected_options?: Array<{ value: string }>;
  selected_users?: string[];
  selected_conversation?: string | null;
}
export type ViewStateValues = Record<string, Record<string, StateValue>>;

function entry(values: ViewStateValues, id: string): StateValue | undefined {
  return values[id]?.[id];
}

function int(raw: string | null | undefined): number | undefined {
  if (raw === null || raw === undefined || raw.trim() === "") return undefined;
  const n = Number(raw);
  return Number.isFinite(n) ? n : Number.NaN;
}

/** A noise level picked in a radio group; anything unknown reads as unset (the live default). */
export function noiseOf(e: StateValue | undefined): NoiseLevel | undefined {
  const v = e?.selected_option?.value;
  return (NOISE_LEVELS as readonly string[]).includes(v ?? "") ? (v as NoiseLevel) : undefined;
}

/** Reads the schedule / edit form. Fields missing from the view stay undefined. */
export function readEventForm(values: ViewStateValues): EventFormValues {
  const out: EventFormValues = {};
  const text = (id: string) => {
    const e = entry(values, id);
    return e ? (e.value ?? "") : undefined;
  };
  const set = <K extends keyof EventFormValues>(k: K, v: EventFormValues[K] | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  set("title", text(EVENT_FIELDS.title)?.trim());
  set("description", text(EVENT_FIELDS.description));
  const start = entry(values, EVENT_FIELDS.start)?.selected_date_time;
  if (typeof start === "number") out.start = start * 1000;
  const end = entry(values, EVENT_FIELDS.end)?.selected_date_time;
  if (typeof end === "number") out.end = end * 1000;
  set("timezone", entry(values, EVENT_FIELDS.timezone)?.selected_option?.value);
  const rec = entry(values, EVENT_FIELDS.recurrence)?.selected_option?.value;
  if (rec === "DAILY" || rec === "NONE") out.recurrence = rec;
  set("count", int(entry(values, EVENT_FIELDS.count)?.value));
  set("frequency", int(entry(values, EVENT_FIELDS.frequency)?.value));
  const flags: Partial<Record<FlagName, boolean>> = {};
  let sawFlags = false;
  for (const group of Object.keys(FLAG_GROUPS) as (keyof typeof FLAG_GROUPS)[]) {
    const e = entry(values, EVENT_FIELDS[group]);
    if (!e) continue;
    sawFlags = true;
    const chosen = new Set((e.selected_options ?? []).map((o) => o.value));
    for (const name of Object.keys(FLAG_GROUPS[group].flags) as FlagName[]) {
      flags[name] = chosen.has(name);
    }
  }
  if (sawFlags) out.flags = flags;
  const people = (id: string) =>
    entry(values, id)?.selected_users ?? (entry(values, id) ? [] : undefined);
  set("panelists", people(EVENT_FIELDS.panelists));
  set("moderators", people(EVENT_FIELDS.moderators));
  set("panelistMessage", text(EVENT_FIELDS.panelistMessage));
  set("moderatorMessage", text(EVENT_FIELDS.moderatorMessage));
  set("attendeeMessage", text(EVENT_FIELDS.attendeeMessage));
  set("channel", entry(values, EVENT_FIELDS.channel)?.selected_conversation ?? undefined);
  set("noise", noiseOf(entry(values, EVENT_FIELDS.noise)));
  const rem = entry(values, EVENT_FIELDS.reminders);
  if (rem) {
    out.reminders = (rem.selected_options ?? [])
      .map((o) => Number(o.value))
      .filter((m) => (REMINDER_CHOICES as readonly number[]).includes(m));
  }
  return out;
}

export interface ValidateOptions {
  now: number;
  /** On edit, the start as it was: an unchanged start may lie in the past (a running series). */
  originalStart?: number;
}

/** Inline errors by block id: one plain sentence each, saying what to do. */
export function validateEventForm(
  v: EventFormValues,
  opts: ValidateOptions,
): Record<string, string> {
  const errors: Record<string, string> = {};
  const title = v.title ?? "";
  if (title === "") errors[EVENT_FIELDS.title] = "Give the event a title.";
  else if (Array.from(title).length > TITLE_MAX) {
    errors[EVENT_FIELDS.title] =
      `Keep the title to ${TITLE_MAX} characters; it has ${Array.from(title).length}. Put the rest in the description.`;
  }
  if (v.start === undefined) errors[EVENT_FIELDS.start] = "Pick when the event starts.";
  else if (v.start < opts.now && v.start !== opts.originalStart) {
    errors[EVENT_FIELDS.start] = "That start is in the past. Pick a time from now on.";
  }
  if (v.end === undefined) errors[EVENT_FIELDS.end] = "Pick when the event ends.";
  else if (v.start !== undefined && v.end <= v.start) {
    errors[EVENT_FIELDS.end] = "The end must come after the start. Pick a later end.";
  }
  if (v.timezone !== undefined && !knownZone(v.timezone)) {
    errors[EVENT_FIELDS.timezone] = "I don't know that time zone. Pick one from the list.";
  }
  if (v.recurrence === "DAILY") {
    if (v.count === undefined) {
      errors[EVENT_FIELDS.count] = `Say how many times the event happens (1 to ${COUNT_MAX}).`;
    } else if (!Number.isInteger(v.count) || v.count < 1 || v.count > COUNT_MAX) {
      errors[EVENT_FIELDS.count] = `Use a whole number from 1 to ${COUNT_MAX}.`;
    }
    const f = v.frequency ?? 1;
    if (!Number.isInteger(f) || f < 1 || f > FREQUENCY_MAX) {
      errors[EVENT_FIELDS.frequency] = `Use a whole number of days from 1 to ${FREQUENCY_MAX}.`;
    }
  }
  return errors;
}

export function recurrenceOf(v: EventFormValues): RecurrencePattern | undefined {
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
  v: EventFormValues,
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
export function diffEvent(
  before: Event,
  v: EventFormValues,
  people: { panelists?: PersonOut[]; moderators?: PersonOut[] },
): EventPatch {
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
export function valuesFromEvent(e: Event): EventFormValues {
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
