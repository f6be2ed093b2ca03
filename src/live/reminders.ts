import type { WebClient } from "@slack/web-api";
import type { Deps } from "../deps.ts";
import { escapeMrkdwn, slackDate, truncate } from "../slack/blocks/kit.ts";
import type { Event } from "../upstream/events/schemas.ts";

/**
 * Reminders before the start, held by Slack (chat.scheduleMessage), so they survive restarts of
 * this app; their ids are kept on the subscription so an edit can move them and a cancel or
 * mute delete them.
 */

/** Slack refuses a post_at in the past and beyond 120 days; a minute of slack for clocks. */
const MIN_LEAD_MS = 60_000;
const HORIZON_MS = 120 * 24 * 3600 * 1000;

interface RateLimited {
  code?: string;
  retryAfter?: number;
  data?: { error?: string };
}

/** The bulk client never retries; these one-off calls try again a couple of times on a 429. */
async function withRetry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const e = (err ?? {}) as RateLimited;
      if (e.code !== "slack_webapi_rate_limited_error" || attempt >= 2) throw err;
      const ms = Math.min(5, Math.max(1, Number(e.retryAfter) || 1)) * 1000;
      await new Promise((r) => setTimeout(r, ms));
    }
  }
}

function inWords(min: number): string {
  if (min % 1440 === 0) return min === 1440 ? "1 day" : `${min / 1440} days`;
  if (min % 60 === 0) return min === 60 ? "1 hour" : `${min / 60} hours`;
  return min === 1 ? "1 minute" : `${min} minutes`;
}

export function reminderText(event: Event, min: number): string {
  const title = escapeMrkdwn(truncate(event.title || "Untitled event", 150));
  const join = event.attendeeUrl
    ? ` Join here: <https://${event.attendeeUrl.replace(/[<>|]/g, "")}|join as an attendee>.`
    : "";
  return `:alarm_clock: *${title}* starts in ${inWords(min)}, at ${slackDate(event.start)}.${join}`;
}

export async function scheduleReminders(
  deps: Deps,
  team: string,
  channel: string,
  event: Event,
  mins: readonly number[],
): Promise<Array<{ id: string; postAt: number }>> {
  const now = deps.now();
  const out: Array<{ id: string; postAt: number }> = [];
  let client: WebClient;
  try {
    client = await deps.bulkClient(team);
  } catch (err) {
    deps.logger.warn({ err }, "live: no Slack client for reminders");
    return out;
  }
  for (const min of [...new Set(mins)].sort((a, b) => b - a)) {
    const at = event.start - min * 60_000;
    if (at < now + MIN_LEAD_MS || at > now + HORIZON_MS) continue;
    const postAt = Math.floor(at / 1000);
    try {
      const res = await withRetry(() =>
        client.chat.scheduleMessage({ channel, post_at: postAt, text: reminderText(event, min) }),
      );
      if (res.scheduled_message_id) out.push({ id: res.scheduled_message_id, postAt });
    } catch (err) {
      deps.logger.warn({ err, channel }, "live: reminder not scheduled");
    }
  }
  return out;
}

export async function cancelReminders(
  deps: Deps,
  team: string,
  channel: string,
  scheduled: ReadonlyArray<{ id: string; postAt: number }>,
): Promise<void> {
  if (scheduled.length === 0) return;
  let client: WebClient;
  try {
    client = await deps.bulkClient(team);
  } catch (err) {
    deps.logger.warn({ err }, "live: no Slack client to delete reminders");
    return;
  }
  for (const s of scheduled) {
    try {
      await withRetry(() =>
        client.chat.deleteScheduledMessage({ channel, scheduled_message_id: s.id }),
      );
    } catch (err) {
      // Already posted or already gone: nothing left to delete.
      const code = (err as RateLimited).data?.error;
      if (code === "invalid_scheduled_message_id") continue;
      deps.logger.warn({ err, channel }, "live: reminder not deleted");
    }
  }
}
