import type { ReportFigures } from "../domain/report.ts";
import { slackDate, userText } from "../domain/text.ts";

/** Minutes as the report shows them: one decimal. */
export function minutesText(m: number): string {
  return m.toFixed(1);
}

/** The on-demand answer: the figures, or a sentence while there are none. */
export function reportAnswer(title: string, f: ReportFigures | undefined): string {
  if (!f || f.unique === 0) {
    return "Nobody has joined this event yet. The card updates as soon as people join.";
  }
  return reportText(title, f);
}

/**
 * The report's figures as one message text, times in each reader's own zone (`<!date^…>`).
 * Used for the thread's report (as the files' comment) and the ephemeral answers, so both read
 * the same.
 */
export function reportText(title: string, f: ReportFigures): string {
  const head = f.ended
    ? `*Attendance report: ${userText(title, 150)}*`
    : `*Attendance so far: ${userText(title, 150)}*`;
  if (f.unique === 0) return `${head}\nNobody joined this instance.`;
  const when =
    f.firstJoin !== undefined && f.lastJoin !== undefined
      ? `\nFirst join ${slackDate(f.firstJoin)} · last join ${slackDate(f.lastJoin)}`
      : "";
  const endWord = f.ended ? "present at the end" : "here now";
  return (
    `${head}\nPeak *${f.peak}* · unique *${f.unique}* · ${endWord} *${f.presentAtEnd}*` +
    `\nMinutes attended: average *${minutesText(f.averageMinutes)}* · median *${minutesText(f.medianMinutes)}*` +
    when
  );
}
