import type { Deps } from "../deps.ts";
import type { EventRecord, UserLink } from "../store/index.ts";
import { EventsError } from "../upstream/errors.ts";
import type { Event } from "../upstream/events/schemas.ts";
import { requireLinked } from "./access.ts";
import type { Actor } from "./directory.ts";
import { USER_ERROR_CODES, UserFacingError } from "./errors.ts";
import { EventGoneError, fetchEvent, loadManaged } from "./event-record.ts";
import { ownEvents } from "./resolve.ts";
import { dailyOccurrences } from "./time.ts";
import { knownZone } from "./zones.ts";

export interface ListedEvent {
  eventId: string;
  /** The fresh GET, or undefined when the service no longer knows it. */
  event?: Event;
  /** Known title when the event could not be read. */
  title?: string;
  /** When it next happens, if not its first start (a running series). */
  next?: number | undefined;
}

async function refresh(deps: Deps, link: UserLink, record: EventRecord): Promise<ListedEvent> {
  const gone = {
    eventId: record.eventId,
    ...(record.title !== undefined ? { title: record.title } : {}),
  };
  // Known gone: no call can bring it back.
  if (record.gone) return gone;
  try {
    return { eventId: record.eventId, event: await fetchEvent(deps, record, link) };
  } catch (err) {
    if (err instanceof EventGoneError) return gone;
    if (err instanceof EventsError && err.status === 404) {
      return {
        eventId: record.eventId,
        ...(record.title !== undefined ? { title: record.title } : {}),
      };
    }
    throw err;
  }
}

/**
 * When the event next happens: the start of the first occurrence not yet over (a daily series
 * counts its occurrences in the event's own zone), or undefined when all are over.
 */
export function nextStart(e: Event, now: number): number | undefined {
  const length = e.end - e.start;
  const p = e.recurrencePattern;
  const starts =
    p && p.recurrenceType === "DAILY" && p.recurrenceCount > 1 && knownZone(e.timezone)
      ? dailyOccurrences(
          e.start,
          e.timezone,
          Math.max(1, p.frequency),
          Math.min(p.recurrenceCount, 1000),
        )
      : [e.start];
  return starts.find((s) => s + length >= now);
}

/** The events On Air knows for the actor, refreshed by GET, soonest first; past ones left out. */
export async function listEvents(deps: Deps, actor: Actor): Promise<ListedEvent[]> {
  const link = await requireLinked(deps, actor);
  const records = await ownEvents(deps, actor.team, actor.user);
  const items: ListedEvent[] = [];
  // A few GETs at a time: a long list must not burst the events service.
  for (let i = 0; i < records.length; i += 5) {
    items.push(...(await Promise.all(records.slice(i, i + 5).map((r) => refresh(deps, link, r)))));
  }
  const now = deps.now();
  // Events the service no longer has sort last; the rest by when they next happen.
  const when = (it: ListedEvent) => (it.event ? nextStart(it.event, now) : Number.MAX_SAFE_INTEGER);
  return items
    .map((it) => ({ ...it, ...(it.event ? { next: nextStart(it.event, now) } : {}) }))
    .filter((it) => !it.event || it.next !== undefined)
    .sort((a, b) => (when(a) ?? 0) - (when(b) ?? 0));
}

/**
 * One event with its organizer-only details (moderator and panelist links, passcodes): for its
 * organizer only, as DESIGN.md requires; admins manage events but do not get these.
 */
export async function showEvent(deps: Deps, actor: Actor, eventId: string): Promise<Event> {
  const { record, event } = await loadManaged(deps, actor, eventId);
  if (record.organizer !== actor.user) {
    throw new UserFacingError(
      USER_ERROR_CODES.notAllowed,
      `Only the organizer, <@${record.organizer}>, sees this event's links and passcodes.`,
    );
  }
  return event;
}
