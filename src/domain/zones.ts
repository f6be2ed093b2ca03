import { isValidZone } from "./time.ts";

/**
 * The zones offered in the schedule form. Slack's static select holds 100 options and the
 * emulator has no external_select data source, so the form offers a curated list of widely used
 * zones (at least one per common UTC offset) plus the user's own and the event's current zone.
 */
const COMMON_ZONES = [
  "UTC",
  "Pacific/Honolulu",
  "America/Anchorage",
  "America/Los_Angeles",
  "America/Vancouver",
  "America/Phoenix",
  "America/Denver",
  "America/Chicago",
  "America/Mexico_City",
  "America/New_York",
  "America/Toronto",
  "America/Bogota",
  "America/Lima",
  "America/Halifax",
  "America/Caracas",
  "America/Santiago",
  "America/Sao_Paulo",
  "America/Argentina/Buenos_Aires",
  "America/St_Johns",
  "Atlantic/Azores",
  "Atlantic/Reykjavik",
  "Europe/London",
  "Europe/Dublin",
  "Europe/Lisbon",
  "Africa/Casablanca",
  "Africa/Lagos",
  "Europe/Paris",
  "Europe/Berlin",
  "Europe/Madrid",
  "Europe/Rome",
  "Europe/Amsterdam",
  "Europe/Brussels",
  "Europe/Zurich",
  "Europe/Stockholm",
  "Europe/Oslo",
  "Europe/Copenhagen",
  "Europe/Warsaw",
  "Europe/Prague",
  "Europe/Vienna",
  "Europe/Athens",
  "Europe/Helsinki",
  "Europe/Bucharest",
  "Europe/Kyiv",
  "Europe/Istanbul",
  "Africa/Cairo",
  "Africa/Johannesburg",
  "Africa/Nairobi",
  "Asia/Jerusalem",
  "Europe/Moscow",
  "Asia/Riyadh",
  "Asia/Tehran",
  "Asia/Dubai",
  "Asia/Kabul",
  "Asia/Karachi",
  "Asia/Tashkent",
  "Asia/Kolkata",
  "Asia/Kathmandu",
  "Asia/Dhaka",
  "Asia/Yangon",
  "Asia/Bangkok",
  "Asia/Jakarta",
  "Asia/Ho_Chi_Minh",
  "Asia/Shanghai",
  "Asia/Hong_Kong",
  "Asia/Singapore",
  "Asia/Taipei",
  "Asia/Manila",
  "Australia/Perth",
  "Asia/Seoul",
  "Asia/Tokyo",
  "Australia/Darwin",
  "Australia/Adelaide",
  "Australia/Brisbane",
  "Australia/Sydney",
  "Australia/Melbourne",
  "Pacific/Guam",
  "Pacific/Noumea",
  "Pacific/Auckland",
  "Pacific/Fiji",
  "Pacific/Tongatapu",
  "Pacific/Kiritimati",
] as const;

export const DEFAULT_ZONE = "UTC";

/** Known to this runtime (Intl) — the service is sent only names Node itself resolves. */
export function knownZone(zone: string | undefined): zone is string {
  return typeof zone === "string" && zone.length > 0 && zone.length <= 100 && isValidZone(zone);
}

/**
 * Zones to offer: the extras first (the user's own, the event's), then the common list, without
 * duplicates, at most `max`.
 */
export function zoneChoices(extras: readonly (string | undefined)[], max = 100): string[] {
  const supported = new Set(Intl.supportedValuesOf("timeZone"));
  supported.add("UTC");
  const out: string[] = [];
  for (const z of [...extras, ...COMMON_ZONES]) {
    if (!z || out.includes(z)) continue;
    // Extras come from Slack profiles or the service: keep them if Intl can use them.
    if (!supported.has(z) && !knownZone(z)) continue;
    out.push(z);
    if (out.length >= max) break;
  }
  return out;
}
