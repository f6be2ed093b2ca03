import type { AttendanceFigures } from "../live-port.ts";

/** The Attendance button's answer: peak, unique, here now and average minutes. */
export function attendanceText(f: AttendanceFigures | undefined): string {
  if (!f || f.unique === 0) {
    return "Nobody has joined this event yet. The card updates as soon as people join.";
  }
  return `Attendance so far: peak ${f.peak}, ${f.unique} unique, ${f.present} here now, on average ${f.averageMinutes.toFixed(1)} minutes each.`;
}
