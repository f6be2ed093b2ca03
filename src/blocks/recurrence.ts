import { COUNT_MAX, type EventDraft, untilCount } from "../domain/event-draft.ts";
import { userText } from "../domain/text.ts";
import { dailyOccurrences, formatInZone, offsetLabel } from "../domain/time.ts";
import type { RecurrencePattern } from "../upstream/events/schemas.ts";
import { escapeMrkdwn, slackDate } from "./kit.ts";

/**
 * "Does not repeat", "Daily, 5 times", "Every 2 days, 5 times", "Daily until …". mrkdwn: a type
 * other than DAILY is the events service's text (the spec shows no other value), so it is cut
 * short and escaped like any text this app did not write.
 */
export function recurrenceInWords(pattern: RecurrencePattern | null | undefined): string {
  if (!pattern) return "Does not repeat";
  const every =
    pattern.recurrenceType === "DAILY"
      ? pattern.frequency > 1
        ? `Every ${pattern.frequency} days`
        : "Daily"
      : `Repeats (${userText(pattern.recurrenceType.toLowerCase(), 40)})`;
  if (pattern.endDate !== null)
    return `${every} until ${slackDate(pattern.endDate, "{date_short_pretty}")}`;
  if (pattern.recurrenceCount > 0) {
    return `${every}, ${pattern.recurrenceCount} ${pattern.recurrenceCount === 1 ? "time" : "times"}`;
  }
  return every;
}

/** The recurrence preview text, in the event's own zone so daylight-saving shifts are visible. */
export function recurrencePreview(v: EventDraft, shown = 5): string {
  if (v.recurrence !== "DAILY") return "Does not repeat.";
  if (v.start === undefined) return "Pick a start to see the dates.";
  const count = v.until !== undefined ? untilCount(v) : v.count;
  if (!count || count < 1) {
    return v.until !== undefined
      ? "That date is before the first day: pick a later one to see the dates."
      : "Say how many times it happens, or the date it runs until, to see the dates.";
  }
  const zone = v.timezone ?? "UTC";
  const freq = v.frequency && v.frequency > 0 ? v.frequency : 1;
  const list = dailyOccurrences(v.start, zone, freq, Math.min(count, COUNT_MAX), shown);
  const lines = list.map((ms) => `• ${formatInZone(ms, zone)} (${offsetLabel(ms, zone)})`);
  const more = count > shown ? `\n…and ${count - shown} more` : "";
  return `*Next dates* (${escapeMrkdwn(zone)}):\n${lines.join("\n")}${more}`;
}
