import type { Deps } from "../deps.ts";
import type { Event } from "../upstream/events/schemas.ts";
import { attendance } from "./attendance.ts";
import type { Actor } from "./directory.ts";
import { UserFacingError } from "./errors.ts";
import { fetchEvent } from "./event-lifecycle.ts";
import { mayManage, organizerLink } from "./event-record.ts";
import { occurrenceStarts } from "./instance-end.ts";
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
  /** The event (its `id` is the Work Object's external_ref). */
  event: Event;
  /** The Slack user who scheduled or linked it. */
  organizer?: string;
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
      organizer: record.organizer,
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

/**
 * What the Work Object's flexpane shows one person (entity_details_requested): the event as the
 * unfurl shows it, the next occurrences and the join link to anyone in the conversation; the
 * live figures only to whom `attendance` allows them (the organizer, admins, and anyone opening
 * it in a channel the event notifies: the card's Attendance rule, checked by the same function),
 * never an error to anyone else; the moderator and panelist links only to the organizer and
 * admins (mayManage, as `/onair show`).
 */
export interface FlexpaneInfo extends UnfurlInfo {
  /** Attendees now, peak and unique: undefined for whom may not see them. */
  figures?: { present: number; peak: number; unique: number };
  /** The next starts after now (a series' next few; a one-off's own start while ahead). */
  upcoming: number[];
  /** Join addresses without scheme, as the events service gives them. */
  links: { attendee: string; moderator?: string; panelist?: string };
}

/**
 * The flexpane's answer is due within the event's trigger (3 s): the staff links, which only the
 * events service holds (a channel's copy has them blanked), are left out when it is slower.
 */
const STAFF_LINKS_BUDGET_MS = 1_500;

async function staffLinks(
  deps: Deps,
  record: Parameters<typeof fetchEvent>[1],
): Promise<Pick<Event, "moderatorUrl" | "panelistUrl"> | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, STAFF_LINKS_BUDGET_MS, undefined);
  });
  try {
    return await Promise.race([
      organizerLink(deps, record).then((link) => fetchEvent(deps, record, link)),
      late,
    ]);
  } catch (err) {
    deps.logger.info({ err, eventId: record.eventId }, "flexpane: the staff links are left out");
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** Occurrences a flexpane lists. */
const UPCOMING_MAX = 5;

export async function flexpaneFor(
  deps: Deps,
  actor: Actor,
  eventId: string,
  /** Where the Work Object was opened (the event's channel). */
  channel: string | undefined,
): Promise<FlexpaneInfo | undefined> {
  const record = await deps.store.events.get(actor.team, eventId);
  if (!record || record.team !== actor.team || record.subscriptions.length === 0) return undefined;
  const sub = await subscriptionOf(deps, record);
  const event = sub ? eventOf(sub.sub) : undefined;
  if (!sub || !event) return undefined;
  const status = await liveStatus(deps, record, event);
  const cancelled = record.cancelled === true || sub.sub.cancelled === true;
  let figures: FlexpaneInfo["figures"];
  try {
    const f = await attendance(deps, actor, eventId, channel);
    figures = { present: f?.present ?? 0, peak: f?.peak ?? 0, unique: f?.unique ?? 0 };
  } catch (err) {
    if (!(err instanceof UserFacingError)) throw err;
  }
  const manager = await mayManage(actor, record);
  const staff = manager ? await staffLinks(deps, record) : undefined;
  const now = deps.now();
  return {
    organizer: record.organizer,
    event,
    cancelled,
    state: status?.state,
    present: figures?.present,
    ...(figures ? { peak: figures.peak, unique: figures.unique } : {}),
    ...(status?.endedAt !== undefined ? { endedAt: status.endedAt } : {}),
    ...(status?.next !== undefined ? { next: status.next } : {}),
    ...(figures ? { figures } : {}),
    upcoming: cancelled
      ? []
      : occurrenceStarts(event)
          .filter((s) => s > now)
          .slice(0, UPCOMING_MAX),
    links: {
      attendee: event.attendeeUrl,
      ...(staff?.moderatorUrl ? { moderator: staff.moderatorUrl } : {}),
      ...(staff?.panelistUrl ? { panelist: staff.panelistUrl } : {}),
    },
  };
}
