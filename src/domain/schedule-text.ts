import { type WallTime, wallTime, zonedToUtc } from "./time.ts";

/**
 * What `/onair schedule <text>` says before the form opens: a day and a time at the front, in
 * the organizer's zone ("tomorrow 3pm", "fri 09:30", "2030-03-29 at 6pm"), and the rest is the
 * title. Only these plain forms are read; anything else is left to the title, and the form shows
 * what was taken so the organizer can correct it.
 */

export interface ScheduleText {
  title?: string;
  /** Epoch ms, when a day or a time was read. */
  start?: number;
}

const WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

function weekdayOf(word: string): number | undefined {
  const w = word.replace(/\.$/, "");
  if (w.length < 3) return undefined;
  const i = WEEKDAYS.findIndex((d) => w.startsWith(d));
  if (i < 0) return undefined;
  const full = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];
  return full[i]?.startsWith(w) ? i : undefined;
}

type Day = { offset: number } | { weekday: number } | { date: [number, number, number] };

function dayOf(word: string): Day | undefined {
  if (word === "today") return { offset: 0 };
  if (word === "tomorrow" || word === "tmrw") return { offset: 1 };
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(word);
  if (iso) {
    const [y, m, d] = [Number(iso[1]), Number(iso[2]), Number(iso[3])];
    if (m >= 1 && m <= 12 && d >= 1 && d <= 31) return { date: [y, m, d] };
    return undefined;
  }
  const wd = weekdayOf(word);
  return wd === undefined ? undefined : { weekday: wd };
}

/** "3pm", "3:30pm", "15:00", "9.30am"; with `meridiem` from the next word ("3 pm"). */
function timeOf(word: string, meridiem?: string): { hour: number; minute: number } | undefined {
  const m = /^(\d{1,2})(?:[:.](\d{2}))?(am|pm)?$/.exec(word);
  if (!m) return undefined;
  const suffix = m[3] ?? meridiem;
  // A bare number is a title's word ("3 things"), not a time.
  if (!suffix && m[2] === undefined) return undefined;
  let hour = Number(m[1]);
  const minute = m[2] === undefined ? 0 : Number(m[2]);
  if (minute > 59) return undefined;
  if (suffix) {
    if (hour < 1 || hour > 12) return undefined;
    hour = (hour % 12) + (suffix === "pm" ? 12 : 0);
  } else if (hour > 23) {
    return undefined;
  }
  return { hour, minute };
}

function addDays(w: WallTime, n: number): WallTime {
  const d = new Date(Date.UTC(w.year, w.month - 1, w.day + n));
  return { ...w, year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/**
 * Reads the text typed after `/onair schedule`. `defaultStart` gives the time of day when only a
 * day is named; a time alone is today's, or tomorrow's once today's has passed.
 */
export function readScheduleText(
  text: string,
  zone: string,
  now: number,
  defaultStart: number,
): ScheduleText {
  const words = text.trim().split(/\s+/).filter(Boolean);
  let day: Day | undefined;
  let time: { hour: number; minute: number } | undefined;
  let i = 0;
  while (i < words.length) {
    const w = (words[i] ?? "").toLowerCase();
    const next = (words[i + 1] ?? "").toLowerCase();
    if ((w === "at" || w === "on") && i + 1 < words.length) {
      const ahead = w === "at" ? timeOf(next, nextMeridiem(words, i + 2)) : dayOf(next);
      if (!ahead) break;
      i++;
      continue;
    }
    const d = day ? undefined : dayOf(w);
    if (d) {
      day = d;
      i++;
      continue;
    }
    const meridiem = next === "am" || next === "pm" ? next : undefined;
    const t = time ? undefined : timeOf(w, meridiem);
    if (t) {
      time = t;
      i += meridiem && !/[ap]m$/.test(w) ? 2 : 1;
      continue;
    }
    break;
  }
  const title = words.slice(i).join(" ").trim();
  const out: ScheduleText = title ? { title } : {};
  if (!day && !time) return out;

  const today = wallTime(now, zone);
  const base = wallTime(defaultStart, zone);
  let date: WallTime;
  if (!day) date = today;
  else if ("offset" in day) date = addDays(today, day.offset);
  else if ("weekday" in day) {
    const todayIndex = new Date(Date.UTC(today.year, today.month - 1, today.day)).getUTCDay();
    date = addDays(today, (day.weekday - todayIndex + 7) % 7);
  } else {
    const [year, month, d] = day.date;
    date = { ...today, year, month, day: d };
  }
  const clock = time ?? { hour: base.hour, minute: base.minute };
  let start = zonedToUtc({ ...date, hour: clock.hour, minute: clock.minute, second: 0 }, zone);
  // "3pm" alone, typed at 5pm, means tomorrow's; a named day is taken as named.
  if (!day && start <= now) {
    start = zonedToUtc(
      { ...addDays(date, 1), hour: clock.hour, minute: clock.minute, second: 0 },
      zone,
    );
  }
  out.start = start;
  return out;
}

function nextMeridiem(words: readonly string[], at: number): string | undefined {
  const w = (words[at] ?? "").toLowerCase();
  return w === "am" || w === "pm" ? w : undefined;
}
