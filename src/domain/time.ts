/**
 * Wall-clock arithmetic in a named IANA zone, with Intl only (no server zone involved): a daily
 * series keeps its local start time across daylight-saving changes, so its UTC instants move.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(zone, f);
  }
  return f;
}

export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export function wallTime(ms: number, zone: string): WallTime {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(ms))) {
    if (p.type !== "literal") parts[p.type] = Number(p.value);
  }
  return {
    year: parts.year ?? 1970,
    month: parts.month ?? 1,
    day: parts.day ?? 1,
    hour: parts.hour ?? 0,
    minute: parts.minute ?? 0,
    second: parts.second ?? 0,
  };
}

/** The zone's offset from UTC at instant ms, in ms (Paris in winter: +3,600,000). */
export function zoneOffsetMs(ms: number, zone: string): number {
  const w = wallTime(ms, zone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/**
 * The instant a wall-clock time names in a zone. A time skipped by a spring-forward gap resolves
 * to the same wall time shifted by the gap (as calendars do); a repeated autumn hour resolves to
 * its first occurrence.
 */
export function zonedToUtc(w: WallTime, zone: string): number {
  const guess = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  const first = guess - zoneOffsetMs(guess, zone);
  const second = guess - zoneOffsetMs(first, zone);
  if (first === second) return first;
  // Offsets differ around a transition: prefer the candidate whose wall time matches.
  const earlier = Math.min(first, second);
  const back = wallTime(earlier, zone);
  return back.hour === w.hour && back.minute === w.minute ? earlier : Math.max(first, second);
}

export function isValidZone(zone: string): boolean {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

/**
 * Start instants of a DAILY series: `count` occurrences every `frequency` days at the first
 * one's local time in `zone`. At most `limit` are computed.
 */
export function dailyOccurrences(
  startMs: number,
  zone: string,
  frequency: number,
  count: number,
  limit = count,
): number[] {
  const w = wallTime(startMs, zone);
  const out: number[] = [];
  const n = Math.min(count, limit);
  for (let i = 0; i < n; i++) {
    // Calendar days via UTC date arithmetic: no zone can bend a day here.
    const d = new Date(Date.UTC(w.year, w.month - 1, w.day + i * frequency));
    out.push(
      zonedToUtc(
        { ...w, year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() },
        zone,
      ),
    );
  }
  return out;
}

/** "UTC+02:00" at instant ms. */
export function offsetLabel(ms: number, zone: string): string {
  const off = Math.round(zoneOffsetMs(ms, zone) / 60000);
  const sign = off < 0 ? "-" : "+";
  const a = Math.abs(off);
  return `UTC${sign}${String(Math.floor(a / 60)).padStart(2, "0")}:${String(a % 60).padStart(2, "0")}`;
}

/** "Sun 30 Mar 2030, 18:00" in the zone (for previews that must show the event's own zone). */
export function formatInZone(ms: number, zone: string): string {
  return new Intl.DateTimeFormat("en-GB", {
    timeZone: zone,
    weekday: "short",
    day: "numeric",
    month: "short",
    year: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).format(new Date(ms));
}
