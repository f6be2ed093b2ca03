import {
  type DraftErrors,
  type EventDraft,
  type FlagName,
  REMINDER_CHOICES,
} from "../domain/event-draft.ts";
import { EVENT_FIELDS } from "../ids.ts";
import { FLAG_GROUPS, type FlagGroup } from "./event-form.ts";
import { entry, int, noiseOf, optionsOf, textOf, type ViewStateValues } from "./view-state.ts";

/** Reads the schedule / edit form into a draft. Fields missing from the view stay undefined. */
export function readEventForm(values: ViewStateValues): EventDraft {
  const out: EventDraft = {};
  const set = <K extends keyof EventDraft>(k: K, v: EventDraft[K] | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  set("title", textOf(values, EVENT_FIELDS.title)?.trim());
  set("description", textOf(values, EVENT_FIELDS.description));
  const start = entry(values, EVENT_FIELDS.start)?.selected_date_time;
  if (typeof start === "number") out.start = start * 1000;
  const end = entry(values, EVENT_FIELDS.end)?.selected_date_time;
  if (typeof end === "number") out.end = end * 1000;
  set("timezone", entry(values, EVENT_FIELDS.timezone)?.selected_option?.value);
  const rec = entry(values, EVENT_FIELDS.recurrence)?.selected_option?.value;
  if (rec === "DAILY" || rec === "NONE") out.recurrence = rec;
  set("count", int(entry(values, EVENT_FIELDS.count)?.value));
  set("frequency", int(entry(values, EVENT_FIELDS.frequency)?.value));
  const until = entry(values, EVENT_FIELDS.until)?.selected_date;
  if (typeof until === "string" && /^\d{4}-\d{2}-\d{2}$/.test(until)) out.until = until;
  const flags: Partial<Record<FlagName, boolean>> = {};
  let sawFlags = false;
  for (const group of Object.keys(FLAG_GROUPS) as FlagGroup[]) {
    const chosen = optionsOf(values, EVENT_FIELDS[group]);
    if (!chosen) continue;
    sawFlags = true;
    for (const name of Object.keys(FLAG_GROUPS[group].flags) as FlagName[]) {
      flags[name] = chosen.includes(name);
    }
  }
  if (sawFlags) out.flags = flags;
  const people = (id: string) => {
    const e = entry(values, id);
    if (!e) return undefined;
    return Array.isArray(e.selected_users)
      ? e.selected_users.filter((u): u is string => typeof u === "string")
      : [];
  };
  set("panelists", people(EVENT_FIELDS.panelists));
  set("moderators", people(EVENT_FIELDS.moderators));
  set("panelistMessage", textOf(values, EVENT_FIELDS.panelistMessage));
  set("moderatorMessage", textOf(values, EVENT_FIELDS.moderatorMessage));
  set("attendeeMessage", textOf(values, EVENT_FIELDS.attendeeMessage));
  const channel = entry(values, EVENT_FIELDS.channel)?.selected_conversation;
  set("channel", typeof channel === "string" && channel ? channel : undefined);
  set("noise", noiseOf(entry(values, EVENT_FIELDS.noise)));
  const rem = optionsOf(values, EVENT_FIELDS.reminders);
  if (rem) {
    out.reminders = rem
      .map((o) => Number(o))
      .filter((m) => (REMINDER_CHOICES as readonly number[]).includes(m));
  }
  return out;
}

/** A draft's errors under the form's fields (Slack shows them by block id). */
export function draftErrorsToBlocks(errors: DraftErrors): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, message] of Object.entries(errors)) {
    const id = (EVENT_FIELDS as Record<string, string>)[field];
    if (id && message) out[id] = message;
  }
  return out;
}
