import { userText } from "../domain/text.ts";
import type { RecurrencePattern } from "../upstream/events/schemas.ts";
import { slackDate } from "./kit.ts";

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
