import type { Event } from "../upstream/events/schemas.ts";
import { safeLink, slackDate, userText } from "./text.ts";

/**
 * Reminders before the start, held by Slack (chat.scheduleMessage), so they survive restarts of
 * this app. The subscription says which (minutes before the start, per channel); the live engine
 * keeps Slack's scheduled messages in step with it (src/live/reminders.ts).
 */

/** Slack refuses a post_at in the past and beyond 120 days; a minute of slack for clocks. */
export const REMINDER_MIN_LEAD_MS = 60_000;
export const REMINDER_HORIZON_MS = 120 * 24 * 3600 * 1000;

function inWords(min: number): string {
  if (min % 1440 === 0) return min === 1440 ? "1 day" : `${min / 1440} days`;
  if (min % 60 === 0) return min === 60 ? "1 hour" : `${min / 60} hours`;
  return min === 1 ? "1 minute" : `${min} minutes`;
}

/** `start`: the occurrence's (a daily series has one reminder set per occurrence). */
export function reminderText(event: Event, min: number, start = event.start): string {
  const title = userText(event.title || "Untitled event", 150);
  const join = event.attendeeUrl
    ? ` Join here: ${safeLink(event.attendeeUrl, "join as an attendee")}.`
    : "";
  return `:alarm_clock: *${title}* starts in ${inWords(min)}, at ${slackDate(start)}.${join}`;
}
