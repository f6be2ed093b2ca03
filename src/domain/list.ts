import type { Deps } from "../deps.ts";
import type { EventRecord, UserLink } from "../store/index.ts";
import { EventsError } from "../upstream/errors.ts";
import type { Event } from "../upstream/events/schemas.ts";
import { requireLinked } from "./access.ts";
import type { Actor } from "./directory.ts";
import { USER_ERROR_CODES, UserFacingError } from "./errors.ts";
import { fetchEvent, loadManaged } from "./event-lifecycle.ts";
import { EventGoneError } from "./event-record.ts";
import { nextStart } from "./instance-end.ts";
import { type LiveStatus, liveStatus, onAir } from "./live-status.ts";
import { ownEvents } from "./resolve.ts";

export interface ListedEvent {
  eventId: string;
  /** The fresh GET, or undefined when the service no longer knows it. */
  event?: Event;
  /** Known title when the event could not be read. */
  title?: string;
  /** When it next happens, if not its first start (a running series). */
  next?: number | undefined;
  /** Its current instance as the live engine has it: a state, or ended (instance-end.ts). */
  live?: LiveStatus;
}

async function refresh(deps: Deps, link: UserLink, record: EventRecord): Promise<ListedEvent> {
  const gone = {
    eventId: record.eventId,
    ...(record.title !== undefined ? { title: record.title } : {}),
  };
  // Known gone: no call can bring it back.
  if (record.gone) return gone;
  try {
    const event = await fetchEvent(deps, record, link);
    const live =
      record.subscriptions.length > 0 ? await liveStatus(deps, record, event) : undefined;
    return { eventId: record.eventId, event, ...(live ? { live } : {}) };
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

export { nextStart } from "./instance-end.ts";

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
  return (
    items
      .map((it) => ({ ...it, ...(it.event ? { next: nextStart(it.event, now) } : {}) }))
      // Past its schedule but still on the air (running over): listed until its instance ends.
      .filter((it) => !it.event || it.next !== undefined || onAir(it.live))
      .sort((a, b) => (when(a) ?? 0) - (when(b) ?? 0))
  );
}

/**
 * One event with its organizer-only details (moderator and panelist links, passcodes): for its
 * organizer only, as the README says (`list` and `show`); admins manage events but do not get these.
 */
export async function showEvent(
  deps: Deps,
  actor: Actor,
  eventId: string,
): Promise<{ event: Event; live?: LiveStatus }> {
  const { record, event } = await loadManaged(deps, actor, eventId);
  if (record.organizer !== actor.user) {
    throw new UserFacingError(
      USER_ERROR_CODES.notAllowed,
      `Only the organizer, <@${record.organizer}>, sees this event's links and passcodes.`,
    );
  }
  const live = record.subscriptions.length > 0 ? await liveStatus(deps, record, event) : undefined;
  return { event, ...(live ? { live } : {}) };
}
