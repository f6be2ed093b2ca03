import type { Deps } from "../deps.ts";
import type { EventRecord, UserLink } from "../store/index.ts";
import { EventsError } from "../upstream/errors.ts";
import type { Event } from "../upstream/events/schemas.ts";
import { withUserToken } from "./access.ts";
import type { Actor } from "./directory.ts";
import { EventBusyError, withEventLock } from "./event-lock.ts";
import {
  goneEvent,
  manageableRecord,
  organizerLink,
  patchRecord,
  timesOf,
} from "./event-record.ts";
import { asLiveSub, publicEvent } from "./subscription.ts";
import { fetchAs, putSub, refresh, removeUpstream, subscriptionOf } from "./subscriptions.ts";

/**
 * An event's transitions after it was scheduled, owned here: edited (its cards and reminders
 * follow the new copy), cancelled (cards marked, webhooks removed), gone (the events service
 * answered 404: record and subscription marked). The event record (event-record.ts) and the
 * subscription (subscriptions.ts) are each changed from here and never call each other.
 */

/** GET with the organizer's token; the record learns the fresh title and times. */
export async function fetchEvent(deps: Deps, record: EventRecord, link: UserLink): Promise<Event> {
  let event: Event;
  try {
    event = await withUserToken(deps, record.team, link, (t) =>
      deps.events.getEvent(t.accessToken, t.userId, record.eventId),
    );
  } catch (err) {
    // The service says it has no such event: it is gone for good, and every surface says so.
    if (!(err instanceof EventsError && err.status === 404)) throw err;
    await markGone(deps, record.team, record.eventId);
    throw goneEvent(record.title);
  }
  const known = timesOf(event);
  if (Object.entries(known).some(([k, v]) => record[k] !== v)) {
    // Only a cache of the event's times: when someone holds the record, the next read refreshes
    // it instead of making this one wait.
    await patchRecord(deps, record.team, record.eventId, known, { waitMs: 0 }).catch(
      (err: unknown) => {
        if (!(err instanceof EventBusyError)) throw err;
      },
    );
  }
  return event;
}

/**
 * Marks the event gone (the events service answered 404 for it): the record is kept and marked,
 * its subscription marked so its cards say so and its reminders go. Idempotent.
 */
export async function markGone(deps: Deps, team: string, eventId: string): Promise<void> {
  await patchRecord(deps, team, eventId, { gone: true });
  await onEventGone(deps, team, eventId);
  deps.logger.info({ team, eventId }, "the events service no longer has this event: marked gone");
}

/** The event's record, organizer link and current upstream copy, for an actor who may manage it. */
export async function loadManaged(
  deps: Deps,
  actor: Actor,
  eventId: string,
): Promise<{ record: EventRecord; link: UserLink; event: Event }> {
  const record = await manageableRecord(deps, actor, eventId);
  const link = await organizerLink(deps, record, actor);
  const event = await fetchEvent(deps, record, link);
  return { record, link, event };
}

/** Refreshes the event's cards; the engine moves its reminders. */
export async function onEventEdited(deps: Deps, team: string, eventId: string): Promise<void> {
  await withEventLock(deps, team, eventId, () => editedLocked(deps, team, eventId));
}

async function editedLocked(deps: Deps, team: string, eventId: string): Promise<void> {
  const record = await deps.store.events.get(team, eventId);
  if (!record) return;
  const found = await subscriptionOf(deps, record);
  if (!found || found.sub.cancelled) return;
  const event = await fetchAs(deps, record, await organizerLink(deps, record));
  // The cards and the reminders follow the new copy (the engine moves the reminders).
  await putSub(deps, found.id, { ...asLiveSub(found.sub), event: publicEvent(event) });
  await refresh(deps, team, eventId, found.id);
}

/**
 * Marks the subscription (and so its cards and reminders) cancelled, then removes the webhook
 * upstream (per type). The mark comes first: the cancel already happened upstream, so a removal
 * that fails (the events service's trouble, a token it will not grant) must not leave the cards
 * live and the reminders set; a webhook left behind is refused by the route (404).
 */
export async function onEventCancelled(deps: Deps, team: string, eventId: string): Promise<void> {
  await withEventLock(deps, team, eventId, () => cancelledLocked(deps, team, eventId));
}

async function cancelledLocked(deps: Deps, team: string, eventId: string): Promise<void> {
  const record = await deps.store.events.get(team, eventId);
  if (!record) return;
  const found = await subscriptionOf(deps, record);
  if (!found) return;
  // Kept, marked: the route refuses its webhooks, and the engine re-renders every card
  // cancelled and deletes the reminders it scheduled.
  if (!found.sub.cancelled) {
    await putSub(deps, found.id, { ...found.sub, cancelled: true });
    await refresh(deps, team, eventId, found.id);
  }
  try {
    await removeUpstream(deps, record);
  } catch (err) {
    deps.logger.warn(
      { err, eventId },
      "live: the cancelled event's webhooks were not removed upstream; the route refuses them",
    );
  }
}

/**
 * The events service no longer has the event: its webhooks went with it, so nothing is removed
 * upstream; the subscription is marked gone, and the engine re-renders its cards as gone (no
 * figures, no buttons) and deletes the reminders it scheduled.
 */
export async function onEventGone(deps: Deps, team: string, eventId: string): Promise<void> {
  await withEventLock(deps, team, eventId, async () => {
    const record = await deps.store.events.get(team, eventId);
    if (!record) return;
    const found = await subscriptionOf(deps, record);
    if (!found || found.sub.gone) return;
    await putSub(deps, found.id, { ...found.sub, gone: true });
    await refresh(deps, team, eventId, found.id);
  });
}
