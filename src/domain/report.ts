import type { InstanceSnapshot } from "../deps.ts";
import { QUIET_END_MS } from "./instance-end.ts";

export type { AttendeeSessions, InstanceSnapshot } from "../deps.ts";

/**
 * The attendance report of one event instance, as pure data: figures, attendees present per
 * minute, and the CSV. Slack-free; the live engine (src/live/report-post.ts) and the on-demand
 * paths (domain/attendance.ts) both compute from an InstanceSnapshot, so the thread, the card's
 * Attendance button and `/onair report` always agree.
 *
 * When an instance "ends" is decided in one place, instance-end.ts (documented in the README).
 */

export interface ReportFigures {
  instanceId: string;
  ended: boolean;
  /** The moment the figures are for: the end, or now while it runs (epoch ms). */
  asOf: number;
  peak: number;
  unique: number;
  /** Attendees still in at `asOf`. */
  presentAtEnd: number;
  /** Minutes attended per unique attendee (all their sessions, open ones up to `asOf`). */
  averageMinutes: number;
  medianMinutes: number;
  firstJoin: number | undefined;
  lastJoin: number | undefined;
}

/** With no message for this long after the scheduled end, the instance counts as ended. */
export const REPORT_QUIET_MS = QUIET_END_MS;

const MINUTE = 60_000;

function sessionEnd(leave: number, asOf: number): number {
  return leave === 0 ? asOf : leave;
}

/** Milliseconds each attendee attended, in the snapshot's order. */
function attendedMs(snap: InstanceSnapshot, asOf: number): Float64Array {
  const out = new Float64Array(snap.attendees.length);
  snap.attendees.forEach((a, k) => {
    let ms = 0;
    for (let i = 0; i < a.sessions.length; i += 2) {
      const j = a.sessions[i] ?? 0;
      ms += Math.max(0, sessionEnd(a.sessions[i + 1] ?? 0, asOf) - j);
    }
    out[k] = ms;
  });
  return out;
}

/**
 * The most attendees in at once: a sweep over every join and leave (a leave before a join at
 * the same instant), an attendee with overlapping sessions (a lost LEFT) counted once.
 */
function peakOf(snap: InstanceSnapshot, asOf: number): number {
  const times: number[] = [];
  const who: number[] = [];
  const delta: number[] = [];
  snap.attendees.forEach((a, k) => {
    for (let i = 0; i < a.sessions.length; i += 2) {
      const j = a.sessions[i] ?? 0;
      const l = sessionEnd(a.sessions[i + 1] ?? 0, asOf);
      times.push(j);
      who.push(k);
      delta.push(1);
      if ((a.sessions[i + 1] ?? 0) !== 0) {
        times.push(Math.max(l, j));
        who.push(k);
        delta.push(-1);
      }
    }
  });
  const order = Array.from(times.keys()).sort(
    (x, y) =>
      (times[x] as number) - (times[y] as number) || (delta[x] as number) - (delta[y] as number),
  );
  const open = new Int32Array(snap.attendees.length);
  let present = 0;
  let peak = 0;
  for (const i of order) {
    const k = who[i] as number;
    const before = open[k] as number;
    open[k] = before + (delta[i] as number);
    if (before === 0 && (open[k] as number) > 0) present++;
    else if (before > 0 && (open[k] as number) === 0) present--;
    if (present > peak) peak = present;
  }
  return peak;
}

function median(values: Float64Array): number {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function reportFigures(snap: InstanceSnapshot, now: number): ReportFigures {
  const asOf = snap.endedAt ?? now;
  const ms = attendedMs(snap, asOf);
  let total = 0;
  for (const v of ms) total += v;
  let firstJoin: number | undefined;
  let lastJoin: number | undefined;
  let presentAtEnd = 0;
  for (const a of snap.attendees) {
    let open = false;
    for (let i = 0; i < a.sessions.length; i += 2) {
      const j = a.sessions[i] ?? 0;
      if (firstJoin === undefined || j < firstJoin) firstJoin = j;
      if (lastJoin === undefined || j > lastJoin) lastJoin = j;
      if ((a.sessions[i + 1] ?? 0) === 0) open = true;
    }
    if (open) presentAtEnd++;
  }
  const unique = snap.attendees.length;
  return {
    instanceId: snap.instanceId,
    ended: snap.endedAt !== undefined,
    asOf,
    peak: peakOf(snap, asOf),
    unique,
    presentAtEnd,
    averageMinutes: unique === 0 ? 0 : total / unique / MINUTE,
    medianMinutes: median(ms) / MINUTE,
    firstJoin,
    lastJoin,
  };
}

export interface MinuteSeries {
  /** Epoch ms of the first bucket's start. */
  start: number;
  /** Bucket width in ms (a minute, wider for very long instances: at most MAX_BUCKETS). */
  step: number;
  /** Distinct attendees in at any time during each bucket. */
  counts: Int32Array;
}

const MAX_BUCKETS = 24 * 60;

/** Attendees present per minute, from the first join (or state change) to the end. */
export function perMinute(snap: InstanceSnapshot, now: number): MinuteSeries {
  const asOf = snap.endedAt ?? now;
  let first = Number.POSITIVE_INFINITY;
  let last = asOf;
  for (const [, at] of snap.marks) first = Math.min(first, at);
  for (const a of snap.attendees) {
    for (let i = 0; i < a.sessions.length; i += 2) {
      first = Math.min(first, a.sessions[i] ?? 0);
      last = Math.max(last, a.sessions[i + 1] ?? 0);
    }
  }
  if (!Number.isFinite(first)) first = asOf;
  const span = Math.max(1, Math.ceil((last - first + 1) / MINUTE));
  const step = MINUTE * Math.max(1, Math.ceil(span / MAX_BUCKETS));
  const start = Math.floor(first / step) * step;
  const n = Math.floor((last - start) / step) + 1;
  const diff = new Int32Array(n + 1);
  const ranges: Array<[number, number]> = [];
  for (const a of snap.attendees) {
    ranges.length = 0;
    for (let i = 0; i < a.sessions.length; i += 2) {
      const j = a.sessions[i] ?? 0;
      // The last instant in: a leave at 10:05:00 is not in the minute from 10:05.
      const l = Math.max(j, sessionEnd(a.sessions[i + 1] ?? 0, asOf) - 1);
      ranges.push([Math.floor((j - start) / step), Math.floor((l - start) / step)]);
    }
    ranges.sort((x, y) => x[0] - y[0]);
    // Overlapping sessions of one attendee count once per bucket.
    let cur: [number, number] | undefined;
    for (const r of ranges) {
      if (cur && r[0] <= cur[1] + 0) cur[1] = Math.max(cur[1], r[1]);
      else {
        if (cur) mark(diff, cur);
        cur = [r[0], r[1]];
      }
    }
    if (cur) mark(diff, cur);
  }
  const counts = new Int32Array(n);
  let run = 0;
  for (let i = 0; i < n; i++) {
    run += diff[i] as number;
    counts[i] = run;
  }
  return { start, step, counts };
}

function mark(diff: Int32Array, [a, b]: [number, number]): void {
  const lo = Math.max(0, a);
  const hi = Math.min(diff.length - 2, b);
  if (hi < lo) return;
  diff[lo] = (diff[lo] as number) + 1;
  diff[hi + 1] = (diff[hi + 1] as number) - 1;
}

/** A spreadsheet would run a cell that starts with one of these as a formula (CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\n\r]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * One row per attendee session: attendee number (the same for one attendee's sessions), name,
 * e-mail (only when the workspace shows e-mails), endpoint type, join and leave (UTC, ISO 8601;
 * leave empty while still in), minutes. The rows add up to the figures: distinct attendee
 * numbers are `unique`, the sum of minutes over `unique` is the average.
 */
export function reportCsv(snap: InstanceSnapshot, now: number, withEmails: boolean): string {
  const asOf = snap.endedAt ?? now;
  const head = [
    "attendee",
    "name",
    ...(withEmails ? ["email"] : []),
    "endpoint",
    "join",
    "leave",
    "minutes",
  ];
  const lines = [head.join(",")];
  snap.attendees.forEach((a, k) => {
    for (let i = 0; i < a.sessions.length; i += 2) {
      const j = a.sessions[i] ?? 0;
      const l = a.sessions[i + 1] ?? 0;
      const minutes = Math.max(0, sessionEnd(l, asOf) - j) / MINUTE;
      const cells = [
        String(k + 1),
        csvCell(a.name),
        ...(withEmails ? [csvCell(a.email ?? "")] : []),
        csvCell(a.endpointType),
        iso(j),
        l === 0 ? "" : iso(l),
        minutes.toFixed(2),
      ];
      lines.push(cells.join(","));
    }
  });
  return `${lines.join("\r\n")}\r\n`;
}
