import type { Deps } from "../deps.ts";
import type { EventRecord, UserLink } from "../store/index.ts";
import type { Event } from "../upstream/events/schemas.ts";
import type { Actor } from "./directory.ts";
import { USER_ERROR_CODES, UserFacingError } from "./errors.ts";
import { type EventLockOptions, withEventLock } from "./event-lock.ts";
import { escapeMrkdwn, truncate } from "./text.ts";

/**
 * The stored record of an event (`event:{team}:{eventId}`) and who may act on it. Every
 * per-event action (edit, cancel, notify, mute, report) is open to the event's organizer and to
 * workspace admins, checked here on every path that reaches it.
 */

export function unknownEvent(eventId?: string): UserFacingError {
  const which = eventId ? ` \`${escapeMrkdwn(truncate(eventId, 80))}\`` : "";
  return new UserFacingError(
    USER_ERROR_CODES.notFound,
    `On Air doesn't know the event${which}. Run \`/onair list\` to see the events you scheduled here.`,
  );
}

export function cancelledEvent(): UserFacingError {
  return new UserFacingError(
    USER_ERROR_CODES.notFound,
    "That event was cancelled. Schedule a new one with `/onair schedule`.",
  );
}

/** The events service no longer has the event (a 404 for it): said plainly, never a link hint. */
export class EventGoneError extends UserFacingError {}

export function goneEvent(title?: string): EventGoneError {
  const which = title ? ` *${escapeMrkdwn(truncate(title, 150))}*` : "";
  return new EventGoneError(
    USER_ERROR_CODES.notFound,
    `The live events service no longer has the event${which} (it was deleted there), so there is nothing left to change or cancel. Schedule a new one with \`/onair schedule\`.`,
  );
}

/** True for the organizer and for workspace admins. */
export async function mayManage(actor: Actor, record: EventRecord): Promise<boolean> {
  if (record.organizer === actor.user) return true;
  return (await actor.directory.profile(actor.user)).isAdmin;
}

/** Throws not_allowed unless the actor organizes the event or is a workspace admin. */
export async function requireManager(actor: Actor, record: EventRecord): Promise<void> {
  if (await mayManage(actor, record)) return;
  throw new UserFacingError(
    USER_ERROR_CODES.notAllowed,
    `Only the event's organizer, <@${record.organizer}>, or a workspace admin can do that. Ask them to.`,
  );
}

/** The record of an event the actor may manage, not cancelled; a plain refusal otherwise. */
export async function manageableRecord(
  deps: Deps,
  actor: Actor,
  eventId: string,
): Promise<EventRecord> {
  const record = eventId ? await deps.store.events.get(actor.team, eventId) : undefined;
  if (!record) throw unknownEvent(eventId);
  await requireManager(actor, record);
  if (record.cancelled) throw cancelledEvent();
  if (record.gone) throw goneEvent(record.title);
  return record;
}

/** The organizer's link: upstream calls for an event are made as its organizer. */
export async function organizerLink(
  deps: Deps,
  record: EventRecord,
  actor?: Actor,
): Promise<UserLink> {
  const link = await deps.store.users.get(record.team, record.organizer);
  if (link) return link;
  throw new UserFacingError(
    USER_ERROR_CODES.notLinked,
    actor?.user === record.organizer
      ? "Your events account is no longer linked. Run `/onair link`, then try again."
      : `The organizer of this event, <@${record.organizer}>, isn't linked to the events service any more. They can run \`/onair link\` and try again.`,
  );
}

/** What the record keeps of an event for App Home and naming: title and when it happens. */
export function timesOf(event: Event): {
  title: string;
  start: number;
  end: number;
  lastEnd: number;
} {
  return {
    title: event.title,
    start: event.start,
    end: event.end,
    // A series is over when its last occurrence is.
    lastEnd: Math.max(event.end, event.recurrenceEnd || 0),
  };
}

/**
 * Changes a few fields of the stored record under the event's lock, read just before the write:
 * the live area updates the same record (subscriptions, cards), and a copy read before a slow
 * upstream call, or a write racing a notify, would undo that.
 */
export async function patchRecord(
  deps: Deps,
  team: string,
  eventId: string,
  patch: Partial<EventRecord>,
  lock: EventLockOptions = {},
): Promise<void> {
  await withEventLock(
    deps,
    team,
    eventId,
    async () => {
      const current = await deps.store.events.get(team, eventId);
      if (!current) return;
      await deps.store.events.put({ ...current, ...patch, updatedAt: deps.now() });
    },
    lock,
  );
}

/**
 * Runs a follow-up after the upstream change is done: its failure must not read as if the
 * change failed, so it is logged and returned for the user's message instead of thrown.
 */
export async function afterChange(
  deps: Deps,
  what: string,
  fn: () => Promise<void>,
): Promise<unknown> {
  try {
    await fn();
    return undefined;
  } catch (err) {
    deps.logger.warn({ err, what }, "follow-up after a change failed");
    return err;
  }
}
