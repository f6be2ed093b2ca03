import type { Deps } from "../deps.ts";
import type { Event } from "../upstream/events/schemas.ts";
import { liveStatus } from "./live-status.ts";
import { eventOf } from "./subscription.ts";
import { subscriptionOf } from "./subscriptions.ts";

/**
 * Live unfurls: what a pasted join link shows. Only events of the workspace the link was shared
 * in (its own records), and only links that are exactly an event's attendee join link; anything
 * else unfurls to nothing, so a link never tells one workspace about another's event. The join
 * link is the public one (the card shows it to the channel); moderator and panelist links are
 * never matched.
 */

export interface UnfurlInfo {
  event: Event;
  cancelled: boolean;
  state: string | undefined;
  /**
   * Attendees now, only where the card already shows it (a channel the event notifies): an
   * unfurl is seen by everyone in the conversation, and attendance is the organizer's, the
   * admins' and those channels' to see (mayReadAttendance).
   */
  present: number | undefined;
  /** Beside `present`, for an ended instance's final figures (same channels only). */
  peak?: number;
  unique?: number;
  /** When the current instance ended (instance-end.ts), and a series' next start after it. */
  endedAt?: number;
  next?: number;
}

/** Events looked through per lookup: a workspace's known events, most recent first. */
const SCAN_MAX = 500;

/** A join link as compared: no scheme, host in lower case, no trailing slash, query or hash. */
export function joinKey(url: string): string | undefined {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `https://${url}`;
  try {
    const u = new URL(withScheme);
    if (u.protocol !== "https:" && u.protocol !== "http:") return undefined;
    return `${u.hostname.toLowerCase()}${u.pathname.replace(/\/+$/, "")}`;
  } catch {
    return undefined;
  }
}

/** The known events whose attendee join link each URL is (URLs of no known event are absent). */
export async function unfurlsFor(
  deps: Deps,
  team: string,
  urls: readonly string[],
  /** Where the link was shared (link_shared's channel). */
  channel: string | undefined,
): Promise<Map<string, UnfurlInfo>> {
  const wanted = new Map<string, string[]>();
  for (const url of urls) {
    const key = joinKey(url);
    if (key) wanted.set(key, [...(wanted.get(key) ?? []), url]);
  }
  const out = new Map<string, UnfurlInfo>();
  if (wanted.size === 0) return out;
  const records = (await deps.store.events.list(team))
    .sort((a, b) => (b.updatedAt ?? b.createdAt) - (a.updatedAt ?? a.createdAt))
    .slice(0, SCAN_MAX);
  for (const record of records) {
    if (record.team !== team || record.subscriptions.length === 0) continue;
    const sub = await subscriptionOf(deps, record);
    const event = sub ? eventOf(sub.sub) : undefined;
    const key = event?.attendeeUrl ? joinKey(event.attendeeUrl) : undefined;
    const matched = key ? wanted.get(key) : undefined;
    if (!sub || !event || !matched) continue;
    wanted.delete(key as string);
    const status = await liveStatus(deps, record, event);
    const cardHere = channel !== undefined && sub.sub.channels.includes(channel);
    const info: UnfurlInfo = {
      event,
      cancelled: record.cancelled === true || sub.sub.cancelled === true,
      state: status?.state,
      present: cardHere ? (status?.present ?? 0) : undefined,
      ...(cardHere && status ? { peak: status.peak, unique: status.unique } : {}),
      ...(status?.endedAt !== undefined ? { endedAt: status.endedAt } : {}),
      ...(status?.next !== undefined ? { next: status.next } : {}),
    };
    for (const url of matched) out.set(url, info);
    if (wanted.size === 0) break;
  }
  return out;
}
